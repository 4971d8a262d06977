// The NodeBalancer plan: the fewest calls for what differs (one rebuild per changed config,
// nodes keyed by address keeping their ids), unset node fields not compared, a certificate
// compared by fingerprint and never put in a summary; and what a TLS Secret must hold.
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateCertificate } from "../../src/emulator/certs.ts";
import type { NodeBalancer } from "../../src/linode/index.ts";
import {
  configBody, firewallToAssign, immutableMismatches, isEmptyPlan, nodeBodies, planFirewalls, planNodeBalancer, premiumOnlyAsks, type AttachedFirewall, type ObservedConfig, type ObservedNodeBalancer,
} from "../../src/resources/node-balancer/diff.ts";
import { planLock } from "../../src/resources/node-balancer/locks.ts";
import { nodeBalancerSpecSchema } from "../../src/resources/node-balancer/schema.ts";
import { readTlsSecret, sameFingerprint } from "../../src/resources/node-balancer/tls.ts";

const cert = generateCertificate({ commonName: "web.example.com" });
const fp = new X509Certificate(cert.certPem).fingerprint;
const tls = new Map([["web-tls", { certPem: cert.certPem, keyPem: cert.keyPem, fingerprint: fp }]]);

const spec = nodeBalancerSpecSchema.parse({
  region: "us-east", tags: ["a", "b"],
  configs: [
    { port: 80, nodes: [{ label: "web-1", address: "192.168.1.1:80" }, { label: "web-2", address: "192.168.1.2:80", weight: 10 }] },
    { port: 443, protocol: "https", tlsSecretRef: { name: "web-tls" }, nodes: [{ label: "web-1", address: "192.168.1.1:443" }] },
  ],
});

const nb: NodeBalancer = {
  id: 1, label: "lb", region: "us-east", hostname: "h", ipv4: "203.0.113.1", ipv6: null, clientConnThrottle: 0, tags: ["b", "a"],
  transfer: { in: null, out: null, total: null }, created: "", updated: "",
};

function cloudConfig(port: number, protocol: string, nodes: [string, string, number, string][], fingerprint = ""): ObservedConfig {
  return {
    id: port * 10, nodebalancerId: 1, port, protocol, algorithm: "roundrobin", stickiness: "none", check: "none",
    checkInterval: 31, checkTimeout: 30, checkAttempts: 3, checkPath: "", checkBody: "", checkPassive: true,
    cipherSuite: "recommended", proxyProtocol: "none", sslCommonname: "", sslFingerprint: fingerprint, sslCert: null, sslKey: null,
    nodesStatus: { up: nodes.length, down: 0 }, udpCheckPort: 80, udpSessionTimeout: 16,
    nodes: nodes.map(([address, label, weight, mode], i) => ({ id: port * 100 + i, address, label, weight, mode, status: "UP", configId: port * 10, nodebalancerId: 1 })),
  };
}

const observed = (configs: ObservedConfig[]): ObservedNodeBalancer => ({ nb, configs, firewalls: [], vpcs: [] });
const matching = (): ObservedConfig[] => [
  cloudConfig(80, "http", [["192.168.1.1:80", "web-1", 50, "accept"], ["192.168.1.2:80", "web-2", 10, "accept"]]),
  cloudConfig(443, "https", [["192.168.1.1:443", "web-1", 50, "accept"]], fp),
];

