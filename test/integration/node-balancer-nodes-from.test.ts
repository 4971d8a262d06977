// configs[].nodesFrom on a real API server and the emulator over HTTP: NodeBalancer backends
// that follow a NodePort Service (every Ready node with externalTrafficPolicy Cluster; the nodes
// of its endpoints with Local) or a node selector, merged with static nodes; each change is one
// rebuild of the config; a cordoned node or terminating endpoints drain first; a node without a
// private address is skipped and counted (status and Events never name it); a missing Service
// holds the create; without the right to read Nodes it is refused; a bare node port only in the
// namespaces the admin lists. Nodes and EndpointSlices are objects made through the API server,
// as kubelets and the EndpointSlice controller make them.
import { CoreV1Api, DiscoveryV1Api, type V1Node } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster, type TestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const REBUILD = "POST /nodebalancers/{nodeBalancerId}/configs/{configId}/rebuild";
type Cond = { status: string; reason: string; message?: string };

function helpers(cluster: TestCluster, envOf: () => OperatorEnv) {
  const ns = (): string => cluster.namespace;
  const core = (): CoreV1Api => cluster.kc.makeApiClient(CoreV1Api);
  const made: string[] = [];
  const nodeName = (n: string): string => `${ns()}-${n}`;
  const node = async (n: string, internal: string, labels: Record<string, string> = {}): Promise<void> => {
    const body: V1Node = {
      apiVersion: "v1", kind: "Node", metadata: { name: nodeName(n), labels: { "test.linode.operator.dev/ns": ns(), ...labels } },
      status: { addresses: [{ type: "InternalIP", address: internal }], conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "test" }] },
    };
    await core().createNode({ body });
    made.push(nodeName(n));
  };
  const create = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> =>
    envOf().deps.kube.createCustom(nbType, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name }, spec: { region: "us-east", ...spec } });
  const get = (name: string): Promise<ManagedObject> => envOf().deps.kube.getCustom<ManagedObject>(nbType, { namespace: ns(), name });
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const reason = (name: string, type: string, want: string): Promise<Cond> => waitFor(`${name} ${type} ${want}`, async () => {
    const c = condOf(await get(name), type);
    return c?.reason === want ? c : undefined;
  }, 60_000, 100);
  const created = (name: string): Promise<number> => waitFor(`${name} created`, async () => { const id = (await get(name)).status?.id; return typeof id === "number" ? id : undefined; }, 60_000, 100);
  /** The cloud's backends of the config on `port`, as "address mode". */
  const backends = async (id: number, port: number): Promise<string[]> => {
    const config = (await envOf().linode.nodeBalancers.listAllConfigs(id)).find((c) => c.port === port);
    if (config === undefined) return [];
    return (await envOf().linode.nodeBalancers.listAllNodes(id, config.id)).map((n) => `${n.address} ${n.mode}`).sort();
  };
  const until = (what: string, id: number, port: number, want: string[]): Promise<true> =>
    waitFor(what, async () => (JSON.stringify(await backends(id, port)) === JSON.stringify([...want].sort()) ? true : undefined), 30_000, 100);
  const rebuilds = (id: number): number => envOf().emulator.mutations().filter((m) => m.route === REBUILD && m.path.startsWith(`/nodebalancers/${String(id)}/`)).length;
  const creates = (): number => envOf().emulator.mutations().filter((m) => m.method === "POST" && m.path === "/nodebalancers").length;
  const cleanup = async (): Promise<void> => { await Promise.all(made.map((n) => core().deleteNode({ name: n }).catch(() => undefined))); };
  return { ns, core, node, nodeName, create, get, condOf, reason, created, backends, until, rebuilds, creates, cleanup };
}

