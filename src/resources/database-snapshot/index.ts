// The DatabaseSnapshot kind: a snapshot backup of a ManagedDatabase (databaseRef), resolved
// through the runtime's references (woken when the database changes), queued behind the API's
// limits and its siblings (woken when one of them changes).
import { kindRead, EXTERNAL_ID_ANNOTATION, referrersIndex, type Managed, type KindParts, type ManagedObject } from "../../runtime/contract.ts";
import type { DatabaseBackup } from "../../linode/index.ts";
import { AccountScope, credentialsFlow, PerAccount, recordedAccount, type AccountSource } from "../shared/credentials.ts";

import type { OperatorKind } from "../shared/deps.ts";
import { specRefName } from "../shared/schema.ts";
import { accountDatabases, accountInDatabase, databaseAccountSources, managedDatabaseType, markDigest, markOf, shownSnapshots, snapshotBackupsOf } from "../managed-database/public.ts";
import { KindTimings } from "../shared/constants.ts";
import { databaseReference, taken } from "./database-reference.ts";
import { databaseSnapshotDefinition, databaseSnapshotType } from "./definition.ts";
import { DatabaseSnapshotExternal, hasBackup, parseSnapshotId, snapshotLabel, type SnapshotStatus } from "./external.ts";
import type { DatabaseSnapshotSpec } from "./schema.ts";
import { DatabaseSnapshotReasons } from "./reasons.ts";

export { databaseSnapshotDefinition, databaseSnapshotType } from "./definition.ts";

/** Whether a snapshot's recorded backup ("engine/databaseId/backupId") is of the database with external id `database`. */
const sameDatabase = (snapshotId: string, database: number | undefined): boolean => database !== undefined && parseSnapshotId(snapshotId)?.databaseId === database;

export const databaseSnapshotKind: OperatorKind = {
  definition: databaseSnapshotDefinition,
  type: databaseSnapshotType,
  build: ({ deps, stores }) => {
    const self = stores.self;
    const databases = stores.kind(managedDatabaseType);
    // A snapshot lives in its database's account: without a credentialsRef of its own, it acts in
    // the account its database recorded, and once taken in the one it recorded itself; never in
    // the operator's by default (its ManagedDatabase may be gone, the database not).
    const wanted = (m: Managed<DatabaseSnapshotSpec>): AccountSource => {
      if (m.spec.credentialsRef !== undefined) return m.spec;
      const db = databaseReference.value(m, m.spec.databaseRef.name);
      // The database resource now manages another database (recreated): this backup stays where it was taken.
      return accountInDatabase(recordedAccount(m.obj), db, m.externalId !== undefined && sameDatabase(m.externalId, db?.id));
    };
    const inherited = (obj: ManagedObject): AccountSource[] => databaseAccountSources(databases, obj);
    const scope = new AccountScope<DatabaseSnapshotSpec>({
      accounts: deps.accounts, wanted, inherited, what: "backup",
      identify: (m, backup) => ({
        label: (backup as DatabaseBackup).label, created: (backup as DatabaseBackup).created,
        labels: [snapshotLabel(m, deps.clusterId), snapshotLabel({ key: m.key, spec: {} }, deps.clusterId)],
      }),
    });
    const shown = (namespace: string, name: string, id: number): number[] | undefined => {
      const db = databases.get(namespace, name);
      const mark = markDigest(markOf(snapshotBackupsOf(self.byIndex(referrersIndex(databaseReference.name), `${namespace}/${name}`), id)));
      return db === undefined ? undefined : shownSnapshots(db, id, KindTimings.freshDatabaseMillis, mark);
    };
    const clients = new PerAccount((account) => new DatabaseSnapshotExternal({ linode: account.linode, self, clusterId: deps.clusterId, poll: deps.poll, databases: accountDatabases.get(account), shownSnapshots: shown }));
    const kind: KindParts<DatabaseSnapshotSpec, DatabaseBackup, SnapshotStatus> = {
      type: databaseSnapshotType,
      external: scope.external((a) => clients.get(a)),
      poll: deps.poll,
      idMismatchReason: DatabaseSnapshotReasons.BackupIdMismatch,
      legacyId: (obj) => {
        const id = parseSnapshotId(obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "");
        return id !== undefined && hasBackup(obj, id) ? `${id.engine}/${String(id.databaseId)}/${String(id.backupId)}` : undefined;
      },
      // Its workers are shared among accounts as its database's are: it acts in that one's.
      flow: (obj) => {
        const name = specRefName(obj, "databaseRef");
        return credentialsFlow(obj, name === undefined ? undefined : databases.get(obj.metadata.namespace ?? "", name));
      },
      references: [scope.credentials, databaseReference],
      watches: [{
        // Siblings: a snapshot of the same database taken, deleted or changed may free the queue.
        target: kindRead(databaseSnapshotType, "earlier snapshots of its database"),
        map: (obj) => {
          const db = specRefName(obj, "databaseRef");
          if (db === undefined) return [];
          const namespace = obj.metadata.namespace ?? "";
          return self.byIndex(referrersIndex(databaseReference.name), `${namespace}/${db}`)
            // Only those still queued (no backup yet) have anything to learn from it.
            .filter((o) => o.metadata.name !== obj.metadata.name && !taken(o))
            .map((o) => `${namespace}/${o.metadata.name}`);
        },
      }],
    };
    return kind;
  },
};