describe("planNodeBalancer", () => {
  it("nothing to do when the cloud matches (tags in any order; unset weight and mode not compared)", () => {
    const plan = planNodeBalancer(spec, undefined, observed(matching()), tls);
    expect(isEmptyPlan(plan)).toBe(true);
    expect(plan.summary).toBe("");
  });

  it("a changed, an added and a removed node: one rebuild of that config, existing nodes keep their ids", () => {
    const configs = matching();
    configs[0] = cloudConfig(80, "http", [["192.168.1.1:80", "old-label", 50, "accept"], ["192.168.1.9:80", "gone", 50, "accept"]]);
    const plan = planNodeBalancer(spec, undefined, observed(configs), tls);
    expect(plan.rebuild.map((r) => [r.spec.port, r.differs])).toEqual([[80, ["nodes +1 -1 ~1"]]]);
    expect(plan.create).toEqual([]);
    expect(plan.remove).toEqual([]);
    const [first] = plan.rebuild;
    if (first === undefined) throw new Error("no rebuild");
    const body = nodeBodies(first.spec, first.config);
    expect(body).toEqual([{ address: "192.168.1.1:80", label: "web-1", id: 8000 }, { address: "192.168.1.2:80", label: "web-2", weight: 10 }]);
  });

  it("a weight the spec sets is compared; ports are added and removed by number", () => {
    const configs = [cloudConfig(80, "http", [["192.168.1.1:80", "web-1", 50, "accept"], ["192.168.1.2:80", "web-2", 99, "accept"]]), cloudConfig(8080, "tcp", [["192.168.1.3:80", "x-1", 50, "accept"]])];
    const plan = planNodeBalancer(spec, undefined, observed(configs), tls);
    expect(plan.rebuild.map((r) => r.differs)).toEqual([["nodes ~1"]]);
    expect(plan.create.map((c) => c.port)).toEqual([443]);
    expect(plan.remove.map((c) => c.port)).toEqual([8080]);
    expect(plan.summary).toBe("config 80: nodes ~1; add config 443; remove config 8080");
  });

  it("a renewed certificate is found by its fingerprint and never shows in the summary", () => {
    const configs = matching();
    configs[1] = cloudConfig(443, "https", [["192.168.1.1:443", "web-1", 50, "accept"]], "AA:BB");
    const plan = planNodeBalancer(spec, undefined, observed(configs), tls);
    expect(plan.rebuild.map((r) => [r.spec.port, r.differs])).toEqual([[443, ["certificate"]]]);
    expect(plan.summary).not.toContain("BEGIN");
    const https = spec.configs[1];
    if (https === undefined) throw new Error("no https config");
    const body = configBody(https, tls);
    expect(body.sslCert).toBe(cert.certPem);
    expect(body.sslKey).toBe(cert.keyPem);
  });

  it("the NodeBalancer's own fields: one update with what differs", () => {
    const plan = planNodeBalancer({ ...spec, clientConnThrottle: 5, tags: ["a"] }, "new-label", observed(matching()), tls);
    expect(plan.update).toEqual({ label: "new-label", clientConnThrottle: 5, tags: ["a"] });
  });
});

describe("firewalls", () => {
  const fw = (id: number, status = "enabled"): AttachedFirewall => ({ id, label: `fw-${String(id)}`, status });

  it("a first assignment and a removal touch one firewall each; a swap puts the new one in place of this resource's in one replacement, keeping the rest", () => {
    expect(planFirewalls(3, [], [], false)).toEqual({ attach: 3, detach: [], blockedBy: [], managed: [] });
    expect(planFirewalls(undefined, [3], [fw(3)], false)).toEqual({ detach: [3], blockedBy: [], managed: [3] });
    // Someone else's disabled firewall stays in the list the replacement sends.
    const swap = planFirewalls(2, [1], [fw(1), fw(9, "disabled")], false);
    expect(swap).toEqual({ attach: 2, detach: [1], swap: [2, 9], blockedBy: [], managed: [1] });
    expect(planNodeBalancer(spec, undefined, { ...observed(matching()), firewalls: [fw(1), fw(9, "disabled")] }, tls, swap).summary).toBe("replace firewall 1 with 2");
  });

  it("a firewall already assigned when the spec first names it is not this resource's: not recorded, so left assigned when the spec stops naming it", () => {
    const named = planFirewalls(5, [], [fw(5)], false);
    expect(named).toEqual({ detach: [], blockedBy: [], managed: [] });
    expect(isEmptyPlan(planNodeBalancer(spec, undefined, { ...observed(matching()), firewalls: [fw(5)] }, tls, named))).toBe(true);
    const unnamed = planFirewalls(undefined, named.managed, [fw(5)], false);
    expect(unnamed.detach).toEqual([]);
    expect(unnamed.managed).toEqual([]);
  });

  it("a change away from a firewall this resource did not assign is refused (it keeps the one place), never a removal", () => {
    const named = planFirewalls(5, [], [fw(5)], false);
    const away = planFirewalls(6, named.managed, [fw(5)], false);
    expect(away.attach).toBeUndefined();
    expect(away.swap).toBeUndefined();
    expect(away.detach).toEqual([]);
    expect(away.blockedBy).toEqual([fw(5)]);
    // And it is not asked whether the new one may be assigned: the conflict reads the same whatever the spec names.
    expect(firewallToAssign(6, named.managed, [fw(5)])).toBeUndefined();
  });

  it("one the spec names that this resource may not assign is never sent, and the firewall it assigned before stays", () => {
    const plan = planFirewalls(2, [1], [fw(1)], true);
    expect(plan).toEqual({ detach: [], refused: 2, blockedBy: [], managed: [1] });
    expect(planFirewalls(2, [], [], true)).toEqual({ detach: [], refused: 2, blockedBy: [], managed: [] });
  });

  it("is checked only when an assignment would be sent", () => {
    expect(firewallToAssign(undefined, [1], [fw(1)])).toBeUndefined();
    expect(firewallToAssign(1, [1], [fw(1)])).toBeUndefined();
    expect(firewallToAssign(5, [], [fw(5)])).toBeUndefined();
    expect(firewallToAssign(2, [1], [fw(1)])).toBe(2);
    expect(firewallToAssign(2, [], [fw(9, "disabled")])).toBe(2);
    expect(firewallToAssign(2, [], [])).toBe(2);
  });

  it("what this resource recorded and is no longer assigned (removed outside) is not its own any more", () => {
    expect(planFirewalls(undefined, [1, 4], [fw(4)], false)).toEqual({ detach: [4], blockedBy: [], managed: [4] });
  });
});

