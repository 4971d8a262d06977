// Client-side token bucket per API token, so a busy operator spends its Linode budget
// evenly instead of bursting into 429s. The server's X-RateLimit-* headers are the truth:
// each response re-sizes the bucket and clamps it to what the server says remains, and a
// 429 (unless its headers say the budget is not spent) or remaining = 0 blocks the bucket
// until the server's reset time.
import { createHash } from "node:crypto";
import { sleep } from "./retry.ts";

export interface RateLimitObservation {
  limit?: number;
  remaining?: number;
  /** Absolute time (ms since epoch) at which the server's window resets. */
  resetAtMs?: number;
  /** A 429's Retry-After, in ms from now. */
  retryAfterMs?: number;
}

export interface TokenBucketOptions {
  /** Initial capacity before the server has told us its limit. */
  capacity: number;
  /** Window over which `capacity` requests refill (Linode's limits are per minute or two). */
  windowMs: number;
  /**
   * The share (0..1] of the server's limit this bucket may spend: the server's remaining minus
   * the rest of its limit is what is left to us (headroom for other users of the token).
   */
  share?: number;
  /**
   * Heed only headers that report the largest limit seen: a token-wide budget must not take a
   * route's own smaller limit (paginated GETs, a single command) for the token's.
   */
  largestLimitOnly?: boolean;
  /**
   * Ignore headers that report a limit above this: they are another window's. The API answers
   * a paginated GET with the general window's X-RateLimit-* (recorded: 1840 on lists), which
   * must not size the paginated class's (200/min) bucket.
   */
  maxLimit?: number;
  /**
   * Also send at most `limit` in any `windowMs` (a log of what was sent). A refilling bucket
   * alone may send its capacity and then as much again within one server window; the headers'
   * remaining stops that where they report this class, but a paginated GET's report the
   * general window, so nothing else would keep the class to its share. Dropped once a header
   * reports the class's own limit (one no larger than `maxLimit`).
   */
  sliding?: boolean;
  /**
   * How many processes spend this bucket's class with the same token (replicas sharing the work):
   * while no header reports the class's own remaining (a sliding bucket), nothing tells one
   * replica what the others sent, so each takes that part of the share. Once headers report the
   * class, their remaining counts every replica's calls and the whole share is kept.
   */
  peers?: () => number;
  now?: () => number;
}

/**
 * Callers of one kind within a class (e.g. the paginated class's sweeps), beside another kind
 * (`other`): in any window this part leaves the other as many requests as the other sent in the
 * last window and PART_HEADROOM of the limit more (room to grow), but never more than `most`
 * of the limit. So neither part can take the whole window from the other, and a part the other
 * does not use costs nothing.
 */
export interface BucketPart {
  name: string;
  other: string;
  /** The most this part leaves the other, as a share of the limit (0..1). */
  most: number;
}

/** How long a routine caller that gave way to a waiting one waits at least before it looks again. */
export const ROUTINE_YIELD_MS = 50;

/** The share of the limit a part leaves the other beyond what the other sent in the last window. */
export const PART_HEADROOM = 0.05;

/** Drops the sends that have left the window. */
function inWindow(sends: number[], now: number, windowMs: number): number[] {
  while (sends.length > 0 && (sends[0] ?? now) <= now - windowMs) sends.shift();
  return sends;
}

/** Until the window's sends leave room for one more under `cap` (0 if they do). */
function windowWait(sends: number[], cap: number, now: number, windowMs: number): number {
  if (inWindow(sends, now, windowMs).length < cap) return 0;
  return Math.max(1, (sends[sends.length - cap] ?? now) + windowMs - now);
}

export class TokenBucket {
  private capacity: number;
  private tokens: number;
  private readonly windowMs: number;
  private blockedUntil = 0;
  /** End of the server's current window, when it told us; its budget is whole again after it. */
  private serverResetAt = 0;
  private lastRefill: number;
  private readonly now: () => number;
  private readonly share: number;
  /** The capacity the share is taken of: the documented or default limit, until a header reports one. */
  private readonly baseCapacity: number;
  private readonly peers: (() => number) | undefined;
  private readonly largestLimitOnly: boolean;
  private readonly maxLimit: number;
  /**
   * When the requests of the last window were taken, oldest first: sliding buckets only, until
   * a header reports this class's own limit (its remaining then keeps the count).
   */
  private sent: number[] | undefined;
  /** The server's own limit, as last reported. */
  private serverLimit: number | undefined;
  /** When each part's requests of the last window were taken (BucketPart), whatever reports the class. */
  private readonly partSends = new Map<string, number[]>();
  /** Callers waiting for a token that a routine one leaves it to, by part ("" for none). */
  private readonly waiting = new Map<string, number>();

