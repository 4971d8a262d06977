// The kinds' late-initialization mappings (cloud object → spec fields) with the runtime's plan:
// what an adoption writes makes a spec the object already matches (nothing to send after it),
// and what the spec cannot hold is refused naming the field. The runtime's stage itself is in
// reconciler-table.test.ts; the whole on a real API server in adoption-late-init.test.ts.
import { describe, expect, it } from "vitest";
import { camelize, type Database, type NodeBalancer } from "../../src/linode/index.ts";
import { databaseSchema } from "../../src/linode/schemas/databases.ts";
import { diffDatabase, immutableMismatches, isEmptyDiff } from "../../src/resources/managed-database/diff.ts";
import { databaseAsSpec } from "../../src/resources/managed-database/late-init.ts";
import { managedDatabaseSpecSchema } from "../../src/resources/managed-database/schema.ts";
import { isEmptyPlan, planNodeBalancer, type ObservedConfig, type ObservedNodeBalancer } from "../../src/resources/node-balancer/diff.ts";
import { nodeBalancerAsSpec } from "../../src/resources/node-balancer/late-init.ts";
import { nodeBalancerSpecSchema } from "../../src/resources/node-balancer/schema.ts";
import { planLateInit } from "../../src/runtime/late-init.ts";
import type { AnyManagedKind } from "../../src/runtime/managed.ts";

const nb: NodeBalancer = {
  id: 1, label: "theirs", region: "us-east", hostname: "h", ipv4: "203.0.113.1", ipv6: null, clientConnThrottle: 7, tags: ["b", "a"],
  transfer: { in: null, out: null, total: null }, created: "", updated: "",
};

function config(port: number, protocol: string, nodes: [address: string, label: string, weight: number, mode: string][], more: Partial<ObservedConfig> = {}): ObservedConfig {
  return {
    id: port * 10, nodebalancerId: 1, port, protocol, algorithm: "leastconn", stickiness: "table", check: "http", checkPath: "/healthz",
    checkInterval: 10, checkTimeout: 5, checkAttempts: 2, checkBody: "", checkPassive: false,
    cipherSuite: "recommended", proxyProtocol: "none", sslCommonname: "", sslFingerprint: "", sslCert: null, sslKey: null,
    nodesStatus: { up: nodes.length, down: 0 }, udpCheckPort: 80, udpSessionTimeout: 16,
    nodes: nodes.map(([address, label, weight, mode], i) => ({ id: port * 100 + i, address, label, weight, mode, status: "UP", configId: port * 10, nodebalancerId: 1 })),
    ...more,
  };
}
const observed = (configs: ObservedConfig[]): ObservedNodeBalancer => ({ nb, configs, firewalls: [], vpcs: [] });
const nodeBalancerKind = { parseSpec: (raw: unknown) => nodeBalancerSpecSchema.parse(raw), lateInit: nodeBalancerAsSpec } as unknown as AnyManagedKind;

const database = (more: Record<string, unknown>): Database => camelize(databaseSchema.parse({
  id: 9, label: "theirs", engine: "mysql", version: "8.0.35", region: "us-east", type: "g6-dedicated-2", status: "active",
  cluster_size: 3, encrypted: true, ssl_connection: true, allow_list: ["198.51.100.0/24", "203.0.113.9/32"], hosts: { primary: "p", secondary: null },
  port: 3306, created: "2021-01-01T00:00:00", updated: "2021-01-01T00:00:00", updates: null, ...more,
}));
const databaseKind = { parseSpec: (raw: unknown) => managedDatabaseSpecSchema.parse(raw), lateInit: databaseAsSpec } as unknown as AnyManagedKind;
const short = { engine: "mysql", version: "8", region: "us-east", type: "g6-dedicated-2", databaseId: 9 };

