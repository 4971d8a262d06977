// A work queue with client-go semantics: keys, not events. A key is queued at most once
// (dirty set), never handed to two workers at once (processing set: a key re-added while
// processing runs once more afterwards), delayed adds keep the earliest due time, and
// failures back off per key exponentially with jitter until forgotten.
import type { CacheEntries } from "../metrics/cache-entries.ts";
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
  for (const where of ["queued", "dirty", "processing", "delayed", "failures"] as const) entries?.track(`${prefix}.workqueue.${where}`, () => queue.sizes[where]);
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly backoff: BackoffPolicy;
  private readonly observer: QueueObserver;
  private readonly random: () => number;

  constructor(opts: { backoff?: Partial<BackoffPolicy>; observer?: QueueObserver; random?: () => number } = {}) {
    this.backoff = { ...defaultBackoff, ...opts.backoff };
    this.observer = opts.observer ?? {};
    this.random = opts.random ?? Math.random;
  }

  get length(): number { return this.queue.length; }
  get inFlight(): number { return this.processing.size; }
  /** Keys it holds, by where (every one must drain back once their objects are gone). */
  get sizes(): { queued: number; dirty: number; processing: number; delayed: number; failures: number } {
    return { queued: this.queue.length, dirty: this.dirty.size, processing: this.processing.size, delayed: this.delayed.size, failures: this.failures.size };
  }
  get isShuttingDown(): boolean { return this.shuttingDown; }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.cancelDelayed(key);
    this.dirty.add(key);
    this.observer.added?.(key);
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queue.push(key);
    this.observer.depth?.(this.queue.length);
  }

  /** Adds the key after a delay; an earlier pending due time for the same key wins. */
  addAfter(key: string, delayMillis: number): void {
    if (this.shuttingDown) return;
    if (delayMillis <= 0) { this.add(key); return; }
    const due = Date.now() + delayMillis;
    const existing = this.delayed.get(key);
    if (existing !== undefined && existing.due <= due) return;
    if (existing !== undefined) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
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

  /** Clears the key's failure count (after a success). */
  forget(key: string): void { this.failures.delete(key); }

  failureCount(key: string): number { return this.failures.get(key) ?? 0; }

  /** Next key to work on, or undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.observer.depth?.(this.queue.length);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key finished; if it was re-added meanwhile it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.dirty.delete(key);
      this.add(key);
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
