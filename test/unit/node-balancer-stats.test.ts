// NodeBalancer statistics cost a call per NodeBalancer per interval: read at most once an
// interval, never when turned off, and exported only for resources that still exist.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { LinodeClient, NodeBalancerStats } from "../../src/linode/index.ts";
import { NodeBalancerStatsReader } from "../../src/resources/node-balancer/stats.ts";

function fakeLinode(): { linode: LinodeClient; calls: number[] } {
  const calls: number[] = [];
  const stats: NodeBalancerStats = { title: "t", data: { connections: [[1, 7]], traffic: { in: [[1, 100]], out: [[1, 200]] } } };
  const linode = { nodeBalancers: { getStats: (id: number) => { calls.push(id); return Promise.resolve(stats); } } } as unknown as LinodeClient;
  return { linode, calls };
}

describe("NodeBalancer statistics", () => {
  const signal = new AbortController().signal;

  it("are read once per interval per NodeBalancer and exported while the resource exists", async () => {
    const { linode, calls } = fakeLinode();
    const registry = new Registry();
    let exists = true;
    const reader = new NodeBalancerStatsReader({ registry, intervalMillis: 60_000, exists: () => exists });
    await reader.refresh(linode, "ns", "web", 11, signal);
    await reader.refresh(linode, "ns", "web", 11, signal);
    expect(calls).toEqual([11]);
    expect(await registry.metrics()).toContain('linode_nodebalancer_connections{namespace="ns",name="web",id="11"} 7');
    exists = false;
    expect(await registry.metrics()).not.toContain('name="web"');
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
