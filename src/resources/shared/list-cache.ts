// Batched reads: instead of one GET per cloud object per poll, one paged list (500 per page)
// serves every object's observe for a short while. Concurrent callers share one in-flight
// list; callers that need the latest state (right after a change) ask for a maximum age of 0
// and get a direct GET.
import { isNotFound } from "../../linode/index.ts";

interface Snapshot<T> { at: number; byId: Map<number, T> }

/**
 * How long a page of a sweep waits for the paginated class's budget before the sweep fails
 * (the client's default is 30 s). A sweep that fails at page 15 of 20 wasted 14 pages, and the
 * next starts again from the first: with shards each replica spends a third of its share of the
 * class (100 a minute), and a whole sweep of 10,000 databases takes about 36 s of it.
 */
export const SWEEP_PAGE_WAIT_MILLIS = 120_000;

/**
 * GETs a cache sends a minute in place of a list its budget holds: enough for the few objects
 * still changing when the paginated class is spent (a lookup after a lost create, a snapshot's
 * backups and NodeBalancers' configs spend it too), never enough to spend the token's budget
 * on thousands of objects a list would serve at once.
 */
export const HELD_LIST_GETS_PER_MINUTE = 60;

/** The least time between two lists keepFresh sends (whatever the window): a list that answered with an old page never re-sends at once. */
const MIN_SWEEP_GAP_MILLIS = 1_000;

export interface ListSource<T> {
  /** `sent` is called as each page leaves for the API (after any wait for the call budget). */
  listAll(signal: AbortSignal, sent: () => void): Promise<T[]>;
  get(id: number, signal: AbortSignal): Promise<T>;
  /**
   * Called, after a list, with each object that differs from (or was missing in, or has gone
   * since) the previous list: the sweep that finds drift, so a settled object need not poll.
   */
  onChange?: (id: number) => void;
  /**
   * Whether an object differs between two lists, for onChange (default: any field). A kind whose
   * objects carry counters that move on their own (a NodeBalancer's transfer) says what counts.
   */
  differs?: (before: T, now: T) => boolean;
  /**
   * Objects a page of the list holds. A list of more pages than one is not waited for by a
   * read that has the object from the last one (see `get`).
   */
  pageSize?: number;
  /**
   * How long a list sent now would be held by the paginated class while a GET could go at once
   * (0: not held). A read that wants an object younger than that GETs it instead, up to
   * HELD_LIST_GETS_PER_MINUTE; the list still goes when the class allows.
   */
  listHeldMillis?: () => number;
}

export class ListCache<T extends { id: number }> {
  private readonly source: ListSource<T>;
  private snapshot: Snapshot<T> | undefined;
  /**
   * The last list as the API answered it (with what creates and GETs answered since): what
   * onChange compares a new list with. Not the snapshot, which drops what we invalidated:
   * compared with it, everything we changed (or only tried to: a refused update) would read as
   * new at the next list and wake its object, whose pass would try again, at every list.
   */
  private listed: Map<number, T> | undefined;
  private inflight: Promise<Snapshot<T>> | undefined;
  /** When this minute's GETs in place of a held list were sent (heldListGet). */
  private readonly heldGets: number[] = [];
  /**
   * When each object (and, under key -1, all) was last invalidated: a list or GET that was
   * already on its way then answers with what we just changed as it was before, and must not
   * bring it back. Only reads on their way can be such, so it is emptied whenever none is.
   */
  private readonly invalidated = new Map<number, number>();
  /**
   * What creates answered while reads were on their way: a list taken before the create lacks
   * the new object, and then keeps what the create answered (instead of a GET each, which a
   * burst of creates meeting one list after another would cost); a list that has it has a state
   * no older than the create's. Emptied with `invalidated`.
   */
  private readonly created = new Map<number, { when: number; obj: T }>();
  private tick = 0;
  /** Lists and GETs on their way. */
  private reading = 0;
  /** The last list failed: the next read that needs a newer one waits for it, so the failure reaches a pass. */
  private lastListFailed = false;
  /** keepFresh's age and stop signal, the last read that wanted a list that old, and its timer. */
  private sweep: { everyMillis: number; closed: AbortSignal; wantedAt: number; timer: NodeJS.Timeout | undefined } | undefined;

  constructor(source: ListSource<T>) {
    this.source = source;
  }

