// NodeBalancers in VPCs, premium types and reserved addresses, on a real API server and the
// emulator over HTTP: a premium NodeBalancer whose backends follow the cluster's nodes at their
// VPC InternalIPs with the subnet sent; a frontend VPC on common refused at admission; a
// create-only field changed is a reason and nothing is sent; a reserved address kept across
// requests.recreate; a premium VPC NodeBalancer adopted in Manage mode costs no mutation; naming
// a VPC with the operator's token where adoption is not allowed is refused, nothing sent.
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

type Status = { id?: number; type?: string; ipv4?: string; frontendAddressType?: string; vpcs?: { id: number; purpose: string; subnetId: number; ipv4Range?: string }[]; configs?: { port: number; nodes?: { address: string; subnetId?: number; vpcConfigId?: number }[] }[] };

describe("NodeBalancers in VPCs", () => {
  const cluster = useTestCluster("nb-vpc");
  let env: OperatorEnv;
  const other = (): string => `${cluster.namespace}-c`;
  const h = nodeBalancerHelpers(cluster, () => env);
  const status = (o: ManagedObject): Status => (o.status ?? {}) as Status;
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const core = (): CoreV1Api => cluster.kc.makeApiClient(CoreV1Api);
  const madeNodes: string[] = [];
  /** A call to the emulator's API as the operator's account (VPCs and reserved addresses are made outside the operator). */
  const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${env.emulator.url}${path}`, { method, headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const vpc = async (label: string, region: string, ipv4: string): Promise<number> => ((await api("POST", "/vpcs", { label, region, subnets: [{ label: "nodes", ipv4 }] })).subnets as { id: number }[])[0]?.id ?? 0;
  /** Requests that change something under one NodeBalancer's path. */
  const mutationsUnder = (path: string): string[] => env.emulator.mutations().filter((m) => m.method !== "GET" && (m.path === path || m.path.startsWith(`${path}/`))).map((m) => `${m.method} ${m.path}`);
  const creates = (): number => env.emulator.mutations().filter((m) => m.method === "POST" && m.path === "/nodebalancers").length;

  beforeAll(async () => {
    await cluster.core.createNamespace({ body: { metadata: { name: other(), labels: { "linode.operator.dev/test": "true" } } } });
    env = await startOperatorEnv(cluster, { readNodes: true, poll: { pendingMillis: 300, readyMillis: 2_000 }, extraNamespaces: [other()], adoptNamespaces: [cluster.namespace] });
  });
  /** The first operator's env, whose emulator a restarted one reuses (closed last). */
  let first: OperatorEnv | undefined;
  afterAll(async () => {
    await Promise.all(madeNodes.map((n) => core().deleteNode({ name: n }).catch(() => undefined)));
    await env.stop();
    await first?.emulator.close();
  });

  it("premium with a backend VPC named by labels: nodes followed at their InternalIP inside the subnet, each sent with the subnet; status shows type, VPCs and each node's subnet", async () => {
    const subnet = await vpc("cluster-vpc", "us-east", "10.20.0.0/24");
    const pool = { "test.linode.operator.dev/pool": `${cluster.namespace}-vpc` };
    for (const [n, legacy, inVpc] of [["a", "192.168.150.1", "10.20.0.11"], ["b", "192.168.150.2", "10.20.0.12"]] as const) {
      const name = `${cluster.namespace}-${n}`;
      await core().createNode({ body: { apiVersion: "v1", kind: "Node", metadata: { name, labels: pool }, status: {
        // The legacy private address first: the VPC one is taken because it is in the subnet.
        addresses: [{ type: "InternalIP", address: legacy }, { type: "InternalIP", address: inVpc }, { type: "ExternalIP", address: "203.0.113.77" }],
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "test" }],
      } } });
      madeNodes.push(name);
    }
    await h.create("vpc-premium", {
      type: "premium", vpcs: [{ vpcLabel: "cluster-vpc", subnetLabel: "nodes" }],
      configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "10.20.0.50:8080" }], nodesFrom: { nodes: { selector: { matchLabels: pool }, port: 30080 } } }],
    });
    const o = await h.settled("vpc-premium", (x) => (status(x).configs?.[0]?.nodes?.length ?? 0) === 3);
    const s = status(o);
    expect(s.type).toBe("premium");
    const backend = s.vpcs?.find((v) => v.purpose === "backend");
    expect(backend).toMatchObject({ subnetId: subnet, ipv4Range: expect.stringMatching(/^10\.20\.0\.\d+\/30$/) as unknown });
    expect(s.configs?.[0]?.nodes?.map((n) => [n.address, n.subnetId, n.vpcConfigId]).sort()).toEqual([
      ["10.20.0.11:30080", subnet, backend?.id], ["10.20.0.12:30080", subnet, backend?.id], ["10.20.0.50:8080", subnet, backend?.id],
    ]);
    // The cloud's nodes: each sent with the subnet (the API gives a VPC node its vpc_config_id, and refuses one without a subnet here).
    const nb = await env.linode.nodeBalancers.get(s.id ?? 0);
    expect(nb).toMatchObject({ type: "premium", backendConnectivity: "vpc" });
    const cloudConfig = (await env.linode.nodeBalancers.listAllConfigs(nb.id))[0];
    const cloudNodes = await env.linode.nodeBalancers.listAllNodes(nb.id, cloudConfig?.id ?? 0);
    expect(cloudNodes.map((n) => [n.address, n.vpcConfigId]).sort()).toEqual([["10.20.0.11:30080", backend?.id], ["10.20.0.12:30080", backend?.id], ["10.20.0.50:8080", backend?.id]]);
    // Settled: nothing more is sent.
    const path = `/nodebalancers/${String(s.id)}`;
    const before = mutationsUnder(path).length;
    await env.repass("NodeBalancer", key("vpc-premium"), 3);
    expect(mutationsUnder(path).length).toBe(before);
  });

  it("frontendVpc on a common NodeBalancer is refused at admission", async () => {
    const subnet = await vpc("front-vpc", "us-east", "10.30.0.0/24");
    await expect(h.create("front-common", { frontendVpc: { subnetId: subnet }, configs: [{ port: 80, nodes: [{ label: "n-1", address: "192.168.60.1:80" }] }] })).rejects.toThrow(/frontendVpc needs a premium type/);
    await expect(h.create("front-common", { type: "common", frontendVpc: { subnetId: subnet }, configs: [{ port: 80, nodes: [{ label: "n-1", address: "192.168.60.1:80" }] }] })).rejects.toThrow(/frontendVpc needs a premium type/);
  });

  it("premium without spec.vpcs, or a node in another subnet than spec.vpcs, is refused at admission", async () => {
    const nodes = [{ label: "n-1", address: "10.31.0.5:80", subnetId: 999 }];
    await expect(h.create("premium-legacy", { type: "premium", configs: [{ port: 80, nodes: [{ label: "n-1", address: "192.168.60.1:80" }] }] })).rejects.toThrow(/premium NodeBalancer takes no private IPv4 backends outside a VPC/);
    await expect(h.create("other-subnet", { vpcs: [{ subnetId: 998 }], configs: [{ port: 80, nodes }] })).rejects.toThrow(/subnetId must be the subnet of spec.vpcs/);
    await expect(h.create("no-vpcs", { configs: [{ port: 80, nodes }] })).rejects.toThrow(/subnetId must be the subnet of spec.vpcs/);
  });

  it("premium with a frontend VPC: the NodeBalancer's address is a VPC address from the range, no host name; a subnet in another region is VPCNotFound, nothing sent", async () => {
    const back = await vpc("fe-back", "us-east", "10.70.0.0/24");
    const front = await vpc("fe-front", "us-east", "10.71.0.0/24");
    await h.create("fronted", { type: "premium", vpcs: [{ subnetId: back }], frontendVpc: { subnetId: front, ipv4Range: "10.71.0.0/28" }, configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "n-1", address: "10.70.0.9:80" }] }] });
    const o = await h.settled("fronted");
    expect(status(o)).toMatchObject({ frontendAddressType: "vpc", ipv4: "10.71.0.2" });
    expect(o.status?.hostname).toBeUndefined();
    expect(status(o).vpcs?.map((v) => [v.purpose, v.subnetId]).sort()).toEqual([["backend", back], ["frontend", front]]);
    const elsewhere = await vpc("fe-west", "us-west", "10.72.0.0/24");
    const posts = creates();
    await h.create("wrong-region", { vpcs: [{ subnetId: elsewhere }], configs: [{ port: 80, nodes: [{ label: "n-1", address: "10.72.0.9:80" }] }] });
    const c = await h.reason("wrong-region", "Synced", "VPCNotFound");
    expect(c.message).toContain(`spec.vpcs names subnet ${String(elsewhere)}, which is in region us-west, not us-east`);
    await env.repass("NodeBalancer", key("wrong-region"), 2);
    expect(creates()).toBe(posts);
  });

  it("a create-only field changed (type, VPCs): Synced=False ImmutableFieldMismatch naming it, nothing sent", async () => {
    await h.create("fixed", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "n-1", address: "192.168.61.1:80" }] }] });
    const id = status(await h.settled("fixed")).id ?? 0;
    const path = `/nodebalancers/${String(id)}`;
    const subnet = await vpc("late-vpc", "us-east", "10.40.0.0/24");
    await h.patch("fixed", { type: "premium", vpcs: [{ subnetId: subnet }] });
    const c = await h.reason("fixed", "Synced", "ImmutableFieldMismatch");
    expect(c.status).toBe("False");
    expect(c.message).toContain("type (spec premium, NodeBalancer common)");
    expect(c.message).toContain(`vpcs (spec subnet ${String(subnet)}, NodeBalancer none)`);
    await env.repass("NodeBalancer", key("fixed"), 3);
    expect(mutationsUnder(path)).toEqual([]);
    expect((await env.linode.nodeBalancers.get(id)).type).toBe("common");
  });

  it("spec.ipv4 (a reserved address) is sent on the create and again on requests.recreate: the address is kept", async () => {
    const address = (await api("POST", "/networking/reserved/ips", { region: "us-east" })).address as string;
    await h.create("kept", { ipv4: address, configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "n-1", address: "192.168.62.1:80" }] }] });
    const first = await h.settled("kept");
    expect(status(first).ipv4).toBe(address);
    await env.linode.nodeBalancers.delete(status(first).id ?? 0);
    await h.reason("kept", "Ready", "ExternalResourceGone");
    await h.patch("kept", { requests: { recreate: "again" } });
    const again = await h.settled("kept", (o) => status(o).id !== status(first).id);
    expect(status(again).ipv4).toBe(address);
    expect((await env.linode.nodeBalancers.get(status(again).id ?? 0)).ipv4).toBe(address);
  });

  it("adopting a premium NodeBalancer with VPC backends and a UDP config in Manage mode: type, VPC, the udp config and each node's subnet written to the spec, zero mutations", async () => {
    const subnet = await vpc("ccm-vpc", "us-east", "10.50.0.0/24");
    const theirs = await env.linode.nodeBalancers.create({
      region: "us-east", label: "ccm-premium", type: "premium", vpcs: [{ subnetId: subnet }], clientUdpSessThrottle: 5,
      configs: [
        { port: 443, protocol: "tcp", nodes: [{ label: "node-1", address: "10.50.0.21:31443", weight: 100, subnetId: subnet }, { label: "node-2", address: "10.50.0.22:31443", weight: 100, subnetId: subnet }] },
        { port: 443, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", udpCheckPort: 8443, check: "connection", nodes: [{ label: "node-1-udp", address: "10.50.0.21:31444", weight: 100, subnetId: subnet }] },
      ],
    });
    const path = `/nodebalancers/${String(theirs.id)}`;
    await h.create("adopted", { nodeBalancerId: theirs.id });
    const o = await h.settled("adopted");
    const spec = o.spec as Record<string, unknown>;
    expect(spec.type).toBe("premium");
    expect(spec.vpcs).toEqual([{ subnetId: subnet, ipv4Range: expect.stringMatching(/\/30$/) as unknown }]);
    expect((spec.configs as { nodes: { subnetId?: number }[] }[])[0]?.nodes.map((n) => n.subnetId)).toEqual([subnet, subnet]);
    expect((spec.configs as Record<string, unknown>[]).find((c) => c.protocol === "udp")).toMatchObject({ port: 443, algorithm: "ring_hash", stickiness: "source_ip", udpCheckPort: 8443 });
    expect(spec.clientUdpSessThrottle).toBe(5);
    await env.repass("NodeBalancer", key("adopted"), 3);
    expect(mutationsUnder(path)).toEqual([]);
    // The spec is the desired state from now on: a weight changed is one rebuild, its nodes still in the subnet.
    const configs = spec.configs as Record<string, unknown>[];
    await h.patch("adopted", { configs: [{ ...configs[0], nodes: [{ label: "node-1", address: "10.50.0.21:31443", weight: 50, subnetId: subnet }, { label: "node-2", address: "10.50.0.22:31443", weight: 100, subnetId: subnet }] }, ...configs.slice(1)] });
    await waitFor("one rebuild", () => (mutationsUnder(path).length === 1 ? true : undefined), 30_000, 100);
    const config = (await env.linode.nodeBalancers.listAllConfigs(theirs.id))[0];
    const nodes = await env.linode.nodeBalancers.listAllNodes(theirs.id, config?.id ?? 0);
    expect(nodes.every((n) => n.vpcConfigId !== null && n.vpcConfigId !== undefined)).toBe(true);
  });

  it("naming a VPC with the operator's token where adoption is not allowed: AdoptionNotAllowed, nothing sent", async () => {
    const subnet = await vpc("forbidden-vpc", "us-east", "10.60.0.0/24");
    const posts = creates();
    await env.deps.kube.createCustom(nbType, other(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "joins" }, spec: {
      region: "us-east", vpcs: [{ subnetId: subnet }], configs: [{ port: 80, nodes: [{ label: "n-1", address: "10.60.0.5:80" }] }],
    } });
    const c = await waitFor("AdoptionNotAllowed", async () => {
      const x = await env.deps.kube.getCustom<ManagedObject>(nbType, { namespace: other(), name: "joins" });
      return x.status?.conditions?.find((k) => k.type === "Synced" && k.reason === "AdoptionNotAllowed");
    }, 60_000, 100);
    expect(c.message).toContain(`joining subnet ${String(subnet)} (spec.vpcs)`);
    expect(creates()).toBe(posts);
  });

  it("after a restart the VPC configs and each node's subnet come from status: no VPC configs read (of any NodeBalancer here), nothing sent, nothing written", async () => {
    const subnet = await vpc("restart-vpc", "us-east", "10.80.0.0/24");
    await h.create("restarted", { type: "premium", vpcs: [{ subnetId: subnet }], configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "n-1", address: "10.80.0.9:80" }] }] });
    const before = await h.settled("restarted", (o) => typeof o.status?.updated === "string" && (status(o).vpcs?.length ?? 0) === 1);
    const path = `/nodebalancers/${String(status(before).id)}`;
    await env.stop({ keepEmulator: true });
    first = env;
    env = await startOperatorEnv(cluster, { readNodes: true, poll: { pendingMillis: 300, readyMillis: 2_000 }, extraNamespaces: [other()], adoptNamespaces: [cluster.namespace], reuseEmulator: first.emulator });
    const mutations = mutationsUnder(path).length;
    await env.afterPasses("NodeBalancer", key("restarted"), 2);
    const vpcReads = (await env.registry.getSingleMetric("linode_api_requests_total")?.get())?.values.filter((v) => String(v.labels.route) === "/nodebalancers/{nodeBalancerId}/vpcs").reduce((n, v) => n + v.value, 0) ?? 0;
    expect(vpcReads).toBe(0);
    expect(mutationsUnder(path).length).toBe(mutations);
    expect((await h.get("restarted")).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  }, 120_000);
});
