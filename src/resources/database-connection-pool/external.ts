// DatabaseConnectionPool ↔ Linode: one PgBouncer pool of the referenced ManagedDatabase's
// database. A pool has no id; its identity, once created or adopted, is
// `postgresql/databaseId/label`, so it keeps working (and can be deleted) whatever happens to the
// ManagedDatabase resource. Before a create it is looked up by its label in exactly that
// database: one this resource did not create is refused (LabelInUse) unless spec.adopt says to
// adopt it. Pools exist only for PostgreSQL on the current platform (assumed: MySQL and legacy
// databases have none): anything else is UnsupportedOnPlatform, nothing sent.
import { databasePlatform, isNotFound, type ConnectionPool, type Database, type LinodeClient } from "../../linode/index.ts";
import { ConditionReasons as R, RetryAfterError, TerminalError, jittered, type Created, type Deferral, type ExternalClient, type Managed, type ManagedObject, type Observation, type Observed, type PollIntervals } from "../../runtime/contract.ts";
import type { DatabaseListCache, DatabaseView } from "../managed-database/public.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { SharedReasons } from "../shared/reasons.ts";
import { poolDatabaseReference } from "./database-reference.ts";
import { diffPool, type PoolDiff } from "./diff.ts";
import { DatabaseConnectionPoolReasons as PR } from "./reasons.ts";
import { POOL_LABEL, type DatabaseConnectionPoolSpec, type DatabaseConnectionPoolStatus } from "./schema.ts";

/** The pool as read, with its database as the account's shared list has it (its host, port and credentials' age for the Secret). */
export interface PoolObject { pool: ConnectionPool; database: Database }
export type PoolStatus = DatabaseConnectionPoolStatus;
export type ObservedPool = Observed<PoolObject, PoolStatus, PoolDiff>;

/** Where a pool lives: its database and its label. */
export interface PoolId { databaseId: number; label: string }

export function parsePoolId(externalId: string): PoolId | undefined {
  const m = /^postgresql\/(\d+)\/(.+)$/.exec(externalId);
  return m === null || !POOL_LABEL.test(m[2] ?? "") ? undefined : { databaseId: Number(m[1]), label: m[2] ?? "" };
}

export const formatPoolId = (id: PoolId): string => `postgresql/${String(id.databaseId)}/${id.label}`;

/** The pool's label: the spec's, else metadata.name when the API would take it. */
export function poolLabel(m: { spec: { label?: string | undefined }; key: { name: string } }): string | undefined {
  const label = m.spec.label ?? m.key.name;
  return POOL_LABEL.test(label) ? label : undefined;
}

function labelOrRefuse(m: Managed<DatabaseConnectionPoolSpec>): string {
  const label = poolLabel(m);
  if (label === undefined) throw new TerminalError(PR.InvalidPoolLabel, `metadata.name ${m.key.name} is not a valid pool label (letters, digits, _ or -, not starting with -, at most 63; no dots) and spec.label is unset: set spec.label. Nothing is sent`);
  return label;
}

/** The database a pool belongs to, as its ManagedDatabase says, once it has an id. */
type TargetDatabase = DatabaseView & { id: number };

function targetOf(m: Managed<DatabaseConnectionPoolSpec>): TargetDatabase | undefined {
  const view = poolDatabaseReference.value(m, m.spec.databaseRef.name);
  return view?.id === undefined ? undefined : { ...view, id: view.id };
}

/** Why no pool can live in this database, if none can (nothing is sent to find out). */
function unsupported(db: TargetDatabase): string | undefined {
  if (db.engine !== "postgresql") return `ManagedDatabase ${db.name} is ${db.engine === "mysql" ? "MySQL" : db.engine}: connection pools (PgBouncer) exist for PostgreSQL only (assumed: the API documents no pools for other engines). Nothing is sent; delete this DatabaseConnectionPool`;
  if (db.platform === "legacy") return `ManagedDatabase ${db.name}'s database is on Linode's legacy platform (status.platform: legacy), which has no connection pools (assumed: the API documents them for the current platform only). Nothing is sent; a database created today is on the current platform`;
  return undefined;
}

/** Why the database may not be changed now, if it may not (a pool is a change to it): the same reasons a snapshot waits with. */
function unmanaged(db: TargetDatabase): { reason: string; message: string } | undefined {
  if (db.managementPolicy === "Observe") return { reason: SharedReasons.DatabaseNotManaged, message: `ManagedDatabase ${db.name} only observes its database (managementPolicy: Observe): the operator never changes it, and a pool is a change; nothing is sent until it is Manage` };
  if (db.paused) return { reason: SharedReasons.DatabasePaused, message: `ManagedDatabase ${db.name} is paused (annotation linode.operator.dev/paused: "true"): no pool is created or changed until it is removed` };
  return undefined;
}

