// spec.allowListFrom on a real API server and the emulator over HTTP: a database's allow list
// follows the cluster's Nodes (Node objects made through the API server, as a kubelet registers
// them), merged with spec.allowList; a rollout costs a handful of updates, not one per node; a
// selector that matches nothing never empties the list unless allowed; a Node address that is
// not one host's (0.0.0.0/0 in a Node's status) is never allowed, and said once; without the
// right to read Nodes the field is refused, nothing sent.
import { CoreV1Api, EventsV1Api, type V1Node } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster, type TestCluster } from "../harness/cluster.ts";
import { databaseHelpers, mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

/** Nodes this file makes, labelled with its namespace so no other test's selector sees them; removed at the end. */
function nodes(cluster: TestCluster) {
  const core = (): CoreV1Api => cluster.kc.makeApiClient(CoreV1Api);
  const made = new Set<string>();
  const name = (n: string): string => `${cluster.namespace}-${n}`;
  const body = (n: string, labels: Record<string, string>, addresses: { type: string; address: string }[]): V1Node => ({
    apiVersion: "v1", kind: "Node", metadata: { name: name(n), labels: { "test.linode.operator.dev/ns": cluster.namespace, ...labels } },
    status: { addresses },
  });
  return {
    name,
    async add(n: string, labels: Record<string, string>, external: string, internal = "192.168.130.1"): Promise<void> {
      await core().createNode({ body: body(n, labels, [{ type: "ExternalIP", address: external }, { type: "InternalIP", address: internal }]) });
      made.add(name(n));
    },
    async relabel(n: string, labels: Record<string, string | null>): Promise<void> {
      await cluster.kubectl(["label", "node", name(n), "--overwrite", ...Object.entries(labels).map(([k, v]) => (v === null ? `${k}-` : `${k}=${v}`))]);
    },
    async remove(n: string): Promise<void> {
      await core().deleteNode({ name: name(n) });
      made.delete(name(n));
    },
    async cleanup(): Promise<void> {
      await Promise.all([...made].map((n) => core().deleteNode({ name: n }).catch(() => undefined)));
    },
  };
}

describe("allowListFrom: nodes", () => {
  const cluster = useTestCluster("allow-nodes");
  let env: OperatorEnv;
  const cluster_nodes = nodes(cluster);
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, { platform: "current", readNodes: true, poll: { pendingMillis: 300, readyMillis: 5_000 }, settings: { "allow-list-interval-seconds": 2 } });
  });
  afterAll(async () => { await cluster_nodes.cleanup(); await env.stop(); });
  const { key, apply, get, condition, readyAt, reasonOf, creates } = databaseHelpers(cluster, () => env);
  const api = () => env.linode.databases.engine("mysql");
  const puts = (id: number): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;
  const pool = (p: string): Record<string, unknown> => ({ nodes: { selector: { matchLabels: { "test.linode.operator.dev/ns": cluster.namespace, pool: p } } } });
  const allowListOf = async (id: number): Promise<string[]> => [...(await api().get(id)).allowList].sort();
  const until = (what: string, id: number, want: string[]): Promise<true> =>
    waitFor(what, async () => (JSON.stringify(await allowListOf(id)) === JSON.stringify([...want].sort()) ? true : undefined), 30_000, 100);

  it("creates the database with the selected Nodes' addresses merged with allowList, then follows Nodes added, relabelled and deleted; status says where each entry came from", async () => {
    await cluster_nodes.add("a1", { pool: "blue" }, "198.51.100.1");
    await cluster_nodes.add("a2", { pool: "blue" }, "198.51.100.2");
    await cluster_nodes.add("other", { pool: "green" }, "198.51.100.9");
    await apply("follows", { ...mysql, allowList: ["203.0.113.7"], allowListFrom: [pool("blue")] });
    const db = await waitFor("Ready", () => readyAt("follows"), 60_000, 100);
    const id = Number(db.status?.id);
    expect(await allowListOf(id)).toEqual(["198.51.100.1/32", "198.51.100.2/32", "203.0.113.7/32"]);
    const shown = await waitFor("status.allowList", async () => { const o = await get("follows"); return Array.isArray(o.status?.allowList) ? o : undefined; }, 30_000, 100);
    expect(shown.status?.allowList).toEqual([
      { entry: "198.51.100.1/32", from: `node ${cluster_nodes.name("a1")} (ExternalIP, pool=blue,test.linode.operator.dev/ns=${cluster.namespace})` },
      { entry: "198.51.100.2/32", from: `node ${cluster_nodes.name("a2")} (ExternalIP, pool=blue,test.linode.operator.dev/ns=${cluster.namespace})` },
      { entry: "203.0.113.7/32", from: "spec.allowList" },
    ]);

    await cluster_nodes.add("a3", { pool: "blue" }, "198.51.100.3");
    await until("a node added", id, ["198.51.100.1/32", "198.51.100.2/32", "198.51.100.3/32", "203.0.113.7/32"]);
    await cluster_nodes.relabel("a1", { pool: "green" });
    await until("a node relabelled away", id, ["198.51.100.2/32", "198.51.100.3/32", "203.0.113.7/32"]);
    await cluster_nodes.remove("a2");
    await until("a node deleted", id, ["198.51.100.3/32", "203.0.113.7/32"]);
    // A node outside the selector changing wakes nothing and sends nothing.
    const sent = puts(id);
    await cluster_nodes.relabel("other", { tier: "x" });
    await env.repass("ManagedDatabase", key("follows"), 2);
    expect(puts(id)).toBe(sent);
    expect(condition(await get("follows"), "Synced")?.status).toBe("True");
  });

  it("a pool of 10 nodes rolled one by one (each change looked at by a pass of its own) costs a handful of updates, not one per node; the list ends exact", async () => {
    for (let i = 0; i < 3; i++) await cluster_nodes.add(`old${String(i)}`, { pool: "rolling" }, `198.51.100.${String(20 + i)}`);
    await apply("rolled", { ...mysql, allowList: [], allowListFrom: [pool("rolling")] });
    const id = Number((await waitFor("Ready", () => readyAt("rolled"), 60_000, 100)).status?.id);
    const before = puts(id);
    const started = Date.now();
    const fresh = Array.from({ length: 10 }, (_, i) => `198.51.100.${String(40 + i)}/32`);
    // Each change waits for a pass of the database that ends after it, so changes do not fall in
    // one coalescing window (200 ms here): each would be an update of its own without the
    // allow-list interval (2 s here).
    const looked = async (change: () => Promise<void>): Promise<void> => {
      const pass = env.afterPasses("ManagedDatabase", key("rolled"), 1);
      await change();
      await pass;
    };
    for (let i = 0; i < 10; i++) await looked(() => cluster_nodes.add(`new${String(i)}`, { pool: "rolling" }, `198.51.100.${String(40 + i)}`));
    for (let i = 0; i < 3; i++) await looked(() => cluster_nodes.remove(`old${String(i)}`));
    // The changes take ~4 s, longer on a loaded machine (each is a call to the API server).
    const changedFor = Date.now() - started;
    await until("the new pool only", id, fresh);
    const updates = puts(id) - before;
    console.log(`[allowListFrom] 13 node changes over ${String(changedFor)} ms → ${String(updates)} allow-list updates, converged in ${String(Date.now() - started)} ms`);
    expect(updates).toBeGreaterThanOrEqual(1);
    // One update per 2 s interval at most while the changes last (the first at once), one more for the last changes; never one per node.
    expect(updates).toBeLessThanOrEqual(Math.min(12, 2 + Math.floor(changedFor / 2_000)));
    await waitFor("in sync", () => readyAt("rolled", (o) => condition(o, "Synced")?.status === "True"), 30_000, 100);
  });

  it("a selector that matches nothing holds the create and the update (AllowListWouldBeEmpty); allowEmpty: true lets the list go empty", async () => {
    const before = creates();
    await apply("nobody", { ...mysql, allowList: [], allowListFrom: [pool("none-yet")] });
    expect((await reasonOf("nobody", "Ready", "AllowListWouldBeEmpty")).message).toContain("created once there is one to allow");
    await env.repass("ManagedDatabase", key("nobody"), 2);
    expect(creates()).toBe(before);
    await cluster_nodes.add("first", { pool: "none-yet" }, "198.51.100.60");
    const id = Number((await waitFor("created once a node exists", () => readyAt("nobody"), 60_000, 100)).status?.id);
    expect(await allowListOf(id)).toEqual(["198.51.100.60/32"]);

    await cluster_nodes.remove("first");
    const held = await reasonOf("nobody", "Synced", "AllowListWouldBeEmpty");
    expect(held.message).toContain("keeps its allow list (1 entries) rather than blocking every connection");
    const sent = puts(id);
    await env.repass("ManagedDatabase", key("nobody"), 2);
    expect(puts(id)).toBe(sent);
    expect(await allowListOf(id)).toEqual(["198.51.100.60/32"]);

    await apply("nobody", { ...mysql, allowList: [], allowListFrom: [pool("none-yet")], allowEmpty: true });
    await until("emptied as allowed", id, []);
  });

  it("a Node whose status claims 0.0.0.0/0, 0.0.0.0/32, ::, loopback or link-local is never allowed: skipped with one Warning naming it; with only such nodes, AllowListWouldBeEmpty (never created, never emptied)", async () => {
    const events = (): Promise<{ note: string; count: number }[]> => cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace })
      .then((l) => l.items.filter((e) => e.reason === "NodeAddressSkipped" && e.regarding?.name === "claims").map((e) => ({ note: e.note ?? "", count: e.series?.count ?? 1 })));
    const hostile: [string, string][] = [["wide", "0.0.0.0/0"], ["wide32", "0.0.0.0/32"], ["any", "::"], ["lo", "127.0.0.1"], ["meta", "169.254.169.254"]];
    for (const [n, address] of hostile) await cluster_nodes.add(n, { pool: "claims" }, address);
    await cluster_nodes.add("honest", { pool: "claims" }, "198.51.100.80");
    await apply("claims", { ...mysql, allowList: [], allowListFrom: [pool("claims")] });
    const id = Number((await waitFor("Ready", () => readyAt("claims"), 60_000, 100)).status?.id);
    expect(await allowListOf(id)).toEqual(["198.51.100.80/32"]);
    const said = await waitFor("a Warning per hostile node", async () => { const e = await events(); return e.length >= hostile.length ? e : undefined; }, 30_000, 100);
    for (const [n, address] of hostile) {
      expect(said.filter((e) => e.note.includes(`node ${cluster_nodes.name(n)}: its ExternalIP ${JSON.stringify(address)}`))).toHaveLength(1);
    }
    expect(said.find((e) => e.note.includes(cluster_nodes.name("wide")))?.note).toContain("is a CIDR range, not a host address");
    // Said once: more passes say nothing more.
    await env.repass("ManagedDatabase", key("claims"), 3);
    expect(await events()).toEqual(said);

    // Only hostile nodes left: held as when the selector matches nothing, naming them; nothing is sent.
    const sent = puts(id);
    await cluster_nodes.remove("honest");
    const held = await reasonOf("claims", "Synced", "AllowListWouldBeEmpty");
    expect(held.message).toContain(`node ${cluster_nodes.name("wide")}: its ExternalIP "0.0.0.0/0" is a CIDR range, not a host address`);
    await env.repass("ManagedDatabase", key("claims"), 2);
    expect(puts(id)).toBe(sent);
    expect(await allowListOf(id)).toEqual(["198.51.100.80/32"]);

    // A new database following only them is never created.
    const before = creates();
    await apply("claims-only", { ...mysql, allowList: [], allowListFrom: [pool("claims")] });
    expect((await reasonOf("claims-only", "Ready", "AllowListWouldBeEmpty")).message).toContain(`node ${cluster_nodes.name("any")}: its ExternalIP "::" is unspecified`);
    await env.repass("ManagedDatabase", key("claims-only"), 2);
    expect(creates()).toBe(before);
  });

  it("InternalIP and IPv6 addresses: /32 and /128, canonical", async () => {
    await cluster_nodes.add("v6", { pool: "inner" }, "2001:db8:0:0::10", "192.168.140.7");
    await apply("inner", { ...mysql, allowListFrom: [{ nodes: { selector: { matchLabels: { "test.linode.operator.dev/ns": cluster.namespace, pool: "inner" } }, addressType: "InternalIP" } }, pool("inner")] });
    const id = Number((await waitFor("Ready", () => readyAt("inner"), 60_000, 100)).status?.id);
    expect(await allowListOf(id)).toEqual(["192.168.140.7/32", "2001:db8::10/128", "203.0.113.7/32"]);
  });
});

