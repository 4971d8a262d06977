// The ManagedDatabase kind, assembled from its parts: the schema parses the spec, the external
// client talks to Linode, the request tokens run once each, the connection source says what
// the Secret holds. The runtime does the rest (finalizers, conditions, the Secret itself).
import type { Database, DatabaseBackup } from "../../linode/index.ts";
import { kindRead, legacyIdFromStatusId, settingValue, type Managed, type KindParts, type NodeObject } from "../../runtime/contract.ts";
import { AccountScope, PerAccount } from "../shared/credentials.ts";
import { labelOf } from "../shared/derived-label.ts";
import type { OperatorKind } from "../shared/deps.ts";
import { specRefName } from "../shared/schema.ts";
import { connectionSecretName, DatabaseConnection } from "./connection.ts";
import { accountDatabases } from "./database-cache.ts";
import { databaseSnapshotType } from "../database-snapshot/public.ts";
import { databaseConnectionPoolType } from "../database-connection-pool/public.ts";
import { poolsFirst } from "./pools-first.ts";
import { managedDatabaseDefinition, managedDatabaseSettings, managedDatabaseType } from "./definition.ts";
import { ManagedDatabaseExternal, type ObservedStatus } from "./external.ts";
import { BackupsReader, snapshotBackupsOf } from "./backups.ts";
import { DatabaseCatalog } from "./catalog.ts";
import { forkSourceReference } from "./fork.ts";
import { nodeChanged } from "../shared/nodes.ts";
import { allowListConfigMapReference, allowListNodesRead, desiredAllowList, selectsNode, SkippedAnnouncer, type AllowListResolution } from "./allow-list-from.ts";
import { DatabaseRequests, restoreSnapshotReference } from "./requests.ts";
import { allowListFromSchema, type ManagedDatabaseSpec } from "./schema.ts";
import { ManagedDatabaseEvents, ManagedDatabaseReasons } from "./reasons.ts";
import type { DatabaseDiff } from "./diff.ts";
import { databaseAsSpec } from "./late-init.ts";
import { ObjectFigures } from "../shared/object-figures.ts";
import { ListWakes } from "../shared/list-wakes.ts";

export { managedDatabaseDefinition, managedDatabaseType } from "./definition.ts";

/** The database a DatabaseSnapshot object names. */
const snapshotDatabase = (obj: object): string | undefined => specRefName(obj, "databaseRef");