export interface PoolExternalDeps {
  linode: LinodeClient;
  /** The account's database lists, which the ManagedDatabases' reads share. */
  databases: DatabaseListCache;
  poll: PollIntervals;
  /** The pool resources (any namespace) that record cloud id `id`. */
  recorders: (id: string) => ManagedObject[];
}

export class DatabaseConnectionPoolExternal implements ExternalClient<DatabaseConnectionPoolSpec, PoolObject, PoolStatus, PoolDiff> {
  private readonly deps: PoolExternalDeps;

  constructor(deps: PoolExternalDeps) {
    this.deps = deps;
  }

  /** What a create about to be sent targets: found by exactly this label in exactly this database later. */
  intent(m: Managed<DatabaseConnectionPoolSpec>): Record<string, string> {
    const target = targetOf(m);
    return { label: poolLabel(m) ?? "", ...(target !== undefined ? { database: String(target.id) } : {}) };
  }

  async observe(m: Managed<DatabaseConnectionPoolSpec>, signal: AbortSignal): Promise<Observation<PoolObject, PoolStatus, PoolDiff>> {
    const deleting = m.obj.metadata.deletionTimestamp !== undefined;
    const recorded = m.externalId !== undefined ? parsePoolId(m.externalId) : undefined;
    if (recorded !== undefined) {
      this.refuseOtherDatabase(m, recorded);
      const pool = await this.read(recorded, signal);
      if (pool !== undefined) return this.observed(m, pool, recorded, false, signal);
      return await this.databaseExists(recorded.databaseId, signal)
        ? { exists: false }
        : { exists: false, gone: { reason: SharedReasons.DatabaseGone, message: `the database ${String(recorded.databaseId)} this pool belonged to no longer exists, and its pools with it; delete this resource` } };
    }
    const pending = this.pendingTarget(m);
    if (deleting) {
      // Only a create that may have happened is looked for, where it was sent.
      if (pending === undefined) return { exists: false };
      const pool = await this.read(pending, signal);
      return pool === undefined ? { exists: false } : this.observed(m, pool, pending, false, signal);
    }
    const target = targetOf(m);
    if (target === undefined) return { exists: false };
    const why = unsupported(target);
    if (why !== undefined) throw new TerminalError(SharedReasons.UnsupportedOnPlatform, why);
    const id: PoolId = { databaseId: target.id, label: labelOrRefuse(m) };
    const pool = await this.read(id, signal);
    if (pool === undefined) return { exists: false };
    // Made by a create this resource announced (its answer lost): its own.
    if (pending !== undefined && pending.databaseId === id.databaseId && pending.label === id.label) return this.observed(m, pool, id, false, signal);
    if (!m.spec.adopt) {
      throw new TerminalError(SharedReasons.LabelInUse, `database ${String(id.databaseId)} already has a connection pool labelled ${id.label} that this resource did not create; it is neither adopted nor changed: set spec.adopt: true to manage it (and delete it with this resource), or choose another spec.label`);
    }
    const externalId = formatPoolId(id);
    const other = this.deps.recorders(externalId).find((o) => o.metadata.uid !== m.obj.metadata.uid);
    if (other !== undefined) {
      throw new TerminalError(R.ExternalIdInUse, `the connection pool ${externalId} is managed by another resource in this cluster; a pool belongs to one resource, so nothing is read from or written to it for this one: choose another spec.label, or delete this resource`);
    }
    return this.observed(m, pool, id, true, signal);
  }

  /** What a create waits for: a database it may change. Nothing is sent to find out. */
  readyToCreate(m: Managed<DatabaseConnectionPoolSpec>): Promise<Deferral | undefined> {
    labelOrRefuse(m);
    const target = targetOf(m);
    const why = target === undefined ? undefined : unmanaged(target);
    // Its ManagedDatabase changing (to Manage, or resumed) wakes it.
    return Promise.resolve(why);
  }

  async create(m: Managed<DatabaseConnectionPoolSpec>, signal: AbortSignal): Promise<Created> {
    const target = targetOf(m);
    if (target === undefined) throw new Error("the database has no id yet");
    const label = labelOrRefuse(m);
    const { spec } = m;
    const pool = await linodeCall("creating the connection pool", () => this.deps.linode.connectionPools.create(target.id, {
      label, database: spec.database ?? "defaultdb", mode: spec.mode ?? "transaction", size: spec.size ?? 10, username: spec.username ?? null,
    }, { signal }));
    return { externalId: formatPoolId({ databaseId: target.id, label: pool.label }), status: { databaseId: target.id, label: pool.label } };
  }

