// Adopting in Manage mode with a short spec, on a real API server and the emulator over HTTP:
// the fields the spec leaves unset take the cloud object's values, written to the spec once,
// and nothing is sent (the emulator's record of mutations says so); what the spec cannot
// express is refused in Manage mode (CannotExpress: see late-init.test.ts) and mirrored in Observe. Each case fails
// on the code before late initialization (the defaults were sent: the cluster shrunk to one
// node, lost its allow list and left its VPC; the NodeBalancer lost its configs).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsV1Api } from "@kubernetes/client-node";
import type { Managed, ManagedObject } from "../../src/runtime/managed.ts";
import { ObjectWrites } from "../../src/runtime/object-writes.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { useTestCluster, type TestCluster } from "../harness/cluster.ts";
import { databaseHelpers, envOptions } from "../harness/database-helpers.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const INITIALIZED_FROM = "linode.operator.dev/initialized-from";

/** Requests that change something (POST, PUT, DELETE) the emulator answered on one object's path or under it. */
const mutationsUnder = (env: OperatorEnv, path: string): string[] => env.emulator.mutations()
  .filter((m) => m.method !== "GET" && (m.path === path || m.path.startsWith(`${path}/`))).map((m) => `${m.method} ${m.path}`);

/** The notes of the Events of `reason` on object `name`. */
const eventNotes = async (cluster: TestCluster, name: string, reason: string): Promise<string[]> =>
  (await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace }))
    .items.filter((e) => e.reason === reason && e.regarding?.name === name).map((e) => e.note ?? "");

