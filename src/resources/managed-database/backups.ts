// A database's backups for its status (so a user can pick one to restore). Listing them costs
// a call per database, the only per-object read of a settled database, so it is rare: at most
// once per refresh period (default a day: automatic backups are daily), and again at once when
// this cluster's DatabaseSnapshots of it change (their mark) or after a restore. A database this
// resource has just created has none to read.
import { createHash } from "node:crypto";
import { isNotFound, type DatabaseBackup, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import { linodeCall } from "../shared/linode-errors.ts";

interface Read { at: number; mark: string; backups: DatabaseBackup[] | undefined }

/** What status records of the last list (so a restarted operator need not list again): when, and a digest of the mark then. */
export interface BackupsRecord { at: string; mark: string; backups: DatabaseBackup[] }

/** The mark as status records it: a short digest (the mark itself grows with the snapshots). */
export const markDigest = (mark: string): string => createHash("sha256").update(mark).digest("hex").slice(0, 16);

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
   * `mark` changes when something this operator knows of changed them (a snapshot taken);
   * `fresh` says the database was created by this resource moments ago (it has none yet).
   */
  async latest(engine: DatabaseEngine, id: number, mark: string, fresh: boolean, signal: AbortSignal, recorded?: BackupsRecord): Promise<DatabaseBackup[] | undefined> {
    // After a restart, the list status recorded stands for the rest of its period while the mark is the same.
    const recordedAt = Date.parse(recorded?.at ?? "");
    if (!this.reads.has(id) && recorded !== undefined && recorded.mark === markDigest(mark) && Date.now() - recordedAt < this.refreshMillis) {
      this.reads.set(id, { at: recordedAt, mark, backups: recorded.backups });
    }
    const cached = this.reads.get(id);
    if (cached !== undefined && cached.mark === mark && Date.now() - cached.at < this.refreshMillis) return cached.backups;
    if (cached === undefined && fresh && mark === "") {
      this.reads.set(id, { at: Date.now(), mark, backups: [] });
      return [];
    }
    let backups: DatabaseBackup[] | undefined;
    try {
      backups = await linodeCall("listing the backups", () => this.linode.databases.engine(engine).listAllBackups(id, { signal }));
      backups.sort((a, b) => b.created.localeCompare(a.created));
    } catch (err) {
      // The current database platform has no backups endpoint: nothing to show, not an error.
      if (!isNotFound(err)) throw err;
    }
    this.reads.set(id, { at: Date.now(), mark, backups });
    return backups;
  }

  /** When the database's backups were last listed and under which mark (status records it; undefined when not listed). */
  readOf(id: number): { at: string; mark: string } | undefined {
    const r = this.reads.get(id);
    return r === undefined ? undefined : { at: new Date(r.at).toISOString().replace(/\.\d{3}Z$/, "Z"), mark: markDigest(r.mark) };
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
