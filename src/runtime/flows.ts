// Fair shares of a controller's workers among flows: what an object's work depends on, e.g. the
// Linode account it acts in. The workers are few and a pass holds one for as long as its calls
// take, so without shares the objects of one account whose API answers late or with 429s (each
// pass waiting seconds) take every worker while other accounts' keys wait behind them. As
// Kubernetes' API Priority and Fairness shares the API server's seats among flows (fair
// queuing, a flow's share of the concurrency), a worker takes its next key from the flow
// holding the fewest workers, and no flow holds more than an even share of them among the
// active flows: those with keys queued or in progress, or whose last pass ended less than
// `lingerMillis` ago. The linger keeps a share for a flow between its polls (objects settling
// are looked at every few seconds): otherwise a slow flow would take every worker whenever the
// others have nothing queued for a moment, and their next keys would wait for its slow passes.
// A flow alone, or beside flows idle for longer, may use every worker, up to `perFlow`: the
// controller gives each account the concurrency it was configured with (its own call budget is
// what paces it) and has workers for several accounts at that, so a slow account's passes
// take no worker from the others until that many accounts are busy at once.

export interface FlowSharesOptions {
  /** How long after its last pass a flow still counts as active (keeps its share). */
  lingerMillis?: number;
  /** The most workers one flow may hold, however few flows are active (default: every worker). */
  perFlow?: number;
  now?: () => number;
}

export class FlowShares {
  private readonly workers: number;
  private readonly perFlow: number;
  private readonly lingerMillis: number;
  private readonly now: () => number;
  /** Workers each flow holds now (its passes waiting with their place lent left out). */
  private readonly busy = new Map<string, number>();
  /** Places each flow has lent (lend), not yet taken back. */
  private readonly lent = new Map<string, number>();
  /** Flows with work lately: when each last got a worker (a counter: ties go to the one served longest ago), and until when it counts as active. */
  private readonly seen = new Map<string, { turn: number; until: number }>();
  private turn = 0;

  constructor(workers: number, opts: FlowSharesOptions = {}) {
    this.workers = Math.max(1, workers);
    this.perFlow = Math.max(1, opts.perFlow ?? this.workers);
    this.lingerMillis = opts.lingerMillis ?? 0;
    this.now = opts.now ?? Date.now;
  }

  /** Workers `flow` holds. */
  holding(flow: string): number {
    return this.busy.get(flow) ?? 0;
  }

  /** The most workers one flow may hold while `active` flows (itself included) share them: an even share, rounded up, at least one, at most `perFlow`. */
  share(active: number): number {
    return Math.min(this.perFlow, Math.max(1, Math.ceil(this.workers / Math.max(1, active))));
  }

  /**
   * Of the flows with keys queued, the one whose key a free worker takes next: under its share,
   * holding the fewest workers, then served longest ago. Undefined: every waiting flow holds its
   * share already (the worker waits for one to finish or another flow's key).
   */
  next(waiting: Iterable<string>): string | undefined {
    const queued = [...waiting];
    if (queued.length === 0) return undefined;
    const share = this.share(this.active(queued).size);
    let best: string | undefined;
    for (const flow of queued) {
      const held = this.holding(flow);
      if (held >= share) continue;
      if (best === undefined) { best = flow; continue; }
      const bestHeld = this.holding(best);
      if (held < bestHeld || (held === bestHeld && (this.seen.get(flow)?.turn ?? -1) < (this.seen.get(best)?.turn ?? -1))) best = flow;
    }
    return best;
  }

  /** The flows with keys `queued`, running or lingering; the others are forgotten (their turns with them). */
  private active(queued: Iterable<string>): Set<string> {
    const now = this.now();
    const active = new Set(queued);
    for (const [flow, s] of this.seen) {
      if (this.running(flow) || s.until > now) active.add(flow);
      else if (!active.has(flow)) this.seen.delete(flow);
    }
    return active;
  }

  /**
   * A worker of `flow` waits out a retry (a 429's Retry-After, a backoff) and lends its place
   * meanwhile: the flow holds one fewer, so another of its keys may run. At most `perFlow` places
   * of a flow are lent at once: the waiting passes still hold their workers, and an account
   * answering 429s must not take more than twice its own share of them from the others.
   * False: not lent. Taken back with retake.
   */
  lend(flow: string): boolean {
    const lent = this.lent.get(flow) ?? 0;
    if (lent >= this.perFlow) return false;
    this.lent.set(flow, lent + 1);
    this.finishedOne(flow);
    return true;
  }

  /** Whether a pass of `flow` is under way, at work or waiting with its place lent. */
  private running(flow: string): boolean {
    return this.holding(flow) > 0 || this.lent.has(flow);
  }

  /** One worker of `flow` fewer. */
  private finishedOne(flow: string): void {
    const n = this.holding(flow) - 1;
    if (n > 0) this.busy.set(flow, n);
    else this.busy.delete(flow);
  }

  /** A lent place taken back (its pass goes on): possibly above the flow's share for a while. */
  retake(flow: string): void {
    const lent = (this.lent.get(flow) ?? 0) - 1;
    if (lent > 0) this.lent.set(flow, lent);
    else this.lent.delete(flow);
    this.busy.set(flow, this.holding(flow) + 1);
  }

  /** A worker took a key of `flow`. */
  started(flow: string): void {
    this.busy.set(flow, this.holding(flow) + 1);
    this.seen.set(flow, { turn: this.turn++, until: this.now() + this.lingerMillis });
  }

  /** A worker finished a key of `flow`: it stays active `lingerMillis` longer. */
  finished(flow: string): void {
    this.finishedOne(flow);
    const s = this.seen.get(flow);
    if (s !== undefined) s.until = this.now() + this.lingerMillis;
  }

  /** `flow` has nothing queued: forgotten now unless it runs or lingers (else at a later pick). */
  idle(flow: string): void {
    if (!this.running(flow) && (this.seen.get(flow)?.until ?? 0) <= this.now()) this.seen.delete(flow);
  }

  /**
   * Flows remembered (the cache-entries gauge): those running, lingering or with keys `queued`;
   * the others are forgotten now (else at the next pick), so the count drains with the queue.
   */
  remembered(queued: Iterable<string>): number {
    const waiting = new Set(queued);
    const now = this.now();
    for (const [flow, s] of this.seen) if (!this.running(flow) && s.until <= now && !waiting.has(flow)) this.seen.delete(flow);
    return this.seen.size;
  }
}