describe("nodesFrom: a Service", () => {
  const cluster = useTestCluster("nb-nodes-from");
  let env: OperatorEnv;
  const h = helpers(cluster, () => env);
  beforeAll(async () => { env = await startOperatorEnv(cluster, { readNodes: true, poll: { pendingMillis: 300, readyMillis: 5_000 } }); });
  afterAll(async () => { await h.cleanup(); await env.stop(); });
  const service = async (name: string, policy: "Cluster" | "Local", selector = true): Promise<number> => {
    const svc = await h.core().createNamespacedService({ namespace: h.ns(), body: {
      metadata: { name }, spec: { type: "NodePort", externalTrafficPolicy: policy, ...(selector ? { selector: { app: name } } : {}), ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    } });
    return svc.spec?.ports?.[0]?.nodePort ?? 0;
  };

  it("externalTrafficPolicy Cluster: every Ready node at the node port, merged with static nodes; one rebuild per change; a cordoned node drains, then goes; a public node is skipped, counted and never named", async () => {
    const pool = { "test.linode.operator.dev/pool": "svc" };
    await h.node("a", "192.168.131.1", pool);
    await h.node("b", "192.168.131.2", pool);
    await h.node("pub", "203.0.113.50", pool);
    const port = await service("web", "Cluster");
    expect(port).toBeGreaterThan(0);
    await h.create("edge", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "192.168.200.1:8080" }], nodesFrom: { serviceRef: { name: "web", port: 80 } } }] });
    const id = await h.created("edge");
    // Nodes other tests made are Ready too (Cluster policy: every Ready node): only ours are asserted on.
    const ours = async (): Promise<string[]> => (await h.backends(id, 80)).filter((b) => b.startsWith("192.168.131.") || b.startsWith("192.168.200."));
    await waitFor("created with the Service's nodes", async () => (JSON.stringify(await ours()) === JSON.stringify([`192.168.131.1:${String(port)} accept`, `192.168.131.2:${String(port)} accept`, "192.168.200.1:8080 accept"]) ? true : undefined), 30_000, 100);
    const skipped = await waitFor("skipped counted", async () => { const s = (await h.get("edge")).status?.skippedBackends; return Array.isArray(s) && s.length > 0 ? s as string[] : undefined; }, 30_000, 100);
    // Other test files' public nodes may be counted too (Cluster policy: every Ready node); none is named.
    expect(skipped.join("\n")).toMatch(/^\d+ nodes? skipped, with no private IPv4 InternalIP: a NodeBalancer reaches backends on 10\.0\.0\.0\/8, 172\.16\.0\.0\/12 or 192\.168\.0\.0\/16 only$/);
    const events = await cluster.kc.makeApiClient((await import("@kubernetes/client-node")).EventsV1Api).listNamespacedEvent({ namespace: h.ns() });
    const said = events.items.filter((e) => e.reason === "BackendSkipped" && e.regarding?.name === "edge");
    expect(said.length).toBeGreaterThan(0);
    expect(JSON.stringify(said.map((e) => e.note))).not.toMatch(new RegExp(`${h.nodeName("pub")}|203\\.0\\.113\\.50`));

    const r0 = h.rebuilds(id);
    await h.node("c", "192.168.131.3", pool);
    await waitFor("a node joins", async () => ((await ours()).includes(`192.168.131.3:${String(port)} accept`) ? true : undefined), 30_000, 100);
    expect(h.rebuilds(id)).toBe(r0 + 1);
    await cluster.kubectl(["cordon", h.nodeName("a")]);
    await waitFor("a cordoned node drains", async () => ((await ours()).includes(`192.168.131.1:${String(port)} drain`) ? true : undefined), 30_000, 100);
    expect(h.rebuilds(id)).toBe(r0 + 2);
    await h.core().deleteNode({ name: h.nodeName("a") });
    await waitFor("then goes", async () => ((await ours()).some((b) => b.startsWith("192.168.131.1:")) ? undefined : true), 30_000, 100);
    expect(h.rebuilds(id)).toBe(r0 + 3);
    // Settled: more passes send nothing.
    await env.repass("NodeBalancer", `${h.ns()}/edge`, 2);
    expect(h.rebuilds(id)).toBe(r0 + 3);
  });

  it("externalTrafficPolicy Local: only the nodes of ready endpoints; terminating endpoints drain, then go", async () => {
    await h.node("l1", "192.168.132.1");
    await h.node("l2", "192.168.132.2");
    const port = await service("local", "Local", false);
    const discovery = cluster.kc.makeApiClient(DiscoveryV1Api);
    const slice = (endpoints: { node: string; ip: string; ready: boolean; terminating: boolean }[]) => ({
      apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", addressType: "IPv4",
      metadata: { name: "local-1", labels: { "kubernetes.io/service-name": "local", "endpointslice.kubernetes.io/managed-by": "test" } },
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      endpoints: endpoints.map((e) => ({ addresses: [e.ip], nodeName: h.nodeName(e.node), conditions: { ready: e.ready, serving: e.ready || e.terminating, terminating: e.terminating } })),
    });
    await discovery.createNamespacedEndpointSlice({ namespace: h.ns(), body: slice([{ node: "l1", ip: "10.244.0.1", ready: true, terminating: false }, { node: "l2", ip: "10.244.0.2", ready: true, terminating: false }]) });
    await h.create("local-edge", { configs: [{ port: 8443, protocol: "tcp", nodesFrom: { serviceRef: { name: "local", port: "http" } } }] });
    const id = await h.created("local-edge");
    await h.until("both endpoint nodes", id, 8443, [`192.168.132.1:${String(port)} accept`, `192.168.132.2:${String(port)} accept`]);
    const r0 = h.rebuilds(id);
    await discovery.replaceNamespacedEndpointSlice({ name: "local-1", namespace: h.ns(), body: slice([{ node: "l1", ip: "10.244.0.1", ready: true, terminating: false }, { node: "l2", ip: "10.244.0.2", ready: false, terminating: true }]) });
    await h.until("l2 drains", id, 8443, [`192.168.132.1:${String(port)} accept`, `192.168.132.2:${String(port)} drain`]);
    await discovery.replaceNamespacedEndpointSlice({ name: "local-1", namespace: h.ns(), body: slice([{ node: "l1", ip: "10.244.0.1", ready: true, terminating: false }]) });
    await h.until("l2 goes", id, 8443, [`192.168.132.1:${String(port)} accept`]);
    expect(h.rebuilds(id)).toBe(r0 + 2);
  });

  it("a node selector at a port; a Service not there yet holds the create (BackendSourceNotFound), then it is made", async () => {
    await h.node("s1", "192.168.133.1", { "test.linode.operator.dev/pool": "sel" });
    await h.create("by-selector", { configs: [{ port: 9000, protocol: "tcp", nodesFrom: { nodes: { selector: { matchLabels: { "test.linode.operator.dev/pool": "sel" } }, port: 9000 }, weight: 40 } }] });
    const id = await h.created("by-selector");
    await h.until("the selected node", id, 9000, ["192.168.133.1:9000 accept"]);
    expect((await env.linode.nodeBalancers.listAllNodes(id, (await env.linode.nodeBalancers.listAllConfigs(id))[0]?.id ?? 0))[0]?.weight).toBe(40);

    const before = h.creates();
    await h.create("waits", { configs: [{ port: 80, protocol: "tcp", nodesFrom: { serviceRef: { name: "later", port: 80 } } }] });
    expect((await h.reason("waits", "Ready", "BackendSourceNotFound")).message).toContain("Service later, which is not in namespace");
    await env.repass("NodeBalancer", `${h.ns()}/waits`, 2);
    expect(h.creates()).toBe(before);
    await service("later", "Cluster");
    await h.created("waits");
    expect(h.creates()).toBe(before + 1);
  });
});

