// NodeBalancer statistics as Prometheus gauges: the latest 5-minute sample of connections and
// of traffic in and out, per NodeBalancer resource. Read from the API at a modest interval by
// the reconcile (so only by the leader), kept in memory, and exported at scrape time for the
// resources that still exist: a deleted one's series disappear with it.
import { Gauge, type Registry } from "prom-client";
import { isNotFound, isPrecondition, isRateLimited, type LinodeClient, type NodeBalancerStats } from "../../linode/index.ts";
import type { Logger } from "../../runtime/contract.ts";
import { KindTimings } from "../shared/constants.ts";

interface Sample { namespace: string; name: string; id: number; connections?: number; trafficIn?: number; trafficOut?: number; readAt: number }

const latest = (series: number[][]): number | undefined => {
  const last = series.at(-1);
  return last !== undefined && typeof last[1] === "number" ? last[1] : undefined;
};

export class NodeBalancerStatsReader {
  private readonly intervalMillis: number;
  private readonly samples = new Map<string, Sample>();
  private readonly exists: (namespace: string, name: string) => boolean;
  private readonly log: Logger | undefined;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(opts: { registry?: Registry; intervalMillis: number; exists: (namespace: string, name: string) => boolean; log?: Logger; random?: () => number; now?: () => number }) {
    this.intervalMillis = opts.intervalMillis;
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    this.exists = opts.exists;
    this.log = opts.log;
    if (opts.registry === undefined) return;
    const labelNames = ["namespace", "name", "id"] as const;
    const registers = [opts.registry];
    // A resource gone without a delete of ours (deletionPolicy Retain, Observe) is forgotten here.
    const current = (): Sample[] => [...this.samples].flatMap(([key, s]) => {
      if (this.exists(s.namespace, s.name)) return [s];
      this.samples.delete(key);
      return [];
    });
    const labels = (s: Sample): Record<(typeof labelNames)[number], string> => ({ namespace: s.namespace, name: s.name, id: String(s.id) });
    new Gauge({
      name: "linode_nodebalancer_connections", help: "Connections to the NodeBalancer: the API's latest 5-minute sample.", labelNames, registers,
      collect() { this.reset(); for (const s of current()) if (s.connections !== undefined) this.set(labels(s), s.connections); },
    });
    new Gauge({
      // In bytes, Prometheus's base unit (the API samples bits per second).
      name: "linode_nodebalancer_traffic_bytes_per_second", help: "Traffic through the NodeBalancer by direction (in, out), in bytes per second: the API's latest 5-minute sample.", labelNames: [...labelNames, "direction"], registers,
      collect() {
        this.reset();
        for (const s of current()) {
          if (s.trafficIn !== undefined) this.set({ ...labels(s), direction: "in" }, s.trafficIn / 8);
          if (s.trafficOut !== undefined) this.set({ ...labels(s), direction: "out" }, s.trafficOut / 8);
        }
      },
    });
  }

  /**
   * Reads the statistics if the last read is older than the interval (never, at 0); never fails
   * or holds up the reconcile. The API allows 50 statistics reads a minute apart from its
   * general limit (of which the operator spends its share), so with many NodeBalancers not all
   * fit in one interval: a read the budget cannot take at once is not waited for (that would hold
   * a reconcile slot) but tried again on the next pass, and the last figures stay exported.
   */
  async refresh(linode: LinodeClient, namespace: string, name: string, id: number, signal: AbortSignal, createdAt = 0): Promise<void> {
    if (this.intervalMillis === 0) return;
    const key = `${namespace}/${name}`;
    const prev = this.samples.get(key);
    if (prev === undefined) {
      // The first look in this process (a start, a restart, a failover) reads later, at a random
      // point of the first few minutes: many NodeBalancers seen at once are then read a few at a
      // time, within the statistics limit, not all in the pass that re-observes everything. One
      // younger than the interval has none yet (the API: "Stats are unavailable at this time."),
      // so its first read is one interval after it was created, not among the calls creating the rest.
      const spread = Math.min(this.intervalMillis, KindTimings.statsFirstReadSpreadMillis) * this.random();
      const due = Math.max(this.now() + spread, (Number.isFinite(createdAt) ? createdAt : 0) + this.intervalMillis);
      this.samples.set(key, { namespace, name, id, readAt: due - this.intervalMillis });
      if (due > this.now()) return;
    }
    if (prev !== undefined && prev.id === id && this.now() - prev.readAt < this.intervalMillis) return;
    let stats: NodeBalancerStats;
    try {
      stats = await linode.nodeBalancers.getStats(id, { signal, retry: { maxRateLimitWaitMs: 0 } });
    } catch (err) {
      if (isRateLimited(err)) {
        this.log?.debug({ key, err: (err as Error).message }, "NodeBalancer statistics not read");
        return;
      }
      // A new NodeBalancer ("Stats are unavailable at this time.") or one gone: nothing to show.
      if (isPrecondition(err) || isNotFound(err)) this.samples.set(key, { namespace, name, id, readAt: this.now() });
      else {
        // A failure of the moment: the last figures stand until the next interval.
        this.log?.warn({ key, err: (err as Error).message }, "NodeBalancer statistics not read");
        this.samples.set(key, { ...(prev?.id === id ? prev : { namespace, name, id }), readAt: this.now() });
      }
      return;
    }
    this.samples.set(key, {
      namespace, name, id, readAt: this.now(),
      ...optional("connections", latest(stats.data.connections)),
      ...optional("trafficIn", latest(stats.data.traffic.in)),
      ...optional("trafficOut", latest(stats.data.traffic.out)),
    });
  }

  /** How many NodeBalancers have figures kept (a gauge: back to its steady size after deletions). */
  get size(): number {
    return this.samples.size;
  }

  forget(namespace: string, name: string): void {
    this.samples.delete(`${namespace}/${name}`);
  }
}

function optional<K extends string>(k: K, v: number | undefined): Partial<Record<K, number>> {
  return v === undefined ? {} : ({ [k]: v } as Record<K, number>);
}
