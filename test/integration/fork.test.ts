// spec.restoreFrom — the current platform's restore, a point-in-time fork into a new cluster —
// on a real API server and the emulator over HTTP: by reference and by id, at the latest point
// or a given time, waiting for its source, refusing before any create what the API would refuse
// (a time out of range, a legacy or mismatched source, an id named with the operator's shared
// token), and one fork even when the create's answer is lost.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { rfc3339 } from "../../src/resources/managed-database/fork.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { databaseHelpers, envOptions, mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const forkOf = (source: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ ...mysql, restoreFrom: { pointInTime: { ...source, ...extra } } });
const forkStatus = (o: ManagedObject): { source?: number; restoreTime?: string } | undefined => o.status?.fork as { source?: number; restoreTime?: string } | undefined;
/** Mutations the emulator answered under database `id`'s own path (PUT, POST actions, DELETE). */
/** The oldest restore point of a ManagedDatabase's database, as the operator exports it (a metric: it slides with time), in RFC 3339. */
const oldestRestore = async (env: OperatorEnv, namespace: string, name: string): Promise<string | undefined> => {
  const m = await env.registry.getSingleMetric("linode_database_oldest_restore_time_seconds")?.get();
  const v = m?.values.find((x) => x.labels.namespace === namespace && x.labels.name === name)?.value;
  return v === undefined ? undefined : rfc3339(v * 1000);
};
const touches = (env: OperatorEnv, id: number): number => env.emulator.mutations().filter((m) => m.path.startsWith(`/databases/mysql/instances/${String(id)}`)).length;

