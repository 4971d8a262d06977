// Fault injection for resilience tests: 5xx at a rate, added latency, requests that commit
// and then drop the connection, 429 at a rate and in bursts. Decisions come from a seeded
// PRNG so a failing run can be replayed exactly with the same seed and request order.
import { z } from "zod";
import { Random } from "./random.ts";

export const faultConfigSchema = z.object({
  /** Probability (0..1) that a request fails with `errorStatus` before it is handled. */
  errorRate: z.number().min(0).max(1).default(0),
  errorStatus: z.number().int().min(500).max(599).default(500),
  /** Added to every matching request, plus up to `latencyJitterMs` at random. */
  latencyMs: z.number().int().min(0).max(60_000).default(0),
  latencyJitterMs: z.number().int().min(0).max(60_000).default(0),
  /** Probability that a request is handled (state changes) and then the socket is destroyed. */
  dropRate: z.number().min(0).max(1).default(0),
  /**
   * Probability that a request is handled and answered with its 2xx status but a body that is
   * not JSON (a proxy's or a load balancer's page), as real clients occasionally receive.
   */
  badBodyRate: z.number().min(0).max(1).default(0),
  /** Probability that a request is refused with 429 and Retry-After `retryAfterSeconds` (not handled). */
  rate429: z.number().min(0).max(1).default(0),
  /** The next N matching requests answer 429 with Retry-After `retryAfterSeconds`. */
  burst429: z.number().int().min(0).default(0),
  retryAfterSeconds: z.number().int().min(0).default(1),
  /**
   * The current platform stores string engine parameters in a canonical form of its own (as
   * MySQL does sql_mode): upper-case, comma-separated items sorted. What a client sends then
   * reads back differently, for a client that compares what it sent with what it reads.
   */
  normalizeEngineConfig: z.boolean().default(false),
  /**
   * The API as linodego recorded it on 2026-07-01: a common NodeBalancer takes new udp configs.
   * Off, the emulator follows the changelog of 2026-09-30 (basic NodeBalancers take no new UDP
   * configs; pre-existing ones stay): this makes the pre-existing ones that exception keeps.
   */
  udpOnCommon: z.boolean().default(false),
  /** Only requests whose "METHOD /template" starts with one of these are affected (all if empty). */
  routes: z.array(z.string()).default([]),
  /**
   * Only requests made with one of these tokens are affected (all if empty): one account's API
   * can misbehave while the others' answer normally, as when a noisy neighbour is measured.
   */
  tokens: z.array(z.string()).default([]),
  seed: z.number().int().optional(),
});
export type FaultConfig = z.infer<typeof faultConfigSchema>;

export interface FaultPlan {
  status429: boolean;
  retryAfter: number;
  delayMs: number;
  errorStatus: number | null;
  drop: boolean;
  badBody: boolean;
}

export class Faults {
  config: FaultConfig;
  #random: Random;

  constructor(config: FaultConfig, seed: number) {
    this.config = config;
    this.#random = new Random(config.seed ?? seed);
  }

  configure(config: FaultConfig, seed: number): void {
    this.config = config;
    this.#random = new Random(config.seed ?? seed);
  }

  /**
   * What happens to one request. `token`: the caller's (after authentication). A request out of
   * scope draws nothing, so the decisions for the tokens in scope do not depend on others' traffic.
   */
  plan(routeKey: string, token?: string): FaultPlan | null {
    const c = this.config;
    if (c.routes.length > 0 && !c.routes.some((r) => routeKey.startsWith(r))) return null;
    if (c.tokens.length > 0 && (token === undefined || !c.tokens.includes(token))) return null;
    if (c.burst429 > 0) {
      c.burst429 -= 1;
      return { status429: true, retryAfter: c.retryAfterSeconds, delayMs: 0, errorStatus: null, drop: false, badBody: false };
    }
    if (c.errorRate === 0 && c.latencyMs === 0 && c.latencyJitterMs === 0 && c.dropRate === 0 && c.rate429 === 0 && c.badBodyRate === 0) return null;
    // Drawn only when set, so the decisions of a config without it stay what they were.
    if (c.rate429 > 0 && this.#random.next() < c.rate429) {
      return { status429: true, retryAfter: c.retryAfterSeconds, delayMs: 0, errorStatus: null, drop: false, badBody: false };
    }
    const delayMs = c.latencyMs + (c.latencyJitterMs > 0 ? Math.floor(this.#random.next() * (c.latencyJitterMs + 1)) : 0);
    const errorStatus = c.errorRate > 0 && this.#random.next() < c.errorRate ? c.errorStatus : null;
    const drop = errorStatus === null && c.dropRate > 0 && this.#random.next() < c.dropRate;
    // Drawn only when set, so the decisions of a config without it stay what they were.
    const badBody = errorStatus === null && !drop && c.badBodyRate > 0 && this.#random.next() < c.badBodyRate;
    return { status429: false, retryAfter: 0, delayMs, errorStatus, drop, badBody };
  }
}