  constructor(opts: TokenBucketOptions) {
    this.share = opts.share ?? 1;
    this.largestLimitOnly = opts.largestLimitOnly ?? false;
    this.maxLimit = opts.maxLimit ?? Number.POSITIVE_INFINITY;
    this.sent = opts.sliding === true ? [] : undefined;
    this.baseCapacity = opts.capacity;
    this.peers = opts.peers;
    this.capacity = Math.max(1, Math.floor(opts.capacity * this.ownShare()));
    this.tokens = this.capacity;
    this.windowMs = opts.windowMs;
    this.now = opts.now ?? Date.now;
    this.lastRefill = this.now();
  }

  /** Tokens available now (fractional), for the remaining-headroom gauge. */
  get available(): number {
    this.refill();
    return this.tokens;
  }

  get limit(): number {
    if (this.peers !== undefined) this.resize();
    return this.capacity;
  }

  /**
   * Takes a token and returns 0, or returns how many ms to wait before asking again. A caller
   * in a `part` of the class also keeps to that part's cap in any window.
   */
  tryTake(part?: BucketPart): number {
    const wait = this.waitFor(part);
    if (wait === 0) {
      this.tokens -= 1;
      const now = this.now();
      this.sent?.push(now);
      if (part !== undefined) {
        const log = this.partSends.get(part.name);
        if (log === undefined) this.partSends.set(part.name, [now]);
        else log.push(now);
      }
    }
    return wait;
  }

  /** How many requests could go now, within the part's cap if one is named (whole tokens). */
  room(part?: BucketPart): number {
    if (this.waitFor(part) > 0) return 0;
    let room = Math.floor(this.tokens);
    if (this.sent !== undefined) room = Math.min(room, this.capacity - this.sent.length);
    const log = part === undefined ? undefined : this.partSends.get(part.name);
    // waitFor has dropped the sends that left the window.
    if (part !== undefined) room = Math.min(room, this.partCap(part, this.now()) - (log?.length ?? 0));
    return Math.max(0, room);
  }