describe("restoreFrom: a fork by reference", () => {
  const cluster = useTestCluster("fork");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, condition, readyAt, readyDatabase, reasonOf, creates, secret } = databaseHelpers(cluster, () => env);

  it("forks the source at its latest point into a new cluster: status.fork, the oldest restore point as a metric (not status), its own Secret, one create, the source untouched", async () => {
    const source = await readyDatabase("orders");
    const sourceId = Number(source.status?.id);
    expect(await oldestRestore(env, cluster.namespace, "orders")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(source.status?.oldestRestoreTime).toBeUndefined();
    expect(source.status?.fork).toBeUndefined();
    const touched = touches(env, sourceId);
    const before = creates();

    await apply("orders-restored", forkOf({ databaseRef: { name: "orders" } }));
    const fork = await waitFor("fork Ready", () => readyAt("orders-restored", (o) => forkStatus(o)?.source === sourceId), 60_000, 100);
    const forkId = Number(fork.status?.id);
    expect(forkId).not.toBe(sourceId);
    expect(forkStatus(fork)?.restoreTime).toMatch(/Z$/);
    expect(await oldestRestore(env, cluster.namespace, "orders-restored")).toBeDefined();
    const api = env.linode.databases.engine("mysql");
    expect((await api.get(forkId)).fork?.source).toBe(sourceId);
    expect((await secret("orders-restored-connection")).host).toBe((await api.get(forkId)).hosts.primary);
    expect(creates()).toBe(before + 1);
    expect(touches(env, sourceId)).toBe(touched);
    expect((await api.get(sourceId)).status).toBe("active");
    const events = await cluster.kc.makeApiClient((await import("@kubernetes/client-node")).EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
    const forked = events.items.find((e) => e.reason === "Forked" && e.regarding?.name === "orders-restored");
    expect(forked?.note).toContain(`forking database ${String(sourceId)}`);
    expect(forked?.note).toContain("keeps running (and billing)");

    // Settled: more passes send nothing, and the source being deleted leaves the fork as it is.
    await env.repass("ManagedDatabase", key("orders-restored"), 3);
    expect(creates()).toBe(before + 1);
    await env.deps.kube.deleteCustom((await import("../../src/resources/managed-database/index.ts")).managedDatabaseType, { namespace: cluster.namespace, name: "orders" });
    await waitFor("source gone", async () => get("orders").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
    await env.repass("ManagedDatabase", key("orders-restored"), 2);
    const after = await get("orders-restored");
    expect(condition(after, "Ready")?.status).toBe("True");
    expect(condition(after, "Synced")?.status).toBe("True");
    expect(creates()).toBe(before + 1);
  });

  it("forks a given point in time; one before the oldest restore point or in the future is RestoreTimeOutOfRange with the range, and nothing is created", async () => {
    const source = await readyDatabase("ledger");
    const sourceId = Number(source.status?.id);
    const before = creates();

    await apply("ledger-early", forkOf({ databaseRef: { name: "ledger" } }, { restoreTime: "2020-01-01T00:00:00Z" }));
    const early = await reasonOf("ledger-early", "Synced", "RestoreTimeOutOfRange");
    expect(early.message).toContain("before the oldest restore point");
    expect(early.message).toContain(`can be restored to any time from ${String(await oldestRestore(env, cluster.namespace, "ledger"))} to now`);

    const future = new Date(Date.now() + 3_600_000).toISOString();
    await apply("ledger-future", forkOf({ databaseRef: { name: "ledger" } }, { restoreTime: future }));
    expect((await reasonOf("ledger-future", "Synced", "RestoreTimeOutOfRange")).message).toContain("is in the future");
    await env.repass("ManagedDatabase", key("ledger-future"), 2);
    expect(creates()).toBe(before);

    // In range: this second, which is not before the source's creation (its oldest restore
    // point, made before this test read the clock) nor after now, as both sides compare to the
    // second. That time is the fork's.
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    await apply("ledger-at", forkOf({ databaseRef: { name: "ledger" } }, { restoreTime: at.toISOString().replace(".000Z", "+00:00") }));
    const fork = await waitFor("fork at a time Ready", () => readyAt("ledger-at"), 60_000, 100);
    expect(forkStatus(fork)).toEqual({ source: sourceId, restoreTime: at.toISOString().replace(".000Z", "Z") });
    expect(creates()).toBe(before + 1);
  });

  it("waits for its source (WaitingForRestoreSource): one not there yet, one suspended; then forks it", async () => {
    const before = creates();
    await apply("early-fork", forkOf({ databaseRef: { name: "later" } }));
    expect((await reasonOf("early-fork", "Ready", "WaitingForRestoreSource")).message).toContain("ManagedDatabase later, which is not in namespace");
    expect(condition(await get("early-fork"), "Synced")?.status).not.toBe("False");
    await env.repass("ManagedDatabase", key("early-fork"), 2);
    expect(creates()).toBe(before);
    await apply("later", mysql);
    const early = await waitFor("fork Ready once its source exists", () => readyAt("early-fork"), 60_000, 100);
    expect(forkStatus(early)?.source).toBe((await get("later")).status?.id);

    await apply("sleeper", { ...mysql, suspended: true });
    await waitFor("sleeper suspended", async () => ((await get("sleeper")).status?.status === "suspended" ? true : undefined), 60_000, 100);
    const made = creates();
    await apply("sleepy-fork", forkOf({ databaseRef: { name: "sleeper" } }));
    await waitFor("waits for the suspended source", async () => {
      const c = condition(await get("sleepy-fork"), "Ready");
      return c?.reason === "WaitingForRestoreSource" && c.message?.includes("is suspended") === true ? c : undefined;
    }, 60_000, 100);
    await env.repass("ManagedDatabase", key("sleepy-fork"), 2);
    expect(creates()).toBe(made);

    await apply("sleeper", { ...mysql, suspended: false });
    const fork = await waitFor("fork Ready once the source is active", () => readyAt("sleepy-fork"), 60_000, 100);
    expect(forkStatus(fork)?.source).toBe((await get("sleeper")).status?.id);
    expect(creates()).toBe(made + 1);
  });

  it("refuses a source of another engine or major version (RestoreSourceMismatch), nothing created", async () => {
    await readyDatabase("pg-source", { ...mysql, engine: "postgresql", version: "16" });
    const before = creates("postgresql") + creates("mysql");
    await apply("wrong-engine", forkOf({ databaseRef: { name: "pg-source" } }));
    expect((await reasonOf("wrong-engine", "Synced", "RestoreSourceMismatch")).message).toContain("a fork has its source's engine");
    await apply("wrong-version", { ...forkOf({ databaseRef: { name: "pg-source" } }), engine: "postgresql", version: "17" });
    expect((await reasonOf("wrong-version", "Synced", "RestoreSourceMismatch")).message).toContain("spec.version must be \"16\"");
    expect(creates("postgresql") + creates("mysql")).toBe(before);
  });

  it("makes one fork when the create's answer is lost, found again by its label", async () => {
    const source = await readyDatabase("billing");
    env.emulator.setFaults({ dropRate: 1, routes: ["POST /databases/mysql/instances"] });
    try {
      await apply("billing-restored", forkOf({ databaseRef: { name: "billing" } }));
      await waitFor("create-pending recorded", async () => ((await get("billing-restored")).status?.createPending !== undefined ? true : undefined), 60_000, 50);
    } finally {
      env.emulator.setFaults({ dropRate: 0, routes: [] });
    }
    const fork = await waitFor("lost fork adopted", () => readyAt("billing-restored"), 60_000, 100);
    const label = derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: "billing-restored" });
    const all = (await env.linode.databases.engine("mysql").listAll()).filter((d) => d.label === label);
    expect(all).toHaveLength(1);
    expect(all[0]?.id).toBe(fork.status?.id);
    expect(forkStatus(fork)?.source).toBe(source.status?.id);
  });
});

