/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// NodeBalancers in VPCs, premium types and reserved addresses over HTTP, against what
// the spec, linodego's recordings and Akamai's changelog say and, where nothing is recorded, the
// emulator's stated guesses (src/emulator/nodebalancers/vpcs.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { deserializeState, serializeState } from "../../src/emulator/store.ts";
import { client, fields, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
beforeAll(async () => { emu = await start({ rateLimits: false }); api = client(emu); });
afterAll(async () => { await emu.close(); });

let seq = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${String(++seq)}`;

/** A VPC with one subnet 192.168.0.0/24 in `region`: its subnet id. */
async function subnet(region = "nl-ams", ipv4 = "192.168.0.0/24"): Promise<number> {
  const res = await api.post("/vpcs", { label: uniq("vpc"), region, subnets: [{ label: "s1", ipv4 }] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.subnets[0].id as number;
}

const nbBody = (over: Record<string, unknown> = {}) => ({ region: "nl-ams", label: uniq("nb"), ...over });

describe("NodeBalancer types, VPCs and reserved addresses", () => {
  it("a premium NodeBalancer with frontend and backend VPCs answers as recorded: frontend address from the range, backend /30 picked, hostname empty", async () => {
    const back = await subnet();
    const front = await subnet();
    const res = await api.post("/nodebalancers", nbBody({ type: "premium", client_conn_throttle: 20, tags: null, backend_vpcs: [{ subnet_id: back }], frontend_vpcs: [{ ipv4_range: "192.168.0.0/25", subnet_id: front }] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ type: "premium", backend_connectivity: "vpc", ipv4: "192.168.0.2", frontend_address_type: "vpc", frontend_vpc_subnet_id: front, hostname: "", client_udp_sess_throttle: 0, lke_cluster: null, tags: [], locks: [] });
    const vpcs = await api.get(`/nodebalancers/${String(res.body.id)}/vpcs`);
    expect(vpcs.body.results).toBe(2);
    expect(vpcs.body.data).toEqual([
      expect.objectContaining({ nodebalancer_id: res.body.id, subnet_id: front, ipv4_range: "192.168.0.2/32", purpose: "frontend" }),
      expect.objectContaining({ nodebalancer_id: res.body.id, subnet_id: back, ipv4_range: "192.168.0.4/30", purpose: "backend" }),
    ]);
    const one = await api.get(`/nodebalancers/${String(res.body.id)}/vpcs/${String(vpcs.body.data[1].id)}`);
    expect(one.body).toEqual(vpcs.body.data[1]);
  });

  it("a common NodeBalancer with a backend VPC only: type common, a public frontend, the given range kept; the deprecated `vpcs` name is taken too", async () => {
    const s = await subnet("au-mel");
    const res = await api.post("/nodebalancers", nbBody({ region: "au-mel", backend_vpcs: [{ ipv4_range: "192.168.0.64/30", subnet_id: s }] }));
    expect(res.body).toMatchObject({ type: "common", backend_connectivity: "vpc", frontend_address_type: "public", frontend_vpc_subnet_id: null });
    expect(res.body.hostname).toMatch(/\.ip\.linodeusercontent\.com$/);
    const vpcs = await api.get(`/nodebalancers/${String(res.body.id)}/vpcs`);
    expect(vpcs.body.data).toEqual([expect.objectContaining({ subnet_id: s, ipv4_range: "192.168.0.64/30", ipv6_range: null, purpose: "backend" })]);
    const old = await api.post("/nodebalancers", nbBody({ type: "premium", vpcs: [{ subnet_id: await subnet() }] }));
    expect(old.status).toBe(200);
    expect(old.body.backend_connectivity).toBe("vpc");
  });

  it("refuses what the API refuses, with the recorded texts where there are any", async () => {
    const s = await subnet();
    const common = await api.post("/nodebalancers", nbBody({ type: "common", frontend_vpcs: [{ subnet_id: s }] }));
    expect(common.status).toBe(400);
    expect(common.body).toEqual({ errors: [{ reason: "NodeBalancer with frontend VPC IP must be premium" }] });
    const v6 = await api.post("/nodebalancers", nbBody({ type: "premium", frontend_vpcs: [{ ipv6_range: "/62", subnet_id: s }] }));
    expect(v6.body).toEqual({ errors: [{ reason: "No IPv6 subnets available in VPC.", field: "frontend_vpcs[0].ipv6_range" }] });
    expect(fields(await api.post("/nodebalancers", nbBody({ region: "us-east", backend_vpcs: [{ subnet_id: s }] })))).toEqual(["backend_vpcs[0].subnet_id"]);
    expect(fields(await api.post("/nodebalancers", nbBody({ backend_vpcs: [{ subnet_id: 999_999_999 }] })))).toEqual(["backend_vpcs[0].subnet_id"]);
    expect(fields(await api.post("/nodebalancers", nbBody({ vpcs: [{ subnet_id: s, ipv4_range: "10.0.0.0/30" }] })))).toEqual(["vpcs[0].ipv4_range"]);
    expect(fields(await api.post("/nodebalancers", nbBody({ type: "basic" })))).toEqual(["type"]);
    const before = (await api.get("/nodebalancers")).body.results as number;
    expect((await api.get("/nodebalancers")).body.results).toBe(before);
  });

  it("premium_40gb is a type; /nodebalancers/types lists the recorded plans", async () => {
    const res = await api.post("/nodebalancers", nbBody({ region: "us-iad", type: "premium_40gb" }));
    expect(res.body.type).toBe("premium_40gb");
    const types = await api.get("/nodebalancers/types");
    expect((types.body.data as { id: string }[]).map((t) => t.id)).toEqual(["nodebalancer", "nodebalancer-pr100"]);
  });

  it("VPC nodes: subnet_id on create, update and rebuild, vpc_config_id in the answer; the address must be inside the backend subnet", async () => {
    const s = await subnet("us-east", "10.0.4.0/24");
    const other = await subnet("us-east", "10.0.5.0/24");
    const nb = await api.post("/nodebalancers", nbBody({ region: "us-east", vpcs: [{ subnet_id: s }] }));
    const id = String(nb.body.id);
    const backend = (await api.get(`/nodebalancers/${id}/vpcs`)).body.data[0].id as number;
    const cfg = String((await api.post(`/nodebalancers/${id}/configs`, { port: 80, protocol: "tcp" })).body.id);
    const nodes = `/nodebalancers/${id}/configs/${cfg}/nodes`;
    const made = await api.post(nodes, { address: "10.0.4.10:8080", label: "vpc-node", weight: 10, mode: "accept", subnet_id: s });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.vpc_config_id).toBe(backend);
    expect(fields(await api.post(nodes, { address: "10.0.9.10:8080", label: "outside", subnet_id: s }))).toEqual(["address"]);
    expect(fields(await api.post(nodes, { address: "10.0.5.10:8080", label: "foreign", subnet_id: other }))).toEqual(["subnet_id"]);
    expect(fields(await api.post(nodes, { address: "10.0.4.11:8080", label: "nosubnet" }))).toEqual(["subnet_id"]);
    const updated = await api.put(`${nodes}/${String(made.body.id)}`, { address: "10.0.4.12:8080", label: "updated", subnet_id: s });
    expect(updated.body).toMatchObject({ address: "10.0.4.12:8080", vpc_config_id: backend });
    const rebuilt = await api.post(`/nodebalancers/${id}/configs/${cfg}/rebuild`, { port: 80, protocol: "tcp", nodes: [{ id: made.body.id, address: "10.0.4.12:8080", label: "updated", subnet_id: s }, { address: "10.0.4.13:80", label: "second", subnet_id: s }] });
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200);
    const listed = (await api.get(nodes)).body.data as { vpc_config_id: number }[];
    expect(listed.map((n) => n.vpc_config_id)).toEqual([backend, backend]);
    expect(fields(await api.post(`/nodebalancers/${id}/configs/${cfg}/rebuild`, { nodes: [{ address: "10.0.4.12:8080", label: "updated" }] }))).toEqual(["nodes[0].subnet_id"]);
  });

  it("premium takes no legacy private IPv4 backend; a common NodeBalancer without a VPC takes no subnet_id", async () => {
    const premium = await api.post("/nodebalancers", nbBody({ type: "premium" }));
    const cfg = String((await api.post(`/nodebalancers/${String(premium.body.id)}/configs`, { port: 80 })).body.id);
    expect(fields(await api.post(`/nodebalancers/${String(premium.body.id)}/configs/${cfg}/nodes`, { address: "192.168.210.120:80", label: "legacy" }))).toEqual(["address"]);
    const common = await api.post("/nodebalancers", nbBody({ region: "us-east" }));
    const c2 = String((await api.post(`/nodebalancers/${String(common.body.id)}/configs`, { port: 80 })).body.id);
    expect(fields(await api.post(`/nodebalancers/${String(common.body.id)}/configs/${c2}/nodes`, { address: "10.0.4.10:80", label: "vpc", subnet_id: await subnet("us-east", "10.0.4.0/24") }))).toEqual(["subnet_id"]);
    expect((await api.post(`/nodebalancers/${String(common.body.id)}/configs/${c2}/nodes`, { address: "192.168.210.120:80", label: "legacy" })).status).toBe(200);
  });

  it("node limits per config: 1,000 on common, 2,000 on premium", async () => {
    const many = (n: number, subnetId?: number) => Array.from({ length: n }, (_, i) => ({ address: `10.1.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}:80`, label: `n-${String(i)}`, ...(subnetId !== undefined ? { subnet_id: subnetId } : {}) }));
    expect(fields(await api.post("/nodebalancers", nbBody({ region: "us-east", configs: [{ port: 80, nodes: many(1001) }] })))).toEqual(["configs[0].nodes"]);
    expect((await api.post("/nodebalancers", nbBody({ region: "us-east", configs: [{ port: 80, nodes: many(1000) }] }))).status).toBe(200);
    const s = await subnet("us-east", "10.1.0.0/16");
    expect((await api.post("/nodebalancers", nbBody({ region: "us-east", type: "premium", vpcs: [{ subnet_id: s }], configs: [{ port: 80, nodes: many(1001, s) }] }))).status).toBe(200);
  });

  it("ipv4: a free reserved address of the account in the region is taken and echoed; one held, foreign or not reserved is refused; it stays reserved after the NodeBalancer goes", async () => {
    const reserved = await api.post("/networking/reserved/ips", { region: "us-east" });
    expect(reserved.status).toBe(200);
    const address = reserved.body.address as string;
    expect(fields(await api.post("/nodebalancers", nbBody({ region: "us-west", ipv4: address })))).toEqual(["ipv4"]);
    expect(fields(await api.post("/nodebalancers", nbBody({ region: "us-east", ipv4: "203.0.113.250" })))).toEqual(["ipv4"]);
    const nb = await api.post("/nodebalancers", nbBody({ region: "us-east", ipv4: address }));
    expect(nb.body.ipv4).toBe(address);
    expect((await api.get(`/networking/reserved/ips/${address}`)).body.assigned_entity).toMatchObject({ id: nb.body.id, type: "nodebalancer" });
    expect(fields(await api.post("/nodebalancers", nbBody({ region: "us-east", ipv4: address })))).toEqual(["ipv4"]);
    await api.del(`/nodebalancers/${String(nb.body.id)}`);
    const again = await api.post("/nodebalancers", nbBody({ region: "us-east", ipv4: address }));
    expect(again.body.ipv4).toBe(address);
  });

  it("a VPC a NodeBalancer uses cannot be deleted; VPCs and reserved addresses survive the state file", async () => {
    const vpc = await api.post("/vpcs", { label: uniq("vpc"), region: "us-east", subnets: [{ label: "s", ipv4: "10.9.0.0/24" }] });
    await api.post("/nodebalancers", nbBody({ region: "us-east", vpcs: [{ subnet_id: vpc.body.subnets[0].id }] }));
    expect((await api.del(`/vpcs/${String(vpc.body.id)}`)).status).toBe(400);
    const state = deserializeState(JSON.parse(JSON.stringify(emu.dump())) as ReturnType<typeof serializeState>, "legacy");
    expect(state.vpcs.get(vpc.body.id as number)?.subnets[0]?.ipv4).toBe("10.9.0.0/24");
    expect(state.reservedIps.size).toBe(emu.context.state.reservedIps.size);
  });
});
