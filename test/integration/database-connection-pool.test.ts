// DatabaseConnectionPool on a real API server and the emulator over HTTP (current platform): a
// pool created and Ready with a connection Secret through it, drift put back with one PUT of
// only what changed, adoption by label (refused without spec.adopt), deletion, pools first when
// their database is deleted, UnsupportedOnPlatform on MySQL and on the legacy platform,
// ReferenceNotReady until the database is Ready, and bad specs refused at admission.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { databaseConnectionPoolType as pool } from "../../src/resources/database-connection-pool/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startAnswerProxy, type AnswerProxy } from "../harness/answer-proxy.ts";
import { useTestCluster, type TestCluster } from "../harness/cluster.ts";
import { mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const postgres = { engine: "postgresql", version: "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.7"] };
type Cond = { status: string; reason: string; message?: string };

function helpers(cluster: TestCluster, envOf: () => OperatorEnv) {
  const ns = (): string => cluster.namespace;
  const key = (name: string): string => `${ns()}/${name}`;
  const kube = () => envOf().deps.kube;
  const createDb = (name: string, spec: Record<string, unknown> = postgres): Promise<ManagedObject> =>
    kube().createCustom(mdb, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec });
  const createPool = (name: string, database: string, spec: Record<string, unknown> = {}): Promise<ManagedObject> =>
    kube().createCustom(pool, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseConnectionPool", metadata: { name }, spec: { databaseRef: { name: database }, ...spec } });
  const getDb = (name: string): Promise<ManagedObject> => kube().getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  const getPool = (name: string): Promise<ManagedObject> => kube().getCustom<ManagedObject>(pool, { namespace: ns(), name });
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const isReady = (o: ManagedObject): boolean => condOf(o, "Ready")?.status === "True" && o.status?.observedGeneration === o.metadata.generation;
  const dbReady = (name: string): Promise<ManagedObject> => waitFor(`${name} Ready`, async () => { const o = await getDb(name); return isReady(o) ? o : undefined; }, 60_000, 100);
  const poolReady = (name: string, pred: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject> =>
    waitFor(`${name} Ready`, async () => { const o = await getPool(name); return isReady(o) && condOf(o, "Synced")?.status === "True" && pred(o) ? o : undefined; }, 60_000, 100);
  const poolReason = (name: string, type: string, reason: string): Promise<Cond> =>
    waitFor(`${name} ${type} ${reason}`, async () => { const c = condOf(await getPool(name), type); return c?.reason === reason ? c : undefined; }, 60_000, 100);
  const gone = (get: () => Promise<unknown>, what: string): Promise<true> =>
    // A 404 from Kubernetes (code) or from Linode (status).
    waitFor(`${what} gone`, async () => get().then(() => undefined, (e: unknown) => ((e as { code?: number; status?: number }).code === 404 || (e as { status?: number }).status === 404 ? true : undefined)), 60_000, 100);
  const secret = async (name: string): Promise<Record<string, string>> => {
    const s = await cluster.core.readNamespacedSecret({ namespace: ns(), name });
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
  };
  /** Writes (POST, PUT, DELETE) the emulator answered under one database's pools, by method. */
  const poolWrites = (engine: string, id: number, method: string): number =>
    envOf().emulator.mutations().filter((m) => m.method === method && m.path.startsWith(`/databases/${engine}/instances/${String(id)}/connection-pools`)).length;
  return { ns, key, createDb, createPool, getDb, getPool, condOf, dbReady, poolReady, poolReason, gone, secret, poolWrites };
}

describe("DatabaseConnectionPool (current platform)", () => {
  const cluster = useTestCluster("pool");
  let emulator: RunningEmulator;
  let proxy: AnswerProxy;
  let env: OperatorEnv;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.3, platform: "current" });
    // Passes every answer through unchanged; it holds an operator's request when a test asks.
    proxy = await startAnswerProxy(emulator.url);
    env = await startOperatorEnv(cluster, { platform: "current", reuseEmulator: emulator, linodeUrl: proxy.url, poll: { pendingMillis: 300, readyMillis: 2_000 } });
  });
  afterAll(async () => { await env.stop(); await proxy.close(); await emulator.close(); });
  const { key, createDb, createPool, getDb, getPool, condOf, dbReady, poolReady, poolReason, gone, secret, poolWrites } = helpers(cluster, () => env);

  it("creates the pool: Ready, its status as the API reports it, and a connection Secret through the pool", async () => {
    const dbId = Number((await (createDb("orders").then(() => dbReady("orders")))).status?.id);
    await createPool("orders-pool", "orders");
    const o = await poolReady("orders-pool");
    expect(o.status).toMatchObject({ databaseId: dbId, label: "orders-pool", database: "defaultdb", mode: "transaction", size: 10, externalId: `postgresql/${String(dbId)}/orders-pool`, binding: { name: "orders-pool-connection" } });
    expect(o.status?.username).toBeUndefined();
    expect(await env.linode.connectionPools.get(dbId, "orders-pool")).toEqual({ label: "orders-pool", database: "defaultdb", mode: "transaction", size: 10, username: null });
    const db = await env.linode.databases.postgresql.get(dbId);
    const creds = await env.linode.databases.postgresql.getCredentials(dbId);
    const s = await secret("orders-pool-connection");
    expect(s).toMatchObject({ type: "postgresql", provider: "linode", host: db.hosts.primary, port: String(db.port), username: creds.username, password: creds.password, database: "orders-pool" });
    expect(s.uri).toBe(`postgresql://${encodeURIComponent(creds.username)}:${encodeURIComponent(creds.password)}@${String(db.hosts.primary)}:${String(db.port)}/orders-pool?sslmode=verify-full&sslrootcert=/bindings/orders-pool/ca.crt`);
    expect(s["ca.crt"]).toContain("BEGIN CERTIFICATE");
    const raw = await cluster.core.readNamespacedSecret({ namespace: cluster.namespace, name: "orders-pool-connection" });
    expect(raw.type).toBe("servicebinding.io/postgresql");
    expect(poolWrites("postgresql", dbId, "POST")).toBe(1);
  });

  it("puts back a change made outside with one PUT of only the changed field, and applies a spec change the same way", async () => {
    const dbId = Number((await (createDb("drift").then(() => dbReady("drift")))).status?.id);
    await createPool("drift-pool", "drift", { size: 12 });
    await poolReady("drift-pool");
    const isPut = (method: string, path: string): boolean => method === "PUT" && path.endsWith(`/instances/${String(dbId)}/connection-pools/drift-pool`);
    proxy.hold(isPut);
    try {
      // Outside the operator (straight to the emulator): the size and nothing else.
      await env.linode.connectionPools.update(dbId, "drift-pool", { size: 3 });
      await proxy.whenHeld(1);
      expect(proxy.held().map((r) => JSON.parse(r.body) as unknown)).toEqual([{ size: 12 }]);
    } finally {
      proxy.release();
    }
    await waitFor("size put back", async () => ((await env.linode.connectionPools.get(dbId, "drift-pool")).size === 12 ? true : undefined), 30_000, 100);
    await poolReady("drift-pool", (o) => o.status?.size === 12);
    expect(poolWrites("postgresql", dbId, "PUT")).toBe(2); // the outside change, and the one putting it back

    proxy.hold(isPut);
    try {
      await env.deps.kube.mergePatchCustom(pool, { namespace: cluster.namespace, name: "drift-pool" }, { spec: { mode: "session" } });
      await proxy.whenHeld(1);
      expect(proxy.held().map((r) => JSON.parse(r.body) as unknown)).toEqual([{ mode: "session" }]);
    } finally {
      proxy.release();
    }
    await poolReady("drift-pool", (o) => o.status?.mode === "session");
    await env.repass("DatabaseConnectionPool", key("drift-pool"), 2);
    expect(poolWrites("postgresql", dbId, "PUT")).toBe(3);
  });

  it("adopts an existing pool only with spec.adopt, keeping what the spec leaves unset; never changes or deletes one it may not", async () => {
    const dbId = Number((await (createDb("adopt").then(() => dbReady("adopt")))).status?.id);
    await env.linode.connectionPools.create(dbId, { label: "legacy_app", database: "defaultdb", mode: "session", size: 5, username: "reporting" });
    const writes = (): number => poolWrites("postgresql", dbId, "PUT") + poolWrites("postgresql", dbId, "DELETE") + poolWrites("postgresql", dbId, "POST");
    const before = writes();
    await createPool("not-adopted", "adopt", { label: "legacy_app", size: 20 });
    const refused = await poolReason("not-adopted", "Synced", "LabelInUse");
    expect(refused.message).toContain("spec.adopt: true");
    await env.deps.kube.deleteCustom(pool, { namespace: cluster.namespace, name: "not-adopted" });
    await gone(() => getPool("not-adopted"), "not-adopted");
    expect(writes()).toBe(before);
    expect((await env.linode.connectionPools.get(dbId, "legacy_app")).size).toBe(5);

    // Adopted: mode and username stay as they are (unset here), size follows the spec.
    await createPool("adopter", "adopt", { label: "legacy_app", adopt: true, size: 8 });
    const o = await poolReady("adopter", (x) => x.status?.size === 8);
    expect(o.status).toMatchObject({ adopted: true, label: "legacy_app", mode: "session", username: "reporting", externalId: `postgresql/${String(dbId)}/legacy_app` });
    expect(await env.linode.connectionPools.get(dbId, "legacy_app")).toEqual({ label: "legacy_app", database: "defaultdb", mode: "session", size: 8, username: "reporting" });
    expect(writes() - before).toBe(1); // the size, once
    await env.repass("DatabaseConnectionPool", key("adopter"), 2);
    expect(writes() - before).toBe(1);

    // A pool another resource manages is not adopted again.
    await createPool("second-adopter", "adopt", { label: "legacy_app", adopt: true, size: 30 });
    await poolReason("second-adopter", "Synced", "ExternalIdInUse");
    await env.repass("DatabaseConnectionPool", key("second-adopter"), 2);
    expect(writes() - before).toBe(1);
    expect((await getPool("second-adopter")).status?.externalId).toBeUndefined();
  });

  it("deletes its pool with it, and a database's deletion waits for its pools (pools first)", async () => {
    const dbId = Number((await (createDb("doomed").then(() => dbReady("doomed")))).status?.id);
    await createPool("doomed-a", "doomed");
    await createPool("doomed-b", "doomed", { deletionPolicy: "Retain" });
    await poolReady("doomed-a");
    await poolReady("doomed-b");
    // The database first: it waits, its pools stay.
    await env.deps.kube.deleteCustom(mdb, { namespace: cluster.namespace, name: "doomed" });
    const waiting = await waitFor("database waits", async () => { const c = condOf(await getDb("doomed"), "Synced"); return c?.reason === "ConnectionPoolsRemain" ? c : undefined; }, 30_000, 100);
    expect(waiting.message).toContain("doomed-a, doomed-b");
    expect((await env.linode.databases.postgresql.get(dbId)).status).toBe("active");
    // A pool deleted with Delete: its pool goes; the database still waits for the other.
    await env.deps.kube.deleteCustom(pool, { namespace: cluster.namespace, name: "doomed-a" });
    await gone(() => getPool("doomed-a"), "doomed-a");
    expect((await env.linode.connectionPools.listAll(dbId)).map((p) => p.label)).toEqual(["doomed-b"]);
    await env.repass("ManagedDatabase", key("doomed"), 1);
    expect((await env.linode.databases.postgresql.get(dbId)).status).toBe("active");
    // Retain lets go of its pool, which goes with the database.
    await env.deps.kube.deleteCustom(pool, { namespace: cluster.namespace, name: "doomed-b" });
    await gone(() => getPool("doomed-b"), "doomed-b");
    await gone(() => getDb("doomed"), "doomed");
    await gone(() => env.linode.databases.postgresql.get(dbId), "database");
    const order = emulator.mutations().filter((m) => m.method === "DELETE" && m.path.startsWith(`/databases/postgresql/instances/${String(dbId)}`)).map((m) => m.path);
    expect(order).toEqual([`/databases/postgresql/instances/${String(dbId)}/connection-pools/doomed-a`, `/databases/postgresql/instances/${String(dbId)}`]);
  });

  it("is UnsupportedOnPlatform on MySQL: nothing sent", async () => {
    const dbId = Number((await (createDb("my", mysql).then(() => dbReady("my")))).status?.id);
    await createPool("my-pool", "my");
    const c = await poolReason("my-pool", "Synced", "UnsupportedOnPlatform");
    expect(c.message).toContain("PostgreSQL only");
    expect(condOf(await getPool("my-pool"), "Ready")?.status).not.toBe("True");
    await env.repass("DatabaseConnectionPool", key("my-pool"), 2);
    expect(emulator.mutations().filter((m) => m.path.startsWith(`/databases/mysql/instances/${String(dbId)}/connection-pools`))).toEqual([]);
  });

  it("waits with ReferenceNotFound, then ReferenceNotReady while its database is not Ready, then becomes Ready", async () => {
    await createPool("early-pool", "early");
    await poolReason("early-pool", "Ready", "ReferenceNotFound");
    emulator.setTimeScale(0);
    try {
      await createDb("early");
      const c = await poolReason("early-pool", "Ready", "ReferenceNotReady");
      expect(c.message).toContain("early");
    } finally {
      emulator.setTimeScale(1);
    }
    emulator.advance(1);
    const o = await poolReady("early-pool");
    expect(o.status?.label).toBe("early-pool");
  });

  it("refuses a bad label, mode or size at admission, and a label change", async () => {
    const bad = async (name: string, spec: Record<string, unknown>): Promise<string> => {
      const err = await createPool(name, "orders", spec).then(() => undefined, (e: unknown) => e as { code?: number; body?: unknown; message?: string });
      expect(err?.code, JSON.stringify(spec)).toBe(422);
      return JSON.stringify(err?.body ?? err?.message ?? "");
    };
    expect(await bad("bad-label", { label: "-starts-with-hyphen" })).toContain("spec.label");
    expect(await bad("bad-label2", { label: "has.dot" })).toContain("spec.label");
    expect(await bad("bad-label3", { label: "x".repeat(64) })).toContain("spec.label");
    expect(await bad("bad-mode", { mode: "pooled" })).toContain("spec.mode");
    expect(await bad("bad-size", { size: 0 })).toContain("spec.size");
    await createPool("fixed", "orders", { label: "fixed_label" });
    const change = await env.deps.kube.mergePatchCustom(pool, { namespace: cluster.namespace, name: "fixed" }, { spec: { label: "other" } }).then(() => undefined, (e: unknown) => e as { code?: number });
    expect(change?.code).toBe(422);
  });
});

