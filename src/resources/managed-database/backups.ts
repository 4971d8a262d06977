// A database's backups for its status (so a user can pick one to restore), read at most once
// per drift window per database: a list per database per window, nothing per pending poll.
import { isNotFound, type DatabaseBackup, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import { linodeCall } from "../shared/linode-errors.ts";

interface Read { at: number; backups: DatabaseBackup[] | undefined }

export class BackupsReader {
  private readonly linode: LinodeClient;
  private readonly maxAgeMillis: number;
  private readonly reads = new Map<number, Read>();

  constructor(linode: LinodeClient, maxAgeMillis: number) {
    this.linode = linode;
    this.maxAgeMillis = maxAgeMillis;
  }

  /** The database's backups, newest first; undefined where the API has no backups endpoint. */
  async latest(engine: DatabaseEngine, id: number, signal: AbortSignal): Promise<DatabaseBackup[] | undefined> {
    const cached = this.reads.get(id);
    if (cached !== undefined && Date.now() - cached.at < this.maxAgeMillis) return cached.backups;
    let backups: DatabaseBackup[] | undefined;
    try {
      backups = await linodeCall("listing the backups", () => this.linode.databases.engine(engine).listAllBackups(id, { signal }));
      backups.sort((a, b) => b.created.localeCompare(a.created));
    } catch (err) {
      // The current database platform has no backups endpoint: nothing to show, not an error.
      if (!isNotFound(err)) throw err;
    }
    this.reads.set(id, { at: Date.now(), backups });
    if (this.reads.size > 10_000) this.reads.clear();
    return backups;
  }

  /** Forget a database's backups (after a restore or a snapshot, the next look reads them again). */
  forget(id: number): void {
    this.reads.delete(id);
  }
}
