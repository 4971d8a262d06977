// NodeBalancer statistics cost a call per NodeBalancer per interval: read at most once an
// interval, never when turned off, and exported only for resources that still exist.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LinodeError, type CallOptions, type LinodeClient, type NodeBalancerStats } from "../../src/linode/index.ts";
import { NodeBalancerStatsReader } from "../../src/resources/node-balancer/stats.ts";

type Answer = number | "limited" | "gone" | "failing";
const failures = { limited: "rateLimited", gone: "notFound", failing: "transient" } as const;

/** A client whose statistics reads answer from `answers` in turn: a number of connections, or a failure of that kind ("limited": the budget has no call to spare). */
function fakeLinode(answers: Answer[] = []): { linode: LinodeClient; calls: number[]; options: (CallOptions | undefined)[] } {
  const calls: number[] = [];
  const options: (CallOptions | undefined)[] = [];
  const linode = {
    nodeBalancers: {
      getStats: (id: number, opts?: CallOptions) => {
        calls.push(id);
        options.push(opts);
        const a = answers.shift() ?? 7;
        if (typeof a === "string") return Promise.reject(new LinodeError(`GET /nodebalancers/{nodeBalancerId}/stats: ${a}`, { kind: failures[a], method: "GET", route: "/nodebalancers/{nodeBalancerId}/stats", retryAfterMs: 2_000 }));
        const stats: NodeBalancerStats = { title: "t", data: { connections: [[1, a]], traffic: { in: [[1, 100]], out: [[1, 200]] } } };
        return Promise.resolve(stats);
      },
    },
  } as unknown as LinodeClient;
  return { linode, calls, options };
}

describe("NodeBalancer statistics", () => {
  const signal = new AbortController().signal;

  it("are read once per interval per NodeBalancer and exported while the resource exists", async () => {
    const { linode, calls } = fakeLinode();
    const registry = new Registry();
    let exists = true;
    const reader = new NodeBalancerStatsReader({ registry, intervalMillis: 60_000, exists: () => exists, random: () => 0 });
    await reader.refresh(linode, "ns", "web", 11, signal);
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([11]);
    expect(await registry.metrics()).toContain('linode_nodebalancer_connections{namespace="ns",name="web",id="11"} 7');
    exists = false;
    expect(await registry.metrics()).not.toContain('name="web"');
  });

  it("held back by the statistics budget: not waited for, the last figures stay, and the next pass tries again", async () => {
    const { linode, calls, options } = fakeLinode([7, "limited", 9]);
    const registry = new Registry();
    let now = 1_000_000;
    const reader = new NodeBalancerStatsReader({ registry, intervalMillis: 1, exists: () => true, random: () => 0, now: () => now });
    await reader.refresh(linode, "ns", "web", 11, signal);
    now += 5;
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(options[1]?.retry?.maxRateLimitWaitMs).toBe(0);
    expect(await registry.metrics()).toContain('linode_nodebalancer_connections{namespace="ns",name="web",id="11"} 7');
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([11, 11, 11]);
    expect(await registry.metrics()).toContain('linode_nodebalancer_connections{namespace="ns",name="web",id="11"} 9');
  });

  it("a failure of the moment keeps the last figures; a NodeBalancer gone from the API has none", async () => {
    const { linode, calls } = fakeLinode([7, "failing", "gone"]);
    const registry = new Registry();
    let now = 1_000_000;
    const reader = new NodeBalancerStatsReader({ registry, intervalMillis: 1, exists: () => true, random: () => 0, now: () => now });
    const pause = (): void => { now += 5; };
    await reader.refresh(linode, "ns", "web", 11, signal);
    pause();
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(await registry.metrics()).toContain('linode_nodebalancer_connections{namespace="ns",name="web",id="11"} 7');
    pause();
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([11, 11, 11]);
    expect(await registry.metrics()).not.toContain('name="web"');
  });

  it("first read at a random point of the first interval (a restart does not read them all at once)", async () => {
    const { linode, calls } = fakeLinode();
    let now = 1_000_000;
    const reader = new NodeBalancerStatsReader({ intervalMillis: 40, exists: () => true, random: () => 0.5, now: () => now });
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([]);
    now += 19;
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([]);
    now += 1;
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([11]);
  });

  it("a NodeBalancer younger than the interval (no statistics yet) is first read one interval after its creation", async () => {
    const { linode, calls } = fakeLinode();
    let now = 1_000_000;
    const reader = new NodeBalancerStatsReader({ intervalMillis: 40, exists: () => true, random: () => 0, now: () => now });
    const created = now;
    await reader.refresh(linode, "ns", "new", 12, signal, created);
    expect(calls).toEqual([]);
    now += 39;
    await reader.refresh(linode, "ns", "new", 12, signal, created);
    expect(calls).toEqual([]);
    now += 1;
    await reader.refresh(linode, "ns", "new", 12, signal, created);
    expect(calls).toEqual([12]);
    // One created long ago is read at its first look (random: 0).
    await reader.refresh(linode, "ns", "old", 13, signal, created - 3_600_000);
    expect(calls).toEqual([12, 13]);
  });

  it("at an interval of 0 are never read", async () => {
    const { linode, calls } = fakeLinode();
    const registry = new Registry();
    const reader = new NodeBalancerStatsReader({ registry, intervalMillis: 0, exists: () => true });
    for (let i = 0; i < 3; i++) await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([]);
    expect(await registry.metrics()).not.toContain('name="web"');
  });
});
