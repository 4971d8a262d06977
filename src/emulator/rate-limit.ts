// Per-token fixed windows on the wall clock (clients sleep in real time, whatever the
// emulated clock says). Every /v4 response carries X-RateLimit-*; a refusal adds Retry-After.
//
// The API's classes (S176): a general limit per token, 200/min for paginated GETs (every
// collection list), 50/min for /stats. Recorded X-Ratelimit-Limit: 1840 on every DB/NB call,
// lists included (TestNodeBalancerNode_Create's GET .../nodes, TestDatabase_List's GET
// /databases/instances), 50 on NB stats. So a list's headers report the general window, not
// the paginated class's: `paginated.headers` "general" (the default, as recorded) or "class"
// (the class's own counts, for a client that must cope with an API that reports them).
// Guesses (unknown, conservative): a paginated GET also counts against the general window;
// a 429 the paginated class gives carries that class's headers; stats count only in their own
// window (as before), and per-token overrides size the general window only.
import { z } from "zod";

export const limitSchema = z.object({
  limit: z.number().int().positive(),
  windowSeconds: z.number().positive(),
});
export type Limit = z.infer<typeof limitSchema>;

export const paginatedLimitSchema = limitSchema.extend({
  /** Whose counts a list's answer reports while it is allowed: the general window's (as recorded) or the class's. */
  headers: z.enum(["general", "class"]).default("general"),
});

export const rateLimitConfigSchema = z.object({
  enabled: z.boolean().default(true),
  /** The general window (recorded: 1840 a minute since Jul 2025). */
  default: limitSchema.default({ limit: 1840, windowSeconds: 60 }),
  /** Per token overrides of the general window, keyed by the token itself. */
  tokens: z.record(z.string(), limitSchema).default({}),
  /** Every GET of a collection the router serves with pagination (S176: 200/min), per token. */
  paginated: paginatedLimitSchema.prefault({ limit: 200, windowSeconds: 60 }),
  /** Per route windows of their own ("GET /nodebalancers/{nodeBalancerId}/stats"); the real API limits stats to 50. */
  routes: z.record(z.string(), limitSchema).default({ "GET /nodebalancers/{nodeBalancerId}/stats": { limit: 50, windowSeconds: 60 } }),
});
export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds when the window resets. */
  reset: number;
  retryAfter: number;
}

interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  config: RateLimitConfig;
  readonly #windows = new Map<string, Window>();

  constructor(config: RateLimitConfig) {
    this.config = config;
  }

  configure(config: RateLimitConfig): void {
    this.config = config;
    this.#windows.clear();
  }

  /** `paginated`: the route serves a collection with pagination (Route.paginated). */
  check(token: string, routeKey: string, paginated = false): RateDecision {
    const routeLimit = this.config.routes[routeKey];
    if (routeLimit !== undefined) return this.#take([this.#window(`${token}\u0000${routeKey}`, routeLimit)], 0);
    const general = this.#window(token, this.config.tokens[token] ?? this.config.default);
    if (!paginated) return this.#take([general], 0);
    const pages = this.#window(`${token}\u0000paginated`, this.config.paginated);
    return this.#take([pages, general], this.config.paginated.headers === "class" ? 0 : 1);
  }

  #window(key: string, limit: Limit): { w: Window; limit: Limit } {
    const now = Date.now();
    let w = this.#windows.get(key);
    if (w === undefined || now - w.start >= limit.windowSeconds * 1000) {
      w = { start: now, count: 0 };
      this.#windows.set(key, w);
    }
    return { w, limit };
  }

  /** Counts the request in every window if each has room; answers the first full window's headers, else `report`'s. */
  #take(windows: { w: Window; limit: Limit }[], report: number): RateDecision {
    const full = this.config.enabled ? windows.find(({ w, limit }) => w.count >= limit.limit) : undefined;
    if (full !== undefined) return decision(full.w, full.limit, false);
    if (this.config.enabled) for (const { w } of windows) w.count += 1;
    const shown = windows[report] ?? windows[0];
    if (shown === undefined) throw new Error("no rate-limit window");
    return this.config.enabled ? decision(shown.w, shown.limit, true) : { ...decision(shown.w, shown.limit, true), remaining: shown.limit.limit };
  }
}

function decision(w: Window, limit: Limit, allowed: boolean): RateDecision {
  const now = Date.now();
  const resetMs = w.start + limit.windowSeconds * 1000;
  return {
    allowed,
    limit: limit.limit,
    remaining: allowed ? limit.limit - w.count : 0,
    reset: Math.ceil(resetMs / 1000),
    retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
  };
}
