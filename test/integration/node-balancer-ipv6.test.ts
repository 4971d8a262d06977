// IPv6 backends on a real API server and the emulator over HTTP: a static public IPv6 backend
// (written in any spelling, sent and compared in one) created and read back; a premium
// NodeBalancer outside a VPC whose nodesFrom takes each node's public IPv6 address, sent as
// [addr]:port without a subnet, a node without one skipped (counted, never named); a unique
// local or link-local address, an IPv6 node with a subnet or beside spec.vpcs, refused at
// admission with nothing sent.
import { CoreV1Api, EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

type Status = { id?: number; type?: string; skippedBackends?: string[]; configs?: { port: number; nodes?: { address: string; subnetId?: number; vpcConfigId?: number }[] }[] };

describe("IPv6 NodeBalancer backends", () => {
  const cluster = useTestCluster("nb-ipv6");
  let env: OperatorEnv;
  const h = nodeBalancerHelpers(cluster, () => env);
  const status = (o: ManagedObject): Status => (o.status ?? {}) as Status;
  const core = (): CoreV1Api => cluster.kc.makeApiClient(CoreV1Api);
  const madeNodes: string[] = [];
  const mutationsUnder = (path: string): string[] => env.emulator.mutations().filter((m) => m.method !== "GET" && (m.path === path || m.path.startsWith(`${path}/`))).map((m) => `${m.method} ${m.path}`);
  const creates = (): number => env.emulator.mutations().filter((m) => m.method === "POST" && m.path === "/nodebalancers").length;
  /** The cloud's nodes of the NodeBalancer's first config, as [address, vpcConfigId] (a VPC node would have one). */
  const cloudNodes = async (id: number): Promise<[string, number | null | undefined][]> => {
    const config = (await env.linode.nodeBalancers.listAllConfigs(id))[0];
    return (await env.linode.nodeBalancers.listAllNodes(id, config?.id ?? 0)).map((n): [string, number | null | undefined] => [n.address, n.vpcConfigId]).sort();
  };

  beforeAll(async () => { env = await startOperatorEnv(cluster, { readNodes: true, poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => {
    await Promise.all(madeNodes.map((n) => core().deleteNode({ name: n }).catch(() => undefined)));
    await env.stop();
  });

  it("a static public IPv6 backend: created, read back in status as the API answers it, and settled (another spelling in the spec is the same node)", async () => {
    await h.create("static-v6", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "v6-node", address: "[2600:3C03:0::F03C:91ff:fe24:3a2f]:8080" }, { label: "v4-node", address: "192.168.140.1:80" }] }] });
    const o = await h.settled("static-v6", (x) => (status(x).configs?.[0]?.nodes?.length ?? 0) === 2);
    const s = status(o);
    expect(s.configs?.[0]?.nodes?.map((n) => n.address).sort()).toEqual(["192.168.140.1:80", "[2600:3c03::f03c:91ff:fe24:3a2f]:8080"]);
    expect(await cloudNodes(s.id ?? 0)).toEqual([["192.168.140.1:80", null], ["[2600:3c03::f03c:91ff:fe24:3a2f]:8080", null]]);
    const path = `/nodebalancers/${String(s.id)}`;
    const before = mutationsUnder(path).length;
    await env.repass("NodeBalancer", `${cluster.namespace}/static-v6`, 3);
    expect(mutationsUnder(path).length).toBe(before);
  });

  it("premium outside a VPC with nodesFrom.addressFamily IPv6: each node at its public IPv6 address as [addr]:port, no subnet; a node without one skipped, counted and never named", async () => {
    const pool = { "test.linode.operator.dev/pool": `${cluster.namespace}-v6` };
    const nodes: [string, { type: string; address: string }[]][] = [
      ["ext", [{ type: "InternalIP", address: "192.168.141.1" }, { type: "ExternalIP", address: "203.0.113.61" }, { type: "ExternalIP", address: "2600:3c03::f03c:91ff:fe00:1" }]],
      ["int", [{ type: "InternalIP", address: "192.168.141.2" }, { type: "InternalIP", address: "2a01:7e00::f03c:91ff:fe00:2" }]],
      ["ula", [{ type: "InternalIP", address: "192.168.141.3" }, { type: "InternalIP", address: "fd00:141::3" }, { type: "ExternalIP", address: "fe80::3" }]],
    ];
    for (const [n, addresses] of nodes) {
      const name = `${cluster.namespace}-${n}`;
      await core().createNode({ body: { apiVersion: "v1", kind: "Node", metadata: { name, labels: pool }, status: { addresses, conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "test" }] } } });
      madeNodes.push(name);
    }
    await h.create("premium-v6", { type: "premium", configs: [{ port: 443, protocol: "tcp", nodesFrom: { nodes: { selector: { matchLabels: pool }, port: 30443 }, addressFamily: "IPv6" } }] });
    const o = await h.settled("premium-v6", (x) => (status(x).configs?.[0]?.nodes?.length ?? 0) === 2);
    const s = status(o);
    expect(s.type).toBe("premium");
    expect(s.configs?.[0]?.nodes?.map((n) => [n.address, n.subnetId]).sort()).toEqual([["[2600:3c03::f03c:91ff:fe00:1]:30443", undefined], ["[2a01:7e00::f03c:91ff:fe00:2]:30443", undefined]]);
    expect(await cloudNodes(s.id ?? 0)).toEqual([["[2600:3c03::f03c:91ff:fe00:1]:30443", null], ["[2a01:7e00::f03c:91ff:fe00:2]:30443", null]]);
    const skipped = await waitFor("skipped counted", async () => { const k = status(await h.get("premium-v6")).skippedBackends; return Array.isArray(k) && k.length > 0 ? k : undefined; }, 30_000, 100);
    expect(skipped).toEqual(["1 node skipped, with no public IPv6 address (a global unicast ExternalIP or InternalIP, 2000::/3): nodesFrom.addressFamily IPv6 reaches nodes there only"]);
    const events = await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
    const said = events.items.filter((e) => e.reason === "BackendSkipped" && e.regarding?.name === "premium-v6");
    expect(said.length).toBeGreaterThan(0);
    expect(JSON.stringify(said.map((e) => e.note))).not.toMatch(/-ula|fd00:141|fe80::3/);
    const path = `/nodebalancers/${String(s.id)}`;
    const before = mutationsUnder(path).length;
    await env.repass("NodeBalancer", `${cluster.namespace}/premium-v6`, 3);
    expect(mutationsUnder(path).length).toBe(before);
  });

  it("refused at admission, nothing sent: a unique local or link-local IPv6 backend, an IPv6 one with a subnet or beside spec.vpcs, premium with IPv4 nodesFrom outside a VPC", async () => {
    const posts = creates();
    const one = (address: string, extra: Record<string, unknown> = {}) => ({ configs: [{ port: 80, nodes: [{ label: "bad-node", address, ...extra }] }] });
    await expect(h.create("ula", one("[fd12:3456::1]:80"))).rejects.toThrow(/an IPv6 backend must be a public \(global unicast, 2000::\/3\) address/);
    await expect(h.create("link-local", one("[fe80::1]:80"))).rejects.toThrow(/an IPv6 backend must be a public \(global unicast, 2000::\/3\) address/);
    await expect(h.create("mapped", one("[::ffff:c0a8:1]:80"))).rejects.toThrow(/IPv6 backend must be a public|address must be an IPv4 address and a port/);
    await expect(h.create("bare", one("2600:3c03::1:80"))).rejects.toThrow(/or an IPv6 address in brackets and a port/);
    await expect(h.create("with-subnet", one("[2600:3c03::1]:80", { subnetId: 5 }))).rejects.toThrow(/an IPv6 backend is outside a VPC: it takes no subnetId/);
    await expect(h.create("beside-vpcs", { vpcs: [{ subnetId: 5 }], ...one("[2600:3c03::1]:80") })).rejects.toThrow(/IPv6 backends are not VPC backends/);
    await expect(h.create("from-beside-vpcs", { vpcs: [{ subnetId: 5 }], configs: [{ port: 80, nodesFrom: { nodes: { selector: {}, port: 80 }, addressFamily: "IPv6" } }] })).rejects.toThrow(/IPv6 backends are not VPC backends/);
    await expect(h.create("premium-v4-from", { type: "premium", configs: [{ port: 80, nodesFrom: { nodes: { selector: {}, port: 80 } } }] })).rejects.toThrow(/premium NodeBalancer takes no private IPv4 backends outside a VPC/);
    await expect(h.create("premium-mixed", { type: "premium", configs: [{ port: 80, nodes: [{ label: "v6-node", address: "[2600:3c03::1]:80" }, { label: "v4-node", address: "192.168.1.1:80" }] }] })).rejects.toThrow(/premium NodeBalancer takes no private IPv4 backends outside a VPC/);
    expect(creates()).toBe(posts);
  });
});
