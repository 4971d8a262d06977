// The API response time operator benches run against: BENCH_LATENCY_MS, MEDIAN or MEDIAN,P99
// in ms (the emulator's --latency-ms), default a 150 ms median with a p99 of 4 x; 0 turns it off.
// The reference records no latency: 150 ms is the choice of a realistic median.
import { p99Of, parseLatencyFlag, type LatencyConfig } from "../../src/emulator/latency.ts";

export const DEFAULT_BENCH_LATENCY = "150";

export function benchLatency(env: NodeJS.ProcessEnv = process.env): LatencyConfig {
  return parseLatencyFlag(env.BENCH_LATENCY_MS ?? DEFAULT_BENCH_LATENCY);
}

/** As the result's flags record it: "MEDIAN,P99" (the tail spelled out), or "0". */
export function latencyFlag(config: LatencyConfig): string {
  return config.medianMs === 0 ? "0" : `${String(config.medianMs)},${String(p99Of(config))}`;
}
