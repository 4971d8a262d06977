// ManagedDatabase against spec 4.234.0 on a real API server and the emulator over HTTP: the
// create body carries only what the database's platform takes (recorded through a proxy), what
// the platform does not take is UnsupportedOnPlatform with nothing sent, and Valkey where the
// API offers it (Ready, with a Redis-style Secret) or UnknownEngine where it does not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { startAnswerProxy, type AnswerProxy } from "../harness/answer-proxy.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { databaseHelpers, mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const postgresql = { engine: "postgresql", version: "16", region: "us-east", type: "g6-dedicated-2", clusterSize: 3, allowList: ["198.51.100.0/24"] };
const valkey = { engine: "valkey", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.7"] };
/** The fields the current platform's create does not have. */
const legacyCreateFields = ["encrypted", "ssl_connection", "replication_type", "replication_commit_type"];

/** An env on `platform` whose operator calls the emulator through a proxy that can hold (and show) a request. */
function envWithProxy(name: string, platform: "legacy" | "current", valkeyOffered: boolean) {
  const cluster = useTestCluster(name);
  const parts: { env?: OperatorEnv; emulator?: RunningEmulator; proxy?: AnswerProxy } = {};
  beforeAll(async () => {
    parts.emulator = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.3, platform, config: { valkey: valkeyOffered } });
    parts.proxy = await startAnswerProxy(parts.emulator.url);
    parts.env = await startOperatorEnv(cluster, { platform, reuseEmulator: parts.emulator, linodeUrl: parts.proxy.url, poll: { pendingMillis: 300, readyMillis: 2_000 } });
  });
  afterAll(async () => {
    await parts.env?.stop();
    await parts.proxy?.close();
    await parts.emulator?.close();
  });
  const env = (): OperatorEnv => parts.env as OperatorEnv;
  const proxy = (): AnswerProxy => parts.proxy as AnswerProxy;
  /** Applies `spec` and answers the create body the operator sent for it (held, read, then let through). */
  const createBody = async (dbName: string, spec: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const path = `/v4/databases/${String(spec.engine)}/instances`;
    proxy().hold((method, p) => method === "POST" && p === path);
    await helpers.apply(dbName, spec);
    await proxy().whenHeld(1);
    const held = proxy().held().find((r) => r.path === path);
    proxy().release();
    return JSON.parse(held?.body ?? "{}") as Record<string, unknown>;
  };
  const helpers = databaseHelpers(cluster, env);
  return { cluster, env, createBody, ...helpers };
}

