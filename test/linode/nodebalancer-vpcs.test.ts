// The client reads the NodeBalancer shapes of 2025-2026 as recorded against the real API
// (the spec's and linodego's texts, quoted verbatim below), and sends the new create and
// node fields as the API takes them (over HTTP to the emulator).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { camelize } from "../../src/linode/case.ts";
import { nodeBalancerNodeSchema, nodeBalancerSchema, nodeBalancerVpcConfigListSchema } from "../../src/linode/schemas/nodebalancers.ts";
import { makeClient, startTestEmulator, TOKEN, type Emulator, type TestClient } from "./helpers.ts";

const base = { label: "go-test-def", region: "nl-ams", client_conn_throttle: 20, created: "2026-07-17T10:00:00", updated: "2026-07-17T10:00:00" };

describe("recorded NodeBalancer shapes of 2025-2026", () => {
  it("FB …WithFrontendAndBackendInDifferentVPCs: the NodeBalancer and its VPC configs of both purposes", () => {
    const nb = camelize(nodeBalancerSchema.parse({ ...base, id: 2426974, type: "premium", backend_connectivity: "vpc", ipv4: "192.168.0.2", ipv6: "1234::5678",
      frontend_address_type: "vpc", frontend_vpc_subnet_id: 852974, client_udp_sess_throttle: 0, lke_cluster: null, tags: [], locks: [],
      transfer: { in: null, out: null, total: null }, hostname: "" }));
    expect(nb).toMatchObject({ type: "premium", backendConnectivity: "vpc", frontendAddressType: "vpc", frontendVpcSubnetId: 852974, ipv4: "192.168.0.2", hostname: "", locks: [] });
    const vpcs = camelize(nodeBalancerVpcConfigListSchema.parse({ data: [
      { id: 175370, nodebalancer_id: 2426974, vpc_id: 607769, subnet_id: 852974, ipv4_range: "192.168.0.2/32", ipv6_range: "1234::5678/64", purpose: "frontend" },
      { id: 175371, vpc_id: 607768, subnet_id: 852973, ipv4_range: "192.168.0.4/30", ipv6_range: "1234::5678/64", purpose: "backend" },
    ], page: 1, pages: 1, results: 2 }));
    expect(vpcs.data.map((v) => [v.id, v.subnetId, v.ipv4Range, v.purpose])).toEqual([[175370, 852974, "192.168.0.2/32", "frontend"], [175371, 852973, "192.168.0.4/30", "backend"]]);
  });

  it("F (main, 2026-07): a backend-only VPC config without purpose or ipv6_range reads as a backend", () => {
    const vpcs = nodeBalancerVpcConfigListSchema.parse({ data: [{ id: 14474, nodebalancer_id: 1774407, vpc_id: 5, subnet_id: 241169, ipv4_range: "10.100.5.0/30" }], page: 1, pages: 1, results: 1 });
    expect(vpcs.data[0]).toMatchObject({ purpose: "backend", subnet_id: 241169 });
    const common = nodeBalancerSchema.parse({ ...base, id: 1, type: "common", backend_connectivity: "vpc", frontend_address_type: "public", frontend_vpc_subnet_id: null, transfer: null });
    expect(common).toMatchObject({ type: "common", frontend_address_type: "public", frontend_vpc_subnet_id: null });
  });

  it("F:TestNodeBalancerNode_Create_InVPC: a VPC node's vpc_config_id and the \"Unknown\" status", () => {
    const node = camelize(nodeBalancerNodeSchema.parse({ id: 2114163562, address: "192.168.0.2:8080", label: "go-node-test-def", status: "Unknown", weight: 10, mode: "accept", config_id: 2706119, nodebalancer_id: 1774407, vpc_config_id: 14474 }));
    expect(node).toMatchObject({ vpcConfigId: 14474, status: "unknown" });
  });
});

describe("the new create and node fields over HTTP", () => {
  let emu: Emulator;
  let c: TestClient;
  beforeAll(async () => { emu = await startTestEmulator({ rateLimits: false }); c = makeClient(emu); });
  afterAll(async () => { await c.client.close(); await emu.close(); });

  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${emu.url}${path}`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    return (await res.json()) as Record<string, unknown>;
  };

  it("type, vpcs, frontendVpcs, ipv4 and a node's subnetId; the VPC configs listed; VPCs listed with their subnets", async () => {
    const vpc = await post("/vpcs", { label: "client-vpc", region: "nl-ams", subnets: [{ label: "back", ipv4: "10.0.0.0/24" }, { label: "front", ipv4: "10.0.1.0/24" }] });
    const [back, front] = (vpc.subnets as { id: number }[]).map((s) => s.id);
    const nb = await c.client.nodeBalancers.create({
      region: "nl-ams", label: "client-premium", type: "premium", vpcs: [{ subnetId: back ?? 0 }], frontendVpcs: [{ subnetId: front ?? 0, ipv4Range: "10.0.1.0/28" }],
      configs: [{ port: 80, protocol: "tcp", nodes: [{ address: "10.0.0.10:30080", label: "node-a", subnetId: back ?? 0 }] }],
    });
    expect(nb).toMatchObject({ type: "premium", backendConnectivity: "vpc", frontendAddressType: "vpc", frontendVpcSubnetId: front, ipv4: "10.0.1.2" });
    const configs = await c.client.nodeBalancers.listAllVpcConfigs(nb.id);
    expect(configs.map((v) => [v.subnetId, v.purpose])).toEqual([[front, "frontend"], [back, "backend"]]);
    const cfg = (await c.client.nodeBalancers.listAllConfigs(nb.id))[0];
    const nodes = await c.client.nodeBalancers.listAllNodes(nb.id, cfg?.id ?? 0);
    expect(nodes.map((n) => n.vpcConfigId)).toEqual([configs.find((v) => v.purpose === "backend")?.id]);
    expect(await c.client.nodeBalancers.getVpcConfig(nb.id, configs[0]?.id ?? 0)).toEqual(configs[0]);
    const vpcs = await c.client.vpcs.listAll();
    expect(vpcs.find((v) => v.label === "client-vpc")?.subnets.map((s) => [s.label, s.ipv4])).toEqual([["back", "10.0.0.0/24"], ["front", "10.0.1.0/24"]]);
    const reserved = await post("/networking/reserved/ips", { region: "nl-ams" });
    const kept = await c.client.nodeBalancers.create({ region: "nl-ams", label: "client-reserved", ipv4: reserved.address as string });
    expect(kept.ipv4).toBe(reserved.address);
  });
});
