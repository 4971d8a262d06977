// The DatabaseSnapshot kind: a snapshot backup of a ManagedDatabase (databaseRef), resolved
// through the runtime's references (woken when the database changes), queued behind the API's
// limits and its siblings (woken when one of them changes).
import { resourceType } from "../../crd/definitions.ts";
import type { DatabaseBackup } from "../../linode/index.ts";
import { referrersIndex, type KindModule, type Managed, type ManagedKind } from "../../runtime/managed.ts";
import { EXTERNAL_ID_ANNOTATION } from "../../runtime/reconciler.ts";
import { accountOf, credentialsReference, CREDENTIALS_SECRETS, PerAccount, perAccountExternal, type Account } from "../shared/credentials.ts";
import type { ResourceDeps } from "../shared/deps.ts";
import { credentialsRefSchema, specRefName } from "../shared/schema.ts";
import { DATABASE_REFERENCE, DatabaseSnapshotExternal, databaseNotReady, type SnapshotStatus } from "./external.ts";
import { databaseSnapshotSpecSchema, type DatabaseSnapshotSpec } from "./schema.ts";

export const databaseSnapshotType = resourceType("DatabaseSnapshot");
const managedDatabaseType = resourceType("ManagedDatabase");

export const databaseSnapshotKind: KindModule<ResourceDeps> = {
  type: databaseSnapshotType,
  build: ({ deps, stores }) => {
    const self = stores.self;
    const secrets = stores.secrets(CREDENTIALS_SECRETS);
    const databases = stores.kind(managedDatabaseType);
    // A snapshot lives in its database's account: without a credentialsRef of its own, it acts with the database's.
    const account = (m: Managed<DatabaseSnapshotSpec>): Account => {
      const db = databases.get(m.key.namespace, m.spec.databaseRef.name);
      const inherited = credentialsRefSchema.safeParse((db?.spec as { credentialsRef?: unknown } | undefined)?.credentialsRef);
      const ref = m.spec.credentialsRef ?? (inherited.success ? inherited.data : undefined);
      return accountOf(deps.accounts, secrets, m, ref);
    };
    const clients = new PerAccount(({ linode }) => new DatabaseSnapshotExternal({ linode, self, clusterId: deps.clusterId, poll: deps.poll }));
    const kind: ManagedKind<DatabaseSnapshotSpec, DatabaseBackup, SnapshotStatus> = {
      type: databaseSnapshotType,
      parseSpec: (raw) => databaseSnapshotSpecSchema.parse(raw),
      policies: (spec) => ({ deletion: spec.deletionPolicy, management: "Manage" }),
      external: perAccountExternal(account, (a) => clients.get(a)),
      poll: deps.poll,
      references: [credentialsReference<DatabaseSnapshotSpec>(), {
        name: DATABASE_REFERENCE,
        target: { kind: managedDatabaseType },
        names: (spec) => [spec.databaseRef.name],
        notReady: (obj) => databaseNotReady(obj),
        // Needed to take the snapshot; once it exists its identity says where it lives.
        required: (m) => m.externalId === undefined,
      }],
      watches: [{
        // Siblings: a snapshot of the same database taken, deleted or changed may free the queue.
        target: { kind: databaseSnapshotType },
        map: (obj) => {
          const db = specRefName(obj, "databaseRef");
          if (db === undefined) return [];
          const namespace = obj.metadata.namespace ?? "";
          return self.byIndex(referrersIndex(DATABASE_REFERENCE), `${namespace}/${db}`)
            // Only those still queued (no backup yet) have anything to learn from it.
            .filter((o) => o.metadata.name !== obj.metadata.name && o.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] === undefined)
            .map((o) => `${namespace}/${o.metadata.name}`);
        },
      }],
    };
    return kind;
  },
};
