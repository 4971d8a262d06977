/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// UDP configs with their own rules, client_udp_sess_throttle, and resource locks (src/emulator/nodebalancers/facts.md), over HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { deserializeState, serializeState } from "../../src/emulator/store.ts";
import { client, fields, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  emu = await start({
    rateLimits: false,
    config: {
      users: [{ username: "limited", restricted: true, grants: { global: { add_nodebalancers: true } } }],
      tokens: [{ token: "restricted-token", username: "limited" }, { token: "account-ro", scopes: "nodebalancers:read_write account:read_only" }],
    },
  });
  api = client(emu);
});
afterAll(async () => { await emu.close(); });

let seq = 0;
const uniq = () => `udp-${Date.now().toString(36)}-${++seq}`;
const node = (over: Record<string, unknown> = {}) => ({ address: "192.168.210.120:80", label: "node-1", ...over });

async function nb(over: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post("/nodebalancers", { region: "us-east", label: uniq(), ...over });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as number;
}

describe("udp configs", () => {
  afterEach(() => { emu.setFaults({}); });

  it("creates the recorded udp config (on common as recorded in 2026-07, fault udpOnCommon), with udp's defaults", async () => {
    const id = await nb();
    emu.setFaults({ udpOnCommon: true });
    const res = await api.post(`/nodebalancers/${id}/configs`, { port: 80, protocol: "udp", algorithm: "roundrobin", check_interval: 60, udp_check_port: 1234 }).finally(() => { emu.setFaults({}); });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // F:TestNodeBalancerConfig_UDP, 2026-07 (NB type common).
    expect(res.body).toMatchObject({
      port: 80, protocol: "udp", algorithm: "roundrobin", stickiness: "session", check: "none", check_interval: 60, check_timeout: 30,
      check_attempts: 3, check_passive: false, proxy_protocol: "none", cipher_suite: "none", ssl_cert: null, ssl_key: null,
      udp_check_port: 1234, udp_session_timeout: 16,
    });
    expect((await api.get(`/nodebalancers/${id}`)).body.type).toBe("common");
  });

  it("refuses a new udp config on a common NodeBalancer (CL26), in every call that could make one; premium takes it; a pre-existing one on common stays changeable", async () => {
    const common = await nb({ configs: [{ port: 80, protocol: "tcp", nodes: [node()] }] });
    const [tcp] = (await api.get(`/nodebalancers/${common}/configs`)).body.data as { id: number }[];
    const tcpId = tcp?.id ?? 0;
    const refusals = [
      await api.post("/nodebalancers", { region: "us-east", label: uniq(), configs: [{ port: 53, protocol: "udp", nodes: [node()] }] }),
      await api.post(`/nodebalancers/${common}/configs`, { port: 53, protocol: "udp" }),
      await api.put(`/nodebalancers/${common}/configs/${tcpId}`, { protocol: "udp" }),
      await api.post(`/nodebalancers/${common}/configs/${tcpId}/rebuild`, { protocol: "udp", nodes: [node()] }),
    ];
    expect(refusals.map((r) => [r.status, fields(r)])).toEqual([[400, ["configs[0].protocol"]], [400, ["protocol"]], [400, ["protocol"]], [400, ["protocol"]]]);
    const configs = (await api.get(`/nodebalancers/${common}/configs`)).body.data as { protocol: string }[];
    expect(configs.map((c) => c.protocol)).toEqual(["tcp"]);

    const premium = await api.post("/nodebalancers", { region: "us-east", label: uniq(), type: "premium", configs: [{ port: 53, protocol: "udp", nodes: [node({ address: "[2600:3c03::f03c:91ff:fe24:3a2f]:53" })] }] });
    expect(premium.status, JSON.stringify(premium.body)).toBe(200);

    emu.setFaults({ udpOnCommon: true });
    const old = await api.post(`/nodebalancers/${common}/configs`, { port: 5000, protocol: "udp" }).finally(() => { emu.setFaults({}); });
    expect(old.status).toBe(200);
    const changed = await api.put(`/nodebalancers/${common}/configs/${String(old.body.id)}`, { algorithm: "ring_hash", udp_check_port: 5353 });
    expect(changed.body).toMatchObject({ protocol: "udp", algorithm: "ring_hash", udp_check_port: 5353 });
    const rebuilt = await api.post(`/nodebalancers/${common}/configs/${String(old.body.id)}/rebuild`, { protocol: "udp", nodes: [node()] });
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200);
  });

  it.each([
    [{ protocol: "udp", algorithm: "source" }, "algorithm"],
    [{ protocol: "udp", stickiness: "table" }, "stickiness"],
    [{ protocol: "udp", stickiness: "http_cookie" }, "stickiness"],
    [{ protocol: "udp", check_passive: true }, "check_passive"],
    [{ protocol: "udp", proxy_protocol: "v2" }, "proxy_protocol"],
    [{ protocol: "udp", udp_check_port: 0 }, "udp_check_port"],
    [{ protocol: "udp", udp_check_port: 65536 }, "udp_check_port"],
    [{ protocol: "tcp", algorithm: "ring_hash" }, "algorithm"],
    [{ protocol: "http", stickiness: "session" }, "stickiness"],
    [{ protocol: "tcp", stickiness: "source_ip" }, "stickiness"],
  ])("refuses %j with a 400 naming %s, and makes nothing", async (over, field) => {
    const id = await nb();
    const res = await api.post(`/nodebalancers/${id}/configs`, { port: 80, ...over });
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
    expect((await api.get(`/nodebalancers/${id}/configs`)).body.results).toBe(0);
  });

  it("lets udp reuse a tcp/http/https port, never the same family's", async () => {
    emu.setFaults({ udpOnCommon: true }); // the rules of udp itself, on a common NodeBalancer as in 2026-07
    const id = await nb({ configs: [{ port: 53, protocol: "tcp", nodes: [node()] }, { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", nodes: [node()] }] });
    const configs = (await api.get(`/nodebalancers/${id}/configs`)).body.data as { port: number; protocol: string; stickiness: string; algorithm: string }[];
    expect(configs.map((c) => [c.port, c.protocol, c.algorithm, c.stickiness])).toEqual([[53, "tcp", "roundrobin", "none"], [53, "udp", "ring_hash", "source_ip"]]);
    const again = await api.post(`/nodebalancers/${id}/configs`, { port: 53, protocol: "udp" });
    expect(again.status).toBe(400);
    expect(fields(again)).toEqual(["port"]);
    const http = await api.post(`/nodebalancers/${id}/configs`, { port: 53, protocol: "http" });
    expect(fields(http)).toEqual(["port"]);
  });

  it("gives udp nodes no mode, on create, rebuild and update, and moves the defaults with the protocol", async () => {
    emu.setFaults({ udpOnCommon: true });
    const id = await nb({ configs: [{ port: 5000, protocol: "udp", nodes: [node({ mode: "drain" })] }] });
    const [config] = (await api.get(`/nodebalancers/${id}/configs`)).body.data as { id: number }[];
    const cid = config?.id ?? 0;
    const nodes = (await api.get(`/nodebalancers/${id}/configs/${cid}/nodes`)).body.data as { id: number; mode: string }[];
    expect(nodes.map((n) => n.mode)).toEqual(["none"]);
    const rebuilt = await api.post(`/nodebalancers/${id}/configs/${cid}/rebuild`, { protocol: "udp", nodes: [{ ...node({ mode: "backup" }), id: nodes[0]?.id }, node({ address: "192.168.210.121:80", label: "node-2" })] });
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200);
    const after = (await api.get(`/nodebalancers/${id}/configs/${cid}/nodes`)).body.data as { mode: string }[];
    expect(after.map((n) => n.mode)).toEqual(["none", "none"]);
    // To tcp: tcp's defaults come back, and its nodes take traffic again.
    const tcp = await api.put(`/nodebalancers/${id}/configs/${cid}`, { protocol: "tcp" });
    expect(tcp.body).toMatchObject({ protocol: "tcp", stickiness: "none", check_passive: true, cipher_suite: "recommended", udp_check_port: 80 });
    const accepting = (await api.get(`/nodebalancers/${id}/configs/${cid}/nodes`)).body.data as { mode: string }[];
    expect(accepting.map((n) => n.mode)).toEqual(["accept", "accept"]);
  });

  it("takes client_udp_sess_throttle 0..20 on create and update", async () => {
    const id = await nb({ client_udp_sess_throttle: 7 });
    expect((await api.get(`/nodebalancers/${id}`)).body.client_udp_sess_throttle).toBe(7);
    expect((await api.put(`/nodebalancers/${id}`, { client_udp_sess_throttle: 20 })).body.client_udp_sess_throttle).toBe(20);
    const bad = await api.put(`/nodebalancers/${id}`, { client_udp_sess_throttle: 21 });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(["client_udp_sess_throttle"]);
    expect(fields(await api.post("/nodebalancers", { region: "us-east", client_udp_sess_throttle: -1 }))).toEqual(["client_udp_sess_throttle"]);
    expect((await api.get(`/nodebalancers/${await nb()}`)).body.client_udp_sess_throttle).toBe(0);
  });
});

describe("resource locks", () => {
  const lock = (entityId: number, type = "cannot_delete") => api.post("/locks", { entity_type: "nodebalancer", entity_id: entityId, lock_type: type });

  it("locks a NodeBalancer against deletion until the lock is removed; one lock per entity", async () => {
    const id = await nb({ configs: [{ port: 80, nodes: [node()] }] });
    const made = await lock(id);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const label = (await api.get(`/nodebalancers/${id}`)).body.label as string;
    expect(made.body).toEqual({ id: made.body.id, lock_type: "cannot_delete", entity: { id, type: "nodebalancer", label, url: `/v4/nodebalancers/${id}` } });
    expect((await api.get(`/nodebalancers/${id}`)).body.locks).toEqual(["cannot_delete"]);
    expect((await api.get(`/locks/${made.body.id}`)).body).toEqual(made.body);
    expect((await api.get("/locks")).body.data).toContainEqual(made.body);

    const second = await lock(id, "cannot_delete_with_subresources");
    expect(second.status).toBe(400);
    expect(second.body.errors).toEqual([{ field: "lock_type", reason: `The cannot_delete lock (Lock ID: ${made.body.id}) needs to be removed to add cannot_delete_with_subresources lock. Can only have one of: cannot_delete, cannot_delete_with_subresources locks` }]);

    const refused = await api.del(`/nodebalancers/${id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].reason).toContain(`Lock ID: ${made.body.id}`);
    expect((await api.get(`/nodebalancers/${id}`)).status).toBe(200);
    // cannot_delete leaves the sub-resources free.
    const [config] = (await api.get(`/nodebalancers/${id}/configs`)).body.data as { id: number }[];
    expect((await api.del(`/nodebalancers/${id}/configs/${config?.id ?? 0}`)).status).toBe(200);

    expect((await api.del(`/locks/${made.body.id}`)).status).toBe(200);
    expect((await api.get(`/locks/${made.body.id}`)).status).toBe(404);
    expect((await api.get(`/nodebalancers/${id}`)).body.locks).toEqual([]);
    expect((await api.del(`/nodebalancers/${id}`)).status).toBe(200);
  });

  it("cannot_delete_with_subresources also keeps the configs and nodes", async () => {
    const id = await nb({ configs: [{ port: 80, nodes: [node()] }] });
    const made = await lock(id, "cannot_delete_with_subresources");
    expect(made.status).toBe(200);
    const [config] = (await api.get(`/nodebalancers/${id}/configs`)).body.data as { id: number }[];
    const cid = config?.id ?? 0;
    const [n] = (await api.get(`/nodebalancers/${id}/configs/${cid}/nodes`)).body.data as { id: number }[];
    expect((await api.del(`/nodebalancers/${id}/configs/${cid}/nodes/${n?.id ?? 0}`)).status).toBe(400);
    expect((await api.del(`/nodebalancers/${id}/configs/${cid}`)).status).toBe(400);
    expect((await api.del(`/nodebalancers/${id}`)).status).toBe(400);
    expect((await api.get(`/nodebalancers/${id}/configs/${cid}/nodes`)).body.results).toBe(1);
  });

  it("refuses bad bodies, unknown entities, restricted users and read-only tokens; keeps locks in the state file", async () => {
    const id = await nb();
    expect(fields(await api.post("/locks", { entity_type: "nodebalancer", entity_id: id, lock_type: "forever" }))).toEqual(["lock_type"]);
    expect(fields(await api.post("/locks", { entity_type: "database", entity_id: id, lock_type: "cannot_delete" }))).toEqual(["entity_type"]);
    expect(fields(await api.post("/locks", { entity_type: "nodebalancer", lock_type: "cannot_delete" }))).toEqual(["entity_id"]);
    expect(fields(await api.post("/locks", { entity_type: "nodebalancer", entity_id: 1, lock_type: "cannot_delete" }))).toEqual(["entity_id"]);
    expect((await client(emu, "restricted-token").post("/locks", { entity_type: "nodebalancer", entity_id: id, lock_type: "cannot_delete" })).status).toBe(403);
    const readOnly = await client(emu, "account-ro").post("/locks", { entity_type: "nodebalancer", entity_id: id, lock_type: "cannot_delete" });
    expect(readOnly.status).toBe(401);
    expect(readOnly.headers.get("x-accepted-oauth-scopes")).toBe("account:read_write");
    expect((await client(emu, "account-ro").get("/locks")).status).toBe(200);
    const made = await lock(id);
    const saved = deserializeState(JSON.parse(JSON.stringify(serializeState(emu.context.state, 0))) as ReturnType<typeof serializeState>, "legacy");
    expect(saved.nodebalancers.get(id)?.locks).toEqual([{ id: made.body.id, lock_type: "cannot_delete" }]);
  });
});
