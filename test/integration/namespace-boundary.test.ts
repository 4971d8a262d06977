// A namespace is a boundary, on a real API server and the emulator over HTTP (three accounts:
// the operator's, team A's, team B's). One case per finding of the issue "One namespace never
// reaches another's cloud objects; nothing is orphaned across accounts, namespace deletion or a
// snapshot deleted mid-backup", numbered as there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import { IN_USE_FINALIZER } from "../../src/runtime/protection.ts";
import { kit } from "../harness/boundary-kit.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
const TEAM_A = "aaaa-boundary-team-a";
const TEAM_B = "bbbb-boundary-team-b";
const teams = { tokens: [{ token: TEAM_A, account: "team-a" }, { token: TEAM_B, account: "team-b" }] };
const EXTERNAL_ID = "linode.operator.dev/external-id";

describe("a namespace is a boundary", () => {
  const cluster = useTestCluster("ns-a");
  let env: OperatorEnv;
  const k = kit(cluster, () => env);
  const A = (): string => cluster.namespace;
  const B = (): string => `${cluster.namespace}-b`;
  const C = (): string => `${cluster.namespace}-c`;
  const mysql = (token?: string) => k.as(token).databases.engine("mysql");

  beforeAll(async () => {
    for (const ns of [B(), C()]) await cluster.core.createNamespace({ body: { metadata: { name: ns, labels: { "linode.operator.dev/test": "true" } } } });
    // One operator over three namespaces on one token; A and B may adopt by id with it, C may not.
    env = await startOperatorEnv(cluster, {
      poll: { pendingMillis: 300, readyMillis: 2_000 }, emulatorConfig: teams, provisionSeconds: 0.3,
      extraNamespaces: [B(), C()], adoptNamespaces: [A(), B()],
    });
  });
  afterAll(async () => {
    await k.close();
    await env.stop();
    for (const ns of [B(), C()]) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("1: another namespace naming a database by id on the shared token gets nothing of it: ExternalIdInUse, no Secret, no update, no delete", async () => {
    await k.create(mdb, A(), "orders", base);
    const id = Number((await k.ready(mdb, A(), "orders")).status?.id);
    const path = `/databases/mysql/instances/${String(id)}`;
    const allowBefore = (await mysql().get(id)).allowList;
    await k.create(mdb, B(), "orders", { ...base, databaseId: id, allowList: ["0.0.0.0/0"] });
    const c = await k.condWith(mdb, B(), "orders", "Synced", "ExternalIdInUse");
    expect(c.message).not.toContain(A());
    expect(k.cond(await k.get(mdb, B(), "orders"), "Ready")?.reason).toBe("ExternalIdInUse");
    // Three more looks at each: the two would have fought here.
    await Promise.all([k.repass(mdb, A(), "orders", 3), k.repass(mdb, B(), "orders", 3)]);
    expect(k.mutationsOn(path, "PUT")).toBe(0);
    expect((await mysql().get(id)).allowList).toEqual(allowBefore);
    expect(await k.secret(B(), "orders-connection")).toBeUndefined();
    expect((await k.get(mdb, B(), "orders")).status?.externalId).toBeUndefined();
    await k.remove(mdb, B(), "orders");
    await k.gone(mdb, B(), "orders");
    expect(k.mutationsOn(path, "DELETE")).toBe(0);
    expect((await mysql().get(id)).status).toBe("active");
    expect((await k.ready(mdb, A(), "orders")).status?.id).toBe(id);
  });

  it("1b: adopting by id on the operator's token is the admin's decision (AdoptionNotAllowed, nothing read); with the namespace's own token it is allowed", async () => {
    const theirs = await mysql().create({ ...base, label: "c-adopt-shared" });
    await k.create(mdb, C(), "adopter", { ...base, databaseId: theirs.id, managementPolicy: "Observe" });
    const c = await k.condWith(mdb, C(), "adopter", "Synced", "AdoptionNotAllowed");
    expect(c.message).toMatch(/spec\.credentialsRef/);
    expect(await k.secret(C(), "adopter-connection")).toBeUndefined();
    // The team's own account: its token reaches only its own objects, so naming an id is theirs to do.
    await k.tokenSecret(C(), "team-a", TEAM_A);
    const own = await mysql(TEAM_A).create({ ...base, label: "c-adopt-own" });
    await k.create(mdb, C(), "own", { ...base, databaseId: own.id, credentialsRef: { name: "team-a" }, deletionPolicy: "Retain" });
    expect((await k.ready(mdb, C(), "own")).status?.id).toBe(own.id);
    expect(await k.secret(C(), "own-connection")).toBeDefined();
  });

  it("2: an external-id annotation pointing elsewhere is refused (DatabaseIdMismatch), never followed; deleting deletes only the recorded database", async () => {
    await k.create(mdb, A(), "mine", base);
    const mine = Number((await k.ready(mdb, A(), "mine")).status?.id);
    const other = await mysql().create({ ...base, label: "someone-elses-db" });
    await k.patch(mdb, A(), "mine", { metadata: { annotations: { [EXTERNAL_ID]: String(other.id) } }, spec: { allowList: ["198.51.100.9"] } });
    const c = await k.condWith(mdb, A(), "mine", "Synced", "DatabaseIdMismatch");
    expect(c.message).toContain(String(other.id));
    // Three more looks at it: still refused, never followed.
    await k.repass(mdb, A(), "mine", 3);
    expect(k.cond(await k.get(mdb, A(), "mine"), "Synced")?.reason).toBe("DatabaseIdMismatch");
    expect(k.mutationsOn(`/databases/mysql/instances/${String(other.id)}`)).toBe(0);
    await k.remove(mdb, A(), "mine");
    await k.gone(mdb, A(), "mine");
    expect((await mysql().get(other.id)).label).toBe("someone-elses-db");
    await expect(mysql().get(mine)).rejects.toMatchObject({ kind: "notFound" });
  });

  it("2b: a snapshot whose annotation names another database's backup is refused (BackupIdMismatch); deleting it deletes only its own backup", async () => {
    await k.create(mdb, A(), "snapdb", base);
    const own = Number((await k.ready(mdb, A(), "snapdb")).status?.id);
    await k.create(snapType, A(), "s", { databaseRef: { name: "snapdb" } });
    const ownBackup = Number((await k.ready(snapType, A(), "s")).status?.backupId);
    const other = await mysql().create({ ...base, label: "other-team-db" });
    await waitFor("other active", async () => ((await mysql().get(other.id)).status === "active" ? true : undefined), 30_000, 100);
    await mysql().createSnapshot(other.id, { label: "theirs" });
    const theirs = await waitFor("their backup", async () => (await mysql().listAllBackups(other.id)).find((b) => b.label === "theirs"), 30_000, 100);
    await k.patch(snapType, A(), "s", { metadata: { annotations: { [EXTERNAL_ID]: `mysql/${String(other.id)}/${String(theirs.id)}` } } });
    await k.condWith(snapType, A(), "s", "Synced", "BackupIdMismatch");
    await k.remove(snapType, A(), "s");
    await k.gone(snapType, A(), "s");
    expect((await mysql().listAllBackups(other.id)).map((b) => b.id)).toContain(theirs.id);
    expect((await mysql().listAllBackups(own)).map((b) => b.id)).not.toContain(ownBackup);
  });

  it("3: a credentials reset and a restore in one edit: the restore is refused (RestoreAfterCredentialsReset), never sent", async () => {
    await k.create(mdb, A(), "both", base);
    const id = Number((await k.ready(mdb, A(), "both")).status?.id);
    await mysql().createSnapshot(id, { label: "before" });
    const backup = await waitFor("backup", async () => (await mysql().listAllBackups(id)).find((b) => b.label === "before"), 30_000, 100);
    await waitFor("active", async () => ((await mysql().get(id)).status === "active" ? true : undefined), 30_000, 100);
    const restores = k.count("POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore");
    await k.patch(mdb, A(), "both", { spec: { requests: { resetCredentials: "r1", restore: { token: "t1", backupId: backup.id } } } });
    const c = await k.condWith(mdb, A(), "both", "Synced", "RestoreAfterCredentialsReset");
    expect(c.message).toContain("force: true");
    // Three more looks at it: still refused, never sent.
    await k.repass(mdb, A(), "both", 3);
    expect(k.cond(await k.get(mdb, A(), "both"), "Synced")?.reason).toBe("RestoreAfterCredentialsReset");
    expect(k.count("POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore") - restores).toBe(0);
    expect((await mysql().get(id)).status).toBe("active");
    const last = (await k.get(mdb, A(), "both")).status?.lastRequests as { resetCredentials?: { completedAt?: string }; restore?: unknown };
    expect(last.resetCredentials?.completedAt).toBeDefined();
    expect(last.restore).toBeUndefined();
  });

  it("5: a snapshot of a team's database outlives its ManagedDatabase (Retain) in the team's account, never the operator's: not DatabaseGone, and deleting it deletes the backup", async () => {
    await k.tokenSecret(A(), "team-a", TEAM_A);
    await k.create(mdb, A(), "kept", { ...base, credentialsRef: { name: "team-a" }, deletionPolicy: "Retain" });
    const id = Number((await k.ready(mdb, A(), "kept")).status?.id);
    await k.create(snapType, A(), "kept-snap", { databaseRef: { name: "kept" } });
    const backupId = Number((await k.ready(snapType, A(), "kept-snap")).status?.backupId);
    await k.remove(mdb, A(), "kept");
    await k.gone(mdb, A(), "kept");
    // Three looks at the snapshot with its ManagedDatabase gone: its backup is read in the team's account.
    await k.repass(snapType, A(), "kept-snap", 3);
    const snap = await k.get(snapType, A(), "kept-snap");
    expect(k.cond(snap, "Ready")).toMatchObject({ status: "True" });
    await k.remove(snapType, A(), "kept-snap");
    await k.gone(snapType, A(), "kept-snap");
    expect((await mysql(TEAM_A).listAllBackups(id)).map((b) => b.id)).not.toContain(backupId);
  });

  it("6: credentialsRef switched to another account's Secret: AccountChanged, nothing done in either account; reverting resumes; deleting meanwhile deletes in the recorded account", async () => {
    await k.tokenSecret(B(), "team-a", TEAM_A);
    await k.tokenSecret(B(), "team-b", TEAM_B);
    await k.create(mdb, B(), "switcher", { ...base, credentialsRef: { name: "team-a" } });
    const id = Number((await k.ready(mdb, B(), "switcher")).status?.id);
    const creates = k.count("POST /databases/mysql/instances");
    await k.patch(mdb, B(), "switcher", { spec: { credentialsRef: { name: "team-b" }, requests: { recreate: "again" } } });
    const c = await k.condWith(mdb, B(), "switcher", "Synced", "AccountChanged");
    expect(c.message).toMatch(/team-b/);
    // Three more looks at it: nothing done in either account.
    await k.repass(mdb, B(), "switcher", 3);
    expect(k.cond(await k.get(mdb, B(), "switcher"), "Synced")?.reason).toBe("AccountChanged");
    expect(k.count("POST /databases/mysql/instances") - creates).toBe(0);
    expect(await mysql(TEAM_B).listAll()).toEqual([]);
    await k.patch(mdb, B(), "switcher", { spec: { credentialsRef: { name: "team-a" } } });
    expect((await k.ready(mdb, B(), "switcher")).status?.id).toBe(id);
    await k.patch(mdb, B(), "switcher", { spec: { credentialsRef: { name: "team-b" } } });
    await k.condWith(mdb, B(), "switcher", "Synced", "AccountChanged");
    await k.remove(mdb, B(), "switcher");
    await k.gone(mdb, B(), "switcher");
    await expect(mysql(TEAM_A).get(id)).rejects.toMatchObject({ kind: "notFound" });
    expect(k.count("POST /databases/mysql/instances") - creates).toBe(0);
  });

  it("9: a stuck snapshot ahead in the queue holds no one up; each shows its own reason", async () => {
    await k.create(mdb, A(), "queue", base);
    await k.ready(mdb, A(), "queue");
    await k.create(snapType, A(), "stuck", { databaseRef: { name: "queue" }, credentialsRef: { name: "no-such-secret" } });
    await k.condWith(snapType, A(), "stuck", "Ready", "CredentialsNotFound");
    await k.create(snapType, A(), "held", { databaseRef: { name: "queue" } }, { "linode.operator.dev/paused": "true" });
    await k.condWith(snapType, A(), "held", "Synced", "Paused");
    await k.create(snapType, A(), "next", { databaseRef: { name: "queue" } });
    expect((await k.ready(snapType, A(), "next")).status?.phase).toBe("Available");
    expect(k.cond(await k.get(snapType, A(), "stuck"), "Ready")?.reason).toBe("CredentialsNotFound");
  });

  it("10: no snapshot of a database the operator only observes or was told to leave alone: DatabaseNotManaged, DatabasePaused, nothing sent", async () => {
    const posts = (): number => k.count("POST /databases/mysql/instances/{instanceId}/backups");
    const theirs = await mysql().create({ ...base, label: "observed-only" });
    await k.create(mdb, A(), "observed", { ...base, databaseId: theirs.id, managementPolicy: "Observe" });
    await k.ready(mdb, A(), "observed");
    const before = posts();
    await k.create(snapType, A(), "of-observed", { databaseRef: { name: "observed" } });
    const c = await k.condWith(snapType, A(), "of-observed", "Ready", "DatabaseNotManaged");
    expect(c.message).toMatch(/Observe/);
    await k.create(mdb, A(), "quiet", base);
    await k.ready(mdb, A(), "quiet");
    await k.patch(mdb, A(), "quiet", { metadata: { annotations: { "linode.operator.dev/paused": "true" } } });
    await k.condWith(mdb, A(), "quiet", "Synced", "Paused");
    await k.create(snapType, A(), "of-paused", { databaseRef: { name: "quiet" } });
    await k.condWith(snapType, A(), "of-paused", "Ready", "DatabasePaused");
    // Three more looks at each: still waiting, nothing sent.
    await Promise.all([k.repass(snapType, A(), "of-observed", 3), k.repass(snapType, A(), "of-paused", 3)]);
    expect(posts() - before).toBe(0);
    expect(k.cond(await k.get(snapType, A(), "of-observed"), "Ready")?.reason).toBe("DatabaseNotManaged");
    expect(k.cond(await k.get(snapType, A(), "of-paused"), "Ready")?.reason).toBe("DatabasePaused");
  });
});

/**
 * An env on a namespace of its own, with three accounts; a backup takes 2 emulated seconds, so
 * a snapshot can be deleted while it is taken. `start(reuse)` starts another on the same cloud.
 */
function deletionEnv(prefix: string) {
  const cluster = useTestCluster(prefix);
  let env: OperatorEnv;
  const k = kit(cluster, () => env);
  const ns = (): string => cluster.namespace;
  const start = (reuse?: OperatorEnv): Promise<OperatorEnv> => startOperatorEnv(cluster, {
    poll: { pendingMillis: 300, readyMillis: 2_000 }, emulatorConfig: teams, provisionSeconds: 2,
    ...(reuse !== undefined ? { reuseEmulator: reuse.emulator } : {}),
  });
  beforeAll(async () => { env = await start(); });
  afterAll(async () => {
    await k.close();
    await env.stop();
    await env.emulator.close();
  });
  return { cluster, k, ns, start, get env(): OperatorEnv { return env; }, set env(e: OperatorEnv) { env = e; } };
}

describe("a snapshot deleted mid-backup takes its backup with it", () => {
  const d = deletionEnv("ns-mid");
  const { k, ns } = d;

  it("7: a DatabaseSnapshot deleted while its backup is being taken keeps its finalizer until the backup appears, then deletes it", async () => {
    await k.create(mdb, ns(), "db", base);
    const id = Number((await k.ready(mdb, ns(), "db")).status?.id);
    await k.create(snapType, ns(), "mid", { databaseRef: { name: "db" } });
    const pending = await waitFor("the backup requested", async () => { const o = await k.get(snapType, ns(), "mid"); return o.status?.phase === "BackingUp" ? o : undefined; }, 30_000, 50);
    const label = String(pending.status?.label);
    // Emulated time stands still: the backup cannot appear while the operator looks.
    d.env.emulator.setTimeScale(0);
    try {
      expect((await k.as().databases.engine("mysql").get(id)).status).toBe("backing_up");
      await k.remove(snapType, ns(), "mid");
      await waitFor("the deletion seen", async () => ((await k.get(snapType, ns(), "mid")).metadata.deletionTimestamp !== undefined ? true : undefined), 30_000, 50);
      // Three passes of it since (it is looked at again every pending poll while the backup is taken).
      await d.env.afterPasses("DatabaseSnapshot", `${ns()}/mid`, 3);
      expect((await k.get(snapType, ns(), "mid")).metadata.finalizers).toContain("linode.operator.dev/finalizer");
      expect((await k.as().databases.engine("mysql").get(id)).status).toBe("backing_up");
    } finally {
      d.env.emulator.setTimeScale(1);
    }
    await k.gone(snapType, ns(), "mid");
    await waitFor("active", async () => ((await k.as().databases.engine("mysql").get(id)).status === "active" ? true : undefined), 30_000, 100);
    expect((await k.as().databases.engine("mysql").listAllBackups(id)).filter((b) => b.label === label)).toEqual([]);
  });

});

describe("deletion always reaches the account", () => {
  const d = deletionEnv("ns-del");
  const { cluster, k, ns, start } = d;

  it("4: a namespace deleted while the operator is down: the token Secret stays until its resources are gone, the cloud objects are deleted, the namespace goes", async () => {
    await k.tokenSecret(ns(), "team-a", TEAM_A);
    await k.create(mdb, ns(), "team-db", { ...base, credentialsRef: { name: "team-a" } });
    await k.create(nbType, ns(), "team-nb", { region: "us-east", credentialsRef: { name: "team-a" }, configs: [{ port: 80, check: "none", nodes: [{ label: "web-1", address: "192.168.10.5:80" }] }] });
    await k.ready(mdb, ns(), "team-db");
    await k.ready(nbType, ns(), "team-nb");
    const secret = await waitFor("the in-use finalizer", async () => { const s = await k.secret(ns(), "team-a"); return s?.metadata?.finalizers?.includes(IN_USE_FINALIZER) === true ? s : undefined; }, 30_000, 100);
    expect(secret.metadata?.finalizers).toEqual([IN_USE_FINALIZER]);
    const teamA = k.as(TEAM_A);
    expect(await teamA.databases.engine("mysql").listAll()).toHaveLength(1);
    await d.env.stop({ keepEmulator: true }); // the operator is down (an upgrade, a failover, a crash)
    await cluster.core.deleteNamespace({ name: ns() });
    await waitFor("the namespace's objects being deleted", async () => {
      const s = await k.secret(ns(), "team-a");
      return s?.metadata?.deletionTimestamp !== undefined ? true : undefined;
    }, 60_000, 200);
    d.env = await start(d.env);
    await waitFor("the namespace gone", async () => cluster.core.readNamespace({ name: ns() }).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 90_000, 500);
    expect(await teamA.databases.engine("mysql").listAll()).toEqual([]);
    expect(await teamA.nodeBalancers.listAll()).toEqual([]);
  });
});

describe("a one-shot request the operator's own call budget held back was never sent, and is sent later", () => {
  const cluster = useTestCluster("ns-budget");
  let env: OperatorEnv;
  const k = kit(cluster, () => env);
  const ns = (): string => cluster.namespace;
  // The operator waits at most 1 s for its call budget; longer, the call is held back (never sent).
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 2_000 }, clientRetry: { maxRateLimitWaitMs: 1_000 } }); });
  afterAll(async () => {
    await fetch(`${env.emulator.adminUrl}/rate-limits`, { method: "PUT", body: JSON.stringify({}) });
    await k.close();
    await env.stop();
  });

  it("8: a restore held back by the call budget is not recorded as sent: it is sent once the budget allows, never RequestOutcomeUnknown", async () => {
    const restoreRoute = "POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore";
    await k.create(mdb, ns(), "budget", base);
    const id = Number((await k.ready(mdb, ns(), "budget")).status?.id);
    const mysql = k.as().databases.engine("mysql");
    await mysql.createSnapshot(id, { label: "restoreme" });
    const backup = await waitFor("backup", async () => (await mysql.listAllBackups(id)).find((b) => b.label === "restoreme"), 30_000, 100);
    await waitFor("active", async () => ((await mysql.get(id)).status === "active" ? true : undefined), 30_000, 100);
    // An update of this database spends the token's write budget for 10 s: the restore in the same pass must wait.
    const limits = await (await fetch(`${env.emulator.adminUrl}/rate-limits`)).json() as { routes: Record<string, unknown> };
    await fetch(`${env.emulator.adminUrl}/rate-limits`, { method: "PUT", body: JSON.stringify({ ...limits, routes: { ...limits.routes, "PUT /databases/mysql/instances/{instanceId}": { limit: 1, windowSeconds: 10 } } }) });
    await k.patch(mdb, ns(), "budget", { spec: { allowList: ["203.0.113.44"], requests: { restore: { token: "t1", backupId: backup.id } } } });
    // Held back, and not recorded as sent: a status saying RateLimited with no restore recorded.
    // (Each retry announces the restore before asking the budget again, so a status read in that
    // instant shows the announcement beside the last pass's RateLimited: the one to wait for is
    // the status a held pass leaves; an operator that kept the announcement never shows it.)
    await waitFor("held back by the budget, the restore not recorded", async () => {
      const o = await k.get(mdb, ns(), "budget");
      return k.cond(o, "Synced")?.reason === "RateLimited" && (o.status?.lastRequests as { restore?: unknown } | undefined)?.restore === undefined ? o : undefined;
    }, 30_000, 20);
    const heldAt = Date.now();
    const restorePath = `/databases/mysql/instances/${String(id)}/backups/${String(backup.id)}/restore`;
    expect(env.emulator.mutations().filter((x) => x.path === restorePath && x.receivedAt <= heldAt)).toEqual([]);
    const done = await waitFor("the restore recorded", async () => {
      const o = await k.get(mdb, ns(), "budget");
      expect(k.cond(o, "Synced")?.reason).not.toBe("RequestOutcomeUnknown");
      const r = (o.status?.lastRequests as { restore?: { completedAt?: string; backupId?: number } } | undefined)?.restore;
      return r?.completedAt !== undefined ? r : undefined;
    }, 60_000, 100);
    expect(done.backupId).toBe(backup.id);
    expect(k.count(restoreRoute)).toBe(1);
  });
});

