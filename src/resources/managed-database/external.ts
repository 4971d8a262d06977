// ManagedDatabase ↔ Linode: how to observe, create, update and delete a managed MySQL or
// PostgreSQL cluster. The database observe found travels with the observation to update,
// delete and the request tokens; the runtime does everything else.
import { z } from "zod";
import { databasePlatform, isNotFound, type Database, type DatabaseBackup, type DatabasePlatform, type ForkInput, type LinodeClient, type MaintenanceWindow } from "../../linode/index.ts";
import { cachedReadAge, ConditionReasons as R, getCondition, isTrue, problems, RetryAfterError, TerminalError, type AfterObserve, type Created, type Deferral, type EventRecorder, type ExternalClient, type Managed, type Observation, type Observed, type PollIntervals, type ReadyToCreate } from "../../runtime/contract.ts";
import { KindLimits, KindTimings } from "../shared/constants.ts";
import { labelOf } from "../shared/derived-label.ts";
import { isLabelTaken, labelInUse, linodeCall, translateLinodeError } from "../shared/linode-errors.ts";
import { locateOwned } from "../shared/locate.ts";
import { normalizeAllowList } from "./allow-list.ts";
import type { AllowListResolution, DesiredAllowList } from "./allow-list-from.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { diffDatabase, immutableMismatches, isEmptyDiff, type DatabaseDiff } from "./diff.ts";
import type { BackupsReader, BackupsRecord } from "./backups.ts";
import type { DatabaseCatalog } from "./catalog.ts";
import { apiNames, engineConfigProblems, restarting, storedForms, type StoredForm } from "./engine-config.ts";
import { planFork, rfc3339 } from "./fork.ts";
import { createRequest, newDatabasePlatform, unsupportedOnPlatform } from "./platform.ts";
import { parseApiTime } from "../shared/api-time.ts";
import { lastRestore, recentReset, type DatabaseRequests } from "./requests.ts";
import type { ManagedDatabaseSpec, ManagedDatabaseStatus } from "./schema.ts";
import { ManagedDatabaseReasons, ManagedDatabaseEvents } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import type { ObjectFigures } from "../shared/object-figures.ts";

/** The status fields an observation mirrors from the cloud database. */
export type ObservedStatus = Omit<ManagedDatabaseStatus, "lastRequests">;
type ObservedDatabase = Observed<Database, ObservedStatus, DatabaseDiff>;

export interface ManagedDatabaseExternalDeps {
  linode: LinodeClient;
  cache: DatabaseListCache;
  backups: BackupsReader;
  /** What the API offers (engine versions, plans), read when needed. */
  catalog: DatabaseCatalog;
  /** The backups of database `databaseId` this cluster's DatabaseSnapshots of it hold, as they observed them: one lost re-reads its backups. */
  snapshotBackups(m: Managed<ManagedDatabaseSpec>, databaseId: number): DatabaseBackup[];
  /** Whether a resource in another namespace than `m`'s records database `id` (it is never forked by id from `m`). */
  claimedElsewhere(m: Managed<ManagedDatabaseSpec>, id: number): boolean;
  /** Each database's oldest restore point by resource: a metric (it slides with time: status would be written on every look). */
  restoreWindow: ObjectFigures;
  /** The database behind a cloud id, so a list that finds it changed can wake it. */
  seen(id: number, key: string | undefined): void;
  poll: PollIntervals;
  requests: DatabaseRequests;
  events: EventRecorder;
  clusterId: string;
  /** The Linode account this client acts in (a fork's source must be in it too). */
  accountId: string;
  /** The allow list the spec asks for in this pass: allowList merged with what allowListFrom resolves to. */
  allowList(m: Managed<ManagedDatabaseSpec>): AllowListResolution;
  /** The least time between two allow-list updates of one database. */
  allowListIntervalMillis: number;
  /** Refuses (AdoptionNotAllowed) naming an existing account object by id where this object may not (AccountScope.mayName). */
  mayName(m: Managed<ManagedDatabaseSpec>, doing: string): void;
  /** The platform the API creates new databases on (--database-platform): what a create body may carry. */
  newDatabasePlatform: DatabasePlatform;
}


