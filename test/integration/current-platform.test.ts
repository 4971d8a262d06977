// Linode's current database platform on a real API server and the emulator over HTTP: what
// exists only there (suspend and resume, ...) and what the legacy platform refuses
// (UnsupportedOnPlatform, nothing sent). Each platform in an env of its own, with a short
// drift window so a change made outside is seen within the test.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { snakify } from "../../src/linode/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { envOptions, databaseHelpers as helpers, mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

describe("current platform: suspend and resume", () => {
  const cluster = useTestCluster("current");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, condition, readyAt, readyDatabase, secret, posts } = helpers(cluster, () => env);

  it("spec.suspended suspends (Ready=False Suspended, the Secret kept), puts back a resume made outside within the drift window, and resumes", async () => {
    const id = Number((await readyDatabase("sleepy")).status?.id);
    const api = env.linode.databases.engine("mysql");
    const secretBefore = await secret("sleepy-connection");
    await apply("sleepy", { ...mysql, suspended: true });
    const suspended = (): Promise<ManagedObject> => waitFor("Suspended", async () => {
      const x = await get("sleepy");
      return condition(x, "Ready")?.reason === "Suspended" && x.status?.status === "suspended" ? x : undefined;
    }, 60_000, 100);
    const s = await suspended();
    expect(condition(s, "Ready")?.status).toBe("False");
    expect(condition(s, "Ready")?.message).toContain("as spec.suspended asks");
    expect(condition(s, "Synced")?.status).toBe("True");
    expect(posts(id, "/suspend")).toBe(1);
    expect(await secret("sleepy-connection")).toEqual(secretBefore);
    // Three passes while it sleeps: nothing more is sent.
    await env.repass("ManagedDatabase", key("sleepy"), 3);
    expect(posts(id, "/suspend")).toBe(1);

    // Resumed outside: suspended again within the drift window.
    await api.resume(id);
    await waitFor("resumed outside", async () => ((await api.get(id)).status === "active" ? true : undefined), 30_000, 100);
    await waitFor("suspended again", () => (posts(id, "/suspend") === 2 ? true : undefined), 30_000, 100);
    await suspended();

    // Engine parameters changed while it sleeps wait for it to run (the API refuses them meanwhile): nothing sent.
    const puts = (): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;
    const putsBefore = puts();
    const tuned = { ...mysql, engineConfig: { mysql: { connect_timeout: 20 } } };
    await apply("sleepy", { ...tuned, suspended: true });
    const waiting = await waitFor("engineConfig waits", async () => { const c = condition(await get("sleepy"), "Synced"); return c?.status === "False" && c.message?.includes("applied once it is active") === true ? c : undefined; }, 30_000, 100);
    expect(waiting.reason).toBe("Waiting");
    await env.repass("ManagedDatabase", key("sleepy"), 2);
    expect(puts()).toBe(putsBefore);

    // Resumed by the spec: the parameters follow.
    await apply("sleepy", { ...tuned, suspended: false });
    await waitFor("Ready again", () => readyAt("sleepy", (x) => x.status?.status === "active" && condition(x, "Synced")?.status === "True"), 60_000, 100);
    expect(posts(id, "/resume")).toBe(2); // the outside one, and ours
    expect(puts()).toBe(putsBefore + 1);
    expect((await api.get(id)).engineConfig).toMatchObject({ mysql: { connectTimeout: 20 } });
    expect(await secret("sleepy-connection")).toEqual(secretBefore);
  });
});