  /** Objects the last list holds (with what creates and GETs added since). */
  get size(): number {
    return this.snapshot?.byId.size ?? 0;
  }

  /** Invalidations kept for the reads on their way. */
  get invalidations(): number {
    return this.invalidated.size + this.created.size;
  }

  /**
   * The object as of at most `maxAgeMillis` ago; undefined when it does not exist. Except where
   * the list is more than a page and wakes what it finds changed (onChange): then a read that
   * has the object from the last list gets that at once and a new list starts (one at a time).
   * Waiting would hold the pass (and its worker) for the whole list, many pages at the paginated
   * class's pace (20 pages at 10,000 objects: 12 s at the 100 a minute a replica spends), for
   * what that list wakes the object with anyway if it changed: at that scale every pass of a
   * pending object waited on a list and Ready climbed a handful of objects a list.
   */
  async get(id: number, maxAgeMillis: number, signal: AbortSignal): Promise<T | undefined> {
    if (maxAgeMillis <= 0) return this.getOne(id, signal);
    if (this.sweep !== undefined && maxAgeMillis >= this.sweep.everyMillis) {
      this.sweep.wantedAt = Date.now();
      this.armSweep();
    }
    let snap = this.snapshot;
    if (snap === undefined || Date.now() - snap.at > maxAgeMillis) {
      const known = this.sweeping(snap) ? snap?.byId.get(id) : undefined;
      if (known !== undefined) {
        // Its failure is the next waiting read's to report (lastListFailed).
        this.refresh(signal).catch(() => undefined);
        return known;
      }
      if (this.heldListGet(maxAgeMillis)) {
        this.refresh(signal).catch(() => undefined);
        return this.getOne(id, signal);
      }
      snap = await this.refresh(signal);
    }
    // Not in the list may mean "created after the list was taken", or dropped as stale: confirm with a GET.
    return snap.byId.get(id) ?? this.getOne(id, signal);
  }

  /**
   * Sends the list whenever it turns `everyMillis` old, while reads that want it that old (the
   * settled objects' looks at the drift window) came within the last two such periods: the
   * sweep that finds drift comes due on its own, not when some pass happens to look. Passes
   * that wait (a NodeBalancer's look waits for its configs list in the paginated class) would
   * otherwise put the list off with them: at a 10 s window, 200 NodeBalancers' list went every
   * ~19 s. It costs no list more than the looks did: a look finds the timer's list young. Stops
   * for good when `closed` aborts (the account released).
   */
  keepFresh(everyMillis: number, closed: AbortSignal): void {
    if (this.sweep !== undefined) clearTimeout(this.sweep.timer);
    this.sweep = { everyMillis, closed, wantedAt: 0, timer: undefined };
    closed.addEventListener("abort", () => { if (this.sweep !== undefined) clearTimeout(this.sweep.timer); }, { once: true });
  }

  private armSweep(afterFailure = false): void {
    const sweep = this.sweep;
    if (sweep === undefined || sweep.timer !== undefined || sweep.closed.aborted) return;
    const now = Date.now();
    if (now - sweep.wantedAt > 2 * sweep.everyMillis) return;
    const snap = this.snapshot;
    // After a failed list, a period's wait (the looks that want it report the failure meanwhile): never a hot loop.
    const due = afterFailure || snap === undefined ? now + sweep.everyMillis : snap.at + sweep.everyMillis;
    sweep.timer = setTimeout(() => {
      sweep.timer = undefined;
      if (sweep.closed.aborted || Date.now() - sweep.wantedAt > 2 * sweep.everyMillis) return;
      const current = this.snapshot;
      if (current !== undefined && Date.now() - current.at < sweep.everyMillis && this.inflight === undefined) {
        this.armSweep();
        return;
      }
      this.refresh(sweep.closed).then(() => { this.armSweep(); }, () => { this.armSweep(true); });
    }, Math.max(MIN_SWEEP_GAP_MILLIS, due - now));
    sweep.timer.unref();
  }

  /** Whether a read that wants state `maxAgeMillis` old GETs it: the list would be held longer, and this minute's GETs in its place are not all spent. */
  private heldListGet(maxAgeMillis: number): boolean {
    const held = this.source.listHeldMillis?.() ?? 0;
    if (held <= maxAgeMillis) return false;
    const now = Date.now();
    while (this.heldGets.length > 0 && (this.heldGets[0] ?? now) <= now - 60_000) this.heldGets.shift();
    if (this.heldGets.length >= HELD_LIST_GETS_PER_MINUTE) return false;
    this.heldGets.push(now);
    return true;
  }

