// DatabaseSnapshot ↔ Linode: one snapshot backup of the referenced ManagedDatabase's database.
// The create answers `{}`, so the backup is found by its label in the database's backups
// (only after a create that may have happened: create-pending). Its identity, once found, is
// `engine/databaseId/backupId`, so a snapshot keeps working (and can be deleted) whatever
// happens to the ManagedDatabase resource. The API's limits (3 snapshots, one backup at a
// time, an active database) are a queue: readyToCreate checks them, and the snapshots of one
// database go in creation order, woken by each other and by the database's changes.
import { isNotFound as isLinodeNotFound, type DatabaseBackup, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import { ConditionReasons as R, getCondition, isPaused, jittered, referrersIndex, RetryAfterError, TerminalError, Timings, type Created, type Deferral, type ExternalClient, type Managed, type ManagedObject, type Observation, type Observed, type PollIntervals, type ReadStore } from "../../runtime/contract.ts";
import { KindTimings } from "../shared/constants.ts";
import { labelOf } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import type { DatabaseSnapshotSpec, DatabaseSnapshotStatus } from "./schema.ts";
import { DatabaseSnapshotReasons } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import { databaseReference, taken, type DatabaseView } from "./database-reference.ts";
import type { DatabaseListCache } from "../managed-database/public.ts";

const SNAPSHOTS_PER_DATABASE = 3;

/** The snapshot backup ids ManagedDatabase `name` (in `namespace`) shows for database `id`, if its list is current. */
export type ShownSnapshots = (namespace: string, name: string, id: number) => number[] | undefined;

export type SnapshotStatus = DatabaseSnapshotStatus;
type ObservedSnapshot = Observed<DatabaseBackup, SnapshotStatus>;

/** Where a backup lives: the engine's API, the database, the backup. */
export interface SnapshotId { engine: DatabaseEngine; databaseId: number; backupId: number }

export function parseSnapshotId(externalId: string): SnapshotId | undefined {
  const m = /^(mysql|postgresql)\/(\d+)\/(\d+)$/.exec(externalId);
  return m === null ? undefined : { engine: m[1] as DatabaseEngine, databaseId: Number(m[2]), backupId: Number(m[3]) };
}

const formatSnapshotId = (id: SnapshotId): string => `${id.engine}/${String(id.databaseId)}/${String(id.backupId)}`;

/** Whether the status an operator wrote names the backup `id` (legacy records: the annotation confirmed by status). */
export function hasBackup(obj: ManagedObject, id: SnapshotId): boolean {
  return obj.status?.databaseId === id.databaseId && obj.status.backupId === id.backupId;
}

/** The database a snapshot is of, as its ManagedDatabase resource says, once it has an id. */
type TargetDatabase = DatabaseView & { id: number };

function targetOf(m: Managed<DatabaseSnapshotSpec>): TargetDatabase | undefined {
  const view = databaseReference.value(m, m.spec.databaseRef.name);
  return view?.id === undefined ? undefined : { ...view, id: view.id };
}

/** Why no snapshot of a current-platform database can be taken. */
const unsupported = (db: DatabaseView): string =>
  `ManagedDatabase ${db.name}'s database is on Linode's current platform (status.platform: current), which has no backups: a snapshot cannot be taken there, and nothing is sent. A restore there is a point-in-time fork into a new cluster: a new ManagedDatabase with spec.restoreFrom.pointInTime.databaseRef.name: ${db.name} (any time since its oldest restore point, about seven days back: the metric linode_database_oldest_restore_time_seconds); delete this DatabaseSnapshot`;

/** The database a create announced for this snapshot targeted ("engine/id" in status.createPending). */
function pendingTarget(m: Managed<DatabaseSnapshotSpec>): { engine: DatabaseEngine; id: number } | undefined {
  const match = /^(mysql|postgresql)\/(\d+)$/.exec(m.createPending?.database ?? "");
  return match === null ? undefined : { engine: match[1] as DatabaseEngine, id: Number(match[2]) };
}

/** Snapshot Ready reasons of the queue itself: one that shows another reason cannot move by itself. */
const queueReasons = new Set<string>([R.Creating, DatabaseSnapshotReasons.SnapshotLimitReached, DatabaseSnapshotReasons.BackupInProgress, DatabaseSnapshotReasons.DatabaseNotActive, SharedReasons.BackingUp]);
/** Synced reasons that pass by themselves (retried): a snapshot showing another is stuck until someone acts. */
const passingReasons = new Set<string>([R.ReconcileSuccess, R.ReconcileError, R.RateLimited, R.Waiting]);
/**
 * Held on its database (the ManagedDatabase not found, or not Ready: busy with a backup, say):
 * the same one the snapshot asking has just found Ready, and whose change wakes it, so it moves
 * by itself and keeps its place. Its credentials have reasons of their own.
 */
const databaseReasons = new Set<string>([R.ReferenceNotFound, R.ReferenceNotReady]);

/** An earlier snapshot that will not be taken until someone acts (paused, refused, missing credentials): it holds no one up. */
function stuck(o: ManagedObject): boolean {
  if (isPaused(o)) return true;
  const synced = getCondition(o.status?.conditions, "Synced");
  if (synced?.status === "False" && !passingReasons.has(synced.reason) && !databaseReasons.has(synced.reason)) return true;
  const ready = getCondition(o.status?.conditions, "Ready");
  return ready?.status === "False" && !queueReasons.has(ready.reason) && !databaseReasons.has(ready.reason) && synced?.status !== "True";
}

const created = (o: ManagedObject): string => String(o.metadata.creationTimestamp ?? "");

/** When the latest of `snapshots` not taken yet announced its create (status.createPending), if any did. */
function latestAnnouncement(snapshots: ManagedObject[]): number | undefined {
  const times = snapshots.filter((o) => !taken(o))
    .map((o) => (o.status?.createPending as { at?: unknown } | null | undefined)?.at)
    .map((at) => (typeof at === "string" ? Date.parse(at) : Number.NaN))
    .filter((t) => Number.isFinite(t));
  return times.length === 0 ? undefined : Math.max(...times);
}

const snapshotKey = (m: Managed<DatabaseSnapshotSpec>): string => `${m.key.namespace}/${m.key.name}`;

/** How long what a create began is kept for its looks (afterCreate): a backup not found by then is looked for as after a restart. */
const AFTER_CREATE_KEPT_MILLIS = 10 * 60_000;

export class DatabaseSnapshotExternal implements ExternalClient<DatabaseSnapshotSpec, DatabaseBackup, SnapshotStatus> {
  private readonly linode: LinodeClient;
  private readonly self: ReadStore<ManagedObject>;
  private readonly clusterId: string;
  private readonly poll: PollIntervals;
  private readonly databases: DatabaseListCache;
  private readonly shownSnapshots: ShownSnapshots;
  /** When a backup of each database was begun, for as long as lists taken before it may still be served. */
  private readonly begun = new Map<number, number>();
  /**
   * Each snapshot whose backup this process began (its create answered), by key: when, and
   * whether a read of its database begun after that showed it no longer backing_up. Then its
   * next looks go straight to the backups list: before, each look the call budget deferred at
   * that list read the database again first (a GET at 500 databases an engine), 2 to 5 times
   * for 94 of 300 snapshots while converging. Kept up to AFTER_CREATE_KEPT_MILLIS.
   */
  private readonly afterCreate = new Map<string, { sentAt: number; done: boolean }>();

  /**
   * `databases`: the account's database lists, which the ManagedDatabases' reads share;
   * `shownSnapshots`: the snapshots a ManagedDatabase's status shows for a database, while current.
   */
  constructor(deps: { linode: LinodeClient; self: ReadStore<ManagedObject>; clusterId: string; poll: PollIntervals; databases: DatabaseListCache; shownSnapshots: ShownSnapshots }) {
    this.linode = deps.linode;
    this.self = deps.self;
    this.clusterId = deps.clusterId;
    this.poll = deps.poll;
    this.databases = deps.databases;
    this.shownSnapshots = deps.shownSnapshots;
  }

  /** The spec's label, or one derived from the cluster, namespace and name: letters and digits, at most 30. */
  labelFor(m: Managed<DatabaseSnapshotSpec>): string {
    return snapshotLabel(m, this.clusterId);
  }

  /** What a create about to be sent targets: found by exactly this label in exactly this database later. */
  intent(m: Managed<DatabaseSnapshotSpec>): Record<string, string> {
    const target = targetOf(m);
    return { label: this.labelFor(m), ...(target !== undefined ? { database: `${target.engine}/${String(target.id)}` } : {}) };
  }

  async observe(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Observation<DatabaseBackup, SnapshotStatus>> {
    const recorded = m.externalId !== undefined ? parseSnapshotId(m.externalId) : undefined;
    if (recorded !== undefined) {
      const api = this.linode.databases.engine(recorded.engine);
      try {
        const backup = await linodeCall("reading the backup", () => api.getBackup(recorded.databaseId, recorded.backupId, { signal }));
        this.refuseOtherDatabase(m, recorded);
        return this.observed(backup, recorded);
      } catch (err) {
        if (!isLinodeNotFound(err)) throw err;
      }
      // The backup is gone; with its database, or alone?
      const database = await linodeCall("reading the database", () => api.get(recorded.databaseId, { signal }).then(() => true, (e: unknown) => {
        if (isLinodeNotFound(e)) return false;
        throw e;
      }));
      return database
        ? { exists: false }
        : { exists: false, gone: { reason: SharedReasons.DatabaseGone, message: `the database ${String(recorded.databaseId)} this snapshot belonged to no longer exists, and its backups with it; delete this resource` } };
    }
    const deleting = m.obj.metadata.deletionTimestamp !== undefined;
    // A create that may have happened is looked for where it was sent, with the label it was sent with.
    const target = pendingTarget(m) ?? targetOf(m);
    // No backups to look through on the current platform (no call; readyToCreate says why).
    if (target === undefined || ("platform" in target && target.platform === "current")) return { exists: false };
    const label = m.createPending?.label ?? this.labelFor(m);
    const explicit = m.spec.label !== undefined && !deleting;
    if (m.createPending === undefined && !explicit) return { exists: false };
    // The API lists a backup only once it is done, and its database is backing_up until then:
    // while it is, there is nothing to look for. The list the ManagedDatabases share says so (one
    // newer than the backup began), or one call does, no dearer than the backups list it saves.
    const mine = this.afterCreate.get(snapshotKey(m));
    if (m.createPending !== undefined && !deleting && mine?.done !== true) {
      const readAt = Date.now();
      const maxAge = Math.min(this.poll.pendingMillis, readAt - (this.begun.get(target.id) ?? 0));
      const db = await linodeCall("reading the database", () => this.databases.fresh(target.engine, target.id, maxAge, signal));
      if (db?.status === "backing_up") return { exists: false };
      // Read no earlier than the backup began (a list no older than that, or a GET now), and not busy: it is done.
      if (mine !== undefined && readAt - maxAge >= mine.sentAt) mine.done = true;
    }
    const api = this.linode.databases.engine(target.engine);
    const backups = await linodeCall("listing the database's backups", () => api.listAllBackups(target.id, { signal }));
    const found = backups.find((b) => b.type === "snapshot" && b.label === label);
    if (found === undefined) {
      if (deleting && m.createPending !== undefined) await this.awaitStartedBackup(m, target, signal);
      return { exists: false };
    }
    // Ours only after a create that may have made it; an explicit label someone else used is not adopted.
    if (m.createPending === undefined) {
      throw new TerminalError(SharedReasons.LabelInUse, `database ${String(target.id)} already has a snapshot labelled ${label} (backup ${String(found.id)}) that this resource did not take; choose another spec.label`);
    }
    this.begun.delete(target.id);
    this.afterCreate.delete(snapshotKey(m));
    return this.observed(found, { engine: target.engine, databaseId: target.id, backupId: found.id });
  }

  /** The queue: what this snapshot waits for, if anything; nothing is sent to find out. */
  async readyToCreate(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Deferral | undefined> {
    const target = targetOf(m);
    const waiting = (reason: string, message: string, phase: DatabaseSnapshotStatus["phase"] = "Waiting"): Deferral =>
      ({ reason, message, status: { phase, ...(target !== undefined ? { databaseId: target.id } : {}) } });
    if (target === undefined) return waiting(DatabaseSnapshotReasons.DatabaseNotActive, "the database has no id yet");
    // A snapshot is a change to the database: not of one the operator only observes or was told to leave alone.
    if (target.managementPolicy === "Observe") {
      return waiting(SharedReasons.DatabaseNotManaged, `ManagedDatabase ${target.name} only observes its database (managementPolicy: Observe): the operator never changes it, and a snapshot is a change; nothing is sent until it is Manage`);
    }
    if (target.paused) {
      return waiting(SharedReasons.DatabasePaused, `ManagedDatabase ${target.name} is paused (annotation linode.operator.dev/paused: "true"): no snapshot is taken until it is removed`);
    }
    if (target.platform === "current") return waiting(SharedReasons.UnsupportedOnPlatform, unsupported(target), "Failed");
    // Snapshots of one database are taken in creation order: an earlier one still to be taken goes
    // first, unless it cannot move by itself (paused, refused, missing credentials).
    const siblings = this.self.byIndex(referrersIndex(databaseReference.name), `${m.key.namespace}/${m.spec.databaseRef.name}`)
      .filter((o) => o.metadata.name !== m.key.name);
    const ahead = siblings
      .filter((o) => o.metadata.deletionTimestamp === undefined
        && !taken(o) && !stuck(o)
        && (created(o) < created(m.obj) || (created(o) === created(m.obj) && o.metadata.name < m.key.name)))
      .sort((a, b) => created(a).localeCompare(created(b)) || a.metadata.name.localeCompare(b.metadata.name));
    const first = ahead[0];
    if (first !== undefined) {
      const theirs = first.status?.conditions?.find((c) => c.type === "Ready" && c.status === "False")?.reason;
      const reason = theirs === DatabaseSnapshotReasons.SnapshotLimitReached || theirs === DatabaseSnapshotReasons.DatabaseNotActive ? theirs : DatabaseSnapshotReasons.BackupInProgress;
      return waiting(reason, `DatabaseSnapshot ${first.metadata.name} (created earlier) is taken first`);
    }
    const api = this.linode.databases.engine(target.engine);
    // Before the first create, what the ManagedDatabase last observed stands in for a read: busy,
    // it waits (its database's change wakes this snapshot); active, it is not asked again (a
    // database busy since, by a backup begun outside, is the create's refusal, tried again).
    // After a create of its own, the API says; so too while another snapshot of it has a create
    // announced and its backup not found (paused, refused or deleted since, or gone ahead while
    // this one could not): that backup may be being taken, and a read no older than the
    // announcement decides, not a create the API would refuse.
    const announced = latestAnnouncement(siblings);
    const seen = m.createPending === undefined && announced === undefined ? target.apiStatus : undefined;
    if (seen === "backing_up") return waiting(DatabaseSnapshotReasons.BackupInProgress, "another backup of the database is in progress");
    if (seen !== undefined && seen !== "active") return waiting(DatabaseSnapshotReasons.DatabaseNotActive, `the database is ${seen}; snapshots need it active`);
    const maxAge = Math.max(0, Math.min(this.poll.pendingMillis, Date.now() - (announced ?? 0)));
    const db = seen === "active" ? { status: seen }
      : await linodeCall("reading the database", async () => await this.databases.fresh(target.engine, target.id, maxAge, signal) ?? await api.get(target.id, { signal }));
    if (db.status === "backing_up") {
      // Ours (announced and sent) is looked for again soon; someone else's wakes us when the database changes.
      return m.createPending !== undefined
        ? { ...waiting(SharedReasons.BackingUp, "the snapshot is being taken", "BackingUp"), retryAfterMillis: this.poll.pendingMillis }
        : waiting(DatabaseSnapshotReasons.BackupInProgress, "another backup of the database is in progress");
    }
    if (db.status !== "active") return waiting(DatabaseSnapshotReasons.DatabaseNotActive, `the database is ${db.status}; snapshots need it active`);
    const snapshots = await this.snapshotCount(m, target, signal);
    if (snapshots >= SNAPSHOTS_PER_DATABASE) {
      return waiting(DatabaseSnapshotReasons.SnapshotLimitReached, `the database has ${String(snapshots)} snapshots, the most the API allows; this one is taken when one is deleted`);
    }
    return undefined;
  }

  /**
   * How many snapshots the database has: the ones its ManagedDatabase's status lists while that
   * list is current (listed within the hour, or known none at its creation, with none of this
   * cluster's snapshots of it taken or lost since), instead of a list of its backups before every
   * snapshot. A snapshot made outside in that hour that fills the database makes the API refuse
   * the create, which says so.
   */
  private async snapshotCount(m: Managed<DatabaseSnapshotSpec>, target: TargetDatabase, signal: AbortSignal): Promise<number> {
    const shown = this.shownSnapshots(m.key.namespace, m.spec.databaseRef.name, target.id);
    if (shown !== undefined) return shown.length;
    const backups = await linodeCall("listing the database's backups", () => this.linode.databases.engine(target.engine).listAllBackups(target.id, { signal }));
    return backups.filter((b) => b.type === "snapshot").length;
  }

  async create(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Created> {
    const target = targetOf(m);
    if (target === undefined) throw new Error("the database has no id yet");
    const label = this.labelFor(m);
    await linodeCall("taking the snapshot", () => this.linode.databases.engine(target.engine).createSnapshot(target.id, { label, target: m.spec.target }, { signal }));
    // A list taken before now shows the database before the backup began: the next look needs a newer one.
    const now = Date.now();
    for (const [id, at] of this.begun) if (now - at > this.poll.pendingMillis) this.begun.delete(id);
    this.begun.set(target.id, now);
    for (const [key, c] of this.afterCreate) if (now - c.sentAt > AFTER_CREATE_KEPT_MILLIS) this.afterCreate.delete(key);
    this.afterCreate.set(snapshotKey(m), { sentAt: now, done: false });
    // The API answers {}: the backup is found by its label once it is listed, which no backup is
    // within moments of being begun.
    return { status: { phase: "BackingUp", databaseId: target.id, label }, lookAfterMillis: jittered(this.poll.pendingMillis) };
  }

  update(): Promise<void> {
    // Nothing of a backup can change: the spec's fields are immutable at admission.
    return Promise.resolve();
  }

  async delete(_m: Managed<DatabaseSnapshotSpec>, observed: ObservedSnapshot, signal: AbortSignal): Promise<{ gone: boolean }> {
    const id = parseSnapshotId(observed.externalId);
    if (id === undefined) return { gone: true };
    try {
      await linodeCall("deleting the backup", () => this.linode.databases.engine(id.engine).deleteBackup(id.databaseId, id.backupId, { signal }));
    } catch (err) {
      if (isLinodeNotFound(err)) return { gone: true };
      throw err;
    }
    return { gone: false };
  }

  /**
   * Deleted while the backup it started is being taken (the API lists it only once done): the
   * finalizer stays until it appears, then it is deleted, instead of leaving it behind to take
   * one of the database's snapshot slots for good.
   */
  private async awaitStartedBackup(m: Managed<DatabaseSnapshotSpec>, target: { engine: DatabaseEngine; id: number }, signal: AbortSignal): Promise<void> {
    const at = Date.parse(m.createPending?.at ?? "");
    const maybeInFlight = Number.isFinite(at) && Date.now() - at < Timings.createGraceMillis;
    const status = await linodeCall("reading the database", () => this.linode.databases.engine(target.engine).get(target.id, { signal }).then((db) => db.status, (e: unknown) => {
      if (isLinodeNotFound(e)) return "gone";
      throw e;
    }));
    if (status === "backing_up" || (maybeInFlight && status !== "gone")) {
      throw new RetryAfterError(SharedReasons.BackingUp, `the backup this snapshot started is still being taken (database ${String(target.id)} is ${status}); it is deleted as soon as it appears`, this.poll.pendingMillis);
    }
  }

  /** A recorded backup of another database than the one databaseRef's ManagedDatabase manages is never acted on for it. */
  private refuseOtherDatabase(m: Managed<DatabaseSnapshotSpec>, recorded: SnapshotId): void {
    if (m.obj.metadata.deletionTimestamp !== undefined) return;
    const target = targetOf(m);
    if (target === undefined || target.id === recorded.databaseId) return;
    throw new TerminalError(DatabaseSnapshotReasons.BackupIdMismatch, `the backup this resource recorded (${String(recorded.backupId)}) belongs to database ${String(recorded.databaseId)}, but ManagedDatabase ${target.name} manages database ${String(target.id)}: nothing is done with it for this resource; delete it, or create a new DatabaseSnapshot`);
  }

  private observed(backup: DatabaseBackup, id: SnapshotId): ObservedSnapshot {
    return {
      exists: true,
      external: backup,
      externalId: formatSnapshotId(id),
      status: { phase: "Available", backupId: backup.id, databaseId: id.databaseId, label: backup.label, created: backup.created },
      ready: true,
      upToDate: true,
      pollMillis: jittered(this.poll.readyMillis * KindTimings.snapshotRefreshPolls),
    };
  }
}

/** A snapshot's backup label: the spec's, or one derived from the cluster, namespace and name (letters and digits, at most 30). */
export function snapshotLabel(m: { spec: { label?: string | undefined }; key: { namespace: string; name: string } }, clusterId: string): string {
  return labelOf(m, clusterId, { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" });
}
