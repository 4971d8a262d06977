// Every NodeBalancer endpoint (and the resource locks one can hold) through the client against the emulator over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeApiError, type LinodeClient, type NodeBalancer, type NodeBalancerConfig } from "../../src/linode/index.ts";
import { firewallDeviceSchema } from "../../src/linode/schemas/firewalls.ts";
import { label, makeClient, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let client: LinodeClient;

beforeAll(async () => {
  emu = await startTestEmulator();
  client = makeClient(emu).client;
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

describe("nodebalancers", () => {
  let nb: NodeBalancer;
  let config: NodeBalancerConfig;

  it("creates with inline configs and nodes, gets, lists, finds by label", async () => {
    const name = label("it-nb");
    nb = await client.nodeBalancers.create({
      region: "us-east",
      label: name,
      clientConnThrottle: 5,
      tags: ["team-a"],
      configs: [{ port: 80, protocol: "http", checkInterval: 31, checkTimeout: 30, nodes: [{ address: "192.168.210.10:80", label: "web-1", weight: 50, mode: "accept" }] }],
    });
    expect(nb.label).toBe(name);
    expect(nb.clientConnThrottle).toBe(5);
    expect(nb.tags).toEqual(["team-a"]);
    expect(nb.ipv4).toBeTruthy();
    expect(await client.nodeBalancers.get(nb.id)).toMatchObject({ id: nb.id, label: name });
    expect((await client.nodeBalancers.list()).data.map((x) => x.id)).toContain(nb.id);
    expect((await client.nodeBalancers.listAll()).map((x) => x.id)).toContain(nb.id);
    expect(await client.nodeBalancers.findByLabel(name)).toMatchObject({ id: nb.id });
    const configs = await client.nodeBalancers.listAllConfigs(nb.id);
    expect(configs).toHaveLength(1);
    expect(configs[0]?.port).toBe(80);
    expect(configs[0]?.nodesStatus).toBeDefined();
    const nodes = await client.nodeBalancers.listAllNodes(nb.id, configs[0]?.id ?? 0);
    expect(nodes.map((n) => n.address)).toEqual(["192.168.210.10:80"]);
  });

  it("updates", async () => {
    const updated = await client.nodeBalancers.update(nb.id, { clientConnThrottle: 10, tags: ["team-b"] });
    expect(updated.clientConnThrottle).toBe(10);
    expect(updated.tags).toEqual(["team-b"]);
  });

  it("creates, reads, lists and updates a config", async () => {
    config = await client.nodeBalancers.createConfig(nb.id, { port: 8080, protocol: "tcp", algorithm: "leastconn", checkInterval: 60, checkTimeout: 30, proxyProtocol: "v2" });
    expect(config).toMatchObject({ port: 8080, protocol: "tcp", algorithm: "leastconn", proxyProtocol: "v2", nodebalancerId: nb.id });
    expect(await client.nodeBalancers.getConfig(nb.id, config.id)).toMatchObject({ id: config.id, port: 8080 });
    const page = await client.nodeBalancers.listConfigs(nb.id);
    expect(page.data.map((c) => c.port).sort()).toEqual([80, 8080]);
    const updated = await client.nodeBalancers.updateConfig(nb.id, config.id, { algorithm: "source", checkAttempts: 5 });
    expect(updated).toMatchObject({ algorithm: "source", checkAttempts: 5 });
  });

  it("creates, reads, lists, updates and deletes nodes", async () => {
    const node = await client.nodeBalancers.createNode(nb.id, config.id, { address: "192.168.210.20:8080", label: "app-1", weight: 10 });
    expect(node).toMatchObject({ address: "192.168.210.20:8080", label: "app-1", weight: 10, configId: config.id, nodebalancerId: nb.id });
    expect(["unknown", "UP", "DOWN"]).toContain(node.status);
    expect(await client.nodeBalancers.getNode(nb.id, config.id, node.id)).toMatchObject({ id: node.id });
    expect((await client.nodeBalancers.listNodes(nb.id, config.id)).data.map((n) => n.id)).toEqual([node.id]);
    const updated = await client.nodeBalancers.updateNode(nb.id, config.id, node.id, { weight: 100, mode: "drain" });
    expect(updated).toMatchObject({ weight: 100, mode: "drain" });
    await client.nodeBalancers.deleteNode(nb.id, config.id, node.id);
    await expect(client.nodeBalancers.getNode(nb.id, config.id, node.id)).rejects.toMatchObject({ kind: "notFound" });
  });

  it("rebuilds a config with its whole node set", async () => {
    const keep = await client.nodeBalancers.createNode(nb.id, config.id, { address: "192.168.210.30:8080", label: "keep-me" });
    await client.nodeBalancers.createNode(nb.id, config.id, { address: "192.168.210.31:8080", label: "drop-me" });
    const rebuilt = await client.nodeBalancers.rebuildConfig(nb.id, config.id, {
      port: 8080, protocol: "tcp", algorithm: "roundrobin",
      nodes: [{ id: keep.id, address: "192.168.210.30:8080", label: "keep-me", weight: 77 }, { address: "192.168.210.32:8080", label: "new-one" }],
    });
    expect(rebuilt).toMatchObject({ id: config.id, algorithm: "roundrobin" });
    const nodes = await client.nodeBalancers.listAllNodes(nb.id, config.id);
    expect(nodes.map((n) => n.label).sort()).toEqual(["keep-me", "new-one"]);
    expect(nodes.find((n) => n.label === "keep-me")).toMatchObject({ id: keep.id, weight: 77 });
  });

  it("lists firewalls", async () => {
    const page = await client.nodeBalancers.listFirewalls(nb.id);
    expect(page.page).toBe(1);
    expect(Array.isArray(await client.nodeBalancers.listAllFirewalls(nb.id))).toBe(true);
  });

  it("assigns a firewall through its devices, finds the device, removes it; a missing firewall is notFound", async () => {
    const fw = await client.firewalls.get(9090);
    expect(fw).toMatchObject({ id: 9090, status: "enabled" });
    const device = await client.firewalls.createDevice(9090, { id: nb.id, type: "nodebalancer" });
    expect(device.entity).toMatchObject({ id: nb.id, type: "nodebalancer" });
    expect((await client.nodeBalancers.listAllFirewalls(nb.id)).map((f) => f.id)).toEqual([9090]);
    expect((await client.firewalls.listAllDevices(9090)).map((d) => d.id)).toEqual([device.id]);
    expect((await client.firewalls.listDevices(9090)).results).toBe(1);
    await client.firewalls.deleteDevice(9090, device.id);
    expect(await client.nodeBalancers.listAllFirewalls(nb.id)).toEqual([]);
    await expect(client.firewalls.deleteDevice(9090, device.id)).rejects.toMatchObject({ kind: "notFound", status: 404 });
  });

  it("replaces the NodeBalancer's firewalls in one PUT, answered with the firewalls now assigned; the API's refusals are typed", async () => {
    await client.firewalls.createDevice(9191, { id: nb.id, type: "nodebalancer" });
    const page = await client.nodeBalancers.updateFirewalls(nb.id, { firewallIds: [9192] });
    expect(page).toMatchObject({ page: 1, pages: 1, results: 1 });
    expect(page.data.map((f) => [f.id, f.status])).toEqual([[9192, "enabled"]]);
    expect(page.data[0]?.entities).toEqual([expect.objectContaining({ id: nb.id, type: "nodebalancer" })]);
    expect((await client.nodeBalancers.listAllFirewalls(nb.id)).map((f) => f.id)).toEqual([9192]);
    expect(await client.firewalls.listAllDevices(9191)).toEqual([]);
    // One active firewall per NodeBalancer: two are refused, and nothing changed.
    await expect(client.nodeBalancers.updateFirewalls(nb.id, { firewallIds: [9192, 9193] })).rejects.toThrow(/Too many active firewalls/);
    expect((await client.nodeBalancers.listAllFirewalls(nb.id)).map((f) => f.id)).toEqual([9192]);
    expect((await client.nodeBalancers.updateFirewalls(nb.id, { firewallIds: [] })).data).toEqual([]);
    expect(await client.nodeBalancers.listAllFirewalls(nb.id)).toEqual([]);
    // Each one request on the route (the refused one is not retried: a 400 is an answer).
    const put = emu.mutations().filter((m) => m.route === "PUT /nodebalancers/{nodeBalancerId}/firewalls");
    expect(put.map((m) => m.status)).toEqual([200, 400, 200]);
  });

  it("parses the firewall device of the official OpenAPI example", () => {
    const example = { created: "2018-01-01 00:01:01", entity: { id: 321, label: "my-nodebalancer", type: "nodebalancer", url: "/v4/nodebalancers/123" }, id: 654, updated: "2018-01-02 00:01:01" };
    expect(firewallDeviceSchema.parse(example)).toMatchObject({ id: 654, entity: { id: 321, type: "nodebalancer" } });
    // Only the ids and the entity's type are relied on.
    expect(firewallDeviceSchema.parse({ id: 1, entity: { id: 2, type: "nodebalancer" } })).toMatchObject({ created: null, entity: { label: null } });
  });

  it("reads stats, or reports them unavailable as a precondition", async () => {
    try {
      const stats = await client.nodeBalancers.getStats(nb.id);
      expect(Array.isArray(stats.data.connections)).toBe(true);
    } catch (err) {
      expect(err).toMatchObject({ kind: "precondition", status: 400 });
    }
  });

  it("deletes a config, then the NodeBalancer", async () => {
    await client.nodeBalancers.deleteConfig(nb.id, config.id);
    await expect(client.nodeBalancers.getConfig(nb.id, config.id)).rejects.toMatchObject({ kind: "notFound" });
    await client.nodeBalancers.delete(nb.id);
    await expect(client.nodeBalancers.get(nb.id)).rejects.toMatchObject({ kind: "notFound", status: 404 });
  });
});

describe("udp", () => {
  it("creates a udp config inline (premium: CL26) with its check port and the session throttle, and reads them back", async () => {
    const nb = await client.nodeBalancers.create({
      region: "us-east", label: label("it-udp"), clientUdpSessThrottle: 5, type: "premium",
      configs: [{ port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", checkPassive: false, udpCheckPort: 8053, nodes: [{ address: "[2600:3c03::f03c:91ff:fe24:3a2f]:53", label: "dns-1" }] }],
    });
    expect(nb.clientUdpSessThrottle).toBe(5);
    const [config] = await client.nodeBalancers.listAllConfigs(nb.id);
    expect(config).toMatchObject({ port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", checkPassive: false, proxyProtocol: "none", udpCheckPort: 8053, udpSessionTimeout: 16 });
    const nodes = await client.nodeBalancers.listAllNodes(nb.id, config?.id ?? 0);
    expect(nodes.map((n) => n.mode)).toEqual(["none"]);
    expect((await client.nodeBalancers.update(nb.id, { clientUdpSessThrottle: 0 })).clientUdpSessThrottle).toBe(0);
  });

  it("a udp config on a common NodeBalancer is an invalid-request error naming the protocol, and nothing is made", async () => {
    const nb = await client.nodeBalancers.create({ region: "us-east", label: label("it-udp-common") });
    await expect(client.nodeBalancers.createConfig(nb.id, { port: 53, protocol: "udp" })).rejects.toMatchObject({ status: 400, kind: "terminal", errors: [{ field: "protocol", reason: expect.stringMatching(/premium/) as string }] });
    expect(await client.nodeBalancers.listAllConfigs(nb.id)).toEqual([]);
  });
});

describe("locks", () => {
  it("makes, lists, reads and removes a lock; a locked NodeBalancer's delete is refused", async () => {
    const nb = await client.nodeBalancers.create({ region: "us-east", label: label("it-lock") });
    const lock = await client.locks.create({ entityType: "nodebalancer", entityId: nb.id, lockType: "cannot_delete" });
    expect(lock).toEqual({ id: lock.id, lockType: "cannot_delete", entity: { id: nb.id, type: "nodebalancer", label: nb.label, url: `/v4/nodebalancers/${String(nb.id)}` } });
    expect((await client.nodeBalancers.get(nb.id)).locks).toEqual(["cannot_delete"]);
    expect(await client.locks.get(lock.id)).toEqual(lock);
    expect((await client.locks.list()).data).toContainEqual(lock);
    expect(await client.locks.forEntity("nodebalancer", nb.id)).toEqual([lock]);
    const refused = await client.nodeBalancers.delete(nb.id).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(LinodeApiError);
    expect((refused as LinodeApiError).status).toBe(400);
    const twice = await client.locks.create({ entityType: "nodebalancer", entityId: nb.id, lockType: "cannot_delete_with_subresources" }).catch((err: unknown) => err);
    expect((twice as LinodeApiError).status).toBe(400);
    await client.locks.delete(lock.id);
    expect(await client.locks.forEntity("nodebalancer", nb.id)).toEqual([]);
    await client.nodeBalancers.delete(nb.id);
  });
});