  /** Whether reads are served from `snap` while a new list is read: many pages, changes wake, and the last list did not fail. */
  private sweeping(snap: Snapshot<T> | undefined): boolean {
    const pageSize = this.source.pageSize;
    return snap !== undefined && pageSize !== undefined && this.source.onChange !== undefined && !this.lastListFailed && snap.byId.size > pageSize;
  }

  /** The object as the last list holds it (or a GET since), if that list is at most `maxAgeMillis` old; nothing is sent. */
  peek(id: number, maxAgeMillis: number): T | undefined {
    const snap = this.snapshot;
    return snap === undefined || Date.now() - snap.at > maxAgeMillis ? undefined : snap.byId.get(id);
  }

  /**
   * What a create just answered: served as the object's state until the next list, instead of
   * discarding the whole list (a new object missing from it would cost a GET each).
   */
  put(obj: T): void {
    if (this.reading > 0) this.created.set(obj.id, { when: ++this.tick, obj });
    this.snapshot?.byId.set(obj.id, obj);
    this.listed?.set(obj.id, obj);
  }

  /** Forget what we know (after we changed something): one object, or all. */
  invalidate(id?: number): void {
    this.invalidated.set(id ?? -1, ++this.tick);
    if (id === undefined) this.snapshot = undefined;
    else this.snapshot?.byId.delete(id);
  }

  private async getOne(id: number, signal: AbortSignal): Promise<T | undefined> {
    const started = this.tick;
    this.reading++;
    try {
      const obj = await this.source.get(id, signal);
      if ((this.invalidated.get(id) ?? 0) <= started) {
        this.snapshot?.byId.set(id, obj);
        this.listed?.set(id, obj);
      }
      return obj;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    } finally {
      this.doneReading();
    }
  }

  /** A read settled: with none left on its way, no invalidation can matter to any read (each starts after them all). */
  private doneReading(): void {
    if (--this.reading === 0) {
      this.invalidated.clear();
      this.created.clear();
    }
  }

  private changedSince(previous: Map<number, T>, now: Map<number, T>): void {
    const notify = this.source.onChange;
    if (notify === undefined) return;
    const differs = this.source.differs ?? ((a: T, b: T) => JSON.stringify(a) !== JSON.stringify(b));
    for (const [id, o] of now) {
      const before = previous.get(id);
      if (before === undefined || differs(before, o)) notify(id);
    }
    for (const id of previous.keys()) if (!now.has(id)) notify(id);
  }

  private refresh(signal: AbortSignal): Promise<Snapshot<T>> {
    this.inflight ??= (async () => {
      // The list is as new as its first page: a list the call budget held is as old as when it
      // went, not as when it was asked for (else, held half a window, it is stale on arrival and
      // the next read sends another at once).
      const asked = Date.now();
      let at: number | undefined;
      const sent = (): void => { at ??= Date.now(); };
      const started = this.tick;
      this.reading++;
      try {
        let all: T[];
        try {
          all = await this.source.listAll(signal, sent);
          this.lastListFailed = false;
        } catch (err) {
          this.lastListFailed = true;
          throw err;
        }
        // What was invalidated while the list was on its way is left out (read again by GET).
        const whole = (this.invalidated.get(-1) ?? 0) > started;
        const byId = new Map(whole ? [] : all.map((o) => [o.id, o]));
        for (const [id, when] of this.invalidated) if (when > started) byId.delete(id);
        for (const [id, c] of this.created) if (c.when > started && !byId.has(id) && (this.invalidated.get(id) ?? 0) < c.when) byId.set(id, c.obj);
        const snap = { at: at ?? asked, byId };
        if (!whole) {
          this.snapshot = snap;
          const previous = this.listed;
          const listed = new Map(all.map((o) => [o.id, o]));
          if (this.source.onChange !== undefined) this.listed = listed;
          if (previous !== undefined) this.changedSince(previous, listed);
        }
        return snap;
      } finally {
        this.inflight = undefined;
        this.doneReading();
      }
    })();
    return this.inflight;
  }
}
