// The ManagedDatabase kind, assembled from its parts: the schema parses the spec, the external
// client talks to Linode, the request tokens run once each, the connection source says what
// the Secret holds. The runtime does the rest (finalizers, conditions, the Secret itself).
import { resourceType } from "../../crd/definitions.ts";
import type { Database } from "../../linode/index.ts";
import type { KindModule, ManagedKind } from "../../runtime/managed.ts";
import type { ResourceDeps } from "../shared/deps.ts";
import { DatabaseConnection } from "./connection.ts";
import { DatabaseListCache } from "./database-cache.ts";
import { ManagedDatabaseExternal, type ObservedStatus } from "./external.ts";
import { BackupsReader } from "./backups.ts";
import { DatabaseRequests, RESTORE_SNAPSHOT_REFERENCE } from "./requests.ts";
import { managedDatabaseSpecSchema, type ManagedDatabaseSpec } from "./schema.ts";

export const managedDatabaseType = resourceType("ManagedDatabase");

export const managedDatabaseKind: KindModule<ResourceDeps> = {
  type: managedDatabaseType,
  build: ({ deps, events }) => {
    const cache = new DatabaseListCache(deps.linode);
    const requests = new DatabaseRequests({ linode: deps.linode, cache, events, poll: deps.poll });
    const backups = new BackupsReader(deps.linode, deps.poll.readyMillis);
    const kind: ManagedKind<ManagedDatabaseSpec, Database, ObservedStatus> = {
      type: managedDatabaseType,
      parseSpec: (raw) => managedDatabaseSpecSchema.parse(raw),
      policies: (spec) => ({ deletion: spec.deletionPolicy, management: spec.managementPolicy }),
      external: new ManagedDatabaseExternal({ linode: deps.linode, cache, backups, poll: deps.poll, requests, events, clusterId: deps.clusterId }),
      connection: new DatabaseConnection(deps.linode),
      poll: deps.poll,
      recreateToken: (spec) => spec.requests?.recreate,
      references: [{
        // A restore from a DatabaseSnapshot: resolved (and woken when it changes), never blocking the database.
        name: RESTORE_SNAPSHOT_REFERENCE,
        target: { kind: resourceType("DatabaseSnapshot") },
        names: (spec) => (spec.requests?.restore?.snapshotRef !== undefined ? [spec.requests.restore.snapshotRef.name] : []),
        required: () => false,
      }],
    };
    return kind;
  },
};
