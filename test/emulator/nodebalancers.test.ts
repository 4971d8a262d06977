/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate, type RunningEmulator } from "../../src/emulator/index.ts";
import { deserializeState, emptyState, serializeState } from "../../src/emulator/store.ts";
import { client, fields, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
beforeAll(async () => { emu = await start({ rateLimits: false }); api = client(emu); });
afterAll(async () => { await emu.close(); });

let seq = 0;
const uniq = () => `nb-${Date.now().toString(36)}-${++seq}`;

async function nb(over: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post("/nodebalancers", { region: "us-east", label: uniq(), ...over });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as number;
}

async function config(nbId: number, over: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(`/nodebalancers/${nbId}/configs`, over);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as number;
}

const node = (over: Record<string, unknown> = {}) => ({ address: "192.168.210.120:80", label: "node-1", ...over });

describe("NodeBalancers", () => {
  it("creates with the real API's shape and documentation-range addresses", async () => {
    const res = await api.post("/nodebalancers", { region: "us-east", tags: null, client_conn_throttle: 20 });
    const b = res.body;
    expect(b).toMatchObject({ region: "us-east", type: "common", client_conn_throttle: 20, tags: [], lke_cluster: null, transfer: { in: null, out: null, total: null } });
    expect(b.label).toBe(`nodebalancer${b.id}`);
    expect(b.ipv4).toMatch(/^(203\.0\.113|198\.51\.100)\.\d+$/);
    expect(b.hostname).toBe(`${(b.ipv4 as string).replaceAll(".", "-")}.ip.linodeusercontent.com`);
    expect(b.ipv6).toMatch(/^2001:db8:/);
  });
  it.each([
    [{ region: undefined }, "region"],
    [{ region: "nowhere" }, "region"],
    [{ label: "ab" }, "label"],
    [{ label: "x".repeat(33) }, "label"],
    [{ label: "bad label!" }, "label"],
    [{ client_conn_throttle: 21 }, "client_conn_throttle"],
    [{ client_conn_throttle: -1 }, "client_conn_throttle"],
    [{ tags: "web" }, "tags"],
    [{ configs: [{ port: 80 }] }, "configs[0].nodes"],
    [{ configs: [{ port: 80, nodes: [node()] }, { port: 80, nodes: [node()] }] }, "configs[1].port"],
    [{ configs: [{ port: 80, nodes: [node({ address: "8.8.8.8:80" })] }] }, "configs[0].nodes[0].address"],
  ])("create %j -> 400 naming %s", async (over, field) => {
    const res = await api.post("/nodebalancers", { region: "us-east", ...over });
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it("keeps labels unique on the account and updates label, throttle, tags", async () => {
    const label = uniq();
    const id = await nb({ label });
    expect(fields(await api.post("/nodebalancers", { region: "us-east", label }))).toEqual(["label"]);
    const up = await api.put(`/nodebalancers/${id}`, { label: `${label}_r`, client_conn_throttle: 5, tags: ["web"] });
    expect(up.body).toMatchObject({ label: `${label}_r`, client_conn_throttle: 5, tags: ["web"] });
    expect(fields(await api.put(`/nodebalancers/${id}`, { client_conn_throttle: 50 }))).toEqual(["client_conn_throttle"]);
  });
  it("creates configs and nodes inline", async () => {
    const id = await nb({ configs: [{ port: 443, protocol: "tcp", nodes: [node(), node({ label: "node-2", address: "192.168.210.121:80" })] }] });
    const configs = (await api.get(`/nodebalancers/${id}/configs`)).body;
    expect(configs.results).toBe(1);
    expect(configs.data[0]).toMatchObject({ port: 443, protocol: "tcp", nodes_status: { up: 0, down: 2 } });
    const nodes = (await api.get(`/nodebalancers/${id}/configs/${configs.data[0].id}/nodes`)).body;
    expect(nodes.results).toBe(2);
  });
  it("deletes with its configs and nodes", async () => {
    const id = await nb();
    const cfg = await config(id);
    expect((await api.del(`/nodebalancers/${id}`)).body).toEqual({});
    expect((await api.get(`/nodebalancers/${id}`)).status).toBe(404);
    expect((await api.get(`/nodebalancers/${id}/configs/${cfg}`)).status).toBe(404);
  });
  it("lists firewalls assigned at creation", async () => {
    const withFw = await nb({ firewall_id: 4242 });
    const res = (await api.get(`/nodebalancers/${withFw}/firewalls`)).body;
    expect(res.results).toBe(1);
    expect(res.data[0]).toMatchObject({ id: 4242, status: "enabled", entities: [{ id: withFw, type: "nodebalancer" }] });
    expect((await api.get(`/nodebalancers/${await nb()}/firewalls`)).body.results).toBe(0);
  });
  it("assigns and removes firewalls through the firewall's devices (one per NodeBalancer), as the official OpenAPI describes them", async () => {
    const id = await nb();
    const fw = 5151;
    const made = await api.post(`/networking/firewalls/${fw}/devices`, { id, type: "nodebalancer" });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ entity: { id, type: "nodebalancer", url: `/v4/nodebalancers/${id}` } });
    expect(made.body.created).toMatch(/^\d{4}-\d\d-\d\dT/);
    const device = made.body.id as number;
    expect((await api.get(`/networking/firewalls/${fw}/devices/${device}`)).body).toMatchObject({ id: device, entity: { id } });
    expect((await api.get(`/networking/firewalls/${fw}/devices`)).body).toMatchObject({ results: 1, data: [{ id: device }] });
    expect(((await api.get(`/nodebalancers/${id}/firewalls`)).body.data as { id: number }[]).map((f) => f.id)).toEqual([fw]);
    expect((await api.get(`/networking/firewalls/${fw}`)).body).toMatchObject({ id: fw, status: "enabled", entities: [{ id, type: "nodebalancer" }] });
    // One enabled firewall per NodeBalancer (the reason recorded against the real API); the same one twice is refused too.
    const second = await api.post(`/networking/firewalls/5152/devices`, { id, type: "nodebalancer" });
    expect(second.status).toBe(400);
    expect(second.body.errors[0].reason).toMatch(/^Too many active firewalls attached to NodeBalancer .* \(ID \d+\)$/);
    expect((await api.post(`/networking/firewalls/${fw}/devices`, { id, type: "nodebalancer" })).status).toBe(400);
    // Bodies are checked; entities that do not exist are 404 (the emulator has no Linodes).
    expect(fields(await api.post(`/networking/firewalls/${fw}/devices`, { id }))).toEqual(["type"]);
    expect((await api.post(`/networking/firewalls/${fw}/devices`, { id: 1, type: "nodebalancer" })).status).toBe(404);
    expect((await api.post(`/networking/firewalls/${fw}/devices`, { id, type: "linode" })).status).toBe(404);
    // Removed: the NodeBalancer has none, and takes another.
    expect((await api.del(`/networking/firewalls/${fw}/devices/${device}`)).body).toEqual({});
    expect((await api.get(`/networking/firewalls/${fw}/devices/${device}`)).status).toBe(404);
    expect((await api.get(`/nodebalancers/${id}/firewalls`)).body.results).toBe(0);
    expect((await api.post(`/networking/firewalls/5152/devices`, { id, type: "nodebalancer" })).status).toBe(200);
  });
  it("a deleted firewall leaves its NodeBalancers and is 404 for good, also to a new NodeBalancer", async () => {
    const fw = 6161;
    const id = await nb({ firewall_id: fw });
    expect((await api.del(`/networking/firewalls/${fw}`)).body).toEqual({});
    expect((await api.get(`/nodebalancers/${id}/firewalls`)).body.results).toBe(0);
    expect((await api.get(`/networking/firewalls/${fw}`)).status).toBe(404);
    expect((await api.get(`/networking/firewalls/${fw}/devices`)).status).toBe(404);
    expect((await api.post(`/networking/firewalls/${fw}/devices`, { id, type: "nodebalancer" })).status).toBe(404);
    expect(fields(await api.post("/nodebalancers", { region: "us-east", firewall_id: fw }))).toEqual(["firewall_id"]);
  });
  it("a deleted NodeBalancer is no firewall's device any more", async () => {
    const fw = 7171;
    const id = await nb({ firewall_id: fw });
    await api.del(`/nodebalancers/${id}`);
    expect((await api.get(`/networking/firewalls/${fw}/devices`)).body.results).toBe(0);
  });
  it("PUT .../firewalls replaces the NodeBalancer's firewalls in one step and answers with the page of those now assigned (techdocs put-node-balancer-firewalls)", async () => {
    const id = await nb({ firewall_id: 8181 });
    const devicesOf = async (fw: number): Promise<{ id: number; entity: { id: number } }[]> => (await api.get(`/networking/firewalls/${fw}/devices`)).body.data as { id: number; entity: { id: number } }[];
    const before = await devicesOf(8181);
    expect(before.map((d) => d.entity.id)).toEqual([id]);
    const swapped = await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [8182] });
    expect(swapped.status, JSON.stringify(swapped.body)).toBe(200);
    expect(swapped.body).toMatchObject({ page: 1, pages: 1, results: 1, data: [{ id: 8182, status: "enabled", entities: [{ id, type: "nodebalancer" }] }] });
    expect(((await api.get(`/nodebalancers/${id}/firewalls`)).body.data as { id: number }[]).map((f) => f.id)).toEqual([8182]);
    expect(await devicesOf(8181)).toEqual([]);
    const device = (await devicesOf(8182))[0]?.id;
    expect(device).toBeTypeOf("number");
    // The same list again changes nothing: the firewall that stays keeps its device.
    expect((await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [8182, 8182] })).body.results).toBe(1);
    expect((await devicesOf(8182)).map((d) => d.id)).toEqual([device]);
    // An empty list removes them all.
    expect((await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [] })).body).toMatchObject({ results: 0, data: [] });
    expect((await api.get(`/nodebalancers/${id}/firewalls`)).body.results).toBe(0);
  });
  it("PUT .../firewalls checks everything before changing anything: two active firewalls (the recorded reason), a deleted firewall, a bad body, another's NodeBalancer", async () => {
    const id = await nb({ firewall_id: 8281 });
    const assigned = async (): Promise<number[]> => ((await api.get(`/nodebalancers/${id}/firewalls`)).body.data as { id: number }[]).map((f) => f.id);
    const two = await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [8282, 8283] });
    expect(two.status).toBe(400);
    expect(two.body.errors[0].reason).toMatch(/^Too many active firewalls attached to NodeBalancer .* \(ID \d+\)$/);
    expect(await assigned()).toEqual([8281]);
    expect((await api.del("/networking/firewalls/8284")).status).toBe(200);
    const deleted = await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [8284] });
    expect(deleted.status).toBe(400);
    expect(fields(deleted)).toEqual(["firewall_ids"]);
    expect(await assigned()).toEqual([8281]);
    expect(fields(await api.put(`/nodebalancers/${id}/firewalls`, {}))).toEqual(["firewall_ids"]);
    expect(fields(await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: 8282 }))).toEqual(["firewall_ids"]);
    expect(fields(await api.put(`/nodebalancers/${id}/firewalls`, { firewall_ids: ["8282"] }))).toEqual(["firewall_ids[0]"]);
    expect(await assigned()).toEqual([8281]);
    expect((await api.put("/nodebalancers/1/firewalls", { firewall_ids: [] })).status).toBe(404);
    // The NodeBalancers scope, read_write (the docs' OAuth scope).
    emu.context.auth.addToken({ token: "nb-read-token", scopes: "nodebalancers:read_only" });
    const readOnly = await client(emu, "nb-read-token").put(`/nodebalancers/${id}/firewalls`, { firewall_ids: [] });
    expect(readOnly.status).toBe(401);
    expect(readOnly.headers.get("x-accepted-oauth-scopes")).toBe("nodebalancers:read_write");
    expect(await assigned()).toEqual([8281]);
  });
  it("firewall routes need the firewall scope", async () => {
    emu.context.auth.addToken({ token: "nb-only-token", scopes: "nodebalancers:read_write" });
    const nbOnly = client(emu, "nb-only-token");
    const res = await nbOnly.get("/networking/firewalls/5151");
    expect(res.status).toBe(401);
    expect(res.headers.get("x-accepted-oauth-scopes")).toBe("firewall:read_only");
  });
  it("has no stats on a fresh NodeBalancer, then stats", async () => {
    const id = await nb();
    const fresh = await api.get(`/nodebalancers/${id}/stats`);
    expect(fresh.status).toBe(400);
    expect(fresh.body).toEqual({ errors: [{ reason: "Stats are unavailable at this time." }] });
    emu.advance(600);
    const stats = await api.get(`/nodebalancers/${id}/stats`);
    expect(stats.status).toBe(200);
    // Once served at all, statistics hold samples: [timestamp, value] pairs, five minutes apart.
    expect(stats.body.data.connections.length).toBeGreaterThan(0);
    expect(stats.body.data.connections[0]).toHaveLength(2);
    expect(stats.body.data.traffic.in.length).toBe(stats.body.data.connections.length);
    expect(typeof stats.body.title).toBe("string");
    // They carry the traffic the transfer counts (bits a second) and connections that vary with time.
    const latest = (series: number[][]): number | undefined => series.at(-1)?.[1];
    expect(latest(stats.body.data.traffic.in as number[][])).toBeGreaterThan(0);
    expect(latest(stats.body.data.traffic.out as number[][])).toBeGreaterThan(0);
    const connections = latest(stats.body.data.connections as number[][]);
    expect(connections).toBeGreaterThan(0);
    // The NodeBalancer carries traffic: this month's transfer counts up from the first statistics on.
    type Transfer = { in: number; out: number; total: number };
    const first = (await api.get(`/nodebalancers/${id}`)).body.transfer as Transfer;
    expect(first.in).toBeGreaterThan(0);
    expect(first.total).toBeCloseTo(first.in + first.out, 3);
    emu.advance(600);
    const later = (await api.get(`/nodebalancers/${id}`)).body.transfer as Transfer;
    expect(later.in).toBeGreaterThan(first.in);
    expect(latest((await api.get(`/nodebalancers/${id}/stats`)).body.data.connections as number[][])).not.toBe(connections);
    expect(later.out).toBeGreaterThan(first.out);
  });
});