describe("NodeBalancer: nodeBalancerAsSpec", () => {
  it("its configs and nodes, throttle and tags: the spec they make matches it, nothing to send", () => {
    const o = observed([config(80, "http", [["192.168.1.1:80", "web-1", 50, "accept"], ["192.168.1.2:80", "web-2", 10, "backup"]]), config(9000, "tcp", [["10.0.0.5:9000", "q-1", 100, "drain"]], { check: "none", checkPath: "" })]);
    const plan = planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1 }, o);
    expect(plan.refused).toBeUndefined();
    expect(Object.keys(plan.fields ?? {}).sort()).toEqual(["clientConnThrottle", "configs", "tags"]);
    const spec = nodeBalancerSpecSchema.parse({ region: "us-east", nodeBalancerId: 1, ...plan.fields });
    const after = planNodeBalancer(spec, undefined, o, new Map());
    expect(after.summary).toBe("");
    expect(isEmptyPlan(after)).toBe(true);
  });

  it("an https config (its certificate only Linode holds) and a config without nodes: refused, naming each", () => {
    const plan = planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1 }, observed([config(443, "https", [["192.168.1.1:443", "web-1", 50, "accept"]]), config(81, "http", [])]));
    expect(plan.refused).toHaveLength(1);
    expect(plan.refused?.[0]).toMatch(/^spec\.configs: config 443 serves https .*; config 81 has no nodes/);
  });

  it("a udp config beside a tcp one on its port, and the udp session throttle: written with udp's own fields, nothing to send", () => {
    const udp = config(53, "udp", [["192.168.1.1:53", "dns-1", 50, "none"]], { algorithm: "ring_hash", stickiness: "session", check: "connection", checkPassive: false, cipherSuite: "none", udpCheckPort: 8053 });
    const tcp = config(53, "tcp", [["192.168.1.1:53", "dns-1", 50, "accept"]], { id: 531, stickiness: "none", checkPassive: true });
    const o: ObservedNodeBalancer = { ...observed([tcp, udp]), nb: { ...nb, clientUdpSessThrottle: 4 } };
    const plan = planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1 }, o);
    expect(plan.refused).toBeUndefined();
    expect(plan.fields).toMatchObject({
      clientUdpSessThrottle: 4,
      configs: [
        expect.objectContaining({ port: 53, protocol: "tcp", nodes: [{ label: "dns-1", address: "192.168.1.1:53", weight: 50, mode: "accept" }] }),
        expect.objectContaining({ port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "session", checkPassive: false, udpCheckPort: 8053, nodes: [{ label: "dns-1", address: "192.168.1.1:53", weight: 50 }] }),
      ],
    });
    const spec = nodeBalancerSpecSchema.parse({ region: "us-east", nodeBalancerId: 1, ...plan.fields });
    const after = planNodeBalancer(spec, undefined, o, new Map());
    expect(after.summary).toBe("");
    expect(isEmptyPlan(after)).toBe(true);
    // The check port is compared: another one in the spec is a rebuild of the udp config alone.
    const moved = nodeBalancerSpecSchema.parse({ ...spec, configs: spec.configs.map((c) => (c.protocol === "udp" ? { ...c, udpCheckPort: 53 } : c)) });
    expect(planNodeBalancer(moved, undefined, o, new Map()).summary).toBe("config 53/udp: udpCheckPort");
  });

  it("a VPC config with an IPv6 range, which the spec cannot say: refused, naming it; a spec that says its VPC itself is not", () => {
    const vpc = (purpose: string, subnetId: number, ipv6Range: string | null) => ({ id: subnetId, nodebalancerId: 1, vpcId: 5, subnetId, ipv4Range: "10.0.0.4/30", ipv6Range, purpose });
    const o: ObservedNodeBalancer = { ...observed([config(80, "tcp", [["10.0.0.9:80", "web-1", 50, "accept"]])]), nb: { ...nb, type: "premium" }, vpcs: [vpc("backend", 70, "2600:3c03:e000:1::/64"), vpc("frontend", 71, null)] };
    const plan = planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1 }, o);
    expect(plan.refused).toEqual([expect.stringMatching(/^spec\.vpcs: its backend VPC config \(subnet 70\) has the IPv6 range 2600:3c03:e000:1::\/64, which the spec cannot say/)]);
    expect(planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1, type: "premium", vpcs: [{ subnetId: 70 }] }, o).refused).toBeUndefined();
  });

  it("configs the spec writes are its own: neither refused nor written, the rest is", () => {
    const plan = planLateInit(nodeBalancerKind, { region: "us-east", nodeBalancerId: 1, configs: [] }, observed([config(53, "udp", [["192.168.1.1:53", "dns-1", 50, "accept"]])]));
    expect(plan).toEqual({ fields: { clientConnThrottle: 7, tags: ["b", "a"] } });
  });
});

describe("ManagedDatabase: databaseAsSpec", () => {
  it("a 3-node current-platform cluster with an allow list and a VPC: the spec they make matches it, nothing to send; replication left to the platform", () => {
    const db = database({ platform: "rdbms-default", private_network: { vpc_id: 7, subnet_id: 70, public_access: true }, replication_type: "semi_synch" });
    const plan = planLateInit(databaseKind, short, db);
    expect(plan.fields).toEqual({ clusterSize: 3, encrypted: true, sslConnection: true, allowList: ["198.51.100.0/24", "203.0.113.9/32"], privateNetwork: { vpcId: 7, subnetId: 70, publicAccess: true }, suspended: false });
    const spec = managedDatabaseSpecSchema.parse({ ...short, ...plan.fields });
    expect(isEmptyDiff(diffDatabase(spec, undefined, db))).toBe(true);
    expect(immutableMismatches(spec, db)).toEqual([]);
  });

  it("a legacy-platform cluster: its replication too (PostgreSQL's commit type only there); suspended as it is", () => {
    const pg = database({ engine: "postgresql", version: "16.2", platform: "rdbms-legacy", replication_type: "asynch", replication_commit_type: "local" });
    const plan = planLateInit(databaseKind, { ...short, engine: "postgresql", version: "16" }, pg);
    expect(plan.fields).toMatchObject({ clusterSize: 3, replicationType: "asynch", replicationCommitType: "local" });
    expect(plan.fields).not.toHaveProperty("privateNetwork");
    const mysql = planLateInit(databaseKind, short, database({ platform: "rdbms-legacy", replication_type: "semi_synch", replication_commit_type: "on", status: "suspended" }));
    expect(mysql.fields).toMatchObject({ replicationType: "semi_synch", suspended: true });
    expect(mysql.fields).not.toHaveProperty("replicationCommitType");
  });

  it("what the user wrote is kept: only the unset fields are written", () => {
    const plan = planLateInit(databaseKind, { ...short, allowList: [], clusterSize: 3 }, database({ platform: "rdbms-default" }));
    expect(Object.keys(plan.fields ?? {}).sort()).toEqual(["encrypted", "sslConnection", "suspended"]);
  });
});