describe("TLS Secrets", () => {
  const secret = (type: string, data: Record<string, string>) => ({
    metadata: { name: "t" }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  });
  it("takes a kubernetes.io/tls Secret whose key matches its certificate", () => {
    const m = readTlsSecret(secret("kubernetes.io/tls", { "tls.crt": cert.certPem, "tls.key": cert.keyPem }));
    expect(m).toMatchObject({ value: { fingerprint: fp } });
    expect(m.notReady).toBeUndefined();
  });
  it.each([
    ["another type", secret("Opaque", { "tls.crt": cert.certPem, "tls.key": cert.keyPem }), "its type is Opaque"],
    ["no key", secret("kubernetes.io/tls", { "tls.crt": cert.certPem }), "it has no tls.key"],
    ["not a certificate", secret("kubernetes.io/tls", { "tls.crt": "hello", "tls.key": cert.keyPem }), "tls.crt is not a PEM certificate"],
    ["another certificate's key", secret("kubernetes.io/tls", { "tls.crt": cert.certPem, "tls.key": generateCertificate({ commonName: "x" }).keyPem }), "does not match"],
  ])("refuses %s, saying why and never what it holds", (_name, s, why) => {
    const m = readTlsSecret(s);
    expect(m).toHaveProperty("notReady");
    const text = JSON.stringify(m);
    expect(text).toContain(why);
    expect(text).not.toContain("PRIVATE KEY");
  });
  it("compares fingerprints whatever their separators and case", () => {
    expect(sameFingerprint("AA:BB:CC", "aabbcc")).toBe(true);
    expect(sameFingerprint("", "")).toBe(false);
    expect(sameFingerprint("AA:BB", "AA:BC")).toBe(false);
  });
});