describe("adopting a ManagedDatabase with a short spec (current platform)", () => {
  const cluster = useTestCluster("adopt-db");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, readyAt } = databaseHelpers(cluster, () => env);

  it("a 3-node cluster with an allow list and a VPC keeps all three: the spec takes them once, zero PUTs; then the spec is the desired state", async () => {
    const api = env.linode.databases.engine("mysql");
    const theirs = await api.create({
      label: "theirs-three-nodes", region: "us-east", type: "g6-dedicated-2", version: "8", clusterSize: 3,
      allowList: ["198.51.100.0/24", "203.0.113.9"], privateNetwork: { vpcId: 7, subnetId: 70, publicAccess: true },
    });
    await waitFor("theirs active", async () => ((await api.get(theirs.id)).status === "active" ? true : undefined), 30_000, 100);
    const before = await api.get(theirs.id);
    const path = `/databases/mysql/instances/${String(theirs.id)}`;

    await apply("adopted", { engine: "mysql", version: "8", region: "us-east", type: "g6-dedicated-2", databaseId: theirs.id });
    const o = await waitFor("adopted Ready", () => readyAt("adopted"), 60_000, 100);
    expect(o.spec).toMatchObject({ clusterSize: 3, allowList: before.allowList, privateNetwork: { vpcId: 7, subnetId: 70, publicAccess: true }, suspended: false });
    expect(o.metadata.annotations?.[INITIALIZED_FROM]).toBe(String(theirs.id));
    const notes = await waitFor("a LateInitialized Event", async () => { const n = await eventNotes(cluster, "adopted", "LateInitialized"); return n.length > 0 ? n : undefined; }, 30_000, 100);
    expect(notes.join()).toMatch(/spec\.clusterSize.*spec\.allowList.*spec\.privateNetwork/);
    // Three more looks: still nothing sent to the database, which is as it was.
    await env.repass("ManagedDatabase", key("adopted"), 3);
    expect(mutationsUnder(env, path)).toEqual([]);
    const after = await api.get(theirs.id);
    expect({ clusterSize: after.clusterSize, allowList: after.allowList, privateNetwork: after.privateNetwork }).toEqual({ clusterSize: 3, allowList: before.allowList, privateNetwork: before.privateNetwork });
    expect(await eventNotes(cluster, "adopted", "LateInitialized")).toHaveLength(1);

    // From now on the spec is what is kept: an edit is sent, and nothing is initialized again.
    await env.deps.kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "adopted" }, { spec: { allowList: ["203.0.113.9"] } });
    await waitFor("the allow list the spec now says", async () => ((await api.get(theirs.id)).allowList.join() === "203.0.113.9/32" ? true : undefined), 30_000, 100);
    expect(mutationsUnder(env, path).filter((m) => m.startsWith("PUT"))).toHaveLength(1);
    const edited: ManagedObject = await get("adopted");
    expect(edited.spec).toMatchObject({ clusterSize: 3, privateNetwork: { vpcId: 7, subnetId: 70 } });
    expect((await api.get(theirs.id)).clusterSize).toBe(3);
  });

  it("the init patch on the API server: a spec edited since the pass read it is a conflict, nothing written; otherwise the values and the mark in one write", async () => {
    await apply("raced", { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", databaseId: 999_999, managementPolicy: "Observe" });
    const at = { namespace: cluster.namespace, name: "raced" };
    const read = await get("raced");
    const writes = new ObjectWrites(env.deps.kube, mdb, () => undefined);
    const pass = (obj: ManagedObject): Managed<unknown> => ({ obj: structuredClone(obj), key: at }) as unknown as Managed<unknown>;
    await env.deps.kube.mergePatchCustom(mdb, at, { spec: { allowList: ["198.51.100.1"] } }); // the user's edit, after the pass read the spec
    await expect(writes.initializeSpec(pass(read), read.metadata.generation, { allowList: ["203.0.113.0/24"], clusterSize: 3 }, "999999")).rejects.toMatchObject({ code: 409 });
    // And the version it then writes at is a precondition the API server keeps (a stale one is refused).
    await expect(env.deps.kube.mergePatchCustom(mdb, at, { metadata: { resourceVersion: read.metadata.resourceVersion }, spec: { clusterSize: 3 } })).rejects.toMatchObject({ code: 409 });
    const edited = await get("raced");
    expect(edited.spec).toMatchObject({ allowList: ["198.51.100.1"] });
    expect(edited.spec).not.toHaveProperty("clusterSize");
    expect(edited.metadata.annotations?.[INITIALIZED_FROM]).toBeUndefined();
    // At the version it read: the operator running here may write the object's status meanwhile
    // (a conflict as well, and right to be one), so read again until one write goes through.
    for (let attempt = 1; ; attempt++) {
      const now = await get("raced");
      try {
        await writes.initializeSpec(pass(now), now.metadata.generation, { clusterSize: 3 }, "999999");
        break;
      } catch (err) {
        if ((err as { code?: number }).code !== 409 || attempt >= 10) throw err;
      }
    }
    const initialized = await get("raced");
    expect(initialized.spec).toMatchObject({ allowList: ["198.51.100.1"], clusterSize: 3 });
    expect(initialized.metadata.annotations?.[INITIALIZED_FROM]).toBe("999999");
  });
});

