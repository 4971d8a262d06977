// A work queue with client-go semantics: keys, not events. A key is queued at most once
// (dirty set), never handed to two workers at once (processing set: a key re-added while
// processing runs once more afterwards), delayed adds keep the earliest due time, and
// failures back off per key exponentially with jitter until forgotten. With flows (e.g. one per
// Linode account), keys queue per flow and the workers are shared fairly among them (flows.ts).
import type { CacheEntries } from "../metrics/cache-entries.ts";
import { FlowShares } from "./flows.ts";
import { Timings } from "./timings.ts";

export interface BackoffPolicy {
  baseMillis: number;
  maxMillis: number;
  /** 0..1: the fraction of the delay that is randomised (delay * (1 - jitter * rand)). */
  jitter: number;
}

export const defaultBackoff: BackoffPolicy = { baseMillis: Timings.backoffBaseMillis, maxMillis: Timings.backoffMaxMillis, jitter: Timings.backoffJitter };

export interface QueueObserver {
  added?(key: string): void;
  retried?(key: string, delayMillis: number): void;
  depth?(depth: number): void;
}

/** Counts a queue's keys, by where they are, as `<prefix>.workqueue.<where>` maps. */
export function trackQueue(entries: CacheEntries | undefined, prefix: string, queue: WorkQueue): void {
  for (const where of ["queued", "dirty", "processing", "delayed", "failures", "flows"] as const) entries?.track(`${prefix}.workqueue.${where}`, () => queue.sizes[where]);
}

/** Keys grouped into flows whose shares of the workers are kept fair. */
export interface FlowOptions {
  /** The flow a key belongs to (read when it is queued), e.g. its object's Linode account. */
  of(key: string): string;
  /** How many workers take keys from the queue. */
  workers: number;
  /** How long after its last pass a flow keeps its share (FlowShares); default 0. */
  lingerMillis?: number;
  /** The most workers one flow may hold (FlowShares); default every worker. */
  perFlow?: number;
}

/** How long a routine key waits behind its flow's other keys before the two lanes take turns. */
export const ROUTINE_MAX_WAIT_MILLIS = 60_000;

export class WorkQueue {
  /** Queued keys in order, per flow (one flow, "", without flow options). */
  private readonly queues = new Map<string, string[]>();
  /**
   * Routine keys (addRoutine: a look at what is settled), per flow, taken only when the flow has
   * no other key waiting: a new object is not queued behind ten thousand re-observations.
   */
  private readonly routine = new Map<string, string[]>();
  /** Each routine key and when it was queued (a routine key overdue shares the flow's turns: routineMaxWaitMillis). */
  private readonly routineKeys = new Map<string, number>();
  /** Flows whose last key taken was routine (while they have keys queued): the other lane goes next if both wait. */
  private readonly tookRoutine = new Set<string>();
  private readonly routineMaxWaitMillis: number;
  private queued = 0;
  private readonly dirty = new Set<string>();
  /** Keys being worked on, with the flow each was taken from. */
  private readonly processing = new Map<string, string>();
  /** Keys being worked on that were taken from the routine lane: a look nothing asked for. */
  private readonly takenRoutine = new Set<string>();
  private readonly delayed = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  /** Keys whose pass waits out a retry with its flow's place lent (lend). */
  private readonly lent = new Set<string>();
  private shuttingDown = false;
  private readonly backoff: BackoffPolicy;
  private readonly observer: QueueObserver;
  private readonly random: () => number;
  private readonly flowOf: (key: string) => string;
  private readonly shares: FlowShares | undefined;

  constructor(opts: { backoff?: Partial<BackoffPolicy>; observer?: QueueObserver; random?: () => number; flows?: FlowOptions; routineMaxWaitMillis?: number } = {}) {
    this.backoff = { ...defaultBackoff, ...opts.backoff };
    this.routineMaxWaitMillis = opts.routineMaxWaitMillis ?? ROUTINE_MAX_WAIT_MILLIS;
    this.observer = opts.observer ?? {};
    this.random = opts.random ?? Math.random;
    const flows = opts.flows;
    this.flowOf = flows === undefined ? () => "" : (key) => flows.of(key);
    this.shares = flows === undefined ? undefined : new FlowShares(flows.workers, { lingerMillis: flows.lingerMillis ?? 0, ...(flows.perFlow !== undefined ? { perFlow: flows.perFlow } : {}) });
  }