describe("current platform: a private network (VPC)", () => {
  const cluster = useTestCluster("current-vpc");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, readyAt, readyDatabase, secret } = helpers(cluster, () => env);
  const puts = (id: number): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;

  it("is set, changed and removed, shown in status; without public access the Secret's host is the private one", async () => {
    const id = Number((await readyDatabase("vpc-db", { ...mysql, privateNetwork: { vpcId: 7, subnetId: 70 } })).status?.id);
    const api = env.linode.databases.engine("mysql");
    expect((await api.get(id)).privateNetwork).toMatchObject({ vpcId: 7, subnetId: 70, publicAccess: false });
    const inVpc = await waitFor("status shows the VPC", () => readyAt("vpc-db", (o) => (o.status?.privateNetwork as { vpcId?: number } | undefined)?.vpcId === 7), 30_000, 100);
    expect(inVpc.status?.privateNetwork).toEqual({ vpcId: 7, subnetId: 70, publicAccess: false });
    const privateHost = (await api.get(id)).hosts.primary ?? "";
    expect(privateHost).toMatch(/^private-/);
    await waitFor("the Secret's host is the private one", async () => ((await secret("vpc-db-connection")).host === privateHost ? true : undefined), 30_000, 100);

    await apply("vpc-db", { ...mysql, privateNetwork: { vpcId: 8, subnetId: 80, publicAccess: true } });
    await waitFor("moved to VPC 8", async () => ((await api.get(id)).privateNetwork?.vpcId === 8 ? true : undefined), 30_000, 100);
    await waitFor("status follows", () => readyAt("vpc-db", (o) => (o.status?.privateNetwork as { vpcId?: number } | undefined)?.vpcId === 8), 30_000, 100);
    const publicHost = (await api.get(id)).hosts.primary ?? "";
    expect(publicHost).not.toMatch(/^private-/);
    await waitFor("the Secret's host is the public one", async () => ((await secret("vpc-db-connection")).host === publicHost ? true : undefined), 30_000, 100);

    await apply("vpc-db", mysql);
    await waitFor("left the VPC", async () => ((await api.get(id)).privateNetwork === null ? true : undefined), 30_000, 100);
    await waitFor("status without a VPC", () => readyAt("vpc-db", (o) => o.status?.privateNetwork === undefined), 30_000, 100);
    // In step: three more passes send nothing.
    const sent = puts(id);
    await env.repass("ManagedDatabase", key("vpc-db"), 3);
    expect(puts(id)).toBe(sent);
  });
});