/** States in which the API accepts a delete. */
const deletable = new Set(["active", "failed", "degraded"]);
const pendingReason: Record<string, string> = {
  provisioning: R.Creating, updating: R.Updating, resizing: R.Updating, resuming: R.Updating,
  suspending: ManagedDatabaseReasons.Suspended, suspended: ManagedDatabaseReasons.Suspended,
  backing_up: SharedReasons.BackingUp, restoring: ManagedDatabaseReasons.Restoring,
};

export class ManagedDatabaseExternal implements ExternalClient<ManagedDatabaseSpec, Database, ObservedStatus, DatabaseDiff, ForkInput> {
  private readonly deps: ManagedDatabaseExternalDeps;
  /** When each database's allow list was last updated by this process (updates of it are spaced). */
  private readonly allowListUpdated = new Map<number, number>();
  /** Engine parameters each database stores in another form than sent, learned from update answers this process saw (status keeps them across restarts). */
  private readonly forms = new Map<number, StoredForm[]>();

  constructor(deps: ManagedDatabaseExternalDeps) {
    this.deps = deps;
  }

  /** Databases whose allow-list update this process still spaces. */
  get allowListSpaced(): number {
    this.forgetSpacedBefore(Date.now());
    return this.allowListUpdated.size;
  }

  /**
   * Finds the database this resource manages, and only that one: the id the user named
   * (spec.databaseId) or the one recorded as created by it. Only after a create that may
   * have been lost (create-pending) is a database looked up by label, and then adopted: the
   * derived label carries this cluster's identity, namespace and name, and an explicit label
   * was checked free before the create. An explicit label taken by anyone else is LabelInUse.
   */
  async observe(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<Observation<Database, ObservedStatus, DatabaseDiff>> {
    const { engine } = m.spec;
    // One list per engine per poll interval serves every database's look: a settled one accepts
    // a list up to a ready poll old (a list that finds a database changed wakes it at once), one
    // still changing a list up to a pending poll old. Our own changes invalidate the cache.
    // A cluster suspended as the spec asks is settled too: it is not looked at every few seconds for as long as it sleeps.
    const restingSuspended = m.spec.suspended && m.obj.status?.status === "suspended";
    const maxAge = cachedReadAge(m, isTrue(m.obj.status?.conditions, "Ready") || restingSuspended ? this.deps.poll.readyMillis : this.deps.poll.pendingMillis);
    const api = this.deps.linode.databases.engine(engine);
    const db = await locateOwned(m, {
      kind: "ManagedDatabase", what: `${engine} database`, idField: "databaseId", named: m.spec.databaseId, mismatchReason: ManagedDatabaseReasons.DatabaseIdMismatch,
      label: labelOf(m, this.deps.clusterId),
      byId: (id) => this.deps.cache.get(engine, id, maxAge, signal),
      byLabel: (label) => api.findByLabel(label, { signal }),
    });
    const key = `${m.key.namespace}/${m.key.name}`;
    if (db === undefined) {
      if (m.externalId !== undefined) {
        // Gone (deleted, here or outside): nothing more to wake or to list backups for.
        this.deps.seen(Number(m.externalId), undefined);
        this.deps.backups.forget(Number(m.externalId));
      }
      return { exists: false };
    }
    this.deps.seen(db.id, key);
    this.deps.restoreWindow.set(m.key.namespace, m.key.name, db.id, { oldest: db.oldestRestoreTime != null ? parseApiTime(db.oldestRestoreTime) / 1000 : undefined });
    if (db.updates !== null) {
      for (const p of newPendingUpdates(m.obj.status?.pendingUpdates, pendingOf(db.updates))) {
        const { reason, action } = ManagedDatabaseEvents.MaintenancePlanned;
        this.deps.events.normal(m.obj, reason, action, `Linode plans maintenance${p.description !== undefined ? ` (${p.description})` : ""}${p.plannedFor !== undefined ? ` for ${p.plannedFor}` : ""}${p.deadline !== undefined ? `, applied by ${p.deadline} at the latest` : ""}`);
      }
    }

    const wanted = this.deps.allowList(m);
    const allowListHeld = allowListProblem(m.spec, wanted, db);
    // Held back: the diff keeps the database's own list (nothing about it is sent).
    const forms = this.formsOf(m, db.id);
    const diff = diffDatabase(m.spec, m.spec.label, db, allowListHeld === undefined && !("held" in wanted) ? wanted.entries : db.allowList, forms);
    const mismatches = immutableMismatches(m.spec, db);
    const platform = databasePlatform(db);
    const unsupported = unsupportedOnPlatform(m.spec, m.obj.spec, platform);
    // Engine parameters the catalogue refuses are not sent (the API would refuse the whole update).
    const configProblems = databasePlatform(db) === "current" && m.spec.engineConfig !== undefined && diff.engineConfigPaths !== undefined
      ? engineConfigProblems(m.spec.engineConfig, await this.deps.catalog.engineParameters(engine, signal)) : [];
    // A resize the API would refuse is not sent (it would refuse the whole update): said why, naming the plans.
    const manage = mismatches.length === 0 && m.policies.management === "Manage";
    const resize = db.type !== m.spec.type && manage ? await this.deps.catalog.resizeRefusal(db.type, m.spec.type, signal) : undefined;
    const nodes = (diff.update.clusterSize !== undefined || diff.update.type !== undefined) && manage ? await this.deps.catalog.nodesRefusal(m.spec.type, m.spec.clusterSize, signal) : undefined;
    const upgrade = diff.update.version !== undefined && manage ? await this.deps.catalog.versionRefusal(engine, m.spec.version, signal) : undefined;
    const active = db.status === "active";
    // Created by this resource within the refresh period: no backup to list yet (none is taken
    // at creation; the first automatic one shows at the next refresh or snapshot).
    const fresh = m.spec.databaseId === undefined && Date.now() - parseApiTime(db.created) < KindTimings.freshDatabaseMillis;
    // The current platform has no backups API: nothing is listed (no call), and status shows none.
    const backups = db.status === "provisioning" || databasePlatform(db) === "current" ? undefined : await this.deps.backups.latest(engine, db.id, this.deps.snapshotBackups(m, db.id), fresh, signal, recordedBackups(m.obj.status, db.id));
    const backupsRead = backups !== undefined ? this.deps.backups.readOf(db.id) : undefined;
    const restored = lastRestore(m);
    const failedAfterRestore = db.status === "failed" && restored !== undefined;
    return {
      exists: true,
      external: db,
      externalId: String(db.id),
      status: {
        ...statusOf(db),
        ...(m.spec.allowListFrom !== undefined && !("held" in wanted) ? { allowList: allowListStatus(db, wanted) } : {}),
        ...(backups !== undefined ? { backups: backups.slice(0, KindLimits.backupsInStatus).map((b) => ({ id: b.id, type: b.type, label: b.label, created: b.created })) } : {}),
        ...(backupsRead !== undefined ? { backupsRead } : {}),
        engineConfigForms: forms.length > 0 ? forms : undefined,
      },
      ready: active,
      ...(active ? {} : failedAfterRestore
        ? { readyReason: ManagedDatabaseReasons.RestoreFailed, readyMessage: `the database is failed after restoring backup ${String(restored.backupId ?? "?")} (request ${restored.token}); the spec: a restore after a credentials reset leaves the cluster failed` }
        : { readyReason: pendingReason[db.status] ?? R.Unavailable, readyMessage: db.status === "suspended" || db.status === "suspending"
          ? `the cluster is ${db.status}${m.spec.suspended ? " as spec.suspended asks" : " (outside: it is resumed)"}: stopped and not billed, its data and the connection Secret kept${m.spec.suspended ? "; set spec.suspended: false to resume it" : ""}`
          : `the database is ${db.status}` }),
      upToDate: isEmptyDiff(diff),
      diff: diff.summary,
      delta: diff,
      // Every problem found: the first one's reason is the one Synced shows.
      unfixable: problems(
        unsupported.length > 0 && { reason: SharedReasons.UnsupportedOnPlatform, message: `${unsupportedMessage(unsupported, platform)}. The database is on the ${platform} platform (status.platform: ${platform}): nothing is sent` },
        allowListHeld,
        configProblems.length > 0 && { reason: ManagedDatabaseReasons.InvalidEngineConfig, message: `spec.engineConfig has what the ${engine} parameters do not accept, so nothing is sent: ${configProblems.join("; ")}` },
        upgrade !== undefined && { reason: ManagedDatabaseReasons.UnknownEngineVersion, message: `spec.version asks for an upgrade to a version the API does not offer, so nothing is sent: ${upgrade}` },
        resize !== undefined && { reason: ManagedDatabaseReasons.ResizeNotAllowed, message: `spec.type asks for a resize the API does not allow, so nothing is sent: ${resize}` },
        nodes !== undefined && { reason: ManagedDatabaseReasons.ResizeNotAllowed, message: `spec.clusterSize asks for what the API does not allow, so nothing is sent: ${nodes}` },
        mismatches.length > 0 && { reason: SharedReasons.ImmutableFieldMismatch, message: `the database differs from the spec in what cannot change (a new cluster would be needed), so nothing is sent: ${mismatches.join("; ")}` },
      ),
      ...((active || (db.status === "suspended" && m.spec.suspended)) && isEmptyDiff(diff) && recentReset(m) === undefined
        ? (active ? {} : { pollMillis: this.deps.poll.readyMillis })
        : { pollMillis: this.deps.poll.pendingMillis }),
    };
  }

  /**
   * What the API would refuse is refused before the create is announced or sent (a version it
   * does not offer, parameters its catalogue refuses, 2 nodes on a shared plan, a fork it cannot
   * make); a fork's source not ready yet is waited for.
   */
  async readyToCreate(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<Deferral | ReadyToCreate<ForkInput> | undefined> {
    const platform = newDatabasePlatform(m.spec.engine, this.deps.newDatabasePlatform);
    const unsupported = unsupportedOnPlatform(m.spec, m.obj.spec, platform);
    if (unsupported.length > 0) {
      throw new TerminalError(SharedReasons.UnsupportedOnPlatform, `${unsupportedMessage(unsupported, platform)}. New ${m.spec.engine} databases are created on the ${platform} platform${m.spec.engine === "valkey" ? "" : ` (--database-platform ${platform})`}: nothing was sent`);
    }
    await this.deps.catalog.checkVersion(m.spec.engine, m.spec.version, signal);
    if (m.spec.engineConfig !== undefined) {
      const problems = engineConfigProblems(m.spec.engineConfig, await this.deps.catalog.engineParameters(m.spec.engine, signal));
      if (problems.length > 0) throw new TerminalError(ManagedDatabaseReasons.InvalidEngineConfig, `spec.engineConfig has what the ${m.spec.engine} parameters do not accept, so nothing was sent: ${problems.join("; ")}`);
    }
    const nodes = await this.deps.catalog.nodesRefusal(m.spec.type, m.spec.clusterSize, signal);
    if (nodes !== undefined) throw new TerminalError(ManagedDatabaseReasons.ResizeNotAllowed, `spec.clusterSize: ${nodes}; nothing was sent`);
    if (m.spec.privateNetwork !== undefined) this.deps.mayName(m, joining(m.spec.privateNetwork));
    const wanted = this.deps.allowList(m);
    if ("held" in wanted) {
      // The operator's rights change only with a restart; a ConfigMap appearing or changing wakes the database.
      if (wanted.held.reason === SharedReasons.NodesNotReadable) throw new TerminalError(wanted.held.reason, `${wanted.held.message}; nothing was created`);
      return { reason: wanted.held.reason, message: `${wanted.held.message}; the database is created once it can be`, retryAfterMillis: this.deps.poll.readyMillis };
    }
    if (wanted.empty && !m.spec.allowEmpty) {
      return { reason: ManagedDatabaseReasons.AllowListWouldBeEmpty, message: "spec.allowListFrom selects no node with an address and spec.allowList is empty: the database is created once there is one to allow (set spec.allowEmpty: true to create it allowing nobody)", retryAfterMillis: this.deps.poll.readyMillis };
    }
    const planned = await planFork(m, {
      get: (engine, id, s) => this.deps.cache.get(engine, id, this.deps.poll.pendingMillis, s),
      accountId: this.deps.accountId, retryMillis: this.deps.poll.pendingMillis, now: Date.now,
      claimedElsewhere: (id) => this.deps.claimedElsewhere(m, id),
    }, signal);
    if (planned !== undefined && "wait" in planned) return planned.wait;
    // The fork checked here is the one the create of this pass sends.
    return planned !== undefined ? { prepared: planned.fork } : undefined;
  }

  /** The label a create about to be sent carries: a lost one is looked for by exactly that. */
  intent(m: Managed<ManagedDatabaseSpec>): Record<string, string> {
    return { label: labelOf(m, this.deps.clusterId) };
  }

  async create(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal, fork?: ForkInput): Promise<Created> {
    const s = m.spec;
    const label = labelOf(m, this.deps.clusterId);
    const wanted = this.deps.allowList(m);
    // readyToCreate held this pass back if the list could not be made; it cannot have changed since.
    if ("held" in wanted) throw new RetryAfterError(wanted.held.reason, wanted.held.message, this.deps.poll.pendingMillis);
    // Never a plain create in place of a fork: readyToCreate checked this one in the same pass.
    if (s.restoreFrom !== undefined && fork === undefined) throw new RetryAfterError(R.Waiting, "the fork is checked again before it is sent", this.deps.poll.pendingMillis);
    const req = createRequest(s, newDatabasePlatform(s.engine, this.deps.newDatabasePlatform), label, wanted.entries, s.restoreFrom !== undefined ? fork : undefined);
    let db: Database;
    try {
      db = await this.deps.linode.databases.engine(s.engine).create(req, { signal });
    } catch (err) {
      if (isLabelTaken(err)) throw labelInUse("database", "databaseId", label);
      throw translateLinodeError(err, "creating the database");
    }
    this.deps.cache.put(s.engine, db);
    if (fork !== undefined) {
      const { reason, action } = ManagedDatabaseEvents.Forked;
      this.deps.events.normal(m.obj, reason, action, `forking database ${String(fork.source)} as of ${fork.restoreTime !== undefined ? rfc3339(parseApiTime(fork.restoreTime)) : "the latest restore point"} into database ${String(db.id)}; the source keeps running (and billing)`);
    }
    return { externalId: String(db.id), status: { id: db.id } };
  }

  async update(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<void> {
    const db = observed.external;
    const api = this.deps.linode.databases.engine(m.spec.engine);
    if (observed.delta.power === "resume") {
      // Resumed first: every other change waits until the cluster is active again.
      await linodeCall("resuming the cluster", () => api.resume(db.id, { signal }));
      this.deps.cache.invalidate(m.spec.engine, db.id);
      return;
    }
    if (db.status !== "active") {
      // Looked at again fresh (one GET), not through a list up to a drift window old that would
      // keep saying it is busy: drift someone made (which leaves it `updating` a while) is put
      // back once it is active, within the window it was found in.
      this.deps.cache.invalidate(m.spec.engine, db.id);
      throw new RetryAfterError(R.Waiting, `the database is ${db.status}; changes are applied once it is active`, this.deps.poll.pendingMillis);
    }
    const diff = observed.delta;
    if (isEmptyDiff(diff)) return;
    if (diff.update.allowList !== undefined && m.spec.allowListFrom !== undefined) {
      // The API asks not to update an allow list in rapid succession: when it follows the
      // cluster, changes meanwhile (a node pool rolling) wait, and the next update carries them
      // all. A list only people edit is sent at once (the work queue coalesces a burst of edits).
      const wait = (this.allowListUpdated.get(db.id) ?? -Infinity) + this.deps.allowListIntervalMillis - Date.now();
      if (wait > 0) {
        throw new RetryAfterError(R.Waiting, `the allow list changed again within ${String(this.deps.allowListIntervalMillis / 1000)} s of its last update; the next update, carrying every change meanwhile, goes in ${String(Math.ceil(wait / 1000))} s (the API asks not to update it in rapid succession)`, wait);
      }
    }
    // A VPC is an account object like any other: joining one by id is named where naming is allowed.
    if (diff.update.privateNetwork !== undefined && diff.update.privateNetwork !== null) this.deps.mayName(m, joining(diff.update.privateNetwork));
    if (Object.keys(diff.update).length > 0) {
      const answer = await linodeCall(`updating ${diff.summary}`, () => api.update(db.id, diff.update, { signal }));
      if (diff.engineConfigChanges !== undefined) this.learnForms(db.id, storedForms(diff.engineConfigChanges, apiNames(answer.engineConfig)));
      // Only lists that follow the cluster are spaced (a list only people edit is sent at once).
      if (diff.update.allowList !== undefined && m.spec.allowListFrom !== undefined) this.spaceAllowList(db.id);
      this.deps.cache.invalidate(m.spec.engine, db.id);
      const restart = restarting(diff.engineConfigPaths ?? [], await this.deps.catalog.engineParameters(m.spec.engine, signal));
      if (restart.length > 0) {
        const { reason, action } = ManagedDatabaseEvents.EngineRestart;
        this.deps.events.warning(m.obj, reason, action, `changed ${restart.join(", ")}, which the API applies by restarting the cluster: connections drop meanwhile`);
      }
    }
    // Suspended last, once what else the spec asks for is applied.
    if (diff.power === "suspend") {
      await linodeCall("suspending the cluster", () => api.suspend(db.id, { signal }));
      this.deps.cache.invalidate(m.spec.engine, db.id);
    }
  }

  async delete(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<{ gone: boolean }> {
    const db = observed.external;
    if (db.status === "suspended") {
      // Assumed (the sources are silent; the emulator does so): the API deletes a running cluster
      // only, as it changes one. Resumed, then deleted once active.
      await linodeCall("resuming the cluster to delete it", () => this.deps.linode.databases.engine(m.spec.engine).resume(db.id, { signal }));
      this.deps.cache.invalidate(m.spec.engine, db.id);
      throw new RetryAfterError(R.Waiting, "the database was suspended: it is resumed so that it can be deleted, and deleted once active", this.deps.poll.pendingMillis);
    }
    if (!deletable.has(db.status)) {
      throw new RetryAfterError(R.Waiting, `the database is ${db.status}; it is deleted as soon as its status allows`, this.deps.poll.pendingMillis);
    }
    try {
      await linodeCall("deleting the database", () => this.deps.linode.databases.engine(m.spec.engine).delete(db.id, { signal }));
    } catch (err) {
      if (isNotFound(err)) return { gone: true };
      throw err;
    }
    this.deps.cache.invalidate(m.spec.engine, db.id);
    return { gone: false };
  }

  /** Its resource is gone and the database stays (Retain, Observe): its backups are held no longer. */
  forget(id: number): void {
    this.deps.backups.forget(id);
    this.forms.delete(id);
  }

  /**
   * The forms the API stores this database's wanted parameters in: learned by this process, or
   * recorded in status by an earlier one; only those of a value the spec still asks for.
   */
  private formsOf(m: Managed<ManagedDatabaseSpec>, id: number): StoredForm[] {
    const recorded = storedFormsSchema.safeParse(m.obj.status?.engineConfigForms ?? []);
    const all = [...(recorded.success && m.obj.status?.id === id ? recorded.data : []), ...(this.forms.get(id) ?? [])];
    const wanted = new Map(engineConfigEntries(m.spec.engineConfig).map(([k, v]) => [k, JSON.stringify(v)]));
    const out = new Map<string, StoredForm>();
    for (const f of all) if (wanted.get(f.parameter) === f.sent) out.set(f.parameter, f);
    return [...out.values()].sort((a, b) => a.parameter.localeCompare(b.parameter));
  }

  private learnForms(id: number, learned: StoredForm[]): void {
    if (learned.length === 0) return;
    const kept = (this.forms.get(id) ?? []).filter((f) => !learned.some((l) => l.parameter === f.parameter));
    this.forms.set(id, [...kept, ...learned]);
  }

  /** Remembers the update, and forgets those whose interval has passed (a deleted database's with them). */
  private spaceAllowList(id: number): void {
    const now = Date.now();
    this.forgetSpacedBefore(now);
    this.allowListUpdated.set(id, now);
  }

  /** Updates whose interval has passed space nothing any more (a deleted database's with them). */
  private forgetSpacedBefore(now: number): void {
    for (const [other, at] of this.allowListUpdated) if (now - at >= this.deps.allowListIntervalMillis) this.allowListUpdated.delete(other);
  }

  afterObserve(m: Managed<ManagedDatabaseSpec>, observed: ObservedDatabase, signal: AbortSignal): Promise<AfterObserve | undefined> {
    if (observed.readyReason === ManagedDatabaseReasons.RestoreFailed && getCondition(m.obj.status?.conditions, "Ready")?.reason !== ManagedDatabaseReasons.RestoreFailed) {
      this.deps.events.warning(m.obj, ManagedDatabaseEvents.RestoreFailed.reason, ManagedDatabaseEvents.RestoreFailed.action, observed.readyMessage ?? "the database is failed after a restore");
    }
    return this.deps.requests.perform(m, observed.external, signal);
  }
}

/**
 * Fields the API may stop reporting (a VPC left, maintenance applied): absent here means
 * removed from status, not kept from an earlier observation. oldestRestoreTime is reported no
 * more (it slides with time: the metric linode_database_oldest_restore_time_seconds), so it is
 * removed once where a status of before still has it.
 */
const reportedOrRemoved = ["allowList", "port", "totalDiskSizeGb", "usedDiskSizeGb", "privateNetwork", "updates", "pendingUpdates", "fork", "oldestRestoreTime"] as const;

/** Why the allow list the spec asks for is not sent, if it is not (nothing else is sent either). */
function allowListProblem(spec: ManagedDatabaseSpec, wanted: AllowListResolution, db: Database): { reason: string; message: string } | undefined {
  if ("held" in wanted) return wanted.held;
  if (!wanted.empty || spec.allowEmpty || db.allowList.length === 0) return undefined;
  return {
    reason: ManagedDatabaseReasons.AllowListWouldBeEmpty,
    message: `spec.allowListFrom selects no node with an address now and spec.allowList is empty: the database keeps its allow list (${String(db.allowList.length)} entries) rather than blocking every connection; nothing is sent. Set spec.allowEmpty: true to allow nobody`,
  };
}

/** The database's allow list, each entry with where the spec took it from. */
function allowListStatus(db: Database, wanted: DesiredAllowList): NonNullable<ObservedStatus["allowList"]> {
  return normalizeAllowList(db.allowList).map((entry) => ({ entry, from: wanted.from.get(entry)?.join("; ") ?? "not asked for (removed at the next update)" }));
}

function statusOf(db: Database): ObservedStatus {
  const reported = reportedStatus(db);
  // The status writer merges fields; one set to undefined is removed (status-patch.ts).
  return { ...Object.fromEntries(reportedOrRemoved.map((k) => [k, undefined])), ...reported };
}

function reportedStatus(db: Database): ObservedStatus {
  return {
    id: db.id,
    label: db.label,
    status: db.status,
    platform: databasePlatform(db),
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
    ...(db.fork !== null && db.fork !== undefined
      ? { fork: { source: db.fork.source, ...(db.fork.restoreTime !== null && db.fork.restoreTime !== undefined ? { restoreTime: rfc3339(parseApiTime(db.fork.restoreTime)) } : {}) } } : {}),
    ...(db.privateNetwork !== null && db.privateNetwork !== undefined && db.privateNetwork.vpcId !== null && db.privateNetwork.vpcId !== undefined && db.privateNetwork.subnetId !== null && db.privateNetwork.subnetId !== undefined
      ? { privateNetwork: { vpcId: db.privateNetwork.vpcId, subnetId: db.privateNetwork.subnetId, publicAccess: db.privateNetwork.publicAccess ?? false } } : {}),
    ...(db.totalDiskSizeGb !== null ? { totalDiskSizeGb: db.totalDiskSizeGb } : {}),
    ...(db.usedDiskSizeGb !== null ? { usedDiskSizeGb: db.usedDiskSizeGb } : {}),
    ...(db.updates !== null ? { updates: windowOf(db.updates), ...(db.updates.pending.length > 0 ? { pendingUpdates: pendingOf(db.updates) } : {}) } : {}),
  };
}

const windowOf = (u: MaintenanceWindow): NonNullable<ObservedStatus["updates"]> => ({
  frequency: u.frequency, duration: u.duration,
  ...(u.hourOfDay !== null ? { hourOfDay: u.hourOfDay } : {}),
  ...(u.dayOfWeek !== null ? { dayOfWeek: u.dayOfWeek } : {}),
  ...(u.weekOfMonth !== null ? { weekOfMonth: u.weekOfMonth } : {}),
});

const pendingOf = (u: MaintenanceWindow): NonNullable<ObservedStatus["pendingUpdates"]> => u.pending.map((p) => ({
  ...(p.description !== null && p.description !== undefined ? { description: p.description } : {}),
  ...(p.plannedFor !== null ? { plannedFor: p.plannedFor } : {}),
  ...(p.deadline !== null ? { deadline: p.deadline } : {}),
}));

/** Pending updates in `now` that `before` (what status showed) did not list: each is news. */
export function newPendingUpdates(before: unknown, now: NonNullable<ObservedStatus["pendingUpdates"]>): NonNullable<ObservedStatus["pendingUpdates"]> {
  const seen = new Set((Array.isArray(before) ? before : []).map((p) => JSON.stringify(p)));
  return now.filter((p) => !seen.has(JSON.stringify(p)));
}

/** The backups list status recorded for database `id` (what a restarted operator starts from), if whole. */
function recordedBackups(status: Record<string, unknown> | undefined, id: number): BackupsRecord | undefined {
  const parsed = recordedBackupsSchema.safeParse(status);
  if (!parsed.success || parsed.data.id !== id) return undefined;
  return { at: parsed.data.backupsRead.at, mark: parsed.data.backupsRead.mark, backups: parsed.data.backups };
}
const recordedBackupsSchema = z.object({
  id: z.int(),
  backupsRead: z.object({ at: z.string(), mark: z.string() }),
  backups: z.array(z.object({ id: z.int(), type: z.string(), label: z.string(), created: z.string() })).default([]),
});

const storedFormSchema = z.object({ parameter: z.string(), sent: z.string(), stored: z.string() });
/** Made once: a zod schema built on every look at every database cost more than the parse. */
const storedFormsSchema = z.array(storedFormSchema);

/** The spec's engine parameters as dotted paths with their values. */
function engineConfigEntries(config: Record<string, unknown> | undefined): [string, unknown][] {
  if (config === undefined) return [];
  return Object.entries(config).flatMap(([k, v]) => (v !== null && typeof v === "object" && !Array.isArray(v)
    ? Object.entries(v as Record<string, unknown>).map(([p, x]): [string, unknown] => [`${k}.${p}`, x])
    : [[k, v] as [string, unknown]]));
}

/** What joining a VPC subnet is called in a refusal (the ids as the spec gives them, nothing of what exists). */
const joining = (n: { vpcId: number; subnetId: number }): string => `joining VPC ${String(n.vpcId)} (subnet ${String(n.subnetId)}) by id (spec.privateNetwork)`;

/** The start of an UnsupportedOnPlatform message: what the spec asks for that `platform` does not take. */
const unsupportedMessage = (fields: string[], platform: DatabasePlatform): string =>
  `Linode's ${platform} database platform does not take what the spec asks for: ${fields.join("; ")}`;