  get length(): number { return this.queued; }
  get inFlight(): number { return this.processing.size; }
  /** Keys it holds, by where (every one must drain back once their objects are gone), and the flows it keeps a turn for. */
  get sizes(): { queued: number; dirty: number; processing: number; delayed: number; failures: number; flows: number } {
    return { queued: this.queued, dirty: this.dirty.size, processing: this.processing.size, delayed: this.delayed.size, failures: this.failures.size, flows: this.shares?.remembered(this.flowsWaiting()) ?? 0 };
  }
  get isShuttingDown(): boolean { return this.shuttingDown; }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.routineKeys.has(key)) {
      // Waiting as routine, now asked for: it moves ahead of the routine keys.
      this.unqueueRoutine(key);
    } else if (this.dirty.has(key)) return;
    this.enqueue(key, this.queues);
  }

  /**
   * Adds the key behind every key of its flow not added this way (and after those added this
   * way before it): for looks that may wait, such as re-observing what a previous process left
   * settled, or a resync. A key already waiting keeps its place.
   */
  addRoutine(key: string): void {
    // Queued already, or being looked at now (which is the look asked for).
    if (this.shuttingDown || this.dirty.has(key) || this.processing.has(key)) return;
    this.routineKeys.set(key, Date.now());
    this.enqueue(key, this.routine);
  }

  private enqueue(key: string, lane: Map<string, string[]>): void {
    this.cancelDelayed(key);
    this.dirty.add(key);
    this.observer.added?.(key);
    if (this.processing.has(key)) return;
    const flow = this.flowOf(key);
    const queue = lane.get(flow);
    if (queue === undefined) lane.set(flow, [key]);
    else queue.push(key);
    this.queued++;
    this.observer.depth?.(this.queued);
    this.dispatch();
  }

  private unqueueRoutine(key: string): void {
    this.routineKeys.delete(key);
    this.dirty.delete(key);
    for (const [flow, queue] of this.routine) {
      const i = queue.indexOf(key);
      if (i < 0) continue;
      queue.splice(i, 1);
      if (queue.length === 0) this.routine.delete(flow);
      this.queued--;
      return;
    }
  }

  /**
   * Adds the key after a delay; an earlier pending due time for the same key wins. `routine`: a
   * settled object's next look at the drift cadence, added then as addRoutine (behind new
   * objects and changes of its flow, which would otherwise wait behind every settled object's
   * look due at a short drift window).
   */
  addAfter(key: string, delayMillis: number, opts: { routine?: boolean } = {}): void {
    if (this.shuttingDown) return;
    const routine = opts.routine === true;
    // A routine add now, while the key is being worked on, would be taken as the look in progress and dropped: it waits a tick.
    if (routine && this.processing.has(key)) delayMillis = Math.max(1, delayMillis);
    if (delayMillis <= 0) { if (routine) this.addRoutine(key); else this.add(key); return; }
    const due = Date.now() + delayMillis;
    const existing = this.delayed.get(key);
    if (existing !== undefined && existing.due <= due) return;
    if (existing !== undefined) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      if (routine) this.addRoutine(key);
      else this.add(key);
    }, delayMillis);
    this.delayed.set(key, { due, timer });
  }

  /** Re-adds after the key's next backoff delay; returns that delay. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const raw = Math.min(this.backoff.maxMillis, this.backoff.baseMillis * 2 ** n);
    const delay = Math.round(raw * (1 - this.backoff.jitter * this.random()));
    this.observer.retried?.(key, delay);
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * When the key's next pass is due, in milliseconds: 0 when one is waiting (queued, or asked for
   * while a pass runs), the delay of a scheduled one, undefined when none is scheduled. What a
   * test reads to prove a cadence (no hot loop) without waiting one out.
   */
  dueIn(key: string, now = Date.now()): number | undefined {
    if (this.dirty.has(key)) return 0;
    const d = this.delayed.get(key);
    return d === undefined ? undefined : Math.max(0, d.due - now);
  }

  /** Whether a worker holds the key now (its pass will schedule what comes next). */
  isProcessing(key: string): boolean { return this.processing.has(key); }

  /**
   * Whether the key's pass now running was taken from the routine lane (a settled object's look
   * at the drift cadence, a resync, a re-observation after a start): when the call budget defers
   * it, it goes back there, not ahead of a look something asked for.
   */
  isRoutinePass(key: string): boolean { return this.takenRoutine.has(key); }

  /** Clears the key's failure count (after a success). */
  forget(key: string): void { this.failures.delete(key); }

  failureCount(key: string): number { return this.failures.get(key) ?? 0; }

  /** Next key to work on, or undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * The key's pass waits out a retry (a 429's Retry-After, a backoff) and holds no call meanwhile:
   * its place in its flow's share goes to another key of the flow until reclaim. Without flows
   * the workers are the only bound, and the place is kept.
   */
  lend(key: string): void {
    const flow = this.processing.get(key);
    if (flow === undefined || this.shares === undefined || this.lent.has(key) || !this.shares.lend(flow)) return;
    this.lent.add(key);
    this.dispatch();
  }

  /**
   * The key's pass goes on: its place is back at once, even above the flow's share (then no key
   * of the flow starts until enough end). Never waited for: the wait may be a list sweep's that
   * the passes holding the places await, and waiting for one of them would wait for itself.
   */
  reclaim(key: string): void {
    const flow = this.processing.get(key);
    if (flow === undefined || !this.lent.delete(key)) return;
    this.shares?.retake(flow);
  }

  /** Marks the key finished; if it was re-added meanwhile it is queued again. */
  done(key: string): void {
    const flow = this.processing.get(key);
    this.processing.delete(key);
    this.takenRoutine.delete(key);
    if (flow !== undefined) {
      // Ended while its place was lent (a wait it left behind): taken back, to be given up as any.
      if (this.lent.delete(key)) this.shares?.retake(flow);
      this.shares?.finished(flow);
      if (!this.queues.has(flow) && !this.routine.has(flow)) this.shares?.idle(flow);
    }
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.dirty.delete(key);
      this.add(key);
    }
    // A worker is free: a flow that held its share may go on.
    this.dispatch();
  }

  /** The next key a free worker may take (the fairest flow's oldest), marked as being worked on; none if every flow waiting holds its share. */
  private take(): string | undefined {
    if (this.queued === 0) return undefined;
    const flow = this.shares === undefined ? "" : this.shares.next(this.flowsWaiting());
    if (flow === undefined) return undefined;
    const lane = this.laneFor(flow);
    const queue = lane.get(flow);
    const key = queue?.shift();
    if (queue === undefined || key === undefined) return undefined;
    if (queue.length === 0) lane.delete(flow);
    if (lane === this.routine && (this.queues.has(flow) || this.routine.has(flow))) this.tookRoutine.add(flow);
    else this.tookRoutine.delete(flow);
    this.queued--;
    if (lane === this.routine) this.takenRoutine.add(key);
    this.routineKeys.delete(key);
    this.dirty.delete(key);
    this.processing.set(key, flow);
    this.shares?.started(flow);
    this.observer.depth?.(this.queued);
    return key;
  }

  /**
   * The lane a flow's next key comes from: its other keys first, unless its oldest routine key
   * has waited longer than routineMaxWaitMillis; then the two lanes take turns, so neither a
   * flood of new objects nor a backlog of looks holds the other back for long.
   */
  private laneFor(flow: string): Map<string, string[]> {
    if (!this.queues.has(flow)) return this.routine;
    const oldest = this.routine.get(flow)?.[0];
    const since = oldest === undefined ? undefined : this.routineKeys.get(oldest);
    const overdue = since !== undefined && Date.now() - since > this.routineMaxWaitMillis;
    return overdue && !this.tookRoutine.has(flow) ? this.routine : this.queues;
  }

  /** The flows with a key queued in either lane. */
  private flowsWaiting(): Iterable<string> {
    return this.routine.size === 0 ? this.queues.keys() : new Set([...this.queues.keys(), ...this.routine.keys()]);
  }

  /** Hands queued keys to waiting workers while there are both (and a flow under its share). */
  private dispatch(): void {
    while (this.waiters.length > 0) {
      const key = this.take();
      if (key === undefined) return;
      this.waiters.shift()?.(key);
    }
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private cancelDelayed(key: string): void {
    const d = this.delayed.get(key);
    if (d !== undefined) {
      clearTimeout(d.timer);
      this.delayed.delete(key);
    }
  }
}