  /** How long a request would wait for a token now (0 if one is free), within its part's cap; takes nothing. */
  waitFor(part?: BucketPart): number {
    const now = this.now();
    if (now < this.blockedUntil) return this.blockedUntil - now;
    this.refill();
    const wait = this.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - this.tokens) / this.refillPerMs()));
    return Math.max(wait, this.slidingWait(now), this.partWait(now, part));
  }

  /** Until the sends of the last window leave room for one more (0 if they do). */
  private slidingWait(now: number): number {
    if (this.sent === undefined) return 0;
    return windowWait(this.sent, this.capacity, now, this.windowMs);
  }

  /** How many of a window's requests the part may send: the limit less what it leaves the other (BucketPart). */
  private partCap(part: BucketPart, now: number): number {
    const others = this.partSends.get(part.other);
    const used = others === undefined ? 0 : inWindow(others, now, this.windowMs).length;
    const leave = Math.min(Math.floor(this.capacity * part.most), used + Math.ceil(this.capacity * PART_HEADROOM));
    return Math.max(1, this.capacity - leave);
  }

  /** Until the part's own sends of the last window leave it room under its cap (0 if they do). */
  private partWait(now: number, part: BucketPart | undefined): number {
    if (part === undefined) return 0;
    const log = this.partSends.get(part.name);
    if (log === undefined) return 0;
    const wait = windowWait(log, this.partCap(part, now), now, this.windowMs);
    if (log.length === 0) this.partSends.delete(part.name);
    // A server that said when its window resets gives every part its cap again then (refill).
    return wait > 0 && this.serverResetAt > now ? Math.min(wait, this.serverResetAt - now) : wait;
  }

  async acquire(signal?: AbortSignal): Promise<number> {
    return this.acquireWithin(Number.POSITIVE_INFINITY, signal) as Promise<number>;
  }

  /**
   * Takes a token, waiting for one at most `maxWaitMs` in all: the ms waited, or `{ wait }`
   * (taking nothing) when the next token is further off than that. Checking and taking are one
   * step, so concurrent callers never all pass a check that only one token can honour.
   */
  async acquireWithin(maxWaitMs: number, signal?: AbortSignal, part?: BucketPart, routine = false): Promise<number | { wait: number }> {
    const key = part?.name ?? "";
    let waited = 0;
    let counted = false;
    try {
      for (;;) {
        // A routine caller takes no token another caller of its part is waiting for: it looks again
        // once that one has had its turn.
        const yielding = routine && (this.waiting.get(key) ?? 0) > 0;
        const wait = yielding ? Math.max(ROUTINE_YIELD_MS, this.waitFor(part)) : this.tryTake(part);
        if (wait === 0) return waited;
        if (waited + wait > maxWaitMs) return { wait };
        if (!routine && !counted) {
          this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
          counted = true;
        }
        waited += wait;
        await sleep(wait, signal);
      }
    } finally {
      if (counted) {
        const left = (this.waiting.get(key) ?? 1) - 1;
        if (left > 0) this.waiting.set(key, left);
        else this.waiting.delete(key);
      }
    }
  }

  observe(obs: RateLimitObservation): void {
    const now = this.now();
    this.refill();
    if (this.largestLimitOnly && obs.limit !== undefined && this.serverLimit !== undefined && obs.limit < this.serverLimit) return;
    if (obs.limit !== undefined && obs.limit > this.maxLimit) return;
    if (obs.limit !== undefined && obs.limit > 0) {
      this.serverLimit = obs.limit;
      this.sent = undefined;
      this.resize();
    }
    let spent = true;
    if (obs.remaining !== undefined && obs.remaining >= 0) {
      // What the server has left, less the part of its limit that is not ours to spend.
      const reserved = this.serverLimit === undefined ? 0 : this.serverLimit - this.capacity;
      const usable = Math.max(0, obs.remaining - reserved);
      spent = usable === 0;
      this.tokens = Math.min(this.tokens, usable);
      if (obs.resetAtMs !== undefined && obs.resetAtMs > now) this.serverResetAt = obs.resetAtMs;
      if (usable === 0 && obs.resetAtMs !== undefined && obs.resetAtMs > now) {
        this.blockedUntil = Math.max(this.blockedUntil, obs.resetAtMs);
      }
    }
    // A 429 stops the whole bucket unless its own headers say this budget is not spent: then
    // something else refused that one request (a busy server, another limit), which waits its
    // Retry-After alone (the caller's retry) while the others go on.
    if (obs.retryAfterMs !== undefined && spent) {
      this.tokens = 0;
      this.blockedUntil = Math.max(this.blockedUntil, now + obs.retryAfterMs);
    }
  }

  private refillPerMs(): number {
    return this.capacity / this.windowMs;
  }

  /** This process's part of the share: all of it, unless peers spend the class unseen. */
  private ownShare(): number {
    const peers = this.sent !== undefined && this.peers !== undefined ? Math.max(1, Math.floor(this.peers())) : 1;
    return this.share / peers;
  }

  /** Sized from the server's limit (else the base) and this process's part of the share: peers come and go. */
  private resize(): void {
    const capacity = Math.max(1, Math.floor((this.serverLimit ?? this.baseCapacity) * this.ownShare()));
    if (capacity !== this.capacity) {
      this.capacity = capacity;
      this.tokens = Math.min(this.tokens, this.capacity);
    }
  }

  private refill(): void {
    if (this.peers !== undefined) this.resize();
    const now = this.now();
    if (this.serverResetAt > 0 && now >= this.serverResetAt) {
      this.serverResetAt = 0;
      this.tokens = this.capacity;
      // The server's window is whole again, for each part too.
      this.partSends.clear();
    }
    const elapsed = now - this.lastRefill;
    if (elapsed > 0) {
      this.tokens = Math.min(this.capacity, this.tokens + elapsed * this.refillPerMs());
      this.lastRefill = now;
    }
  }
}