  async update(m: Managed<DatabaseConnectionPoolSpec>, observed: ObservedPool, signal: AbortSignal): Promise<void> {
    const target = targetOf(m);
    const why = target === undefined ? undefined : unmanaged(target);
    if (why !== undefined) throw new TerminalError(why.reason, why.message);
    const id = parsePoolId(observed.externalId);
    if (id === undefined || Object.keys(observed.delta.body).length === 0) return;
    this.requireActive(observed.external.database, "the pool is updated");
    await linodeCall("updating the connection pool", () => this.deps.linode.connectionPools.update(id.databaseId, id.label, observed.delta.body, { signal }));
  }

  async delete(_m: Managed<DatabaseConnectionPoolSpec>, observed: ObservedPool, signal: AbortSignal): Promise<{ gone: boolean }> {
    const id = parsePoolId(observed.externalId);
    if (id === undefined) return { gone: true };
    this.requireActive(observed.external.database, "the pool is deleted");
    try {
      await linodeCall("deleting the connection pool", () => this.deps.linode.connectionPools.delete(id.databaseId, id.label, { signal }));
    } catch (err) {
      if (isNotFound(err)) return { gone: true };
      throw err;
    }
    return { gone: false };
  }

  /**
   * The API changes pools of an active database only (assumed for PUT and DELETE; the spec says
   * so of POST): otherwise nothing is sent until it is.
   */
  private requireActive(db: Database, then: string): void {
    if (db.status !== "active") throw new RetryAfterError(R.Waiting, `the database is ${db.status}; ${then} once it is active`, this.deps.poll.pendingMillis);
  }

  private async read(id: PoolId, signal: AbortSignal): Promise<ConnectionPool | undefined> {
    try {
      return await linodeCall("reading the connection pool", () => this.deps.linode.connectionPools.get(id.databaseId, id.label, { signal }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async databaseExists(id: number, signal: AbortSignal): Promise<boolean> {
    return linodeCall("reading the database", () => this.deps.linode.databases.postgresql.get(id, { signal }).then(() => true, (e: unknown) => {
      if (isNotFound(e)) return false;
      throw e;
    }));
  }

  /** The pool a create announced for this resource targeted (status.createPending), if any. */
  private pendingTarget(m: Managed<DatabaseConnectionPoolSpec>): PoolId | undefined {
    const database = Number(m.createPending?.database);
    const label = m.createPending?.label ?? "";
    return Number.isSafeInteger(database) && database > 0 && POOL_LABEL.test(label) ? { databaseId: database, label } : undefined;
  }

  /** A recorded pool of another database than the one databaseRef's ManagedDatabase manages is never acted on for it. */
  private refuseOtherDatabase(m: Managed<DatabaseConnectionPoolSpec>, recorded: PoolId): void {
    if (m.obj.metadata.deletionTimestamp !== undefined) return;
    const target = targetOf(m);
    if (target === undefined || target.id === recorded.databaseId) return;
    throw new TerminalError(PR.PoolDatabaseMismatch, `the pool this resource recorded (${recorded.label}) belongs to database ${String(recorded.databaseId)}, but ManagedDatabase ${target.name} manages database ${String(target.id)}: nothing is done with it for this resource; delete it, or create a new DatabaseConnectionPool`);
  }

  private async observed(m: Managed<DatabaseConnectionPoolSpec>, pool: ConnectionPool, id: PoolId, adopting: boolean, signal: AbortSignal): Promise<ObservedPool> {
    const database = await linodeCall("reading the database", () => this.deps.databases.get("postgresql", id.databaseId, this.deps.poll.readyMillis, signal));
    if (database === undefined) throw new RetryAfterError(R.Waiting, `the database ${String(id.databaseId)} is not listed yet`, this.deps.poll.pendingMillis);
    // From the spec, not only status: a pass that reads the recorded id before the status saying
    // "adopted" (a stale cache, a write between the two) would otherwise hold an adopted pool to
    // the defaults and change what the user never wrote. With spec.adopt, unset fields are never sent.
    const adopted = adopting || m.spec.adopt || m.obj.status?.adopted === true;
    const delta = diffPool(m.spec, m.obj.spec, adopted, pool);
    const active = database.status === "active" && databasePlatform(database) === "current";
    return {
      exists: true,
      external: { pool, database },
      externalId: formatPoolId(id),
      status: {
        databaseId: id.databaseId, label: pool.label, database: pool.database, mode: pool.mode, size: pool.size,
        // undefined: removed from status when the pool went back to the inbound user.
        username: pool.username ?? undefined,
        ...(adopted ? { adopted: true } : {}),
      },
      ready: active,
      ...(active ? {} : { readyReason: R.Waiting, readyMessage: `the database is ${database.status}: the pool serves once it is active` }),
      upToDate: delta.summary === "",
      ...(delta.summary !== "" ? { diff: delta.summary } : {}),
      delta,
      pollMillis: jittered(active ? this.deps.poll.readyMillis : this.deps.poll.pendingMillis),
    };
  }
}