describe("current platform: engine parameters", () => {
  const cluster = useTestCluster("current-params");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, condition, readyAt, readyDatabase, reasonOf } = helpers(cluster, () => env);
  const puts = (id: number): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`).length;
  const config = async (id: number): Promise<Record<string, unknown>> => snakify((await env.linode.databases.engine("mysql").get(id)).engineConfig ?? {});

  it("that the catalogue refuses are InvalidEngineConfig before a create is announced or sent", async () => {
    const creates = (): number => env.emulator.mutations().filter((m) => m.method === "POST" && m.path === "/databases/mysql/instances").length;
    const before = creates();
    await apply("mistuned", { ...mysql, engineConfig: { mysql: { connect_timeout: 99_999 } } });
    const c = await reasonOf("mistuned", "Synced", "InvalidEngineConfig", 30_000);
    expect(c.message).toContain("mysql.connect_timeout is 99999; it accepts integer, 2..3600");
    expect((await get("mistuned")).status?.createPending).toBeUndefined();
    expect(creates()).toBe(before);
  });

  it("are set at create, checked before sending (InvalidEngineConfig), changed, put back after drift; a restarting one is a Warning", async () => {
    const id = Number((await readyDatabase("tuned", { ...mysql, engineConfig: { binlog_retention_period: 900, mysql: { connect_timeout: 20 } } })).status?.id);
    expect(await config(id)).toMatchObject({ binlog_retention_period: 900, mysql: { connect_timeout: 20 } });

    // Refused before sending: an unknown parameter and one out of range.
    const sent = puts(id);
    await apply("tuned", { ...mysql, engineConfig: { binlog_retention_period: 900, mysql: { connect_timeout: 1, no_such_thing: 3 } } });
    const c = await reasonOf("tuned", "Synced", "InvalidEngineConfig", 30_000);
    expect(c.message).toContain("mysql.connect_timeout is 1; it accepts integer, 2..3600");
    expect(c.message).toContain("mysql.no_such_thing is not a parameter");
    await env.repass("ManagedDatabase", key("tuned"), 3);
    expect(puts(id)).toBe(sent);

    // A change to one that restarts the cluster: sent once, with a Warning.
    await apply("tuned", { ...mysql, engineConfig: { binlog_retention_period: 900, mysql: { connect_timeout: 20, innodb_ft_min_token_size: 4 } } });
    await waitFor("applied", async () => (((await config(id)).mysql as Record<string, unknown> | undefined)?.innodb_ft_min_token_size === 4 ? true : undefined), 30_000, 100);
    await waitFor("Synced", () => readyAt("tuned", (o) => condition(o, "Synced")?.status === "True"), 30_000, 100);
    const events = await cluster.kc.makeApiClient((await import("@kubernetes/client-node")).EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
    expect(events.items.filter((e) => e.reason === "EngineRestart" && e.regarding?.name === "tuned").map((e) => e.note)).toEqual([expect.stringContaining("mysql.innodb_ft_min_token_size")]);

    // Changed outside: put back within the drift window; the API's own defaults are left alone.
    await env.linode.databases.engine("mysql").update(id, { engineConfig: { mysql: { connect_timeout: 30 } } });
    await waitFor("put back", async () => (((await config(id)).mysql as Record<string, unknown> | undefined)?.connect_timeout === 20 ? true : undefined), 30_000, 100);
    const settled = puts(id);
    await env.repass("ManagedDatabase", key("tuned"), 3);
    expect(puts(id)).toBe(settled);
  });
});

describe("current platform: a suspended database deleted", () => {
  const cluster = useTestCluster("current-del");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { apply, get, readyDatabase, posts } = helpers(cluster, () => env);

  it("is resumed (the API deletes a running cluster), then deleted; the resource goes", async () => {
    const id = Number((await readyDatabase("doomed")).status?.id);
    await apply("doomed", { ...mysql, suspended: true });
    await waitFor("suspended", async () => ((await get("doomed")).status?.status === "suspended" ? true : undefined), 60_000, 100);
    const del = await cluster.kubectl(["-n", cluster.namespace, "delete", "linodedb", "doomed", "--wait=true", "--timeout=60s"]);
    expect(del.code, del.stderr).toBe(0);
    await expect(env.linode.databases.engine("mysql").get(id)).rejects.toMatchObject({ status: 404 });
    expect(posts(id, "/resume")).toBe(1);
  });
});

describe("legacy platform: what only the current one has is refused", () => {
  const cluster = useTestCluster("legacy");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("legacy")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, condition, readyDatabase, posts, reasonOf } = helpers(cluster, () => env);

  it("spec.privateNetwork on an existing legacy database is UnsupportedOnPlatform; nothing is sent", async () => {
    const id = Number((await readyDatabase("novpc")).status?.id);
    await apply("novpc", { ...mysql, privateNetwork: { vpcId: 7, subnetId: 70 } });
    const c = await reasonOf("novpc", "Synced", "UnsupportedOnPlatform", 30_000);
    expect(c.message).toContain("spec.privateNetwork");
    await env.repass("ManagedDatabase", key("novpc"), 3);
    expect(env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`)).toEqual([]);
  });

  it("spec.engineConfig on a legacy database is UnsupportedOnPlatform; nothing is sent", async () => {
    const id = Number((await readyDatabase("plain")).status?.id);
    await apply("plain", { ...mysql, engineConfig: { mysql: { connect_timeout: 20 } } });
    const c = await reasonOf("plain", "Synced", "UnsupportedOnPlatform", 30_000);
    expect(c.message).toContain("spec.engineConfig");
    await env.repass("ManagedDatabase", key("plain"), 3);
    expect(env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`)).toEqual([]);
  });

  it("spec.suspended: true is UnsupportedOnPlatform; nothing is sent, the database stays active and Ready", async () => {
    const id = Number((await readyDatabase("awake")).status?.id);
    await apply("awake", { ...mysql, suspended: true });
    const c = await reasonOf("awake", "Synced", "UnsupportedOnPlatform", 30_000);
    expect(c.message).toContain("legacy platform");
    await env.repass("ManagedDatabase", key("awake"), 3);
    expect(posts(id, "/suspend")).toBe(0);
    expect((await env.linode.databases.engine("mysql").get(id)).status).toBe("active");
    expect(condition(await get("awake"), "Ready")?.status).toBe("True");
  });

  it("status.updates shows the window; a clusterSize or version change on a legacy database is ImmutableFieldMismatch; nothing is sent", async () => {
    const fixed = await readyDatabase("fixed");
    const id = Number(fixed.status?.id);
    // The window the API applies, also without spec.updates.
    expect(fixed.status?.updates).toMatchObject({ frequency: "weekly", duration: expect.any(Number) as number, hourOfDay: expect.any(Number) as number });
    for (const [change, field] of [[{ clusterSize: 3 }, "the legacy platform cannot add or remove nodes"], [{ version: "9" }, "the legacy platform never changes a cluster's version"]] as const) {
      await apply("fixed", { ...mysql, ...change });
      const c = await waitFor("ImmutableFieldMismatch", async () => { const x = condition(await get("fixed"), "Synced"); return x?.reason === "ImmutableFieldMismatch" && x.message?.includes(field) === true ? x : undefined; }, 30_000, 100);
      expect(c.status).toBe("False");
      await env.repass("ManagedDatabase", key("fixed"), 2);
    }
    expect(env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/mysql/instances/${String(id)}`)).toEqual([]);
    expect(condition(await get("fixed"), "Ready")?.status).toBe("True");
  });
});

