// NodeBalancer CRD on the real API server: every limit, enum and cross-field rule of the
// spec (ports keyed and unique, checkTimeout < checkInterval, TLS only and always for https,
// private IPv4 backends with a port), defaults as the API's, immutable region (the firewall may change).
import { beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerSpecSchema } from "../../../src/resources/node-balancer/schema.ts";
import { useTestCluster } from "../../harness/cluster.ts";
import { installCrds } from "../../harness/crds.ts";
import { customObjects, nodeBalancer as kind, withSpec } from "./custom-objects.ts";

const node = { label: "web-1", address: "192.168.210.120:80" };
const config = { port: 80, nodes: [node] };
const base = { region: "us-east", configs: [config] };
/** The base spec with the one config's fields patched. */
const cfg = (patch: Record<string, unknown>) => ({ configs: [withSpec(config, patch)] });
/** The base spec with the one node's fields patched. */
const nd = (patch: Record<string, unknown>) => cfg({ nodes: [withSpec(node, patch)] });

describe("NodeBalancer CRD", () => {
  const cluster = useTestCluster("crds-nb");
  const api = customObjects(cluster);
  let n = 0;
  const dryRun = (spec: Record<string, unknown>) => api.create(kind, `dry-${String(n++)}`, spec, { dryRun: true });

  beforeAll(async () => { await installCrds(cluster); });

  describe("rejects a bad spec with a clear message", () => {
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["missing region", { region: undefined }, ["spec.region: Required value"]],
      ["label shorter than 3", { label: "nb" }, ["spec.label in body should be at least 3 chars long"]],
      ["label longer than 32", { label: "n".repeat(33) }, ["spec.label", "32"]],
      ["label with a dot", { label: "web.lb" }, ["spec.label in body should match '^[a-zA-Z0-9_-]+$'"]],
      ["clientConnThrottle 21", { clientConnThrottle: 21 }, ["spec.clientConnThrottle", "less than or equal to 20"]],
      ["clientConnThrottle -1", { clientConnThrottle: -1 }, ["spec.clientConnThrottle", "greater than or equal to 0"]],
      ["firewallId 0", { firewallId: 0 }, ["spec.firewallId", "greater than or equal to 1"]],
      ["duplicate tag", { tags: ["a", "a"] }, ["spec.tags[1]: Duplicate value"]],
      ["tag longer than 50 (the API's limit)", { tags: ["t".repeat(51)] }, ["spec.tags[0]", "50"]],
      ["nodeBalancerId 0", { nodeBalancerId: 0 }, ["spec.nodeBalancerId", "greater than or equal to 1"]],
      ["managementPolicy Ignore", { managementPolicy: "Ignore" }, ["spec.managementPolicy: Unsupported value", "\"Manage\", \"Observe\""]],
      ["duplicate port", { configs: [config, config] }, ["spec.configs[1]: Duplicate value", "\"port\":80"]],
      ["one port on http and tcp", { configs: [config, { ...config, protocol: "tcp" }] }, ["spec.configs", "a port is used once among the tcp, http and https configs, and once among the udp configs"]],
      ["one port on two udp configs", { configs: [{ ...config, protocol: "udp" }, { ...config, protocol: "udp" }] }, ["spec.configs[1]: Duplicate value"]],
      // CL26 (2026-09-30): common NodeBalancers take no new UDP configs.
      ["udp on a new common NodeBalancer", cfg({ protocol: "udp" }), ["spec.type", "udp configs need a premium type (premium or premium_40gb)"]],
      ["udp on a new common NodeBalancer, type unset", { type: undefined, ...cfg({ protocol: "udp" }) }, ["spec.type", "udp configs need a premium type"]],
      ["config without a port", { configs: [{ nodes: [node] }] }, ["spec.configs[0].port: Required value"]],
      ["port 0", cfg({ port: 0 }), ["spec.configs[0].port", "greater than or equal to 1"]],
      ["port 65536", cfg({ port: 65536 }), ["spec.configs[0].port", "less than or equal to 65535"]],
      ["protocol sctp", cfg({ protocol: "sctp" }), ["spec.configs[0].protocol: Unsupported value: \"sctp\"", "\"http\", \"https\", \"tcp\", \"udp\""]],
      // udp's own rules (spec 4.234.0), refused before anything is sent.
      ["algorithm source on udp", cfg({ protocol: "udp", algorithm: "source" }), ["spec.configs[0].algorithm", "source is for tcp, http and https; ring_hash for udp"]],
      ["algorithm ring_hash on tcp", cfg({ protocol: "tcp", algorithm: "ring_hash" }), ["spec.configs[0].algorithm", "ring_hash for udp"]],
      ["stickiness table on udp", cfg({ protocol: "udp", stickiness: "table" }), ["spec.configs[0].stickiness", "session and source_ip for udp"]],
      ["stickiness source_ip on http", cfg({ stickiness: "source_ip" }), ["spec.configs[0].stickiness", "table and http_cookie are for tcp, http and https"]],
      ["udpCheckPort on tcp", cfg({ protocol: "tcp", udpCheckPort: 80 }), ["spec.configs[0].udpCheckPort", "only for protocol udp"]],
      ["udpCheckPort 0", cfg({ protocol: "udp", udpCheckPort: 0 }), ["spec.configs[0].udpCheckPort", "greater than or equal to 1"]],
      ["udpCheckPort 65536", cfg({ protocol: "udp", udpCheckPort: 65536 }), ["spec.configs[0].udpCheckPort", "less than or equal to 65535"]],
      ["checkPassive on udp", cfg({ protocol: "udp", checkPassive: true }), ["spec.configs[0].checkPassive", "must be false (or unset) for protocol udp"]],
      ["proxyProtocol v2 on udp", cfg({ protocol: "udp", proxyProtocol: "v2" }), ["spec.configs[0].proxyProtocol", "udp has no PROXY protocol"]],
      ["a node mode on udp", cfg({ protocol: "udp", nodes: [{ ...node, mode: "accept" }] }), ["spec.configs[0].nodes", "the nodes of a udp config take no mode"]],
      ["clientUdpSessThrottle 21", { clientUdpSessThrottle: 21 }, ["spec.clientUdpSessThrottle", "less than or equal to 20"]],
      ["algorithm random", cfg({ algorithm: "random" }), ["spec.configs[0].algorithm: Unsupported value", "\"roundrobin\", \"leastconn\", \"source\""]],
      ["stickiness sticky", cfg({ stickiness: "sticky" }), ["spec.configs[0].stickiness: Unsupported value", "\"none\", \"table\", \"http_cookie\", \"session\", \"source_ip\""]],
      ["stickiness session on http", cfg({ stickiness: "session" }), ["spec.configs[0].stickiness", "session and source_ip for udp"]],
      ["check ping", cfg({ check: "ping" }), ["spec.configs[0].check: Unsupported value", "\"none\", \"connection\", \"http\", \"http_body\""]],
      ["cipherSuite none", cfg({ cipherSuite: "none" }), ["spec.configs[0].cipherSuite: Unsupported value", "\"recommended\", \"legacy\""]],
      ["proxyProtocol v3", cfg({ proxyProtocol: "v3" }), ["spec.configs[0].proxyProtocol: Unsupported value", "\"none\", \"v1\", \"v2\""]],
      ["checkAttempts 0", cfg({ checkAttempts: 0 }), ["spec.configs[0].checkAttempts", "greater than or equal to 1"]],
      ["checkAttempts 31", cfg({ checkAttempts: 31 }), ["spec.configs[0].checkAttempts", "less than or equal to 30"]],
      ["checkTimeout 0", cfg({ checkTimeout: 0 }), ["spec.configs[0].checkTimeout", "greater than or equal to 1"]],
      ["checkTimeout 31", cfg({ checkTimeout: 31, checkInterval: 60 }), ["spec.configs[0].checkTimeout", "less than or equal to 30"]],
      ["checkInterval 3601", cfg({ checkInterval: 3601 }), ["spec.configs[0].checkInterval", "less than or equal to 3600"]],
      ["checkInterval 1", cfg({ checkInterval: 1, checkTimeout: 1 }), ["spec.configs[0].checkInterval", "greater than or equal to 2"]],
      ["checkTimeout equal to checkInterval", cfg({ checkTimeout: 10, checkInterval: 10 }), ["spec.configs[0].checkTimeout", "checkTimeout must be less than checkInterval"]],
      ["checkInterval below the default checkTimeout", cfg({ checkInterval: 20 }), ["checkTimeout must be less than checkInterval"]],
      ["checkPath with a space", cfg({ check: "http", checkPath: "/health check" }), ["spec.configs[0].checkPath in body should match"]],
      ["https without a certificate", cfg({ port: 443, protocol: "https" }), ["spec.configs[0].tlsSecretRef", "required when protocol is https"]],
      ["a certificate on http", cfg({ tlsSecretRef: { name: "web-tls" } }), ["spec.configs[0].tlsSecretRef", "only allowed when protocol is https"]],
      ["proxyProtocol v1 on http", cfg({ proxyProtocol: "v1" }), ["spec.configs[0].proxyProtocol", "require protocol tcp"]],
      ["proxyProtocol v2 on https", cfg({ port: 443, protocol: "https", tlsSecretRef: { name: "t" }, proxyProtocol: "v2" }), ["require protocol tcp"]],
      ["config without nodes", cfg({ nodes: [] }), ["spec.configs[0].nodes", "a config needs at least one node, or nodesFrom"]],
      ["nodesFrom with two sources", cfg({ nodes: [], nodesFrom: { serviceRef: { name: "web", port: 80 }, nodes: { port: 80 } } }), ["nodesFrom names exactly one source: serviceRef or nodes"]],
      ["nodesFrom serviceRef without a port", cfg({ nodes: [], nodesFrom: { serviceRef: { name: "web" } } }), ["spec.configs[0].nodesFrom.serviceRef.port: Required value"]],
      ["node without an address", nd({ address: undefined }), ["spec.configs[0].nodes[0].address: Required value"]],
      ["node without a label", nd({ label: undefined }), ["spec.configs[0].nodes[0].label: Required value"]],
      ["node label shorter than 3", nd({ label: "w1" }), ["spec.configs[0].nodes[0].label in body should be at least 3 chars long"]],
      ["node label with a space", nd({ label: "web 1" }), ["spec.configs[0].nodes[0].label in body should match"]],
      ["address without a port", nd({ address: "192.168.210.120" }), ["spec.configs[0].nodes[0].address", "IPv4 address and a port 1..65535"]],
      ["address with port 0", nd({ address: "192.168.210.120:0" }), ["IPv4 address and a port 1..65535"]],
      ["address with port 65536", nd({ address: "192.168.210.120:65536" }), ["IPv4 address and a port 1..65535"]],
      ["address with a bad octet", nd({ address: "192.168.210.300:80" }), ["IPv4 address and a port 1..65535"]],
      ["address as a host name", nd({ address: "backend.local:80" }), ["IPv4 address and a port 1..65535"]],
      ["unique-local IPv6 address", nd({ address: "[fd00::1]:80" }), ["an IPv6 backend must be a public (global unicast, 2000::/3) address"]],
      ["public address", nd({ address: "203.0.113.10:80" }), ["spec.configs[0].nodes[0].address", "must be a private IPv4 address (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)"]],
      ["just above 172.16.0.0/12", nd({ address: "172.32.0.1:80" }), ["must be a private IPv4 address"]],
      ["just below 10.0.0.0/8", nd({ address: "9.255.255.255:80" }), ["must be a private IPv4 address"]],
      ["empty address", nd({ address: "" }), ["IPv4 address and a port 1..65535"]],
            ["duplicate backend address", cfg({ nodes: [node, { ...node, label: "web-2" }] }), ["spec.configs[0].nodes[1]: Duplicate value"]],
      ["weight 0", nd({ weight: 0 }), ["spec.configs[0].nodes[0].weight", "greater than or equal to 1"]],
      ["weight 256", nd({ weight: 256 }), ["spec.configs[0].nodes[0].weight", "less than or equal to 255"]],
      ["mode standby", nd({ mode: "standby" }), ["spec.configs[0].nodes[0].mode: Unsupported value", "\"accept\", \"reject\", \"drain\", \"backup\""]],
      ["deletionPolicy Orphan", { deletionPolicy: "Orphan" }, ["spec.deletionPolicy: Unsupported value"]],
    ];
    it.each(cases)("%s", async (_name, patch, expected) => {
      const res = await dryRun(withSpec(base, patch));
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (res.ok) return;
      expect(res.code).toBe(422);
      for (const text of expected) expect(res.message).toContain(text);
    });
  });

  describe("accepts a good spec", () => {
    const cases: [string, Record<string, unknown>][] = [
      ["minimal", {}],
      ["no configs at all", { configs: undefined }],
      ["every field", {
        label: "web_lb-1", clientConnThrottle: 20, tags: ["web", "prod"], firewallId: 5, deletionPolicy: "Retain", managementPolicy: "Observe", nodeBalancerId: 12,
        requests: { recreate: "r1" },
        configs: [
          { port: 80, protocol: "http", algorithm: "leastconn", stickiness: "http_cookie", check: "http_body", checkInterval: 10, checkTimeout: 5, checkAttempts: 30, checkPath: "/healthz?full=1&x=%20", checkBody: "ok", checkPassive: false, cipherSuite: "legacy", proxyProtocol: "none", nodes: [{ label: "web.1_a", address: "192.168.128.0:8080", weight: 255, mode: "backup" }] },
          { port: 443, protocol: "https", tlsSecretRef: { name: "web-tls" }, nodes: [{ label: "web-1", address: "192.168.255.255:443", weight: 1, mode: "drain" }] },
          { port: 5432, protocol: "tcp", proxyProtocol: "v2", algorithm: "source", check: "connection", checkInterval: 2, checkTimeout: 1, nodes: [{ label: "pg-1", address: "192.168.200.1:5432", mode: "reject" }, { label: "pg-1", address: "192.168.201.1:5432", mode: "accept" }] },
          { port: 65535, protocol: "tcp", proxyProtocol: "v1", nodes: [{ label: "max", address: "192.168.128.1:65535" }, { label: "min", address: "192.168.128.1:1" }] },
          // Any RFC 1918 address, as the spec ("Private IP address") and the real API (VPCs) allow.
          { port: 8443, protocol: "tcp", nodes: [{ label: "vpc-a", address: "10.0.0.5:80" }, { label: "vpc-b", address: "172.16.0.9:80" }, { label: "vpc-c", address: "192.168.10.5:80" }] },
        ],
      }],
      ["udp beside tcp on one port, with udp's own settings (premium)", {
        clientUdpSessThrottle: 20, deletionProtection: true, type: "premium",
        configs: [
          { port: 53, protocol: "tcp", nodes: [{ label: "dns-1", address: "[2600:3c03::1]:53" }] },
          { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", check: "connection", udpCheckPort: 8053, checkPassive: false, nodes: [{ label: "dns-1", address: "[2600:3c03::1]:53", weight: 10 }] },
          { port: 5353, protocol: "udp", algorithm: "leastconn", stickiness: "session", nodes: [{ label: "dns-1", address: "[2600:3c03::1]:5353" }] },
        ],
      }],
      // The udp configs a common NodeBalancer had before UDP became premium-only stay (CL26): adopted, the spec says them.
      ["udp on an adopted common NodeBalancer", { nodeBalancerId: 12, configs: [{ port: 53, protocol: "udp", nodes: [{ label: "dns-1", address: "192.168.1.1:53" }] }] }],
    ];
    it.each(cases)("%s", async (_name, patch) => {
      const res = await dryRun(withSpec(base, patch));
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
  });

  it("applies the API's config defaults, the same as the zod schema (the NodeBalancer's own, which adoption initializes, are zod's only)", async () => {
    expect((await api.create(kind, "defaults", base)).ok).toBe(true);
    const stored = await api.get(kind, "defaults");
    expect(nodeBalancerSpecSchema.parse(stored.spec)).toEqual(nodeBalancerSpecSchema.parse(base));
    expect(nodeBalancerSpecSchema.parse(stored.spec)).toMatchObject({ clientConnThrottle: 0, clientUdpSessThrottle: 0, tags: [] });
    expect(stored.spec).toEqual({
      region: "us-east", deletionProtection: false, deletionPolicy: "Delete", managementPolicy: "Manage",
      configs: [{
        // checkPassive: no default (the API's is on for http, none for udp).
        port: 80, protocol: "http", algorithm: "roundrobin", stickiness: "none", check: "none",
        checkInterval: 31, checkTimeout: 30, checkAttempts: 3, proxyProtocol: "none", cipherSuite: "recommended",
        nodes: [node],
      }],
    });
  });

  describe("immutable fields", () => {
    beforeAll(async () => {
      expect((await api.create(kind, "firewalled", { ...base, firewallId: 5 })).ok).toBe(true);
      expect((await api.create(kind, "open", base)).ok).toBe(true);
      expect((await api.create(kind, "adopted", { ...base, nodeBalancerId: 7 })).ok).toBe(true);
    });
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["region", "open", { region: "eu-west" }, "region is immutable"],
      ["nodeBalancerId changed", "adopted", { nodeBalancerId: 8 }, "nodeBalancerId"],
      ["nodeBalancerId removed", "adopted", { nodeBalancerId: null }, "nodeBalancerId"],
    ];
    // firewallId is changeable (assigned and removed through the API's firewall devices).
    it.each([
      ["changed", "firewalled", { firewallId: 6 }],
      ["removed", "firewalled", { firewallId: null }],
      ["added", "open", { firewallId: 6 }],
    ] as const)("firewallId %s is accepted", async (_name, name, patch) => {
      const res = await api.mergePatchSpec(kind, name, patch);
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
    it.each(cases)("%s cannot change", async (_name, name, patch, message) => {
      const res = await api.mergePatchSpec(kind, name, patch);
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (!res.ok) expect(res.message).toContain(message);
    });

    it("label, throttle, tags and configs change", async () => {
      const res = await api.mergePatchSpec(kind, "open", {
        label: "renamed", clientConnThrottle: 5, tags: ["x"],
        configs: [{ port: 8080, protocol: "tcp", nodes: [{ label: "b-1", address: "192.168.130.2:8080", weight: 10 }] }],
      });
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
  });
});
