// One list cache per engine (the API lists MySQL and PostgreSQL databases separately), one per
// account, shared by the kinds that read databases: a snapshot waiting for its backup sees its
// database's state in the same list sweep that serves the ManagedDatabases.
import { MAX_PAGE_SIZE, type Database, type DatabaseEngine, type LinodeClient } from "../../linode/index.ts";
import { PerAccount } from "../shared/credentials.ts";
import { ListCache, SWEEP_PAGE_WAIT_MILLIS } from "../shared/list-cache.ts";

export class DatabaseListCache {
  private readonly linode: LinodeClient;
  private readonly listeners = new Set<(id: number) => void>();
  private readonly caches = new Map<DatabaseEngine, ListCache<Database>>();
  private readonly closed: AbortSignal;
  private sweepEveryMillis: number | undefined;

  /** `closed`: aborted when the account is released (the sweeps stop). */
  constructor(linode: LinodeClient, closed: AbortSignal) {
    this.linode = linode;
    this.closed = closed;
  }

  /** Each engine's list is sent whenever it turns this old while settled reads want it (ListCache.keepFresh). */
  keepFresh(everyMillis: number): void {
    if (this.sweepEveryMillis === everyMillis) return;
    this.sweepEveryMillis = everyMillis;
    for (const c of this.caches.values()) c.keepFresh(everyMillis, this.closed);
  }

  /** Called with each database a new list finds changed (or gone), e.g. drift made outside. */
  listen(onChange: (id: number) => void): void {
    this.listeners.add(onChange);
  }

  /** Databases the engines' last lists hold. */
  get size(): number {
    let n = 0;
    for (const c of this.caches.values()) n += c.size;
    return n;
  }

  /** Invalidations kept for the reads on their way. */
  get invalidations(): number {
    let n = 0;
    for (const c of this.caches.values()) n += c.invalidations;
    return n;
  }

  /** The database as of at most `maxAgeMillis` ago; undefined when it does not exist. */
  get(engine: DatabaseEngine, id: number, maxAgeMillis: number, signal: AbortSignal): Promise<Database | undefined> {
    return this.cache(engine).get(id, maxAgeMillis, signal);
  }

  /**
   * The database as of at most `maxAgeMillis` ago, for a reader that would otherwise GET it: a
   * list younger than that, else a new list while one page holds the engine's databases (it costs
   * what the GET would, and serves every other reader), else the GET. Undefined when it does not exist.
   */
  fresh(engine: DatabaseEngine, id: number, maxAgeMillis: number, signal: AbortSignal): Promise<Database | undefined> {
    const c = this.cache(engine);
    const listed = c.peek(id, maxAgeMillis);
    if (listed !== undefined) return Promise.resolve(listed);
    return c.get(id, c.size > 0 && c.size < MAX_PAGE_SIZE ? Math.max(1, maxAgeMillis) : 0, signal);
  }

  /** A database a create just returned. */
  put(engine: DatabaseEngine, db: Database): void {
    this.cache(engine).put(db);
  }

  /** Forget what we know about an engine's databases (after we changed one). */
  invalidate(engine: DatabaseEngine, id?: number): void {
    this.caches.get(engine)?.invalidate(id);
  }

  private cache(engine: DatabaseEngine): ListCache<Database> {
    let c = this.caches.get(engine);
    if (c === undefined) {
      const api = this.linode.databases.engine(engine);
      const listeners = this.listeners;
      c = new ListCache({ listAll: (signal, sent) => api.listAll({ signal, sweep: true, onSent: sent, retry: { maxRateLimitWaitMs: SWEEP_PAGE_WAIT_MILLIS } }), get: (id, signal) => api.get(id, { signal }), onChange: (id) => { for (const l of listeners) l(id); }, pageSize: MAX_PAGE_SIZE, listHeldMillis: () => this.linode.sweepHeldMillis() });
      if (this.sweepEveryMillis !== undefined) c.keepFresh(this.sweepEveryMillis, this.closed);
      this.caches.set(engine, c);
    }
    return c;
  }
}

/** Each account's databases, as every kind of this operator reads them. */
export const accountDatabases = new PerAccount((account) => new DatabaseListCache(account.linode, account.released));