describe("a 2xx answer that is not JSON", () => {
  // Alone: nothing else here would wake a resource parked by mistake.
  const cluster = useTestCluster("ns-body");
  let env: OperatorEnv;
  const k = kit(cluster, () => env);
  const ns = (): string => cluster.namespace;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => {
    await k.close();
    await env.stop();
  });

  it("11: a 2xx answer that is not JSON is passing trouble: retried, never parked; an outside password reset still reaches the Secret afterwards", async () => {
    await k.create(mdb, ns(), "bodied", base);
    const id = Number((await k.ready(mdb, ns(), "bodied")).status?.id);
    env.emulator.setFaults({ badBodyRate: 1, routes: ["GET /databases/mysql/instances"] });
    try {
      await waitFor("the failure reported", async () => { const c = k.cond(await k.get(mdb, ns(), "bodied"), "Synced"); return c?.status === "False" ? c : undefined; }, 30_000, 100);
      await k.as().databases.engine("mysql").resetCredentials(id); // e.g. in Cloud Manager, while the list is broken
    } finally {
      env.emulator.setFaults({});
    }
    const fresh = await k.as().databases.engine("mysql").getCredentials(id);
    await waitFor("the new password in the Secret", async () => {
      const s = await k.secret(ns(), "bodied-connection");
      return Buffer.from(s?.data?.password ?? "", "base64").toString() === fresh.password ? true : undefined;
    }, 30_000, 200);
    await k.ready(mdb, ns(), "bodied");
  });
});
