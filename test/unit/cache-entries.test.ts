// linode_operator_cache_entries: the sizes of the maps the operator keeps per object or per
// token, read at scrape time and summed over the instances of one map (one per account); a map
// whose every instance is gone reads 0, not nothing. The event-loop lag's p99 is exported too.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CACHE_ENTRIES_METRIC, CacheEntries } from "../../src/metrics/cache-entries.ts";
import { createOperatorMetrics } from "../../src/metrics/operator-metrics.ts";

describe("CacheEntries", () => {
  it("sums the instances of a map, read when scraped; an untracked one stops counting, the name stays at 0", async () => {
    const registry = new Registry();
    const entries = new CacheEntries();
    entries.register(registry);
    const a = new Map([[1, 1], [2, 2]]);
    const b = new Set(["x"]);
    const untrackA = entries.track("list", () => a.size);
    entries.track("list", () => b.size);
    a.set(3, 3);
    const read = async (): Promise<Record<string, number>> => Object.fromEntries(((await registry.getSingleMetric(CACHE_ENTRIES_METRIC)?.get())?.values ?? []).map((v) => [String(v.labels.map), v.value]));
    expect(await read()).toEqual({ list: 4 });
    untrackA();
    expect(await read()).toEqual({ list: 1 });
    b.clear();
    expect(entries.sizes()).toEqual(new Map([["list", 0]]));
  });

  it("the operator's metrics carry the gauge and the event loop's lag p99", async () => {
    const registry = new Registry();
    const metrics = createOperatorMetrics(registry);
    metrics.cacheEntries.track("events.series", () => 7);
    const text = await registry.metrics();
    expect(text).toContain(`${CACHE_ENTRIES_METRIC}{map="events.series"} 7`);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
  });
});
