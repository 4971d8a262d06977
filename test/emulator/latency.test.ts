// The API's response time the emulator models (--latency-ms): a seeded lognormal around a
// median with a p99 tail, none by default.
import { describe, expect, it } from "vitest";
import { Latency, parseLatencyFlag } from "../../src/emulator/latency.ts";
import { client, start } from "./helpers.ts";

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

function draws(latency: Latency, n: number): number[] {
  return Array.from({ length: n }, () => latency.draw()).sort((a, b) => a - b);
}

describe("emulated latency", () => {
  it("draws a median and a p99 tail as configured (4 × the median unless given), the same for the same seed", () => {
    const given = draws(new Latency({ medianMs: 150, p99Ms: 900 }, 42), 20_000);
    expect(quantile(given, 0.5)).toBeGreaterThan(150 * 0.95);
    expect(quantile(given, 0.5)).toBeLessThan(150 * 1.05);
    expect(quantile(given, 0.99)).toBeGreaterThan(900 * 0.85);
    expect(quantile(given, 0.99)).toBeLessThan(900 * 1.15);
    const defaultTail = draws(new Latency({ medianMs: 150 }, 42), 20_000);
    expect(quantile(defaultTail, 0.99)).toBeGreaterThan(600 * 0.85);
    expect(quantile(defaultTail, 0.99)).toBeLessThan(600 * 1.15);
    // Replayable: the same seed draws the same sequence, another seed another.
    const a = new Latency({ medianMs: 150 }, 7);
    const b = new Latency({ medianMs: 150 }, 7);
    const c = new Latency({ medianMs: 150 }, 8);
    const seqA = Array.from({ length: 50 }, () => a.draw());
    expect(Array.from({ length: 50 }, () => b.draw())).toEqual(seqA);
    expect(Array.from({ length: 50 }, () => c.draw())).not.toEqual(seqA);
  });

  it("parses --latency-ms as MEDIAN or MEDIAN,P99 and refuses a tail below the median", () => {
    expect(parseLatencyFlag("150")).toEqual({ medianMs: 150 });
    expect(parseLatencyFlag("150,600")).toEqual({ medianMs: 150, p99Ms: 600 });
    expect(() => parseLatencyFlag("150,100")).toThrow(/p99Ms must be at least medianMs/);
    expect(() => parseLatencyFlag("fast")).toThrow(/MEDIAN or MEDIAN,P99/);
    expect(() => parseLatencyFlag("1,2,3")).toThrow(/MEDIAN or MEDIAN,P99/);
  });

  it("every API request waits its draw; none by default", async () => {
    const plain = await start();
    try {
      expect(plain.context.latency.config.medianMs).toBe(0);
      expect(Array.from({ length: 100 }, () => plain.context.latency.draw()).every((d) => d === 0)).toBe(true);
    } finally {
      await plain.close();
    }
    // A constant 250 ms (p99 = median): a lower bound holds however loaded the machine is.
    const slow = await start({ latency: { medianMs: 250, p99Ms: 250 } });
    try {
      const api = client(slow);
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 4 }, () => api.get("/nodebalancers")));
      const elapsed = performance.now() - started;
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(elapsed).toBeGreaterThanOrEqual(245);
      // One alone waits as long.
      const one = performance.now();
      await api.get("/nodebalancers");
      expect(performance.now() - one).toBeGreaterThanOrEqual(245);
      // The admin endpoints are the emulator's own: they answer at once, before an API request sent with them.
      const order: string[] = [];
      await Promise.all([api.get("/nodebalancers").then(() => order.push("api")), api.admin("GET", "/rate-limits").then(() => order.push("admin"))]);
      expect(order).toEqual(["admin", "api"]);
    } finally {
      await slow.close();
    }
  });
});
