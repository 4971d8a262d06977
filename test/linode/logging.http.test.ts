// Debug logs across every call that carries a secret (credentials, CA, TLS key and cert,
// the token itself) are captured and searched for the secret values.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LinodeClient } from "../../src/linode/index.ts";
import { eventually, label, makeClient, startTestEmulator, type Emulator } from "./helpers.ts";
import { pemCore, selfSignedCert } from "./tls.ts";

const SECRET_TOKEN = "tok-5ecr3t-never-logged-0123456789";
let emu: Emulator;
let client: LinodeClient;
let logs: string[];

beforeAll(async () => {
  emu = await startTestEmulator({ tokens: [SECRET_TOKEN] });
  ({ client, logs } = makeClient(emu, { token: SECRET_TOKEN }));
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

describe("no secret in the debug log", () => {
  it("credentials, CA certificate, TLS key and cert, and the token never appear", async () => {
    const secrets: string[] = [SECRET_TOKEN];
    const api = client.databases.mysql;
    const engine = (await client.databases.listAllEngines({ filter: { engine: "mysql" } }))[0];
    const db = await api.create({ label: label("log-db"), region: "us-east", type: "g6-nanode-1", version: engine?.version ?? "8" });
    await eventually(async () => ((await api.get(db.id)).status === "active" ? true : undefined));
    const creds = await api.getCredentials(db.id);
    secrets.push(creds.password);
    await api.resetCredentials(db.id);
    const after = await eventually(async () => {
      try {
        const c = await api.getCredentials(db.id);
        return c.password !== creds.password ? c : undefined;
      } catch {
        return undefined;
      }
    });
    secrets.push(after.password);
    await eventually(async () => ((await api.get(db.id)).status === "active" ? true : undefined));
    const ssl = await api.getSslCertificate(db.id);
    if (ssl.caCertificate) {
      secrets.push(ssl.caCertificate.slice(100, 160));
      secrets.push(pemCore(Buffer.from(ssl.caCertificate, "base64").toString("utf8")));
    }

    const tls = selfSignedCert("logs.example");
    secrets.push(pemCore(tls.key), pemCore(tls.cert));
    const nb = await client.nodeBalancers.create({
      region: "us-east", label: label("log-nb"),
      configs: [{ port: 443, protocol: "https", sslCert: tls.cert, sslKey: tls.key, nodes: [{ address: "192.168.211.1:80", label: "tls-node" }] }],
    });
    const [config] = await client.nodeBalancers.listAllConfigs(nb.id);
    if (!config) throw new Error("config missing");
    expect(config.sslCert).not.toContain("PRIVATE");
    expect(config.sslKey ?? "").not.toContain("PRIVATE");
    const other = await client.nodeBalancers.createConfig(nb.id, { port: 8443, protocol: "https", sslCert: tls.cert, sslKey: tls.key });
    await client.nodeBalancers.updateConfig(nb.id, other.id, { sslCert: tls.cert, sslKey: tls.key });
    await client.nodeBalancers.rebuildConfig(nb.id, other.id, { port: 8443, protocol: "https", sslCert: tls.cert, sslKey: tls.key, nodes: [{ address: "192.168.211.2:80", label: "tls-node-2" }] });
    // A rejected request that carries a key: the error and its log line stay clean too.
    const rejected = await client.nodeBalancers.createConfig(nb.id, { port: 8443, protocol: "https", sslCert: tls.cert, sslKey: tls.key }).catch((e: unknown) => e);
    expect(rejected).toMatchObject({ kind: "terminal" });
    await client.nodeBalancers.delete(nb.id);
    await api.delete(db.id);

    const text = logs.join("");
    expect(logs.length).toBeGreaterThan(10);
    expect(text).toContain('"route":"/databases/mysql/instances/{instanceId}/credentials"');
    expect(text).toContain('"route":"/nodebalancers/{nodeBalancerId}/configs/{configId}/rebuild"');
    expect(text).toContain('"ssl_key":"[REDACTED]"');
    const errorText = `${String(rejected)} ${JSON.stringify(rejected)}`;
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
      expect(errorText).not.toContain(secret);
    }
  });
});