describe("udp configs", () => {
  const udpSpec = nodeBalancerSpecSchema.parse({
    region: "us-east", tags: ["a", "b"], clientUdpSessThrottle: 3,
    configs: [
      { port: 53, protocol: "tcp", nodes: [{ label: "dns-1", address: "192.168.1.1:53" }] },
      // A drain mode (as nodesFrom gives a cordoned node) is not compared on udp: the API gives its nodes none.
      { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", nodes: [{ label: "dns-1", address: "192.168.1.1:53", mode: "drain" }] },
    ],
  });
  const udpCloud = (over: Partial<ObservedConfig> = {}): ObservedConfig => ({
    ...cloudConfig(53, "udp", [["192.168.1.1:53", "dns-1", 50, "none"]]), id: 531, algorithm: "ring_hash", stickiness: "source_ip", checkPassive: false, cipherSuite: "none", ...over,
  });

  it("a udp and a tcp config on one port are two configs; udp's body carries its own fields, no mode, no cipher suite", () => {
    const o = { ...observed([cloudConfig(53, "tcp", [["192.168.1.1:53", "dns-1", 50, "accept"]]), udpCloud()]), nb: { ...nb, clientUdpSessThrottle: 3 } };
    expect(planNodeBalancer(udpSpec, undefined, o, tls).summary).toBe("");
    const udp = udpSpec.configs[1];
    if (udp === undefined) throw new Error("no udp config");
    expect(configBody(udp, tls)).toEqual({
      port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", check: "none", checkInterval: 31, checkTimeout: 30, checkAttempts: 3,
      checkPath: "", checkBody: "", checkPassive: false, proxyProtocol: "none",
    });
    expect(nodeBodies(udp)).toEqual([{ address: "192.168.1.1:53", label: "dns-1" }]);
    expect(configBody({ ...udp, udpCheckPort: 5353 }, tls).udpCheckPort).toBe(5353);
  });

  it("the session throttle is compared where the API reports it; a tcp config turned udp is removed and created, the udp one left alone", () => {
    const o = { ...observed([cloudConfig(53, "tcp", [["192.168.1.1:53", "dns-1", 50, "accept"]]), udpCloud()]), nb: { ...nb, clientUdpSessThrottle: 0 } };
    const onlyUdp = nodeBalancerSpecSchema.parse({ ...udpSpec, configs: [udpSpec.configs[1]] });
    const plan = planNodeBalancer(onlyUdp, undefined, o, tls);
    expect(plan.update).toEqual({ clientUdpSessThrottle: 3 });
    expect(plan.remove.map((c) => [c.port, c.protocol])).toEqual([[53, "tcp"]]);
    expect(plan.summary).toBe("clientUdpSessThrottle 0 → 3; remove config 53");
    // An account whose NodeBalancers do not report it: never compared, never sent.
    expect(planNodeBalancer(onlyUdp, undefined, { ...o, nb }, tls).update).toBeUndefined();
  });

  it("a new udp config is premium-only (CL26): asked of a common NodeBalancer (or one whose type is not reported) it is named; one the NodeBalancer has, or any on premium, is not", () => {
    const tcpOnly = observed([cloudConfig(53, "tcp", [["192.168.1.1:53", "dns-1", 50, "accept"]])]);
    const plan = planNodeBalancer(udpSpec, undefined, tcpOnly, tls);
    expect(premiumOnlyAsks({ type: "common" }, plan)).toEqual(["add config 53/udp (a new udp config)"]);
    expect(premiumOnlyAsks({}, plan)).toEqual(["add config 53/udp (a new udp config)"]);
    expect(premiumOnlyAsks({ type: "premium" }, plan)).toEqual([]);
    expect(premiumOnlyAsks({ type: "premium_40gb" }, plan)).toEqual([]);
    // The udp config it has, changed: a rebuild, which the API takes on common too.
    const had = planNodeBalancer(udpSpec, undefined, observed([cloudConfig(53, "tcp", [["192.168.1.1:53", "dns-1", 50, "accept"]]), udpCloud({ algorithm: "leastconn" })]), tls);
    expect(had.rebuild.map((r) => r.spec.protocol)).toEqual(["udp"]);
    expect(premiumOnlyAsks({ type: "common" }, had)).toEqual([]);
  });
});

describe("planLock", () => {
  it("makes a lock only when the NodeBalancer has none; removes only its own, only when protection is off", () => {
    expect(planLock(true, [], undefined)).toEqual({ make: true });
    expect(planLock(true, ["cannot_delete_with_subresources"], undefined)).toEqual({ make: false });
    expect(planLock(true, ["cannot_delete"], 7)).toEqual({ make: false });
    expect(planLock(false, ["cannot_delete"], undefined)).toEqual({ make: false });
    expect(planLock(false, ["cannot_delete"], 7)).toEqual({ make: false, remove: 7 });
    const plan = planNodeBalancer(spec, undefined, observed(matching()), tls, undefined, planLock(true, [], undefined));
    expect(isEmptyPlan(plan)).toBe(false);
    expect(plan.summary).toBe("lock against deletion (spec.deletionProtection)");
  });
});

describe("IPv6 nodes", () => {
  it("an IPv6 address the API spells otherwise is the same node: no rebuild; a rebuild keeps its id", () => {
    const v6 = nodeBalancerSpecSchema.parse({ region: "us-east", type: "premium", tags: ["a", "b"], configs: [{ port: 80, nodes: [{ label: "v6-1", address: "[2600:3c03::1]:80" }, { label: "v6-2", address: "[2600:3c03::2]:80" }] }] });
    const cloud = cloudConfig(80, "http", [["[2600:3C03:0:0::1]:80", "v6-1", 50, "accept"], ["[2600:3c03::2]:80", "v6-2", 50, "accept"]]);
    expect(planNodeBalancer(v6, undefined, { ...observed([cloud]), nb: { ...nb, type: "premium" } }, new Map()).summary).toBe("");
    const renamed = { ...cloud, nodes: cloud.nodes.map((n, i) => (i === 1 ? { ...n, label: "old" } : n)) };
    const plan = planNodeBalancer(v6, undefined, { ...observed([renamed]), nb: { ...nb, type: "premium" } }, new Map());
    expect(plan.rebuild.map((r) => r.differs)).toEqual([["nodes ~1"]]);
    const r = plan.rebuild[0];
    expect(r && nodeBodies(r.spec, r.config).map((n) => [n.address, n.id])).toEqual([["[2600:3c03::1]:80", 8000], ["[2600:3c03::2]:80", 8001]]);
  });
});

describe("VPC nodes and create-only fields", () => {
  const vpcSpec = nodeBalancerSpecSchema.parse({
    region: "us-east", tags: ["a", "b"], type: "premium", vpcs: [{ subnetId: 7, ipv4Range: "10.0.0.0/28" }],
    configs: [{ port: 80, nodes: [{ label: "web-1", address: "10.0.0.20:80", subnetId: 7 }] }],
  });
  const backend = { id: 70, nodebalancerId: 1, vpcId: 5, subnetId: 7, ipv4Range: "10.0.0.4/30", ipv6Range: null, purpose: "backend" };
  const withSubnet = (subnetId?: number): ObservedNodeBalancer => {
    const c = cloudConfig(80, "http", [["10.0.0.20:80", "web-1", 50, "accept"]]);
    return { nb: { ...nb, type: "premium" }, configs: [{ ...c, nodes: c.nodes.map((n) => (subnetId !== undefined ? { ...n, vpcConfigId: 70, subnetId } : n)) }], firewalls: [], vpcs: [backend] };
  };
  const found = { backend: { id: 7, vpcId: 5, region: "us-east", range: "10.0.0.0/24" }, problems: [] };

  it("a node whose subnet differs (or that has none) is rebuilt, sent with its subnet; the same subnet is no change", () => {
    expect(isEmptyPlan(planNodeBalancer(vpcSpec, undefined, withSubnet(7), new Map()))).toBe(true);
    const plan = planNodeBalancer(vpcSpec, undefined, withSubnet(undefined), new Map());
    expect(plan.rebuild.map((r) => r.differs)).toEqual([["nodes ~1"]]);
    const r = plan.rebuild[0];
    expect(r && nodeBodies(r.spec, r.config)).toEqual([{ address: "10.0.0.20:80", label: "web-1", subnetId: 7, id: 8000 }]);
  });

  it("type, VPCs and the reserved address are compared (the cloud's range inside the spec's), each named; not where nothing was looked up (Observe)", () => {
    expect(immutableMismatches(vpcSpec, withSubnet(7), found)).toEqual([]);
    const common = { ...withSubnet(7), nb: { ...nb, type: "common", ipv4: "203.0.113.1" }, vpcs: [] };
    expect(immutableMismatches({ ...vpcSpec, ipv4: "203.0.113.9" }, common, found)).toEqual([
      "type (spec premium, NodeBalancer common)", "vpcs (spec subnet 7 10.0.0.0/28, NodeBalancer none)", "ipv4 (spec 203.0.113.9, NodeBalancer 203.0.113.1)",
    ]);
    expect(immutableMismatches({ ...vpcSpec, vpcs: [{ subnetId: 7, ipv4Range: "10.0.0.64/28" }] }, withSubnet(7), found)).toEqual(["vpcs (spec subnet 7 10.0.0.64/28, NodeBalancer subnet 7 (10.0.0.4/30))"]);
    expect(immutableMismatches({ ...vpcSpec, vpcs: undefined }, withSubnet(7), { problems: [] })).toEqual(["vpcs (spec none, NodeBalancer subnet 7 (10.0.0.4/30))"]);
    expect(immutableMismatches({ ...vpcSpec, ipv4: "203.0.113.9" }, common)).toEqual([]);
  });
});