describe("configs", () => {
  it("applies the recorded defaults", async () => {
    const id = await nb();
    const res = await api.post(`/nodebalancers/${id}/configs`, { port: 80, protocol: "http", algorithm: "roundrobin", check_interval: 60 });
    expect(res.body).toMatchObject({
      port: 80, protocol: "http", algorithm: "roundrobin", stickiness: "none", check: "none", check_interval: 60,
      check_timeout: 30, check_attempts: 3, check_path: "", check_body: "", check_passive: true, proxy_protocol: "none",
      cipher_suite: "recommended", nodebalancer_id: id, ssl_commonname: "", ssl_fingerprint: "", ssl_cert: null,
      ssl_key: null, nodes_status: { up: 0, down: 0 },
    });
    expect((await api.post(`/nodebalancers/${id}/configs`, { port: 81 })).body.check_interval).toBe(31);
  });
  it.each([
    [{ port: 0 }, "port"], [{ port: 65536 }, "port"], [{ protocol: "ftp" }, "protocol"], [{ algorithm: "random" }, "algorithm"],
    [{ stickiness: "cookie" }, "stickiness"], [{ check: "ping" }, "check"], [{ check_attempts: 0 }, "check_attempts"],
    [{ check_attempts: 31 }, "check_attempts"], [{ check_timeout: 0 }, "check_timeout"], [{ check_timeout: 31 }, "check_timeout"],
    [{ check_interval: 1 }, "check_interval"], [{ check_interval: 20, check_timeout: 20 }, "check_timeout"],
    [{ check_interval: 10 }, "check_timeout"], [{ cipher_suite: "weak" }, "cipher_suite"], [{ proxy_protocol: "v3" }, "proxy_protocol"],
    [{ check_path: "/has space" }, "check_path"], [{ check_passive: "yes" }, "check_passive"],
    [{ protocol: "https" }, "ssl_cert"], [{ protocol: "https", ssl_cert: "garbage", ssl_key: "garbage" }, "ssl_cert"],
  ])("config %j -> 400 naming %s", async (body, field) => {
    const id = await nb();
    const res = await api.post(`/nodebalancers/${id}/configs`, body);
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it("keeps ports unique per NodeBalancer, on create and update", async () => {
    const id = await nb();
    await config(id, { port: 80 });
    const second = await config(id, { port: 8080 });
    expect(fields(await api.post(`/nodebalancers/${id}/configs`, { port: 80 }))).toEqual(["port"]);
    expect(fields(await api.put(`/nodebalancers/${id}/configs/${second}`, { port: 80 }))).toEqual(["port"]);
    expect((await api.post(`/nodebalancers/${await nb()}/configs`, { port: 80 })).status).toBe(200);
  });
  it("https: derives fingerprint and common name, redacts cert and key", async () => {
    const id = await nb();
    const { certPem, keyPem } = generateCertificate({ commonName: "www.example.com" });
    const res = await api.post(`/nodebalancers/${id}/configs`, { port: 443, protocol: "https", ssl_cert: certPem, ssl_key: keyPem });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ssl_cert: "<REDACTED>", ssl_key: "<REDACTED>", ssl_commonname: "www.example.com" });
    expect(res.body.ssl_fingerprint).toBe(new X509Certificate(certPem).fingerprint); // SHA-1, as the spec says
    // PEM line breaks sent as the two characters backslash-n are accepted too.
    const escaped = await api.put(`/nodebalancers/${id}/configs/${res.body.id}`, { ssl_cert: certPem.replaceAll("\n", "\\n") });
    expect(escaped.body.ssl_fingerprint).toBe(res.body.ssl_fingerprint);
    const other = generateCertificate({ commonName: "other.example.com" });
    const mismatch = await api.put(`/nodebalancers/${id}/configs/${res.body.id}`, { ssl_cert: other.certPem });
    expect(fields(mismatch)).toEqual(["ssl_key"]);
    const toHttp = await api.put(`/nodebalancers/${id}/configs/${res.body.id}`, { protocol: "http" });
    expect(toHttp.body).toMatchObject({ ssl_cert: null, ssl_key: null, ssl_fingerprint: "", ssl_commonname: "" });
  });
  it("updates and deletes a config (its nodes go with it)", async () => {
    const id = await nb();
    const cfg = await config(id);
    const nodeId = (await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, node())).body.id as number;
    const up = await api.put(`/nodebalancers/${id}/configs/${cfg}`, { port: 8080, protocol: "tcp", proxy_protocol: "v2", algorithm: "leastconn" });
    expect(up.body).toMatchObject({ port: 8080, protocol: "tcp", proxy_protocol: "v2", algorithm: "leastconn" });
    expect((await api.del(`/nodebalancers/${id}/configs/${cfg}`)).body).toEqual({});
    expect((await api.get(`/nodebalancers/${id}/configs/${cfg}/nodes/${nodeId}`)).status).toBe(404);
  });
  it("rebuilds: keeps nodes with ids, creates new ones, drops the omitted", async () => {
    const id = await nb();
    const cfg = await config(id);
    const keep = (await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, node({ label: "keep" }))).body.id as number;
    const drop = (await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, node({ label: "drop", address: "192.168.210.2:80" }))).body.id as number;
    const res = await api.post(`/nodebalancers/${id}/configs/${cfg}/rebuild`, {
      port: 80, protocol: "http", check_interval: 60,
      nodes: [{ id: keep, address: "192.168.210.120:80", label: "kept", weight: 10, mode: "accept" }, { address: "192.168.200.5:8080", label: "fresh" }],
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("nodes");
    expect(res.body.nodes_status).toEqual({ up: 0, down: 2 });
    const nodes = (await api.get(`/nodebalancers/${id}/configs/${cfg}/nodes`)).body.data as { id: number; label: string }[];
    expect(nodes.map((n) => n.label).sort()).toEqual(["fresh", "kept"]);
    expect(nodes.find((n) => n.label === "kept")?.id).toBe(keep);
    expect((await api.del(`/nodebalancers/${id}/configs/${cfg}/nodes/${drop}`)).status).toBe(404);
    expect(fields(await api.post(`/nodebalancers/${id}/configs/${cfg}/rebuild`, { port: 80 }))).toEqual(["nodes"]);
    expect(fields(await api.post(`/nodebalancers/${id}/configs/${cfg}/rebuild`, { nodes: [{ address: "203.0.113.1:80", label: "public" }] }))).toEqual(["nodes[0].address"]);
  });
});