describe("current platform: nodes and major version change in place", () => {
  const cluster = useTestCluster("current-resize");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, apply, get, condition, readyAt, readyDatabase, reasonOf } = helpers(cluster, () => env);
  const puts = (engine: string, id: number): number => env.emulator.mutations().filter((m) => m.method === "PUT" && m.path === `/databases/${engine}/instances/${String(id)}`).length;

  it("clusterSize 1 → 3 adds nodes (status resizing, then 3 nodes); 2 nodes on a shared plan is ResizeNotAllowed, nothing sent", async () => {
    const id = Number((await readyDatabase("grow")).status?.id);
    const api = env.linode.databases.engine("mysql");
    await apply("grow", { ...mysql, type: "g6-nanode-1", clusterSize: 2 });
    expect((await reasonOf("grow", "Synced", "ResizeNotAllowed")).message).toContain("a 2-node cluster needs a dedicated plan, and g6-nanode-1 is nanode");
    await env.repass("ManagedDatabase", key("grow"), 2);
    expect(puts("mysql", id)).toBe(0);

    env.emulator.setTimeScale(0.1); // the resize takes a few seconds: status shows it
    try {
      await apply("grow", { ...mysql, clusterSize: 3 });
      await waitFor("resizing", async () => ((await get("grow")).status?.status === "resizing" ? true : undefined), 30_000, 50);
    } finally {
      env.emulator.setTimeScale(1);
    }
    const grown = await waitFor("3 nodes", () => readyAt("grow", (o) => o.status?.clusterSize === 3 && o.status.status === "active"), 60_000, 100);
    expect(condition(grown, "Synced")?.status).toBe("True");
    expect((await api.get(id)).clusterSize).toBe(3);
    expect(puts("mysql", id)).toBe(1);
  });

  it("a higher major version is upgraded in place; a lower one is ImmutableFieldMismatch and one the API does not offer UnknownEngineVersion, nothing sent", async () => {
    const pg = { ...mysql, engine: "postgresql", version: "14" };
    const id = Number((await readyDatabase("pg-up", pg)).status?.id);
    await apply("pg-up", { ...pg, version: "16" });
    const up = await waitFor("upgraded", () => readyAt("pg-up", (o) => String(o.status?.version).startsWith("16.")), 60_000, 100);
    expect(condition(up, "Synced")?.status).toBe("True");
    const sent = puts("postgresql", id);
    expect(sent).toBe(1);
    // kubectl shows what the API reports (the full version, the plan, the nodes, the platform), not the spec.
    const wide = await cluster.kubectl(["-n", cluster.namespace, "get", "linodedb", "pg-up", "-o", "wide"]);
    expect(wide.stdout).toMatch(/pg-up\s+postgresql\s+16\.\d+\s+us-east\s+active\s+True\s+True\s+g6-nanode-1\s+1\s+current\s/);

    await apply("pg-up", { ...pg, version: "15" });
    expect((await reasonOf("pg-up", "Synced", "ImmutableFieldMismatch")).message).toContain("a major version is upgraded in place, never downgraded");
    await apply("pg-up", { ...pg, version: "99" });
    expect((await reasonOf("pg-up", "Synced", "UnknownEngineVersion")).message).toContain("the API offers postgresql versions 13, 14, 15, 16, 17");
    await env.repass("ManagedDatabase", key("pg-up"), 2);
    expect(puts("postgresql", id)).toBe(sent);
    expect(condition(await get("pg-up"), "Ready")?.status).toBe("True");
  });
});

