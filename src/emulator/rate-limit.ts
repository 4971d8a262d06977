// Per-token fixed windows on the wall clock (clients sleep in real time, whatever the
// emulated clock says). Every /v4 response carries X-RateLimit-*; a refusal adds Retry-After.
import { z } from "zod";

export const limitSchema = z.object({
  limit: z.number().int().positive(),
  windowSeconds: z.number().positive(),
});
export type Limit = z.infer<typeof limitSchema>;

export const rateLimitConfigSchema = z.object({
  enabled: z.boolean().default(true),
  default: limitSchema.default({ limit: 1840, windowSeconds: 60 }),
  /** Per token overrides, keyed by the token itself. */
  tokens: z.record(z.string(), limitSchema).default({}),
  /** Per route overrides ("GET /nodebalancers/{nodeBalancerId}/stats"); the real API limits stats to 50. */
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

  check(token: string, routeKey: string): RateDecision {
    const routeLimit = this.config.routes[routeKey];
    const limit = routeLimit ?? this.config.tokens[token] ?? this.config.default;
    const key = routeLimit === undefined ? token : `${token}\u0000${routeKey}`;
    const now = Date.now();
    const windowMs = limit.windowSeconds * 1000;
    let w = this.#windows.get(key);
    if (w === undefined || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.#windows.set(key, w);
    }
    const resetMs = w.start + windowMs;
    const reset = Math.ceil(resetMs / 1000);
    const retryAfter = Math.max(1, Math.ceil((resetMs - now) / 1000));
    if (!this.config.enabled) return { allowed: true, limit: limit.limit, remaining: limit.limit, reset, retryAfter };
    if (w.count >= limit.limit) return { allowed: false, limit: limit.limit, remaining: 0, reset, retryAfter };
    w.count += 1;
    return { allowed: true, limit: limit.limit, remaining: limit.limit - w.count, reset, retryAfter };
  }
}
