// DatabaseSnapshot ↔ Linode: one snapshot backup of the referenced ManagedDatabase's database.
// The create answers `{}`, so the backup is found by its label in the database's backups
// (only after a create that may have happened: create-pending). Its identity, once found, is
// `engine/databaseId/backupId`, so a snapshot keeps working (and can be deleted) whatever
// happens to the ManagedDatabase resource. The API's limits (3 snapshots, one backup at a
// time, an active database) are a queue: readyToCreate checks them, and the snapshots of one
// database go in creation order, woken by each other and by the database's changes.
import { isNotFound as isLinodeNotFound, type DatabaseBackup, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import { isTrue } from "../../runtime/conditions.ts";
import { TerminalError } from "../../runtime/errors.ts";
import { EXTERNAL_ID_ANNOTATION } from "../../runtime/reconciler.ts";
import type { Created, Deferral, ExternalClient, Managed, ManagedObject, Observation, Observed } from "../../runtime/managed.ts";
import { referrersIndex } from "../../runtime/managed.ts";
import type { ReadStore } from "../../runtime/stores.ts";
import { jittered, type PollIntervals } from "../../runtime/timings.ts";
import { KindReasons, KindTimings } from "../shared/constants.ts";
import { labelOf } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import type { DatabaseSnapshotSpec, DatabaseSnapshotStatus } from "./schema.ts";

export const DATABASE_REFERENCE = "database";
const SNAPSHOTS_PER_DATABASE = 3;

export type SnapshotStatus = Omit<DatabaseSnapshotStatus, "conditions" | "observedGeneration">;
type ObservedSnapshot = Observed<DatabaseBackup, SnapshotStatus>;

/** Where a backup lives: the engine's API, the database, the backup. */
export interface SnapshotId { engine: DatabaseEngine; databaseId: number; backupId: number }

export function parseSnapshotId(externalId: string): SnapshotId | undefined {
  const m = /^(mysql|postgresql)\/(\d+)\/(\d+)$/.exec(externalId);
  return m === null ? undefined : { engine: m[1] as DatabaseEngine, databaseId: Number(m[2]), backupId: Number(m[3]) };
}

const formatSnapshotId = (id: SnapshotId): string => `${id.engine}/${String(id.databaseId)}/${String(id.backupId)}`;

/** The database a snapshot is of, as its ManagedDatabase resource says. */
interface TargetDatabase { engine: DatabaseEngine; id: number; name: string }

function targetOf(m: Managed<DatabaseSnapshotSpec>): TargetDatabase | undefined {
  const obj = m.refs[DATABASE_REFERENCE]?.get(m.spec.databaseRef.name);
  const engine = (obj?.spec as { engine?: string } | undefined)?.engine;
  const id = (obj?.status as { id?: unknown } | undefined)?.id;
  if (obj === undefined || (engine !== "mysql" && engine !== "postgresql") || typeof id !== "number") return undefined;
  return { engine, id, name: obj.metadata.name };
}

/** A referenced ManagedDatabase is usable once it is Ready (it then has a database id). */
export function databaseNotReady(obj: ManagedObject): string | undefined {
  if (!isTrue(obj.status?.conditions, "Ready")) return "it is not Ready";
  return typeof obj.status?.id === "number" ? undefined : "it has no database id yet";
}

const created = (o: ManagedObject): string => String(o.metadata.creationTimestamp ?? "");

export class DatabaseSnapshotExternal implements ExternalClient<DatabaseSnapshotSpec, DatabaseBackup, SnapshotStatus> {
  private readonly linode: LinodeClient;
  private readonly self: ReadStore<ManagedObject>;
  private readonly clusterId: string;
  private readonly poll: PollIntervals;

  constructor(deps: { linode: LinodeClient; self: ReadStore<ManagedObject>; clusterId: string; poll: PollIntervals }) {
    this.linode = deps.linode;
    this.self = deps.self;
    this.clusterId = deps.clusterId;
    this.poll = deps.poll;
  }

  /** The spec's label, or one derived from the cluster, namespace and name: letters and digits, at most 30. */
  labelFor(m: Managed<DatabaseSnapshotSpec>): string {
    return labelOf(m, this.clusterId, { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" });
  }

  async observe(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Observation<DatabaseBackup, SnapshotStatus>> {
    const recorded = m.externalId !== undefined ? parseSnapshotId(m.externalId) : undefined;
    if (recorded !== undefined) {
      const api = this.linode.databases.engine(recorded.engine);
      try {
        const backup = await linodeCall("reading the backup", () => api.getBackup(recorded.databaseId, recorded.backupId, { signal }));
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
        : { exists: false, gone: { reason: KindReasons.DatabaseGone, message: `the database ${String(recorded.databaseId)} this snapshot belonged to no longer exists, and its backups with it; delete this resource` } };
    }
    const target = targetOf(m);
    if (target === undefined) return { exists: false };
    const label = this.labelFor(m);
    const explicit = m.spec.label !== undefined && m.obj.metadata.deletionTimestamp === undefined;
    if (m.createPending === undefined && !explicit) return { exists: false };
    const backups = await linodeCall("listing the database's backups", () => this.linode.databases.engine(target.engine).listAllBackups(target.id, { signal }));
    const found = backups.find((b) => b.type === "snapshot" && b.label === label);
    if (found === undefined) return { exists: false };
    // Ours only after a create that may have made it; an explicit label someone else used is not adopted.
    if (m.createPending === undefined) {
      throw new TerminalError(KindReasons.LabelInUse, `database ${String(target.id)} already has a snapshot labelled ${label} (backup ${String(found.id)}) that this resource did not take; choose another spec.label`);
    }
    return this.observed(found, { engine: target.engine, databaseId: target.id, backupId: found.id });
  }

  /** The queue: what this snapshot waits for, if anything; nothing is sent to find out. */
  async readyToCreate(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Deferral | undefined> {
    const target = targetOf(m);
    const waiting = (reason: string, message: string, phase: DatabaseSnapshotStatus["phase"] = "Waiting"): Deferral =>
      ({ reason, message, status: { phase, ...(target !== undefined ? { databaseId: target.id } : {}) } });
    if (target === undefined) return waiting(KindReasons.DatabaseNotActive, "the database has no id yet");
    // Snapshots of one database are taken in creation order: an earlier one still to be taken goes first.
    const ahead = this.self.byIndex(referrersIndex(DATABASE_REFERENCE), `${m.key.namespace}/${m.spec.databaseRef.name}`)
      .filter((o) => o.metadata.name !== m.key.name && o.metadata.deletionTimestamp === undefined
        && o.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] === undefined
        && (created(o) < created(m.obj) || (created(o) === created(m.obj) && o.metadata.name < m.key.name)))
      .sort((a, b) => created(a).localeCompare(created(b)) || a.metadata.name.localeCompare(b.metadata.name));
    const first = ahead[0];
    if (first !== undefined) {
      const theirs = first.status?.conditions?.find((c) => c.type === "Ready" && c.status === "False")?.reason;
      const reason = theirs === KindReasons.SnapshotLimitReached || theirs === KindReasons.DatabaseNotActive ? theirs : KindReasons.BackupInProgress;
      return waiting(reason, `DatabaseSnapshot ${first.metadata.name} (created earlier) is taken first`);
    }
    const api = this.linode.databases.engine(target.engine);
    const db = await linodeCall("reading the database", () => api.get(target.id, { signal }));
    if (db.status === "backing_up") {
      // Ours (announced and sent) is looked for again soon; someone else's wakes us when the database changes.
      return m.createPending !== undefined
        ? { ...waiting(KindReasons.BackingUp, "the snapshot is being taken", "BackingUp"), retryAfterMillis: this.poll.pendingMillis }
        : waiting(KindReasons.BackupInProgress, "another backup of the database is in progress");
    }
    if (db.status !== "active") return waiting(KindReasons.DatabaseNotActive, `the database is ${db.status}; snapshots need it active`);
    const backups = await linodeCall("listing the database's backups", () => api.listAllBackups(target.id, { signal }));
    const snapshots = backups.filter((b) => b.type === "snapshot").length;
    if (snapshots >= SNAPSHOTS_PER_DATABASE) {
      return waiting(KindReasons.SnapshotLimitReached, `the database has ${String(snapshots)} snapshots, the most the API allows; this one is taken when one is deleted`);
    }
    return undefined;
  }

  async create(m: Managed<DatabaseSnapshotSpec>, signal: AbortSignal): Promise<Created> {
    const target = targetOf(m);
    if (target === undefined) throw new Error("the database has no id yet");
    const label = this.labelFor(m);
    await linodeCall("taking the snapshot", () => this.linode.databases.engine(target.engine).createSnapshot(target.id, { label, target: m.spec.target }, { signal }));
    // The API answers {}: the backup is found by its label once it is listed.
    return { status: { phase: "BackingUp", databaseId: target.id, label } };
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