describe("current platform (Valkey offered)", () => {
  const { cluster, env, createBody, key, apply, get, condition, readyAt, readyDatabase, reasonOf, creates, secret } = envWithProxy("mdb2026-current", "current", true);

  it("the create body has none of encrypted, ssl_connection or the replication fields, even with encrypted and sslConnection true in the spec; the database gets Ready", async () => {
    const body = await createBody("pg-now", { ...postgresql, encrypted: true, sslConnection: true });
    expect(body).toMatchObject({ engine: "postgresql/16", cluster_size: 3, region: "us-east" });
    for (const field of legacyCreateFields) expect(body).not.toHaveProperty(field);
    const ready = await waitFor("pg-now Ready", () => readyAt("pg-now"), 60_000, 200);
    expect(ready.status?.platform).toBe("current");
  });

  it.each([
    ["replicationType", { ...mysql, replicationType: "none" }, "spec.replicationType"],
    ["replicationCommitType", { ...postgresql, clusterSize: 1, replicationCommitType: "local" }, "spec.replicationCommitType"],
    ["encrypted: false", { ...mysql, encrypted: false }, "spec.encrypted: false"],
    ["sslConnection: false", { ...mysql, sslConnection: false }, "spec.sslConnection: false"],
    ["monthly maintenance", { ...mysql, updates: { frequency: "monthly", weekOfMonth: 2, hourOfDay: 1, dayOfWeek: 1 } }, "spec.updates.frequency: monthly"],
    ["a 3-hour window", { ...mysql, updates: { frequency: "weekly", duration: 3, hourOfDay: 1, dayOfWeek: 1 } }, "spec.updates.duration: 3"],
  ])("%s is UnsupportedOnPlatform naming the field; no create is sent", async (what, spec, field) => {
    const name = `no-${what.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-$/, "")}`;
    const before = creates(spec.engine);
    await apply(name, spec);
    const c = await reasonOf(name, "Synced", "UnsupportedOnPlatform");
    expect(c.status).toBe("False");
    expect(c.message).toContain(field);
    expect(c.message).toContain("current platform");
    await env().repass("ManagedDatabase", key(name), 2);
    expect(creates(spec.engine)).toBe(before);
    expect((await get(name)).status?.id).toBeUndefined();
  });

  it("an existing database: a monthly window is UnsupportedOnPlatform, no update sent; a 4-hour weekly one is applied", async () => {
    const id = Number((await readyDatabase("windowed")).status?.id);
    const puts = (): number => env().emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;
    await apply("windowed", { ...mysql, updates: { frequency: "monthly", weekOfMonth: 3, hourOfDay: 4, dayOfWeek: 2 } });
    const c = await reasonOf("windowed", "Synced", "UnsupportedOnPlatform");
    expect(c.message).toContain("status.platform: current");
    await env().repass("ManagedDatabase", key("windowed"), 2);
    expect(puts()).toBe(0);
    await apply("windowed", { ...mysql, updates: { frequency: "weekly", duration: 4, hourOfDay: 4, dayOfWeek: 2 } });
    await waitFor("window applied", () => readyAt("windowed", (o) => condition(o, "Synced")?.status === "True" && (o.status?.updates as { hourOfDay?: number } | undefined)?.hourOfDay === 4), 60_000, 200);
    expect(puts()).toBe(1);
    expect((await env().linode.databases.engine("mysql").get(id)).updates).toMatchObject({ frequency: "weekly", duration: 4, hourOfDay: 4, dayOfWeek: 2 });
  });

  it("a Valkey database gets Ready with a Secret a Redis client reads: type redis, host, port, username, password, a rediss:// uri, ca.crt", async () => {
    const body = await createBody("cache", valkey);
    for (const field of legacyCreateFields) expect(body).not.toHaveProperty(field);
    expect(body.engine).toBe("valkey/8");
    const ready = await waitFor("cache Ready", () => readyAt("cache", (o) => typeof o.status?.connectionSecretName === "string"), 60_000, 200);
    expect(ready.status).toMatchObject({ engine: "valkey", platform: "current" });
    const id = Number(ready.status?.id);
    const cloud = await env().linode.databases.valkey.get(id);
    const creds = await env().linode.databases.valkey.getCredentials(id);
    const s = await secret("cache-connection");
    expect(Object.keys(s).sort()).toEqual(["ca.crt", "host", "password", "port", "provider", "type", "uri", "username"]);
    expect(s).toMatchObject({ type: "redis", provider: "linode", host: cloud.hosts.primary, port: String(cloud.port), username: creds.username, password: creds.password });
    expect(s["ca.crt"]).toContain("BEGIN CERTIFICATE");
    const uri = new URL(s.uri ?? "");
    expect([uri.protocol, uri.hostname, uri.port, decodeURIComponent(uri.username), decodeURIComponent(uri.password)]).toEqual(["rediss:", cloud.hosts.primary, String(cloud.port), creds.username, creds.password]);
    const raw = await cluster.core.readNamespacedSecret({ namespace: cluster.namespace, name: "cache-connection" });
    expect(raw.type).toBe("servicebinding.io/redis");
  });
});

describe("legacy platform (Valkey not offered)", () => {
  const { env, createBody, key, readyAt, reasonOf, apply, creates, get } = envWithProxy("mdb2026-legacy", "legacy", false);

  it("the create body still carries encrypted, ssl_connection and the replication fields the spec sets", async () => {
    const spec = { ...postgresql, encrypted: true, sslConnection: false, replicationType: "asynch", replicationCommitType: "off" };
    const body = await createBody("pg-then", spec);
    expect(body).toMatchObject({ encrypted: true, ssl_connection: false, replication_type: "asynch", replication_commit_type: "off", cluster_size: 3 });
    const ready = await waitFor("pg-then Ready", () => readyAt("pg-then"), 60_000, 200);
    expect(ready.status?.platform).toBe("legacy");
  });

  it("a 4-hour window is UnsupportedOnPlatform (legacy: 1..3 hours); no create is sent", async () => {
    const before = creates("mysql");
    await apply("long-window", { ...mysql, updates: { frequency: "weekly", duration: 4, hourOfDay: 1, dayOfWeek: 1 } });
    const c = await reasonOf("long-window", "Synced", "UnsupportedOnPlatform");
    expect(c.message).toContain("spec.updates.duration: 4");
    await env().repass("ManagedDatabase", key("long-window"), 2);
    expect(creates("mysql")).toBe(before);
  });

  it("a Valkey database where the API does not list Valkey is UnknownEngine; nothing is sent", async () => {
    await apply("no-cache", valkey);
    const c = await reasonOf("no-cache", "Synced", "UnknownEngine");
    expect(c.status).toBe("False");
    expect(c.message).toContain("valkey");
    await env().repass("ManagedDatabase", key("no-cache"), 2);
    expect(creates("valkey")).toBe(0);
    expect((await get("no-cache")).status?.id).toBeUndefined();
  });
});
