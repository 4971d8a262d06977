// How many entries each map the operator keeps per object or per token holds, read at scrape
// time (linode_operator_cache_entries{map}). A map that grows with churn and never comes back
// down after deletions is a leak; this gauge shows it long before RSS does (npm run bench:soak
// compares every map's size at the end of an hour of churn with its size before).
import { Gauge, type Registry } from "prom-client";

/** Stops counting a map (its owner was released, e.g. a rotated-away token's caches). */
export type Untrack = () => void;

export const CACHE_ENTRIES_METRIC = "linode_operator_cache_entries";

export class CacheEntries {
  /** By map name: the size of each instance of it (one per account for per-account caches). */
  private readonly maps = new Map<string, Set<() => number>>();

  /**
   * Counts `size()` under `map` from now on. Several instances under one name add up (a list
   * cache per account is one map of the kind's); the name stays at 0 once all are untracked,
   * so a series that emptied reads 0 rather than vanishing.
   */
  track(map: string, size: () => number): Untrack {
    let sizes = this.maps.get(map);
    if (sizes === undefined) {
      sizes = new Set();
      this.maps.set(map, sizes);
    }
    // A closure of its own: the same function tracked twice counts twice, and untracks once.
    const entry = (): number => size();
    sizes.add(entry);
    return () => { sizes.delete(entry); };
  }

  /** Every map's size now, by name (summed over its instances). */
  sizes(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, sizes] of this.maps) {
      let n = 0;
      for (const size of sizes) n += size();
      out.set(name, n);
    }
    return out;
  }

  /** Exports the sizes on `registry` as linode_operator_cache_entries{map}. */
  register(registry: Registry): void {
    const sizes = (): Map<string, number> => this.sizes();
    new Gauge({
      name: CACHE_ENTRIES_METRIC,
      help: "Entries in each map the operator keeps per object or per token (work queue, informer caches and indexes, per-account clients and list caches, ...), read at scrape time: after deletions each should come back to its steady size.",
      labelNames: ["map"],
      registers: [registry],
      collect() {
        this.reset();
        for (const [map, n] of sizes()) this.set({ map }, n);
      },
    });
  }
}
