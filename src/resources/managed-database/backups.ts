// A database's backups for its status (so a user can pick one to restore). Listing them costs
// a call per database, the only per-object read of a settled database, so it is rare: at most
// once per refresh period (default a day: automatic backups are daily), and again at once when
// this cluster's DatabaseSnapshots of it lose one (deleted, or retained) or after a restore. A
// snapshot this cluster took is added to the last list as its DatabaseSnapshot observed it in
// the API (no list again for it). A database this resource has just created has none to read.
import { createHash } from "node:crypto";
import { isNotFound, type DatabaseBackup, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import type { KubeObject } from "../../runtime/contract.ts";
import { snapshotView } from "../database-snapshot/public.ts";
import { linodeCall } from "../shared/linode-errors.ts";

/**
 * `at`: when listed; `since`: when a list first found these backups under this mark, what status
 * records: a list that finds the same is no news, and rewriting status for it would cost a write
 * per database per refresh while nothing changed. (A restart trusts the record for the rest of
 * its period from `since`: if anything, it lists sooner.)
 */
interface Read { at: number; since: number; mark: string; backups: DatabaseBackup[] | undefined }

/** What status records of the last list (so a restarted operator need not list again): when, and a digest of the mark then. */
export interface BackupsRecord { at: string; mark: string; backups: DatabaseBackup[] }

/** The mark as status records it: a short digest (the mark itself grows with the snapshots). */
export const markDigest = (mark: string): string => createHash("sha256").update(mark).digest("hex").slice(0, 16);

/**
 * The backups of database `databaseId` that this cluster's DatabaseSnapshots naming its
 * ManagedDatabase hold, as they observed them (one taken of a database it managed before is not one of them).
 */
export const snapshotBackupsOf = (snapshots: KubeObject[], databaseId: number): DatabaseBackup[] => snapshots.flatMap((s) => {
  const held = snapshotView(s).value;
  return held?.backupId !== undefined && held.databaseId === databaseId && held.label !== undefined && held.created !== undefined
    ? [{ id: held.backupId, type: "snapshot", label: held.label, created: held.created }] : [];
});

/** The mark of the snapshots' backups: their ids, in order. */
export const markOf = (known: DatabaseBackup[]): string => known.map((b) => b.id).sort((a, b) => a - b).join(",");

/** Whether mark `now` holds every backup of mark `before` (snapshots were only added). */
function addsOnly(before: string, now: string): boolean {
  const ids = new Set(now.split(","));
  return before === "" || before.split(",").every((b) => ids.has(b));
}

/** Whether a list under `mark` found the backups `read` holds (the same ids: a backup never changes). */
export function sameBackups(read: { mark: string; backups: DatabaseBackup[] | undefined }, mark: string, backups: DatabaseBackup[] | undefined): boolean {
  if (read.mark !== mark || (read.backups === undefined) !== (backups === undefined)) return false;
  const ids = (list: DatabaseBackup[] | undefined): string => (list ?? []).map((b) => b.id).sort((a, b) => a - b).join(",");
  return ids(read.backups) === ids(backups);
}

const newestFirst = (backups: DatabaseBackup[]): DatabaseBackup[] => backups.sort((a, b) => b.created.localeCompare(a.created));

export class BackupsReader {
  private readonly linode: LinodeClient;
  private readonly refreshMillis: number;
  private readonly reads = new Map<number, Read>();

  constructor(linode: LinodeClient, refreshMillis: number) {
    this.linode = linode;
    this.refreshMillis = refreshMillis;
  }

  /**
   * The database's backups, newest first; undefined where the API has no backups endpoint.
   * `known`: the backups this cluster's DatabaseSnapshots of it hold, as they observed them (their
   * ids are the mark); `fresh` says the database was created by this resource moments ago (it
   * has none yet).
   */
  async latest(engine: DatabaseEngine, id: number, known: DatabaseBackup[], fresh: boolean, signal: AbortSignal, recorded?: BackupsRecord): Promise<DatabaseBackup[] | undefined> {
    const mark = markOf(known);
    // After a restart, the list status recorded stands for the rest of its period while the mark is the same.
    const recordedAt = Date.parse(recorded?.at ?? "");
    if (!this.reads.has(id) && recorded !== undefined && recorded.mark === markDigest(mark) && Date.now() - recordedAt < this.refreshMillis) {
      this.reads.set(id, { at: recordedAt, since: recordedAt, mark, backups: recorded.backups });
    }
    const cached = this.reads.get(id);
    const inPeriod = cached !== undefined && Date.now() - cached.at < this.refreshMillis;
    if (inPeriod && cached.mark === mark) return cached.backups;
    // Only snapshots taken since: each is in the API as its DatabaseSnapshot found it there.
    if (inPeriod && cached.backups !== undefined && addsOnly(cached.mark, mark)) {
      const have = new Set(cached.backups.map((b) => b.id));
      const backups = newestFirst([...cached.backups, ...known.filter((b) => !have.has(b.id))]);
      this.reads.set(id, { at: cached.at, since: Date.now(), mark, backups });
      return backups;
    }
    if (cached === undefined && fresh && mark === "") {
      this.reads.set(id, { at: Date.now(), since: Date.now(), mark, backups: [] });
      return [];
    }
    let backups: DatabaseBackup[] | undefined;
    try {
      backups = newestFirst(await linodeCall("listing the backups", () => this.linode.databases.engine(engine).listAllBackups(id, { signal })));
    } catch (err) {
      // The current database platform has no backups endpoint: nothing to show, not an error.
      if (!isNotFound(err)) throw err;
    }
    const now = Date.now();
    this.reads.set(id, { at: now, since: cached !== undefined && sameBackups(cached, mark, backups) ? cached.since : now, mark, backups });
    return backups;
  }

  /** When a list first found the database's backups as they are, and under which mark (status records it; undefined when not listed). */
  readOf(id: number): { at: string; mark: string } | undefined {
    const r = this.reads.get(id);
    return r === undefined ? undefined : { at: new Date(r.since).toISOString().replace(/\.\d{3}Z$/, "Z"), mark: markDigest(r.mark) };
  }

  /** Databases whose backups are held. */
  get size(): number {
    return this.reads.size;
  }

  /** Forget a database's backups (once it is gone). */
  forget(id: number): void {
    this.reads.delete(id);
  }
}