describe("nodes", () => {
  it("creates, views, updates and deletes", async () => {
    const id = await nb();
    const cfg = await config(id);
    const res = await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, { address: "192.168.210.120:8080", label: "go-node", weight: 10, mode: "accept" });
    expect(res.body).toMatchObject({ address: "192.168.210.120:8080", label: "go-node", status: "unknown", weight: 10, mode: "accept", config_id: cfg, nodebalancer_id: id, vpc_config_id: null });
    const path = `/nodebalancers/${id}/configs/${cfg}/nodes/${res.body.id}`;
    expect((await api.get(path)).body.id).toBe(res.body.id);
    expect((await api.put(path, { label: "go-node_r", weight: 100, mode: "drain" })).body).toMatchObject({ label: "go-node_r", weight: 100, mode: "drain" });
    await api.admin("PUT", `/nodes/${res.body.id}/status`, { status: "UP" });
    expect((await api.get(`/nodebalancers/${id}/configs/${cfg}`)).body.nodes_status).toEqual({ up: 1, down: 0 });
    expect((await api.del(path)).body).toEqual({});
    expect((await api.get(path)).status).toBe(404);
  });
  it.each([
    [{ address: undefined }, "address"], [{ label: undefined }, "label"], [{ label: "ab" }, "label"], [{ label: "bad label" }, "label"],
    [{ address: "203.0.113.5:80" }, "address"], [{ address: "172.32.0.1:80" }, "address"], [{ address: "11.0.0.1:80" }, "address"],
    [{ address: "192.168.210.120" }, "address"], [{ address: "192.168.210.120:70000" }, "address"],
    [{ weight: 0 }, "weight"], [{ weight: 256 }, "weight"], [{ mode: "maybe" }, "mode"],
  ])("node %j -> 400 naming %s", async (over, field) => {
    const id = await nb();
    const cfg = await config(id);
    const res = await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, node(over));
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it("accepts the edges of the private range and of weight", async () => {
    const id = await nb();
    const cfg = await config(id);
    for (const over of [
      { address: "192.168.128.0:1", weight: 1 }, { address: "192.168.255.255:65535", weight: 255 },
      { address: "10.0.0.0:80" }, { address: "172.16.0.1:80" }, { address: "172.31.255.255:80" }, { address: "192.168.0.1:80" },
    ]) {
      expect((await api.post(`/nodebalancers/${id}/configs/${cfg}/nodes`, node(over))).status).toBe(200);
    }
  });
});

describe("state files written before firewall devices", () => {
  it("turn a NodeBalancer's firewall_id into a device, and give the device counter a start", () => {
    const old = serializeState(emptyState(), 0);
    const { firewall_device: _dropped, ...counters } = old.counters;
    const nb = { id: 7, label: "old-nb", region: "us-east", type: "common", client_conn_throttle: 0, tags: [], firewall_id: 4242, ipv4: "203.0.113.1", ipv6: "2001:db8::1", created: 1, updated: 1, configs: {} };
    const state = deserializeState({ ...old, counters: counters as typeof old.counters, nodebalancers: [nb], firewalls: [{ id: 4242, label: "fw", created: 1 }] }, "legacy");
    expect(state.nodebalancers.get(7)).not.toHaveProperty("firewall_id");
    expect(state.firewalls.get(4242)?.devices).toEqual([{ id: emptyState().counters.firewall_device + 1, entity_id: 7, entity_type: "nodebalancer", created: 1 }]);
    expect(state.counters.firewall_device).toBe(emptyState().counters.firewall_device + 1);
  });
});