describe("adopting a NodeBalancer with a short spec", () => {
  const cluster = useTestCluster("adopt-nb");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });
  const { create, get, patch, condOf, settled, reason } = nodeBalancerHelpers(cluster, () => env);
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const specOf = (o: ManagedObject): Record<string, unknown> => o.spec as Record<string, unknown>;

  it("with configs unset it gets its configs and nodes (and its throttle and tags): nothing sent", async () => {
    const theirs = await env.linode.nodeBalancers.create({
      region: "us-east", label: "theirs-configs", clientConnThrottle: 7, tags: ["team-a"],
      configs: [{
        port: 8080, protocol: "tcp", algorithm: "leastconn", stickiness: "table",
        nodes: [{ label: "b-1", address: "192.168.30.1:8080", weight: 50 }, { label: "b-2", address: "192.168.30.2:8080", mode: "backup" }],
      }],
    });
    const path = `/nodebalancers/${String(theirs.id)}`;
    await create("adopted", { nodeBalancerId: theirs.id });
    const o = await settled("adopted");
    expect(specOf(o).clientConnThrottle).toBe(7);
    expect(specOf(o).tags).toEqual(["team-a"]);
    expect(specOf(o).configs).toEqual([{
      port: 8080, protocol: "tcp", algorithm: "leastconn", stickiness: "table", check: "none", checkInterval: expect.any(Number) as number, checkTimeout: expect.any(Number) as number,
      checkAttempts: expect.any(Number) as number, checkPassive: true, proxyProtocol: "none", cipherSuite: "recommended",
      nodes: [{ label: "b-1", address: "192.168.30.1:8080", weight: 50, mode: "accept" }, { label: "b-2", address: "192.168.30.2:8080", weight: expect.any(Number) as number, mode: "backup" }],
    }]);
    expect(o.metadata.annotations?.[INITIALIZED_FROM]).toBe(String(theirs.id));
    await env.repass("NodeBalancer", key("adopted"), 3);
    expect(mutationsUnder(env, path)).toEqual([]);
    const configs = await env.linode.nodeBalancers.listAllConfigs(theirs.id);
    expect(configs.map((c) => [c.port, c.protocol, c.algorithm])).toEqual([[8080, "tcp", "leastconn"]]);
  });

  it("a udp config beside a tcp one on its port, and the udp session throttle: written to the spec with udp's own fields, nothing sent; mirrored in Observe; a new udp config on that common NodeBalancer is PremiumOnly, nothing sent, the one it had stays changeable", async () => {
    // Common NodeBalancers with udp configs made before Linode made UDP premium-only (CL26: those stay).
    env.emulator.setFaults({ udpOnCommon: true });
    const theirs = await env.linode.nodeBalancers.create({
      region: "us-east", label: "theirs-udp", clientUdpSessThrottle: 4,
      configs: [
        { port: 53, protocol: "tcp", nodes: [{ label: "dns-1", address: "192.168.31.1:53" }] },
        { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", check: "connection", checkInterval: 2, checkTimeout: 1, udpCheckPort: 8053, nodes: [{ label: "dns-1", address: "192.168.31.1:53" }] },
      ],
    });
    const other = await env.linode.nodeBalancers.create({ region: "us-east", label: "theirs-udp-2", configs: [{ port: 5000, protocol: "udp", nodes: [{ label: "u-1", address: "192.168.31.2:5000" }] }] });
    env.emulator.setFaults({});
    const path = `/nodebalancers/${String(theirs.id)}`;

    await create("dns", { nodeBalancerId: theirs.id });
    const o = await settled("dns");
    expect(specOf(o).clientUdpSessThrottle).toBe(4);
    const configs = specOf(o).configs as Record<string, unknown>[];
    expect(configs.map((c) => [c.port, c.protocol])).toEqual([[53, "tcp"], [53, "udp"]]);
    expect(configs[1]).toMatchObject({ algorithm: "ring_hash", stickiness: "source_ip", check: "connection", checkInterval: 2, checkPassive: false, udpCheckPort: 8053, nodes: [{ label: "dns-1", address: "192.168.31.1:53", weight: expect.any(Number) as number }] });
    expect(configs[1]?.nodes).toEqual([expect.not.objectContaining({ mode: expect.anything() as unknown })]);
    expect(o.metadata.annotations?.[INITIALIZED_FROM]).toBe(String(theirs.id));
    expect((o.status?.configs as { port: number; protocol: string; udpCheckPort?: number }[] | undefined)?.map((c) => [c.port, c.protocol, c.udpCheckPort])).toEqual([[53, "tcp", undefined], [53, "udp", 8053]]);
    await env.repass("NodeBalancer", key("dns"), 3);
    expect(mutationsUnder(env, path)).toEqual([]);

    // A udp config it has not: common NodeBalancers take no new ones, so nothing is sent.
    const withNew = [...configs, { port: 5353, protocol: "udp", nodes: [{ label: "dns-1", address: "192.168.31.1:5353" }] }];
    await patch("dns", { configs: withNew });
    const held = await reason("dns", "Synced", "PremiumOnly");
    expect(held.message).toContain("add config 5353/udp (a new udp config)");
    await env.repass("NodeBalancer", key("dns"), 2);
    expect(mutationsUnder(env, path)).toEqual([]);
    // The one it had is changed like any config: one rebuild.
    await patch("dns", { configs: configs.map((c) => (c.protocol === "udp" ? { ...c, udpCheckPort: 5353 } : c)) });
    await settled("dns", (x) => (x.status?.configs as { protocol: string; udpCheckPort?: number }[] | undefined)?.find((c) => c.protocol === "udp")?.udpCheckPort === 5353);
    expect(mutationsUnder(env, path)).toEqual([`POST ${path}/configs/${String((await env.linode.nodeBalancers.listAllConfigs(theirs.id)).find((c) => c.protocol === "udp")?.id)}/rebuild`]);

    // Observe mirrors a udp config the spec does not name, and sends nothing either.
    await create("watched", { nodeBalancerId: other.id, managementPolicy: "Observe" });
    const observed = await waitFor("watched Observing", async () => { const x = await get("watched"); return condOf(x, "Synced")?.reason === "Observing" && x.status?.observedGeneration === x.metadata.generation ? x : undefined; }, 30_000, 100);
    expect((observed.status?.configs as { port: number; protocol: string }[] | undefined)?.map((c) => [c.port, c.protocol])).toEqual([[5000, "udp"]]);
    expect(specOf(observed)).not.toHaveProperty("configs");
    await env.repass("NodeBalancer", key("watched"), 2);
    expect(mutationsUnder(env, `/nodebalancers/${String(other.id)}`)).toEqual([]);
  });

  it("adopted with two problems at once, a region it is not in and a new udp config on a common NodeBalancer: Synced names both (ImmutableFieldMismatch first), nothing sent; dropping one leaves the other named alone", async () => {
    const theirs = await env.linode.nodeBalancers.create({ region: "us-east", label: "theirs-two-problems", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.32.1:80" }] }] });
    const path = `/nodebalancers/${String(theirs.id)}`;
    const configs = [
      { port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.32.1:80" }] },
      { port: 5353, protocol: "udp", nodes: [{ label: "web-1", address: "192.168.32.1:5353" }] },
    ];
    await create("two", { nodeBalancerId: theirs.id, region: "us-west", configs });
    const both = await waitFor("Synced naming both problems", async () => {
      const c = condOf(await get("two"), "Synced");
      return c?.reason === "ImmutableFieldMismatch" && c.message?.includes("PremiumOnly") === true ? c : undefined;
    }, 60_000, 100);
    expect(both.status).toBe("False");
    expect(both.message).toMatch(/^2 problems \(ImmutableFieldMismatch, PremiumOnly\)\. /);
    expect(both.message).toContain("region (spec us-west, NodeBalancer us-east)");
    expect(both.message).toContain("add config 5353/udp (a new udp config)");
    await env.repass("NodeBalancer", key("two"), 2);
    expect(mutationsUnder(env, path)).toEqual([]);

    // The udp config dropped from the spec: the region is still named, alone, in its own words.
    await patch("two", { configs: configs.slice(0, 1) });
    const one = await waitFor("Synced ImmutableFieldMismatch alone", async () => { const c = condOf(await get("two"), "Synced"); return c?.reason === "ImmutableFieldMismatch" && c.message?.includes("PremiumOnly") === false ? c : undefined; }, 60_000, 100);
    expect(one.message).toMatch(/^the NodeBalancer differs from the spec in what cannot change, so nothing is sent: region \(spec us-west, NodeBalancer us-east\)$/);
    expect(mutationsUnder(env, path)).toEqual([]);
  });
});
