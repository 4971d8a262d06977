/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// Public IPv6 backends over HTTP: `[addr]:port` (spec 4.234.0's example), on common and premium
// NodeBalancers (CL26), no subnet; what is refused is the emulator's stated guess
// (src/emulator/nodebalancers/facts.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, fields, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
let labelled = 0;
beforeAll(async () => {
  emu = await start({ rateLimits: false });
  api = client(emu);
});
afterAll(async () => { await emu.close(); });

/** A label no other NodeBalancer or VPC of this file has. */
const uniq = (what: string): string => `${what}-v6-${String(++labelled)}`;

/** A NodeBalancer of `type` with one tcp config: its nodes path. */
async function nodesOf(type: string, over: Record<string, unknown> = {}): Promise<{ nb: string; cfg: string; nodes: string }> {
  const nb = await api.post("/nodebalancers", { region: "nl-ams", label: uniq("nb"), type, ...over });
  expect(nb.status, JSON.stringify(nb.body)).toBe(200);
  const cfg = await api.post(`/nodebalancers/${String(nb.body.id)}/configs`, { port: 80, protocol: "tcp" });
  return { nb: String(nb.body.id), cfg: String(cfg.body.id), nodes: `/nodebalancers/${String(nb.body.id)}/configs/${String(cfg.body.id)}/nodes` };
}

const V6 = "[2600:3c03::f03c:93ff:fe6e:1264]:8080";

describe("IPv6 backends", () => {
  it.each(["common", "premium"])("a %s NodeBalancer takes a public IPv6 node on create, update and rebuild, answered as sent and without a subnet", async (type) => {
    const { nb, cfg, nodes } = await nodesOf(type);
    const made = await api.post(nodes, { address: V6, label: "v6-node", weight: 10 });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ address: V6, vpc_config_id: null });
    expect(made.body).not.toHaveProperty("subnet_id");
    expect((await api.get(`${nodes}/${String(made.body.id)}`)).body.address).toBe(V6);
    const updated = await api.put(`${nodes}/${String(made.body.id)}`, { address: "[2600:3c03::1]:80" });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.address).toBe("[2600:3c03::1]:80");
    const rebuilt = await api.post(`/nodebalancers/${nb}/configs/${cfg}/rebuild`, { port: 80, protocol: "tcp", nodes: [{ id: made.body.id, address: "[2600:3c03::1]:80", label: "v6-node" }, { address: "[2a01:7e00::2]:80", label: "second" }] });
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200);
    expect(((await api.get(nodes)).body.data as { address: string }[]).map((n) => n.address).sort()).toEqual(["[2600:3c03::1]:80", "[2a01:7e00::2]:80"]);
  });

  it("a NodeBalancer created with IPv6 nodes in its configs keeps them", async () => {
    const res = await api.post("/nodebalancers", { region: "nl-ams", label: uniq("nb"), type: "premium", configs: [{ port: 443, protocol: "tcp", nodes: [{ address: V6, label: "v6-node" }] }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const cfg = (await api.get(`/nodebalancers/${String(res.body.id)}/configs`)).body.data[0];
    expect((await api.get(`/nodebalancers/${String(res.body.id)}/configs/${String(cfg.id)}/nodes`)).body.data[0].address).toBe(V6);
  });

  it.each([
    ["link-local", "[fe80::1]:80"], ["unique local", "[fd12:3456::1]:80"], ["loopback", "[::1]:80"], ["IPv4-mapped", "[::ffff:192.168.0.1]:80"],
    ["multicast", "[ff02::1]:80"], ["unbracketed", "2600:3c03::1:80"], ["port 0", "[2600:3c03::1]:0"], ["not an address", "[2600:zz::1]:80"],
  ])("refuses a %s IPv6 address with a 400 on address, on create, update and rebuild alike", async (_what, address) => {
    const { nb, cfg, nodes } = await nodesOf("common");
    expect(fields(await api.post(nodes, { address, label: "bad" }))).toEqual(["address"]);
    const ok = await api.post(nodes, { address: V6, label: "good" });
    expect(fields(await api.put(`${nodes}/${String(ok.body.id)}`, { address }))).toEqual(["address"]);
    expect(fields(await api.post(`/nodebalancers/${nb}/configs/${cfg}/rebuild`, { nodes: [{ address, label: "bad" }] }))).toEqual(["nodes[0].address"]);
    expect(((await api.get(nodes)).body.data as { address: string }[]).map((n) => n.address)).toEqual([V6]);
  });

  it("an IPv6 node takes no subnet_id, and a NodeBalancer with a backend VPC takes no IPv6 node", async () => {
    const vpc = await api.post("/vpcs", { label: uniq("vpc"), region: "nl-ams", subnets: [{ label: "s1", ipv4: "10.0.4.0/24" }] });
    const subnet = vpc.body.subnets[0].id as number;
    const inVpc = await nodesOf("premium", { backend_vpcs: [{ subnet_id: subnet }] });
    expect(fields(await api.post(inVpc.nodes, { address: V6, label: "v6-node", subnet_id: subnet }))).toEqual(["subnet_id"]);
    expect(fields(await api.post(inVpc.nodes, { address: V6, label: "v6-node" }))).toEqual(["address"]);
    const plain = await nodesOf("common");
    expect(fields(await api.post(plain.nodes, { address: V6, label: "v6-node", subnet_id: subnet }))).toEqual(["subnet_id"]);
    // A common NodeBalancer mixes legacy private IPv4 and public IPv6 backends (CL26 lists both for it).
    expect((await api.post(plain.nodes, { address: "192.168.210.120:80", label: "v4-node" })).status).toBe(200);
    expect((await api.post(plain.nodes, { address: V6, label: "v6-node" })).status).toBe(200);
  });
});
