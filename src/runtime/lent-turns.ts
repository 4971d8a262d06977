// A reconcile pass that waits out a retry of one of its Linode calls (a 429's Retry-After, a
// 5xx's backoff) holds no call and does no work meanwhile, yet it held its place in its
// account's share of the workers: under a stream of lone 429s each one kept one of the
// `concurrency` places idle for its whole Retry-After, and the account's other objects waited
// behind it (bench:chaos:faults, 10 % 429s with Retry-After 1 s: 2.16× the fault-free time).
// So the place is lent to the next key of the account for the wait, and taken back at once when
// the pass goes on (never waited for: a list sweep's wait is awaited by the very passes that
// would hold the places). Meanwhile the account may have more passes at work than its share, and
// no new one starts until enough end. An account lends at most its share of places at once: the
// waiting passes keep their workers, so one answering 429s holds at most twice its share of them. The calls they make are still paced by the account's call
// budget, and a 429 that says the budget is spent stops that budget for every pass
// (rate-limiter.ts), so lending adds no call. The Linode client runs its waits through
// `lendingTurn` (cli/assemble-operator.ts wires it): it knows nothing of passes.
import { AsyncLocalStorage } from "node:async_hooks";

/** What a pass lends its place to and asks it back from (WorkQueue). */
export interface TurnQueue {
  lend(key: string): void;
  reclaim(key: string): void;
}

/** One pass's place: lent while any of its calls waits, taken back when the last goes on. */
export class PassTurn {
  private readonly queue: TurnQueue;
  private readonly key: string;
  private waiting = 0;
  private ended = false;

  constructor(queue: TurnQueue, key: string) {
    this.queue = queue;
    this.key = key;
  }

  away(): void {
    if (this.waiting++ === 0 && !this.ended) this.queue.lend(this.key);
  }

  back(): void {
    if (--this.waiting === 0 && !this.ended) this.queue.reclaim(this.key);
  }

  /**
   * The pass is over: a wait it started that outlives it (a shared list sweep's retry) no longer
   * lends or asks back a place that is not its own any more.
   */
  end(): void {
    this.ended = true;
  }
}

const passes = new AsyncLocalStorage<PassTurn>();

/** Runs `pass` as `turn`'s: the waits of its Linode calls lend its place. */
export function runAsPass<T>(turn: PassTurn, pass: () => Promise<T>): Promise<T> {
  return passes.run(turn, pass);
}

/** Runs a retry's wait; inside a pass, its place is lent for the wait and taken back as it goes on. */
export async function lendingTurn<T>(wait: () => Promise<T>): Promise<T> {
  const turn = passes.getStore();
  if (turn === undefined) return wait();
  turn.away();
  try {
    return await wait();
  } finally {
    turn.back();
  }
}
