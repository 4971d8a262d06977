/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// Where the emulator once disagreed with the spec: each case quotes the spec's own line
// (shared/spec/, revision 4.176.0) and checks the emulator over HTTP against it.
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate, type RunningEmulator } from "../../src/emulator/index.ts";
import { client, fields, mysqlBody, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
beforeAll(async () => { emu = await start({ rateLimits: false }); api = client(emu); });
afterAll(async () => { await emu.close(); });

let seq = 0;
async function configWithNodes(check: Record<string, unknown> = {}): Promise<{ nb: number; cfg: number }> {
  const nb = (await api.post("/nodebalancers", { region: "us-east", label: `spec-nb-${String(++seq)}` })).body.id as number;
  const cfg = (await api.post(`/nodebalancers/${String(nb)}/configs`, { port: 80, protocol: "http", ...check })).body.id as number;
  return { nb, cfg };
}

describe("the spec, line by line", () => {
  it("nodebalancers-api.md: address is the \"Private IP address of the backend\": any RFC 1918 address, not only 192.168.128.0/17", async () => {
    const { nb, cfg } = await configWithNodes();
    const path = `/nodebalancers/${String(nb)}/configs/${String(cfg)}/nodes`;
    for (const address of ["192.168.10.5:80", "10.0.0.5:80", "172.16.9.9:8080", "192.168.210.120:80"]) {
      const res = await api.post(path, { address, label: `n-${address.replace(/[.:]/g, "-")}` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const rebuilt = await api.post(`/nodebalancers/${String(nb)}/configs/${String(cfg)}/rebuild`, { nodes: [{ address: "192.168.10.6:80", label: "vpc-node" }] });
    expect(rebuilt.status).toBe(200);
    for (const address of ["203.0.113.5:80", "8.8.8.8:53", "172.32.0.1:80"]) {
      const res = await api.post(path, { address, label: "public" });
      expect(res.status).toBe(400);
      expect(fields(res)).toEqual(["address"]);
    }
  });

  it("nodebalancers-api.md: ssl_fingerprint is the \"SHA1 fingerprint derived from the certificate\"", async () => {
    const { certPem: cert, keyPem: key } = generateCertificate({ commonName: "spec.example.test" });
    const { nb } = await configWithNodes();
    const res = await api.post(`/nodebalancers/${String(nb)}/configs`, { port: 443, protocol: "https", ssl_cert: cert, ssl_key: key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const sha1 = new X509Certificate(cert).fingerprint;
    expect(sha1).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(res.body.ssl_fingerprint).toBe(sha1);
  });

  it("managed-databases-api.md: allow_list \"Each item is a single IP address or a CIDR range\": IPv6 too", async () => {
    const res = await api.post("/databases/mysql/instances", mysqlBody({ allow_list: ["2001:DB8::1", "2001:db8:1::/48", "203.0.113.7"] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.allow_list).toEqual(["2001:db8:1::/48", "2001:db8::1/128", "203.0.113.7/32"]);
    const bad = await api.post("/databases/mysql/instances", mysqlBody({ allow_list: ["2001:db8::/129"] }));
    expect(bad.status).toBe(400);
  });

  it("managed-databases-api.md (Errors): \"`field` names the offending input field and `reason` gives a message about it\": a wrong type is not reported as missing", async () => {
    const typed = await api.post("/nodebalancers", { region: "us-east", label: 12345 });
    expect(typed.status).toBe(400);
    expect(typed.body.errors).toEqual([{ field: "label", reason: "label must be a string" }]);
    const missing = await api.post("/databases/mysql/instances", { region: "us-east", type: "g6-nanode-1", engine: "mysql/8" });
    expect(missing.body.errors).toContainEqual({ field: "label", reason: "label is required" });
    const notObject = await api.post("/nodebalancers", undefined, { raw: "\"just a string\"" });
    expect(notObject.status).toBe(400);
    expect(notObject.body.errors).toEqual([{ reason: "body must be an object" }]);
  });

  it("nodebalancers-api.md: \"Backends are health-checked periodically and marked up or down\": unknown, then UP after a check interval; an admin DOWN sticks", async () => {
    const { nb, cfg } = await configWithNodes({ check: "connection", check_interval: 10, check_timeout: 5 });
    const base = `/nodebalancers/${String(nb)}/configs/${String(cfg)}`;
    const a = (await api.post(`${base}/nodes`, { address: "192.168.210.1:80", label: "node-a" })).body.id as number;
    const b = (await api.post(`${base}/nodes`, { address: "192.168.210.2:80", label: "node-b" })).body.id as number;
    expect((await api.get(`${base}/nodes/${String(a)}`)).body.status).toBe("unknown");
    await api.admin("PUT", `/nodes/${String(b)}/status`, { status: "DOWN" });
    emu.advance(10); // one check interval
    expect((await api.get(`${base}/nodes/${String(a)}`)).body.status).toBe("UP");
    expect((await api.get(`${base}/nodes/${String(b)}`)).body.status).toBe("DOWN");
    expect((await api.get(base)).body.nodes_status).toEqual({ up: 1, down: 1 });
    // A moved backend is checked again; "auto" hands a node back to the checks.
    await api.put(`${base}/nodes/${String(a)}`, { address: "192.168.210.9:80" });
    expect((await api.get(`${base}/nodes/${String(a)}`)).body.status).toBe("unknown");
    await api.admin("PUT", `/nodes/${String(b)}/status`, { status: "auto" });
    emu.advance(10);
    expect((await api.get(base)).body.nodes_status).toEqual({ up: 2, down: 0 });
  });
});

describe("the real API's current database platform (--platform current)", () => {
  let current: RunningEmulator;
  let capi: ReturnType<typeof client>;
  beforeAll(async () => { current = await start({ rateLimits: false, platform: "current" }); capi = client(current); });
  afterAll(async () => { await current.close(); });

  it("serves the shape the current platform's recordings have: no replication fields or secondary host, a standby, engine_config, a high port, the full version", async () => {
    // Without replication_type: the current platform's create has none (a 400 there, database-platforms.test.ts).
    const made = await capi.post("/databases/mysql/instances", mysqlBody({ cluster_size: 3 }));
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    current.advance(5);
    const db = (await capi.get(`/databases/mysql/instances/${String(made.body.id)}`)).body;
    expect(db).toMatchObject({ platform: "rdbms-default", version: "8.0.35", encrypted: true, ssl_connection: true, engine_config: {}, private_network: null });
    expect(db).not.toHaveProperty("replication_type");
    expect(db).not.toHaveProperty("replication_commit_type");
    expect(Object.keys(db.hosts as object).sort()).toEqual(["primary", "standby"]);
    expect(db.hosts.standby).toMatch(/^replica-a\d+-akamai-prod-\d+-default\.g2a\.akamaidb\.net$/);
    expect(db.port).toBeGreaterThanOrEqual(10_000);
    expect(db.updates).not.toHaveProperty("week_of_month");
    expect(db.updates.pending).toEqual([]);
    const all = (await capi.get("/databases/instances")).body.data as Record<string, unknown>[];
    expect(all[0]).not.toHaveProperty("instance_uri");
  });
});
