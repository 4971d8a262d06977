// Batched reads: instead of one GET per database per poll, one paged list (500 per page)
// per engine serves every database's observe for a short while. Concurrent callers share
// one in-flight list; callers that need the latest state (right after a change) ask for a
// maximum age of 0 and get a direct GET.
import type { Database, DatabaseEngine, LinodeClient } from "../../linode/index.ts";

interface Snapshot { at: number; byId: Map<number, Database> }

export class DatabaseListCache {
  private readonly linode: LinodeClient;
  private readonly snapshots = new Map<DatabaseEngine, Snapshot>();
  private readonly inflight = new Map<DatabaseEngine, Promise<Snapshot>>();

  constructor(linode: LinodeClient) {
    this.linode = linode;
  }

  /** The database as of at most `maxAgeMillis` ago; undefined when it does not exist. */
  async get(engine: DatabaseEngine, id: number, maxAgeMillis: number, signal: AbortSignal): Promise<Database | undefined> {
    if (maxAgeMillis <= 0) return this.getOne(engine, id, signal);
    let snap = this.snapshots.get(engine);
    if (snap === undefined || Date.now() - snap.at > maxAgeMillis) snap = await this.refresh(engine, signal);
    // Not in the list may mean "created after the list was taken": confirm with a GET.
    return snap.byId.get(id) ?? this.getOne(engine, id, signal);
  }

  /** Forget what we know about an engine's databases (after we changed one). */
  invalidate(engine: DatabaseEngine, id?: number): void {
    if (id === undefined) this.snapshots.delete(engine);
    else this.snapshots.get(engine)?.byId.delete(id);
  }

  private async getOne(engine: DatabaseEngine, id: number, signal: AbortSignal): Promise<Database | undefined> {
    try {
      const db = await this.linode.databases.engine(engine).get(id, { signal });
      this.snapshots.get(engine)?.byId.set(id, db);
      return db;
    } catch (err) {
      if ((err as { kind?: string }).kind === "notFound") return undefined;
      throw err;
    }
  }

  private refresh(engine: DatabaseEngine, signal: AbortSignal): Promise<Snapshot> {
    let p = this.inflight.get(engine);
    if (p === undefined) {
      const at = Date.now();
      p = this.linode.databases.engine(engine).listAll({ signal }).then((all) => {
        const snap = { at, byId: new Map(all.map((d) => [d.id, d])) };
        this.snapshots.set(engine, snap);
        return snap;
      }).finally(() => this.inflight.delete(engine));
      this.inflight.set(engine, p);
    }
    return p;
  }
}
