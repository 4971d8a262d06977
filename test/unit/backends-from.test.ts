// NodeBalancer backends that follow a Service or a node selector, as a decision table: which
// nodes, at which address and port, in which mode; what is skipped (no private address: counted
// in status, named only for the log) and what holds the config (no right to read, no Service, no
// node port, a bare node port where the admin does not allow it).
import { describe, expect, it } from "vitest";
import type { EndpointSliceObject, NodeObject, ReadStore, ServiceObject } from "../../src/runtime/contract.ts";
import { backendLabel, followedBackends, skippedSummary, withFollowedBackends, type BackendSources } from "../../src/resources/node-balancer/backends-from.ts";

const store = <T extends { metadata: { name: string; namespace?: string } }>(items: T[]): ReadStore<T & { metadata: { name: string } }> => ({
  get: (ns, name) => items.find((i) => i.metadata.name === name && (i.metadata.namespace ?? "") === ns),
  list: () => items,
  byIndex: () => [],
});
const node = (name: string, ip: string, opts: { ready?: boolean; cordoned?: boolean; labels?: Record<string, string> } = {}): NodeObject => ({
  apiVersion: "v1", kind: "Node", metadata: { name, labels: opts.labels ?? {} },
  spec: { unschedulable: opts.cordoned ?? false },
  status: { addresses: [{ type: "InternalIP", address: ip }], conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }] },
});
const svc = (policy: "Cluster" | "Local", nodePort?: number): ServiceObject => ({
  apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "shop" },
  spec: { type: "NodePort", externalTrafficPolicy: policy, ports: [{ name: "http", port: 80, ...(nodePort !== undefined ? { nodePort } : {}) }] },
});
const slice = (endpoints: { nodeName: string; ready?: boolean; terminating?: boolean }[]): EndpointSliceObject => ({
  apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", metadata: { name: "web-abc", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
  endpoints: endpoints.map((e) => ({ nodeName: e.nodeName, conditions: { ready: e.ready ?? true, terminating: e.terminating ?? false } })),
});
const sources = (nodes: NodeObject[], services: ServiceObject[] = [], slices: EndpointSliceObject[] = []): BackendSources =>
  ({ nodes: store(nodes), services: store(services), endpointSlices: store(slices) });
const addrs = (r: ReturnType<typeof followedBackends>): string[] => ("backends" in r ? r.backends.map((b) => `${b.address} ${b.mode}`) : [r.held.reason]);

