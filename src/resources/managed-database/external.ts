// ManagedDatabase ↔ Linode: how to observe, create, update and delete a managed MySQL or
// PostgreSQL cluster. The database observe found travels with the observation to update,
// delete and the request tokens; the runtime does everything else.
import type { Database, DatabaseCreateRequest, LinodeClient } from "../../linode/index.ts";
import { isTrue } from "../../runtime/conditions.ts";
import { RetryAfterError, TerminalError } from "../../runtime/errors.ts";
import type { AfterObserve, Created, ExternalClient, Managed, Observation, Observed } from "../../runtime/managed.ts";
import { ConditionReasons as R } from "../../runtime/reasons.ts";
import type { PollIntervals } from "../../runtime/timings.ts";
import { KindReasons, KindTimings } from "../shared/constants.ts";
import { derivedLabel } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { normalizeAllowList } from "./allow-list.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { diffDatabase, isEmptyDiff } from "./diff.ts";
import { resetIsRecent, type DatabaseRequests } from "./requests.ts";
import type { ManagedDatabaseSpec, ManagedDatabaseStatus } from "./schema.ts";

/** The status fields an observation mirrors from the cloud database. */
export type ObservedStatus = Omit<ManagedDatabaseStatus, "conditions" | "observedGeneration" | "connectionSecretName" | "lastRequests">;
type ObservedDatabase = Observed<Database, ObservedStatus>;

export interface ManagedDatabaseExternalDeps {
  linode: LinodeClient;
  cache: DatabaseListCache;
  poll: PollIntervals;
  requests: DatabaseRequests;
}

/** States in which the API accepts a delete. */
const deletable = new Set(["active", "failed", "degraded"]);
const pendingReason: Record<string, string> = {
  provisioning: R.Creating, updating: R.Updating, resizing: R.Updating, resuming: R.Updating,
  backing_up: KindReasons.BackingUp, restoring: KindReasons.Restoring,
};

export const labelFor = (m: Managed<ManagedDatabaseSpec>): string => m.spec.label ?? derivedLabel(m.key.namespace, m.key.name);

export class ManagedDatabaseExternal implements ExternalClient<ManagedDatabaseSpec, Database, ObservedStatus> {
  private readonly deps: ManagedDatabaseExternalDeps;

  constructor(deps: ManagedDatabaseExternalDeps) {
    this.deps = deps;
  }

  async observe(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<Observation<Database, ObservedStatus>> {
    const { engine, databaseId } = m.spec;
    const label = labelFor(m);
    const known = databaseId ?? (m.externalId !== undefined ? Number(m.externalId) : undefined);
    // A settled database may be read from a list a fraction of a poll interval old (one list
    // serves every database's poll); one still changing is read fresh.
    const maxAge = isTrue(m.obj.status?.conditions, "Ready") ? this.deps.poll.readyMillis * KindTimings.settledListAgeFraction : KindTimings.changingListAgeMillis;
    let db = known !== undefined
      ? await linodeCall("reading the database", () => this.deps.cache.get(engine, known, maxAge, signal))
      : undefined;
    if (db === undefined && databaseId !== undefined) {
      if (m.policies.management === "Observe") return { exists: false };
      throw new TerminalError(R.NotFound, `spec.databaseId ${String(databaseId)}: no ${engine} database with this id exists`);
    }
    // Not recorded yet (or gone): a create whose response was lost left a database with our label.
    db ??= await linodeCall("looking the database up by label", () => this.deps.linode.databases.engine(engine).findByLabel(label, { signal }));
    if (db === undefined) return { exists: false };

    const diff = diffDatabase(m.spec, databaseId !== undefined && m.spec.label === undefined ? db.label : label, db);
    const active = db.status === "active";
    return {
      exists: true,
      external: db,
      externalId: String(db.id),
      status: statusOf(db),
      ready: active,
      ...(active ? {} : { readyReason: pendingReason[db.status] ?? R.Unavailable, readyMessage: `the database is ${db.status}` }),
      upToDate: isEmptyDiff(diff),
      diff: diff.summary,
      ...(active && isEmptyDiff(diff) && !resetIsRecent(m) ? {} : { pollMillis: this.deps.poll.pendingMillis }),
    };
  }

  async create(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<Created> {
    const s = m.spec;
    const req: DatabaseCreateRequest = {
      label: labelFor(m), region: s.region, type: s.type, version: s.version,
      clusterSize: s.clusterSize, encrypted: s.encrypted, sslConnection: s.sslConnection,
      allowList: normalizeAllowList(s.allowList),
      ...(s.replicationType !== undefined ? { replicationType: s.replicationType } : {}),
      ...(s.replicationCommitType !== undefined ? { replicationCommitType: s.replicationCommitType } : {}),
    };
    const db = await linodeCall("creating the database", () => this.deps.linode.databases.engine(s.engine).create(req, { signal }));
    this.deps.cache.invalidate(s.engine);
    return { externalId: String(db.id), status: { id: db.id } };
  }

  async update(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<void> {
    const db = observed.external;
    if (db.status !== "active") {
      throw new RetryAfterError(R.Waiting, `the database is ${db.status}; changes are applied once it is active`, this.deps.poll.pendingMillis);
    }
    const diff = diffDatabase(m.spec, labelFor(m), db);
    if (isEmptyDiff(diff)) return;
    await linodeCall(`updating ${diff.summary}`, () => this.deps.linode.databases.engine(m.spec.engine).update(db.id, diff.update, { signal }));
    this.deps.cache.invalidate(m.spec.engine, db.id);
  }

  async delete(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<{ gone: boolean }> {
    const db = observed.external;
    if (!deletable.has(db.status)) {
      throw new RetryAfterError(R.Waiting, `the database is ${db.status}; it is deleted as soon as its status allows`, this.deps.poll.pendingMillis);
    }
    try {
      await linodeCall("deleting the database", () => this.deps.linode.databases.engine(m.spec.engine).delete(db.id, { signal }));
    } catch (err) {
      if ((err as { kind?: string }).kind === "notFound") return { gone: true };
      throw err;
    }
    this.deps.cache.invalidate(m.spec.engine, db.id);
    return { gone: false };
  }

  async afterObserve(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<AfterObserve | undefined> {
    const lastRequests = await this.deps.requests.perform(m, observed.external, signal);
    if (lastRequests === undefined) return undefined;
    // An action just ran: its effects (a new password, updating → active) show up soon.
    return { status: { lastRequests }, pollMillis: this.deps.poll.pendingMillis };
  }
}

function statusOf(db: Database): ObservedStatus {
  return {
    id: db.id,
    label: db.label,
    status: db.status,
    hosts: {
      ...(db.hosts.primary !== null ? { primary: db.hosts.primary } : {}),
      ...(db.hosts.secondary !== null ? { secondary: db.hosts.secondary } : {}),
    },
    ...(db.port !== null ? { port: db.port } : {}),
    engine: db.engine,
    version: db.version,
    region: db.region,
    type: db.type,
    clusterSize: db.clusterSize,
    ...(db.totalDiskSizeGb !== null ? { totalDiskSizeGb: db.totalDiskSizeGb } : {}),
    ...(db.usedDiskSizeGb !== null ? { usedDiskSizeGb: db.usedDiskSizeGb } : {}),
  };
}