describe("restoreFrom: a fork by id", () => {
  const cluster = useTestCluster("fork-id");
  let env: OperatorEnv;
  // No namespace may name ids with the operator's own token here.
  // The team's own token: the same Linode account as the operator's, a token of its own.
  const OWN_TOKEN = "team-own-token";
  const OTHER_ACCOUNT_TOKEN = "another-account-token";
  beforeAll(async () => { env = await startOperatorEnv(cluster, { ...envOptions("current"), adoptNamespaces: [], emulatorConfig: { tokens: [{ token: OWN_TOKEN }, { token: OTHER_ACCOUNT_TOKEN, account: "elsewhere" }] } }); });
  afterAll(async () => { await env.stop(); });
  const { apply, get, readyAt, reasonOf, creates } = databaseHelpers(cluster, () => env);
  const seed = async (platform: "legacy" | "current"): Promise<number> => {
    const res = await fetch(`${new URL(env.emulator.url).origin}/_emulator/seed`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ databases: { count: 1, platform, labelPrefix: `someone-${platform}` } }),
    });
    return ((await res.json()) as { databases: { first_id: number } }).databases.first_id;
  };
  const tokenSecret = (name = "our-token", token = OWN_TOKEN): Promise<unknown> => env.deps.kube.applySecret({
    metadata: { name, namespace: cluster.namespace, labels: { "linode.operator.dev/credentials": "true" } },
    type: "Opaque", data: { token: Buffer.from(token).toString("base64") },
  });

  it("with the operator's shared token where adoption is not allowed: AdoptionNotAllowed, nothing read or created", async () => {
    const id = await seed("current");
    // The emulator counts by route: the first test of this env, so any read of a database by id is this one's.
    const gets = (): number => env.emulator.requestCounts()["GET /databases/mysql/instances/{instanceId}"] ?? 0;
    const before = creates();
    await apply("taken", forkOf({ databaseId: id }));
    const c = await reasonOf("taken", "Synced", "AdoptionNotAllowed");
    expect(c.message).toContain(`making the new database from the existing one with id ${String(id)} (spec.restoreFrom.pointInTime.databaseId)`);
    expect(creates()).toBe(before);
    expect(gets()).toBe(0);
  });

  it("with the user's own token (credentialsRef): forks it; a legacy database is UnsupportedOnPlatform, pointing at its backups", async () => {
    await tokenSecret();
    const id = await seed("current");
    await apply("mine", { ...forkOf({ databaseId: id }), credentialsRef: { name: "our-token" } });
    const fork = await waitFor("fork by id Ready", () => readyAt("mine"), 60_000, 100);
    expect(forkStatus(fork)?.source).toBe(id);

    const legacy = await seed("legacy");
    const before = creates();
    await apply("from-legacy", { ...forkOf({ databaseId: legacy }), credentialsRef: { name: "our-token" } });
    const c = await reasonOf("from-legacy", "Synced", "UnsupportedOnPlatform");
    expect(c.message).toContain("legacy platform, which has no point-in-time restore");
    expect(c.message).toContain("spec.requests.restore");
    const missing = await (async () => {
      await apply("from-nothing", { ...forkOf({ databaseId: 999_999 }), credentialsRef: { name: "our-token" } });
      return reasonOf("from-nothing", "Synced", "RestoreSourceMismatch");
    })();
    expect(missing.message).toContain("has no mysql database 999999");
    expect(creates()).toBe(before);
    expect((await get("from-legacy")).status?.id).toBeUndefined();
  });

  it("refuses a source by reference in another Linode account (RestoreSourceMismatch): a fork is made in its source's account", async () => {
    await tokenSecret("elsewhere-token", OTHER_ACCOUNT_TOKEN);
    await apply("theirs", { ...mysql, credentialsRef: { name: "elsewhere-token" } });
    await waitFor("theirs Ready", () => readyAt("theirs"), 60_000, 100);
    const before = creates();
    await apply("cross-account", { ...forkOf({ databaseRef: { name: "theirs" } }), credentialsRef: { name: "our-token" } });
    expect((await reasonOf("cross-account", "Synced", "RestoreSourceMismatch")).message).toContain("is in another Linode account than this resource");
    expect(creates()).toBe(before);
  });
});