describe("backends from a Service", () => {
  const nodes = [node("n1", "192.168.128.1"), node("n2", "10.1.0.2"), node("n3", "172.20.0.3", { cordoned: true }), node("down", "192.168.128.9", { ready: false })];
  it("Cluster policy: every Ready node at the node port; a cordoned one drains; a NotReady one is left out", () => {
    expect(addrs(followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", sources(nodes, [svc("Cluster", 30080)])))).toEqual([
      "10.1.0.2:30080 accept", "172.20.0.3:30080 drain", "192.168.128.1:30080 accept",
    ]);
  });
  it("Local policy: only nodes running an endpoint; terminating endpoints drain; a port named works too", () => {
    const r = followedBackends({ serviceRef: { name: "web", port: "http" } }, "shop", sources(nodes, [svc("Local", 30080)], [slice([{ nodeName: "n1" }, { nodeName: "n2", terminating: true, ready: false }])]));
    expect(addrs(r)).toEqual(["10.1.0.2:30080 drain", "192.168.128.1:30080 accept"]);
  });
  it("a node with a public InternalIP is skipped: named for the log; what status says counts it without naming it", () => {
    const r = followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", sources([node("pub", "203.0.113.5"), node("pub2", "198.51.100.8"), node("n1", "192.168.128.1")], [svc("Cluster", 30080)]));
    expect("backends" in r && r.backends.map((b) => b.address)).toEqual(["192.168.128.1:30080"]);
    const skipped = "skipped" in r ? r.skipped : [];
    expect(skipped).toEqual([{ node: "pub", addresses: ["203.0.113.5"] }, { node: "pub2", addresses: ["198.51.100.8"] }]);
    const said = skippedSummary(skipped);
    expect(said).toEqual(["2 nodes skipped, with no private IPv4 InternalIP: a NodeBalancer reaches backends on 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 only"]);
    expect(said.join(" ")).not.toMatch(/pub|203\.0\.113|198\.51\.100/);
    expect(skippedSummary([])).toEqual([]);
  });
  it("holds the config when the Service is missing, has no node port, or the operator may not read", () => {
    expect(addrs(followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", sources(nodes)))).toEqual(["BackendSourceNotFound"]);
    expect(addrs(followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", sources(nodes, [svc("Cluster")])))).toEqual(["BackendSourceNotFound"]);
    expect(addrs(followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", { nodes: undefined, services: undefined, endpointSlices: undefined }))).toEqual(["NodesNotReadable"]);
  });
});

describe("backends from a node selector", () => {
  it("takes the selected Ready nodes at the port, with the weight", () => {
    const r = followedBackends({ nodes: { selector: { matchLabels: { pool: "web" } }, port: 8080 }, weight: 50 }, "shop",
      sources([node("a", "192.168.128.1", { labels: { pool: "web" } }), node("b", "192.168.128.2", { labels: { pool: "db" } })]));
    expect("backends" in r && r.backends).toEqual([{ address: "192.168.128.1:8080", label: "a__", mode: "accept", weight: 50, from: "node a" }]);
  });
});

describe("backend labels", () => {
  it("are 3..32 allowed characters, unique for long names", () => {
    expect(backendLabel("ip-10-0-0-1.ec2.internal")).toBe("ip-10-0-0-1.ec2.internal");
    const long = backendLabel("gke-cluster-default-pool-1234567890-abcd");
    expect(long).toHaveLength(32);
    expect(long).not.toBe(backendLabel("gke-cluster-default-pool-1234567890-abce"));
    expect(backendLabel("n:1")).toBe("n-1");
  });
});

describe("a bare node port (nodesFrom.nodes) and the admin's --node-port-namespaces", () => {
  const nodes = sources([node("a", "192.168.128.1", { labels: { pool: "web" } })], [svc("Cluster", 30080)]);
  const config = (port: number, nodesFrom: Parameters<typeof followedBackends>[0], static_: string[] = []) => ({
    port, nodes: static_.map((address) => ({ address, label: "static" })), nodesFrom,
  });
  const kubelet = config(10250, { nodes: { selector: {}, port: 10250 } });
  const web = config(80, { serviceRef: { name: "web", port: 80 } }, ["192.168.200.1:80"]);

  it("where not allowed: the whole spec is held (NodePortsNotAllowed, naming the configs and the flag), nothing of it planned, even the configs that are allowed", () => {
    const r = withFollowedBackends({ configs: [web, kubelet] }, "shop", nodes, false);
    expect(r.held?.reason).toBe("NodePortsNotAllowed");
    expect(r.held?.message).toContain("config 10250: configs[].nodesFrom.nodes publishes a port of the cluster's nodes");
    expect(r.held?.message).toContain("--node-port-namespaces, chart value nodePortNamespaces");
    expect(r.held?.message).toContain("namespace shop is not one");
    expect(r.spec.configs).toEqual([web, kubelet]);
  });
  it("more backends than a config of the type takes (1,000 common, 2,000 premium): held, TooManyBackends, nothing planned", () => {
    const many = sources(Array.from({ length: 1_001 }, (_, i) => node(`n-${String(i)}`, `10.${String(Math.floor(i / 250))}.${String(i % 250)}.1`, { labels: { pool: "big" } })));
    const big = { ...kubelet, nodesFrom: { nodes: { selector: { matchLabels: { pool: "big" } }, port: 30080 } } };
    const common = withFollowedBackends({ configs: [big] }, "shop", many, true);
    expect(common.held?.reason).toBe("TooManyBackends");
    expect(common.held?.message).toContain("nodesFrom finds 1001 backends, more than the 1000 a config of a common NodeBalancer takes");
    expect(common.spec.configs).toEqual([big]);
    const premium = withFollowedBackends({ type: "premium", configs: [big] }, "shop", many, true);
    expect(premium.held).toBeUndefined();
    expect(premium.spec.configs[0]?.nodes).toHaveLength(1_001);
  });
  it("where allowed: the selected nodes at the port", () => {
    const r = withFollowedBackends({ configs: [kubelet] }, "shop", nodes, true);
    expect(r.held).toBeUndefined();
    expect(r.spec.configs[0]?.nodes.map((n) => n.address)).toEqual(["192.168.128.1:10250"]);
  });
  it("serviceRef (the namespace's own Service's node port) is allowed everywhere", () => {
    const r = withFollowedBackends({ configs: [web] }, "shop", nodes, false);
    expect(r.held).toBeUndefined();
    expect(r.spec.configs[0]?.nodes.map((n) => n.address)).toEqual(["192.168.200.1:80", "192.168.128.1:30080"]);
  });
  it("a static backend typed at a node's address is the same bare node port: held where not allowed, unless a NodePort Service of the namespace exposes that port; unknown (not held) where Nodes are not read", () => {
    const typed = (address: string) => ({ port: 443, nodes: [{ address, label: "typed" }] });
    const kubeletByHand = withFollowedBackends({ configs: [typed("192.168.128.1:10250")] }, "shop", nodes, false);
    expect(kubeletByHand.held?.reason).toBe("NodePortsNotAllowed");
    expect(kubeletByHand.held?.message).toContain("config 443 node 192.168.128.1:10250");
    expect(withFollowedBackends({ configs: [typed("192.168.128.1:10250")] }, "shop", nodes, true).held).toBeUndefined();
    // The namespace's own NodePort Service's port; another host on the private network.
    expect(withFollowedBackends({ configs: [typed("192.168.128.1:30080")] }, "shop", nodes, false).held).toBeUndefined();
    expect(withFollowedBackends({ configs: [typed("192.168.200.7:10250")] }, "shop", nodes, false).held).toBeUndefined();
    // Another namespace's NodePort on a node is not this namespace's.
    expect(withFollowedBackends({ configs: [typed("192.168.128.1:30080")] }, "other", nodes, false).held?.reason).toBe("NodePortsNotAllowed");
    expect(withFollowedBackends({ configs: [typed("192.168.128.1:10250")] }, "shop", { nodes: undefined, services: undefined, endpointSlices: undefined }, false).held).toBeUndefined();
  });
});

describe("backends in a VPC (the NodeBalancer's backend subnet)", () => {
  const twoAddresses = (name: string, legacy: string, inVpc: string): NodeObject => {
    const n = node(name, legacy);
    n.status?.addresses?.push({ type: "InternalIP", address: inVpc }, { type: "ExternalIP", address: "203.0.113.40" });
    return n;
  };
  const subnet = { id: 852973, range: "10.0.4.0/24" };
  it("each node at its InternalIP inside the subnet (not the first private one), with the subnet; one without such an address is skipped, said so", () => {
    const r = followedBackends({ serviceRef: { name: "web", port: 80 } }, "shop", sources([twoAddresses("a", "192.168.128.1", "10.0.4.11"), node("legacy-only", "192.168.128.2")], [svc("Cluster", 30080)]), subnet);
    expect("backends" in r && r.backends.map((b) => [b.address, b.subnetId])).toEqual([["10.0.4.11:30080", 852973]]);
    const skipped = "skipped" in r ? r.skipped : [];
    expect(skippedSummary(skipped)).toEqual(["1 node skipped, with no InternalIP in the NodeBalancer's backend subnet (10.0.4.0/24)"]);
  });
  it("a subnet whose range is unknown: the first private InternalIP, with the subnet", () => {
    const r = followedBackends({ nodes: { selector: {}, port: 8080 } }, "shop", sources([twoAddresses("a", "192.168.128.1", "10.0.4.11")]), { id: 7, range: null });
    expect("backends" in r && r.backends.map((b) => [b.address, b.subnetId])).toEqual([["192.168.128.1:8080", 7]]);
  });
  it("static nodes without a subnet are in the backend subnet; one naming its own keeps it", () => {
    const spec = { configs: [{ port: 80, nodes: [{ label: "s-1", address: "10.0.4.50:80" }, { label: "s-2", address: "10.0.4.51:80", subnetId: 852973 }] }] };
    const eff = withFollowedBackends(spec, "shop", sources([]), true, subnet);
    expect(eff.spec.configs[0]?.nodes.map((n) => n.subnetId)).toEqual([852973, 852973]);
    expect(withFollowedBackends(spec, "shop", sources([]), true).spec.configs[0]?.nodes.map((n) => n.subnetId)).toEqual([undefined, 852973]);
  });
});

describe("backends at the nodes' public IPv6 addresses (nodesFrom.addressFamily IPv6)", () => {
  const dual = (name: string, external: string[], internal: string[] = ["192.168.128.9"]): NodeObject => {
    const n = node(name, internal[0] ?? "192.168.128.9");
    n.status = { ...n.status, addresses: [...internal.map((address) => ({ type: "InternalIP", address })), ...external.map((address) => ({ type: "ExternalIP", address }))] };
    return n;
  };
  const cluster = sources([
    dual("ext", ["203.0.113.7", "2600:3C03::F03C:91ff:fe24:3a2f"]),
    dual("int", [], ["192.168.128.2", "2a01:7e00::2"]),
    dual("ula", ["fd00::5", "fe80::5"]),
    dual("v4only", ["203.0.113.8"]),
  ], [svc("Cluster", 30080)]);
  const from = { serviceRef: { name: "web", port: 80 }, addressFamily: "IPv6" as const };

  it("each node at its global unicast ExternalIP, else InternalIP, as [addr]:port in one spelling; nodes without one skipped, counted and said why", () => {
    const r = followedBackends(from, "shop", cluster);
    expect(addrs(r)).toEqual(["[2600:3c03::f03c:91ff:fe24:3a2f]:30080 accept", "[2a01:7e00::2]:30080 accept"]);
    const skipped = "backends" in r ? r.skipped : [];
    expect(skipped.map((s) => s.node)).toEqual(["ula", "v4only"]);
    expect(skippedSummary(skipped)).toEqual(["2 nodes skipped, with no public IPv6 address (a global unicast ExternalIP or InternalIP, 2000::/3): nodesFrom.addressFamily IPv6 reaches nodes there only"]);
  });

  it("unset (IPv4) keeps the private InternalIP (three nodes share 192.168.128.9 here: one backend)", () => {
    expect(addrs(followedBackends({ serviceRef: from.serviceRef }, "shop", cluster))).toEqual(["192.168.128.2:30080 accept", "192.168.128.9:30080 accept"]);
  });

  it("a static IPv6 backend is sent in one spelling, and one typed at a node's IPv6 address is a bare node port", () => {
    const r = withFollowedBackends({ configs: [{ port: 80, nodes: [{ address: "[2600:3C03:0::1]:8080", label: "static" }] }] }, "shop", cluster, false);
    expect(r.spec.configs[0]?.nodes.map((n) => n.address)).toEqual(["[2600:3c03::1]:8080"]);
    const byHand = withFollowedBackends({ configs: [{ port: 80, nodes: [{ address: "[2a01:7e00:0::2]:10250", label: "typed" }] }] }, "shop", cluster, false);
    expect(byHand.held?.reason).toBe("NodePortsNotAllowed");
  });
});