describe("nodesFrom without the right to read Nodes", () => {
  const cluster = useTestCluster("nb-nodes-from-denied");
  let env: OperatorEnv;
  const h = helpers(cluster, () => env);
  beforeAll(async () => { env = await startOperatorEnv(cluster, { readNodes: false, poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });

  it("is NodesNotReadable, naming rbac.readNodes; nothing is created", async () => {
    const before = h.creates();
    await h.create("blind", { configs: [{ port: 80, protocol: "tcp", nodesFrom: { nodes: { port: 80 } } }] });
    expect((await h.reason("blind", "Synced", "NodesNotReadable")).message).toContain("rbac.readNodes=true");
    expect(h.creates()).toBe(before);
  });
});

describe("nodesFrom.nodes (a bare node port) only where the admin allows it", () => {
  const cluster = useTestCluster("nb-node-ports");
  let env: OperatorEnv;
  const h = helpers(cluster, () => env);
  const allowed = (): string => `${cluster.namespace}-edge`;
  const pool = { "test.linode.operator.dev/pool": "ports" };
  const kubeletConfig = { port: 443, protocol: "tcp", nodesFrom: { nodes: { selector: { matchLabels: pool }, port: 10250 } } };
  const createIn = (namespace: string, name: string, spec: Record<string, unknown>): Promise<ManagedObject> =>
    env.deps.kube.createCustom(nbType, namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name }, spec: { region: "us-east", ...spec } });
  beforeAll(async () => {
    await cluster.core.createNamespace({ body: { metadata: { name: allowed(), labels: { "linode.operator.dev/test": "true" } } } });
    // The default is none; only the listed namespace may.
    env = await startOperatorEnv(cluster, { readNodes: true, extraNamespaces: [allowed()], nodePortNamespaces: [allowed()], poll: { pendingMillis: 300, readyMillis: 2_000 } });
    await h.node("p1", "192.168.134.1", pool);
  });
  afterAll(async () => {
    await h.cleanup();
    await env.stop();
    await cluster.core.deleteNamespace({ name: allowed() }).catch(() => undefined);
  });

  it("elsewhere the NodeBalancer is refused (NodePortsNotAllowed, naming the flag and the chart value): nothing is created, not even its allowed configs", async () => {
    const before = h.creates();
    await h.create("kubelet", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "192.168.200.2:80" }] }, kubeletConfig] });
    const c = await h.reason("kubelet", "Synced", "NodePortsNotAllowed");
    expect(c.message).toContain("config 443: configs[].nodesFrom.nodes");
    expect(c.message).toContain("--node-port-namespaces, chart value nodePortNamespaces");
    await env.repass("NodeBalancer", `${h.ns()}/kubelet`, 2);
    expect(h.creates()).toBe(before);
    expect((await h.get("kubelet")).status?.id).toBeUndefined();
  });

  it("an existing NodeBalancer given a bare node port is refused and sent nothing; its backends stay as they are", async () => {
    await h.create("grows", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "192.168.200.3:80" }] }] });
    const id = await h.created("grows");
    await h.until("its static node", id, 80, ["192.168.200.3:80 accept"]);
    const sent = env.emulator.mutations().filter((m) => m.path.startsWith(`/nodebalancers/${String(id)}`)).length;
    await env.deps.kube.mergePatchCustom(nbType, { namespace: h.ns(), name: "grows" }, { spec: { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "192.168.200.3:80" }] }, kubeletConfig] } });
    await h.reason("grows", "Synced", "NodePortsNotAllowed");
    await env.repass("NodeBalancer", `${h.ns()}/grows`, 2);
    expect(env.emulator.mutations().filter((m) => m.path.startsWith(`/nodebalancers/${String(id)}`)).length).toBe(sent);
    expect((await env.linode.nodeBalancers.listAllConfigs(id)).map((c) => c.port)).toEqual([80]);
  });

  it("a static backend typed at a node's address and the kubelet's port is the same bare node port: refused, nothing created; another private host is not", async () => {
    const before = h.creates();
    await h.create("typed", { configs: [{ port: 443, protocol: "tcp", nodes: [{ label: "typed", address: "192.168.134.1:10250" }] }] });
    const c = await h.reason("typed", "Synced", "NodePortsNotAllowed");
    expect(c.message).toContain("config 443 node 192.168.134.1:10250");
    await env.repass("NodeBalancer", `${h.ns()}/typed`, 2);
    expect(h.creates()).toBe(before);
    await h.create("vm", { configs: [{ port: 443, protocol: "tcp", nodes: [{ label: "vm-1", address: "192.168.200.9:10250" }] }] });
    await h.created("vm");
  });

  it("serviceRef (the namespace's own Service's node port) is allowed everywhere", async () => {
    const svc = await h.core().createNamespacedService({ namespace: h.ns(), body: { metadata: { name: "own" }, spec: { type: "NodePort", selector: { app: "own" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] } } });
    const nodePort = svc.spec?.ports?.[0]?.nodePort ?? 0;
    await h.create("own", { configs: [{ port: 80, protocol: "tcp", nodesFrom: { serviceRef: { name: "own", port: 80 } } }] });
    const id = await h.created("own");
    await waitFor("the node at the Service's node port", async () => ((await h.backends(id, 80)).includes(`192.168.134.1:${String(nodePort)} accept`) ? true : undefined), 30_000, 100);
  });

  it("in a namespace the flag lists, the selected nodes at the port are the backends", async () => {
    await createIn(allowed(), "kubelet", { configs: [kubeletConfig] });
    const id = await waitFor("created", async () => {
      const o = await env.deps.kube.getCustom<ManagedObject>(nbType, { namespace: allowed(), name: "kubelet" });
      return typeof o.status?.id === "number" ? o.status.id : undefined;
    }, 60_000, 100);
    await h.until("the selected node at 10250", id, 443, ["192.168.134.1:10250 accept"]);
  });
});