export const managedDatabaseKind: OperatorKind = {
  definition: managedDatabaseDefinition,
  type: managedDatabaseType,
  build: ({ deps, events, stores, wake, recorders }) => {
    const backupsRefreshHours = settingValue(managedDatabaseSettings.backupsRefreshHours, deps.settings);
    const allowListIntervalMillis = settingValue(managedDatabaseSettings.allowListIntervalSeconds, deps.settings) * 1000;
    const newDatabasePlatform = settingValue(managedDatabaseSettings.databasePlatform, deps.settings);
    const nodes = stores.read<NodeObject>(allowListNodesRead);
    // A Node address that cannot be allowed is said once per database (a Warning naming the Node), not on every pass.
    const { reason: skippedReason, action: skippedAction } = ManagedDatabaseEvents.NodeAddressSkipped;
    const skippedNodes = new SkippedAnnouncer((obj, note) => { events.warning(obj, skippedReason, skippedAction, note); });
    deps.cacheEntries?.track("ManagedDatabase.allowListSkipped", () => skippedNodes.size);
    const allowList = (m: Managed<ManagedDatabaseSpec>): AllowListResolution => {
      const resolved = desiredAllowList(m.spec, { nodes, configMap: (name) => allowListConfigMapReference.value(m, name) });
      skippedNodes.announce(`${m.key.namespace}/${m.key.name}`, m.obj, resolved);
      return resolved;
    };
    // The restore window slides with time (current platform): a metric, never status.
    const restoreWindow = new ObjectFigures((namespace, name) => stores.self.get(namespace, name) !== undefined);
    if (deps.registry !== undefined) {
      restoreWindow.gauge(deps.registry, "linode_database_oldest_restore_time_seconds", "The earliest point in time a fork of the database (spec.restoreFrom.pointInTime) may ask for, as Unix time: the API's oldest_restore_time (current platform).", "oldest");
    }
    deps.cacheEntries?.track("ManagedDatabase.restoreWindow", () => restoreWindow.size);
    const snapshots = stores.kind(databaseSnapshotType);
    const pools = stores.kind(databaseConnectionPoolType);
    // Which resource manages each cloud database: a list that finds one changed wakes it.
    const wakes = new ListWakes(wake);
    const { seen, changed } = wakes;
    deps.cacheEntries?.track("ManagedDatabase.keyOf", () => wakes.size);
    // Only the backups they hold, as they observed them: a snapshot moving through Pending and BackingUp changes no backup list.
    const snapshotBackups = (m: Managed<ManagedDatabaseSpec>, databaseId: number): DatabaseBackup[] =>
      snapshotBackupsOf(snapshots.list().filter((s) => s.metadata.namespace === m.key.namespace && snapshotDatabase(s) === m.key.name), databaseId);
    const namedId = (spec: ManagedDatabaseSpec): string | undefined => (spec.databaseId !== undefined ? String(spec.databaseId) : undefined);
    const sourceId = (spec: ManagedDatabaseSpec): { id: string; field: string } | undefined => {
      const id = spec.restoreFrom?.pointInTime.databaseId;
      return id === undefined ? undefined : { id: String(id), field: "spec.restoreFrom.pointInTime.databaseId" };
    };
    const scope = new AccountScope<ManagedDatabaseSpec>({
      accounts: deps.accounts, wanted: (m) => m.spec, namedId, sourceId, what: "database", idField: "spec.databaseId",
      identify: (m, db) => ({
        label: (db as Database).label, created: (db as Database).created,
        labels: [labelOf(m, deps.clusterId), labelOf({ key: m.key, spec: {} }, deps.clusterId)],
      }),
    });
    // Everything that reads the cloud is per account: one account's list never answers for another's.
    const parts = new PerAccount((account) => {
      const { linode, id: accountId } = account;
      const cache = accountDatabases.get(account);
      cache.listen(changed);
      cache.keepFresh(deps.poll.readyMillis);
      const requests = new DatabaseRequests({ linode, cache, events, poll: deps.poll });
      const backups = new BackupsReader(linode, backupsRefreshHours * 3_600_000);
      const catalog = new DatabaseCatalog(linode);
      const claimedElsewhere = (m: Managed<ManagedDatabaseSpec>, id: number): boolean => recorders(String(id)).some((o) => o.metadata.namespace !== m.key.namespace);
      const mayName = (m: Managed<ManagedDatabaseSpec>, doing: string): void => { scope.mayName(m, doing); };
      const external = new ManagedDatabaseExternal({ linode, cache, backups, catalog, snapshotBackups, seen, claimedElsewhere, mayName, restoreWindow, poll: deps.poll, requests, events, clusterId: deps.clusterId, accountId, allowList, allowListIntervalMillis, newDatabasePlatform });
      account.track("ManagedDatabase.listCache", () => cache.size);
      account.track("ManagedDatabase.listCache.invalidated", () => cache.invalidations);
      account.track("ManagedDatabase.backups", () => backups.size);
      account.track("ManagedDatabase.allowListSpaced", () => external.allowListSpaced);
      const connection = new DatabaseConnection(linode);
      account.track("ManagedDatabase.keptCaCertificates", () => connection.keptCaCertificates);
      return { external, connection };
    });
    const kind: KindParts<ManagedDatabaseSpec, Database, ObservedStatus, DatabaseDiff> = {
      type: managedDatabaseType,
      external: poolsFirst(scope.external((a) => parts.get(a).external), pools, deps.poll.pendingMillis),
      connection: scope.connection(connectionSecretName, (a) => parts.get(a).connection),
      poll: deps.poll,
      namedId,
      lateInit: databaseAsSpec,
      idMismatchReason: ManagedDatabaseReasons.DatabaseIdMismatch,
      legacyId: legacyIdFromStatusId,
      watches: [{
        // A Node added, removed, relabelled or readdressed: the databases whose allowListFrom selects it (before or after).
        target: allowListNodesRead,
        changed: nodeChanged,
        map: (node) => stores.self.list().filter((o) => {
          const from = allowListFromSchema.safeParse((o.spec as { allowListFrom?: unknown } | undefined)?.allowListFrom);
          return from.success && from.data !== undefined && selectsNode({ allowListFrom: from.data }, node.metadata.labels);
        }).map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`),
      }, {
        // A pool changed or gone: a database being deleted may be waiting for it (pools first).
        target: kindRead(databaseConnectionPoolType, "pools a database being deleted waits for"),
        map: (obj) => {
          const db = specRefName(obj, "databaseRef");
          const namespace = obj.metadata.namespace ?? "";
          return db !== undefined && stores.self.get(namespace, db)?.metadata.deletionTimestamp !== undefined ? [`${namespace}/${db}`] : [];
        },
      }, {
        // A snapshot of it taken or deleted: its status lists the backups again.
        target: kindRead(databaseSnapshotType, "the backups its snapshots hold"),
        map: (obj) => {
          const db = snapshotDatabase(obj);
          return db === undefined ? [] : [`${obj.metadata.namespace ?? ""}/${db}`];
        },
      }],
      references: [scope.credentials, restoreSnapshotReference, forkSourceReference, allowListConfigMapReference],
      forget: (obj, externalId) => {
        skippedNodes.forget(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`);
        restoreWindow.forget(obj.metadata.namespace ?? "", obj.metadata.name);
        if (externalId === undefined) return;
        const id = Number(externalId);
        wakes.forget(id, `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`);
        parts.peek(deps.accounts.recordedBy(obj))?.external.forget(id);
      },
    };
    return kind;
  },
};
