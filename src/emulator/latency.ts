// The API's response time: a lognormal around a median with a long tail, as a real API's
// latency is (the reference records none: the median and p99 are the bench's choice, 150 ms
// and 4× by default there). Drawn from a seeded PRNG of its own, so a run with the same seed and
// request order waits the same, and ids or fault decisions do not shift with it.
import { z } from "zod";
import { Random } from "./random.ts";

export const latencySchema = z.object({
  /** 0 (the default): answers at once. */
  medianMs: z.number().min(0).max(60_000).default(0),
  /** Default 4 × the median. */
  p99Ms: z.number().min(0).max(60_000).optional(),
}).refine((l) => l.p99Ms === undefined || l.p99Ms >= l.medianMs, { error: "p99Ms must be at least medianMs", path: ["p99Ms"] });
export type LatencyConfig = z.infer<typeof latencySchema>;

/** The configured p99, or 4 × the median. */
export const p99Of = (config: LatencyConfig): number => config.p99Ms ?? config.medianMs * 4;

/** The standard normal's 99th percentile. */
const Z99 = 2.3263478740408408;
const MAX_MS = 60_000;
/** Keeps this stream apart from the ids' and faults' of the same seed. */
const STREAM = 0x1a7e9c3d;

export class Latency {
  readonly config: LatencyConfig;
  readonly #random: Random;
  readonly #sigma: number;

  constructor(config: LatencyConfig, seed: number) {
    this.config = config;
    this.#random = new Random(seed ^ STREAM);
    this.#sigma = config.medianMs > 0 ? Math.log(p99Of(config) / config.medianMs) / Z99 : 0;
  }

  /** The next request's delay in ms (0 when no median is set). */
  draw(): number {
    if (this.config.medianMs === 0) return 0;
    // Box-Muller; 1 - next() is in (0, 1], so the log is finite.
    const z = Math.sqrt(-2 * Math.log(1 - this.#random.next())) * Math.cos(2 * Math.PI * this.#random.next());
    return Math.min(MAX_MS, Math.round(this.config.medianMs * Math.exp(this.#sigma * z)));
  }
}

/** `--latency-ms M` or `M,P99`. */
export function parseLatencyFlag(text: string): LatencyConfig {
  const [median, p99, ...rest] = text.split(",").map((p) => p.trim());
  if (rest.length > 0 || median === undefined || !/^\d+(\.\d+)?$/.test(median) || (p99 !== undefined && !/^\d+(\.\d+)?$/.test(p99))) {
    throw new Error("--latency-ms must be MEDIAN or MEDIAN,P99 in milliseconds (e.g. 150 or 150,600)");
  }
  const parsed = latencySchema.safeParse({ medianMs: Number(median), ...(p99 === undefined ? {} : { p99Ms: Number(p99) }) });
  if (!parsed.success) throw new Error(`--latency-ms: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}