export interface RateLimiterOptions {
  capacity?: number;
  windowMs?: number;
  /**
   * The share of the API's limit every call of a token together may spend (the call budget;
   * default 1). Each class keeps its own bucket as well.
   */
  share?: number;
  /**
   * The paginated-GET class's limit a minute (default 200, as the API documents it; its answers
   * report only the general window's). Another figure only for an API that documents one, such
   * as an emulator run at many times the product's polling pace.
   */
  listLimitPerMinute?: number;
  /** How many replicas spend this token (TokenBucketOptions.peers): the classes no header reports are divided among them. Default 1. */
  peers?: () => number;
  now?: () => number;
}

/** S176: paginated GETs allow 200 a minute (the default of RateLimiterOptions.listLimitPerMinute). */
export const LIST_LIMIT_PER_MINUTE = 200;

/**
 * One bucket per (token, route class). Linode sizes route classes differently (paginated
 * GETs, NodeBalancer stats: 50/min), so each has its own bucket, sized by its own responses'
 * headers, rather than one shared bucket that the tightest class drains for all.
 * Tokens are keyed by a hash so the map never holds the secret itself.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly opts: Required<Omit<RateLimiterOptions, "now" | "peers">> & Pick<RateLimiterOptions, "now" | "peers">;

  constructor(opts: RateLimiterOptions = {}) {
    this.opts = { capacity: opts.capacity ?? 800, windowMs: opts.windowMs ?? 60_000, share: opts.share ?? 1, listLimitPerMinute: opts.listLimitPerMinute ?? LIST_LIMIT_PER_MINUTE, now: opts.now, peers: opts.peers };
  }

  /** The paginated-GET class's documented limit a minute. */
  get listLimit(): number {
    return this.opts.listLimitPerMinute;
  }

  /**
   * A route class's bucket. `own`: the class has a limit of its own (NodeBalancer statistics,
   * paginated GETs), so its bucket spends only the budget's share of it, and starts from the
   * limit the API documents rather than the general default: a burst sent before the first
   * answer tells the real limit must not overdraw it. Headers reporting a larger limit are the
   * general window's and leave it alone; a smaller one (the API lowered it) resizes it.
   */
  bucket(token: string, group = "default", own?: { documentedLimit: number }): TokenBucket {
    return own === undefined
      ? this.make(`${tokenFingerprint(token)}:${group}`, 1)
      : this.make(`${tokenFingerprint(token)}:${group}`, this.opts.share, false, own.documentedLimit, { maxLimit: own.documentedLimit, sliding: true, ...(this.opts.peers !== undefined ? { peers: this.opts.peers } : {}) });
  }

  /** The token's budget across classes: `share` of the API's limit, whatever the route. */
  budget(token: string): TokenBucket {
    return this.make(`${tokenFingerprint(token)}:budget`, this.opts.share, true);
  }

  private make(key: string, share: number, largestLimitOnly = false, capacity = this.opts.capacity, own: Pick<TokenBucketOptions, "maxLimit" | "sliding" | "peers"> = {}): TokenBucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = new TokenBucket({ capacity, windowMs: this.opts.windowMs, share, largestLimitOnly, ...own, ...(this.opts.now ? { now: this.opts.now } : {}) });
      this.buckets.set(key, b);
    }
    return b;
  }
}

export function tokenFingerprint(token: string): string {
  return createHash("sha256").update(token).digest("hex").slice(0, 16);
}

/** Reads X-RateLimit-* and Retry-After (seconds or HTTP date) from response headers. */
export function parseRateLimitHeaders(headers: Record<string, string | string[] | undefined>, now = Date.now()): RateLimitObservation {
  const obs: RateLimitObservation = {};
  const limit = intHeader(headers["x-ratelimit-limit"]);
  const remaining = intHeader(headers["x-ratelimit-remaining"]);
  const reset = intHeader(headers["x-ratelimit-reset"]);
  if (limit !== undefined) obs.limit = limit;
  if (remaining !== undefined) obs.remaining = remaining;
  if (reset !== undefined) obs.resetAtMs = reset * 1000;
  const retryAfter = retryAfterMs(first(headers["retry-after"]), now);
  if (retryAfter !== undefined) obs.retryAfterMs = retryAfter;
  return obs;
}

export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function intHeader(v: string | string[] | undefined): number | undefined {
  const s = first(v);
  if (s === undefined) return undefined;
  const n = Number.parseInt(s, 10);
  return Number.isFinite(n) ? n : undefined;
}