describe("allowListFrom without the right to read Nodes", () => {
  const cluster = useTestCluster("allow-nodes-denied");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { platform: "current", readNodes: false, poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, readyAt, reasonOf, creates } = databaseHelpers(cluster, () => env);

  it("is NodesNotReadable, naming rbac.readNodes; nothing is created or changed", async () => {
    const before = creates();
    await apply("blind", { ...mysql, allowListFrom: [{ nodes: {} }] });
    expect((await reasonOf("blind", "Synced", "NodesNotReadable")).message).toContain("rbac.readNodes=true");
    expect(creates()).toBe(before);

    const id = Number((await waitFor("Ready", async () => { await apply("static", mysql); return readyAt("static"); }, 60_000, 200)).status?.id);
    await apply("static", { ...mysql, allowListFrom: [{ nodes: {} }] });
    await reasonOf("static", "Synced", "NodesNotReadable");
    await env.repass("ManagedDatabase", key("static"), 2);
    expect(env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`)).toEqual([]);
  });
});

describe("allowListFrom: cidrs from a ConfigMap", () => {
  const cluster = useTestCluster("allow-cidrs");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { platform: "current", poll: { pendingMillis: 300, readyMillis: 5_000 }, settings: { "allow-list-interval-seconds": 0 } }); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, readyAt, reasonOf, creates } = databaseHelpers(cluster, () => env);
  const puts = (id: number): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;
  const configMap = async (name: string, data: Record<string, string>, labelled = true): Promise<void> => {
    const res = await cluster.kubectl(["-n", cluster.namespace, "apply", "-f", "-"], { input: JSON.stringify({
      apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...(labelled ? { labels: { "linode.operator.dev/allow-list": "true" } } : {}) }, data,
    }) });
    expect(res.code, res.stderr).toBe(0);
  };
  const allowListOf = async (id: number): Promise<string[]> => [...(await env.linode.databases.engine("mysql").get(id)).allowList].sort();
  const spec = { ...mysql, allowList: ["203.0.113.7"], allowListFrom: [{ cidrs: { name: "egress", key: "addresses" } }] };

  it("waits for the labelled ConfigMap (an unlabelled one is not read), then follows its key; a bad entry or a missing key holds the list", async () => {
    const before = creates();
    await configMap("egress", { addresses: "198.51.100.70" }, false);
    await apply("gated", spec);
    expect((await reasonOf("gated", "Ready", "AllowListSourceNotFound")).message).toContain("with the label linode.operator.dev/allow-list: \"true\"");
    await env.repass("ManagedDatabase", key("gated"), 2);
    expect(creates()).toBe(before);

    await configMap("egress", { addresses: "# the NAT gateways\n198.51.100.70, 198.51.100.71\n2001:db8::/64" });
    const id = Number((await waitFor("created with the ConfigMap's entries", () => readyAt("gated"), 60_000, 100)).status?.id);
    expect(await allowListOf(id)).toEqual(["198.51.100.70/32", "198.51.100.71/32", "2001:db8::/64", "203.0.113.7/32"]);
    const shown = await waitFor("status.allowList", async () => { const o = await get("gated"); return Array.isArray(o.status?.allowList) ? o : undefined; }, 30_000, 100);
    expect(shown.status?.allowList).toContainEqual({ entry: "198.51.100.71/32", from: "ConfigMap egress/addresses" });

    await configMap("egress", { addresses: "198.51.100.72" });
    await waitFor("follows the edit", async () => (JSON.stringify(await allowListOf(id)) === JSON.stringify(["198.51.100.72/32", "203.0.113.7/32"]) ? true : undefined), 30_000, 100);

    const sent = puts(id);
    await configMap("egress", { addresses: "198.51.100.73 not-an-address 10.0.0.0/33" });
    const bad = await reasonOf("gated", "Synced", "InvalidAllowListSource");
    expect(bad.message).toContain("\"not-an-address\", \"10.0.0.0/33\"");
    await configMap("egress", { other: "198.51.100.74" });
    expect((await reasonOf("gated", "Synced", "AllowListSourceNotFound")).message).toContain("ConfigMap egress has no key addresses");
    await env.repass("ManagedDatabase", key("gated"), 2);
    expect(puts(id)).toBe(sent);
    expect(await allowListOf(id)).toEqual(["198.51.100.72/32", "203.0.113.7/32"]);
  });
});