describe("DatabaseConnectionPool (legacy platform; adoption not allowed here)", () => {
  const cluster = useTestCluster("pool-legacy");
  let env: OperatorEnv;
  // The operator's own token, and no namespace where it may adopt.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { platform: "legacy", provisionSeconds: 0.3, poll: { pendingMillis: 300, readyMillis: 2_000 }, adoptNamespaces: [] }); });
  afterAll(async () => { await env.stop(); });
  const { key, createDb, createPool, dbReady, poolReason } = helpers(cluster, () => env);

  it("is UnsupportedOnPlatform on a legacy database: nothing sent", async () => {
    const dbId = Number((await (createDb("old").then(() => dbReady("old")))).status?.id);
    await createPool("old-pool", "old");
    const c = await poolReason("old-pool", "Synced", "UnsupportedOnPlatform");
    expect(c.message).toContain("legacy platform");
    await env.repass("DatabaseConnectionPool", key("old-pool"), 2);
    expect(env.emulator.mutations().filter((m) => m.path.includes("/connection-pools"))).toEqual([]);
    expect(dbId).toBeGreaterThan(0);
  });

  it("spec.adopt with the operator's own token where adoption is not allowed: AdoptionNotAllowed, nothing read", async () => {
    await createDb("other");
    await dbReady("other");
    const reads = (): number => Object.entries(env.emulator.requestCounts()).filter(([k]) => k.includes("connection-pools")).reduce((n, [, v]) => n + v, 0);
    const before = reads();
    await createPool("taker", "other", { label: "someone_elses", adopt: true });
    const c = await poolReason("taker", "Synced", "AdoptionNotAllowed");
    expect(c.message).toContain("--adopt-namespaces");
    await env.repass("DatabaseConnectionPool", key("taker"), 2);
    expect(reads()).toBe(before);
  });
});