describe("maintenance: the window the API applies, and what Linode plans", () => {
  const cluster = useTestCluster("maintenance");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, envOptions("current")); });
  afterAll(async () => { await env.stop(); });
  const { key, get, readyAt, readyDatabase } = helpers(cluster, () => env);
  const plan = async (id: number, pending: unknown[]): Promise<void> => {
    const res = await fetch(`${new URL(env.emulator.url).origin}/_emulator/databases/${String(id)}/pending-updates`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(pending) });
    expect(res.status).toBe(200);
  };
  const maintenanceEvents = async (name: string): Promise<string[]> => {
    const events = await cluster.kc.makeApiClient((await import("@kubernetes/client-node")).EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
    return events.items.filter((e) => e.reason === "MaintenancePlanned" && e.regarding?.name === name).map((e) => e.note ?? "");
  };

  it("status.updates shows the window without spec.updates; a planned update is status.pendingUpdates and one Normal Event; done, it leaves status", async () => {
    const db = await readyDatabase("patched");
    const id = Number(db.status?.id);
    expect(db.status?.updates).toMatchObject({ frequency: "weekly", duration: expect.any(Number) as number, hourOfDay: expect.any(Number) as number, dayOfWeek: expect.any(Number) as number });
    expect(db.status?.pendingUpdates).toBeUndefined();

    const planned = { description: "OS security patches", planned_for: "2026-12-01T03:00:00", deadline: "2026-12-08T03:00:00" };
    await plan(id, [planned]);
    const shown = await waitFor("pendingUpdates", () => readyAt("patched", (o) => Array.isArray(o.status?.pendingUpdates)), 30_000, 100);
    expect(shown.status?.pendingUpdates).toEqual([{ description: "OS security patches", plannedFor: "2026-12-01T03:00:00", deadline: "2026-12-08T03:00:00" }]);
    const notes = await waitFor("MaintenancePlanned", async () => { const n = await maintenanceEvents("patched"); return n.length > 0 ? n : undefined; }, 30_000, 100);
    expect(notes).toEqual(["Linode plans maintenance (OS security patches) for 2026-12-01T03:00:00, applied by 2026-12-08T03:00:00 at the latest"]);
    // Not news again.
    await env.repass("ManagedDatabase", key("patched"), 3);
    expect(await maintenanceEvents("patched")).toHaveLength(1);

    await plan(id, []);
    await waitFor("pendingUpdates gone", async () => ((await get("patched")).status?.pendingUpdates === undefined ? true : undefined), 30_000, 100);
  });
});

