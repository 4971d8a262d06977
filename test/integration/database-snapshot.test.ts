// DatabaseSnapshot and restore on a real API server and the emulator over HTTP: snapshots
// taken once each, the API's limits as a queue (no 400s sent to find out), backups in the
// database's status, deletion and Retain, a database deleted under its snapshots, and
// restores from a snapshot and from an automatic backup, once per token, guarded after a
// credentials reset.
import { EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { snapshotLabel } from "../../src/resources/database-snapshot/external.ts";
import { databaseSnapshotType as dbsnap } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startAnswerProxy, type AnswerProxy } from "../harness/answer-proxy.ts";
import { useTestCluster, type TestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
type Cond = { status: string; reason: string; message?: string };

/** What the tests need from one operator env on one namespace: objects of their own, and what was sent for them. */
function helpers(cluster: TestCluster, envOf: () => OperatorEnv) {
  const ns = (): string => cluster.namespace;
  const key = (name: string): string => `${ns()}/${name}`;
  const createDb = (name: string, spec: Record<string, unknown> = {}): Promise<ManagedObject> =>
    envOf().deps.kube.createCustom(mdb, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec: { ...base, ...spec } });
  const createSnap = (name: string, database: string, spec: Record<string, unknown> = {}): Promise<ManagedObject> =>
    envOf().deps.kube.createCustom(dbsnap, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name }, spec: { databaseRef: { name: database }, ...spec } });
  const getDb = (name: string): Promise<ManagedObject> => envOf().deps.kube.getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  const getSnap = (name: string): Promise<ManagedObject> => envOf().deps.kube.getCustom<ManagedObject>(dbsnap, { namespace: ns(), name });
  const ready = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const dbReady = (name: string): Promise<ManagedObject> => waitFor(`${name} Ready`, async () => { const o = await getDb(name); return ready(o) ? o : undefined; }, 60_000, 100);
  const available = (name: string): Promise<ManagedObject> => waitFor(`${name} Available`, async () => { const o = await getSnap(name); return o.status?.phase === "Available" && ready(o) ? o : undefined; }, 60_000, 100);
  const snapReason = (name: string, reason: string): Promise<Cond> => waitFor(`${name} ${reason}`, async () => { const c = condOf(await getSnap(name), "Ready"); return c?.reason === reason ? c : undefined; }, 60_000, 100);
  const gone = (get: () => Promise<unknown>, what: string): Promise<true> => waitFor(`${what} gone`, async () => get().then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
  const backupsOf = async (id: number): Promise<{ id: number; type: string; label: string; created: string }[]> => envOf().linode.databases.mysql.listAllBackups(id);
  /** POSTs to one database's path (`suffix` under it) the emulator answered. */
  const postsTo = (id: number, suffix: string): number => envOf().emulator.mutations().filter((m) => m.method === "POST" && m.path === `/databases/mysql/instances/${String(id)}${suffix}`).length;
  /** Snapshots taken of one database. */
  const snapshotPosts = (id: number): number => postsTo(id, "/backups");
  /** Restores sent to one database (of any backup). */
  const restoresOf = (id: number): number => envOf().emulator.mutations().filter((m) => m.method === "POST" && new RegExp(`^/databases/mysql/instances/${String(id)}/backups/\\d+/restore$`).test(m.path)).length;
  /** Requests the API refused (400) the operator sent, in all. */
  const refused = (filter: { route?: string; method?: string } = {}): Promise<number> => linodeCalls(envOf().operatorLinode, { ...filter, status: "400" });
  /** A Ready database of the test's own; its id. */
  const readyDb = async (name: string): Promise<number> => {
    await createDb(name);
    return Number((await dbReady(name)).status?.id);
  };
  /** A Ready database of the test's own with `count` Available snapshots of it ("<name>-s1", ...), taken one after the other. */
  const dbWithSnapshots = async (name: string, count: number): Promise<{ id: number; snaps: ManagedObject[] }> => {
    const id = await readyDb(name);
    const snaps: ManagedObject[] = [];
    for (let i = 1; i <= count; i++) {
      await createSnap(`${name}-s${String(i)}`, name);
      snaps.push(await available(`${name}-s${String(i)}`));
    }
    return { id, snaps };
  };
  return { ns, key, createDb, createSnap, getDb, getSnap, ready, condOf, dbReady, available, snapReason, gone, backupsOf, postsTo, snapshotPosts, restoresOf, refused, readyDb, dbWithSnapshots };
}

describe("DatabaseSnapshot and restore", () => {
  const cluster = useTestCluster("snap");
  let env: OperatorEnv;
  // A backup takes 0.5 emulated seconds; a settled database's backups are read every 2 s.
  // Backups are listed again every 3 s here (a day by default), so an automatic one shows soon.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { provisionSeconds: 0.5, poll: { pendingMillis: 300, readyMillis: 2_000 }, backupsRefreshMillis: 3_000 }); });
  afterAll(async () => { await env.stop(); });
  const { ns, key, createDb, createSnap, getDb, getSnap, condOf, dbReady, available, snapReason, gone, backupsOf, snapshotPosts, restoresOf, refused, readyDb, dbWithSnapshots } = helpers(cluster, () => env);

  it("takes a snapshot once and mirrors it: Available, with the emulator's backup id", async () => {
    const dbId = await readyDb("one-db");
    const dbReads = (): Promise<number> => linodeCalls(env.operatorLinode, { route: "/databases/mysql/instances/{instanceId}", exact: true, method: "GET" });
    const readsBefore = await dbReads();
    // The emulator's clock stands still: the backup stays being taken until it moves.
    env.emulator.setTimeScale(0);
    try {
      await createSnap("one", "one-db");
      await waitFor("one BackingUp", async () => ((await getSnap("one")).status?.phase === "BackingUp" ? true : undefined), 30_000, 100);
      await env.repass("DatabaseSnapshot", key("one"), 3);
    } finally {
      env.emulator.setTimeScale(1);
    }
    env.emulator.advance(1);
    const s1 = await available("one");
    // The database is not read alone: its ManagedDatabase saw it active (a database busy since
    // would be the create's refusal); while the backup is being taken the shared list says so.
    expect(await dbReads() - readsBefore).toBe(0);
    const backups = await backupsOf(dbId);
    expect(backups).toHaveLength(1);
    expect(s1.status).toMatchObject({ backupId: backups[0]?.id, databaseId: dbId, label: backups[0]?.label, phase: "Available" });
    expect(s1.status?.label).toMatch(/^[a-zA-Z0-9]{1,30}$/);
    expect(snapshotPosts(dbId)).toBe(1);
  });

  it("two created at once are taken one after the other, with no refusal from the API", async () => {
    const { id } = await dbWithSnapshots("pair-db", 1);
    const before = snapshotPosts(id);
    const refusedBefore = await refused({ route: "/backups", method: "POST" });
    await Promise.all([createSnap("pair-a", "pair-db"), createSnap("pair-b", "pair-db")]);
    await available("pair-a");
    await available("pair-b");
    expect(snapshotPosts(id) - before).toBe(2);
    expect(await refused({ route: "/backups", method: "POST" }) - refusedBefore).toBe(0);
    expect(await backupsOf(id)).toHaveLength(3);
  });

  it("the database's status lists its backups", async () => {
    const { id } = await dbWithSnapshots("listed-db", 3);
    const o = await waitFor("backups in status", async () => {
      const x = await getDb("listed-db");
      return ((x.status?.backups as unknown[] | undefined)?.length ?? 0) >= 3 ? x : undefined;
    }, 30_000, 200);
    const listed = o.status?.backups as { id: number; type: string; label: string; created: string }[];
    // Each as the API lists it (a snapshot this cluster took is added as its DatabaseSnapshot found it).
    const byId = (a: { id: number }, b: { id: number }): number => a.id - b.id;
    expect([...listed].sort(byId)).toEqual((await backupsOf(id)).map((b) => ({ id: b.id, type: b.type, label: b.label, created: b.created })).sort(byId));
    expect(listed.every((b) => b.type === "snapshot")).toBe(true);
  });

  it("a fourth waits (SnapshotLimitReached), sends nothing, and is taken by itself once one is deleted", async () => {
    const { id, snaps } = await dbWithSnapshots("full-db", 3);
    const before = snapshotPosts(id);
    const refusedBefore = await refused({ route: "/backups", method: "POST" });
    await createSnap("full-db-s4", "full-db");
    const c = await snapReason("full-db-s4", "SnapshotLimitReached");
    expect(c.message).toMatch(/3 snapshots/);
    expect((await getSnap("full-db-s4")).status?.phase).toBe("Waiting");
    // Three more looks at it: still waiting, nothing sent to find out.
    await env.repass("DatabaseSnapshot", key("full-db-s4"), 3);
    expect(snapshotPosts(id) - before).toBe(0);
    expect(condOf(await getSnap("full-db-s4"), "Ready")?.reason).toBe("SnapshotLimitReached");
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "full-db-s1" });
    await gone(() => getSnap("full-db-s1"), "full-db-s1");
    expect((await backupsOf(id)).map((b) => b.id)).not.toContain(snaps[0]?.status?.backupId);
    await available("full-db-s4");
    expect(snapshotPosts(id) - before).toBe(1);
    expect(await refused({ route: "/backups", method: "POST" }) - refusedBefore).toBe(0);
  });

  it("Retain leaves the backup when the resource goes", async () => {
    const { id } = await dbWithSnapshots("retain-db", 1);
    await env.deps.kube.mergePatchCustom(dbsnap, { namespace: ns(), name: "retain-db-s1" }, { spec: { deletionPolicy: "Retain" } });
    const s2 = await waitFor("Retain seen", async () => { const o = await getSnap("retain-db-s1"); return o.metadata.generation === o.status?.observedGeneration ? o : undefined; }, 30_000, 100);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "retain-db-s1" });
    await gone(() => getSnap("retain-db-s1"), "retain-db-s1");
    expect((await backupsOf(id)).map((b) => b.id)).toContain(s2.status?.backupId);
  });

  it("restores from a DatabaseSnapshot, once per token: restoring, then active, recorded", async () => {
    const { id, snaps: [snap] } = await dbWithSnapshots("restore-db", 1);
    const refusedBefore = await refused();
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "restore-db" }, { spec: { requests: { restore: { token: "r1", snapshotRef: { name: "restore-db-s1" } } } } });
    const { r: recorded, readyNow } = await waitFor("restore recorded", async () => {
      const obj = await getDb("restore-db");
      const r = (obj.status?.lastRequests as { restore?: { token: string; backupId?: number; completedAt?: string } } | undefined)?.restore;
      return r?.completedAt !== undefined ? { r, readyNow: condOf(obj, "Ready") } : undefined;
    }, 30_000, 100);
    expect(recorded).toMatchObject({ token: "r1", backupId: snap?.status?.backupId });
    // The status that records the restore already says the database is out of service.
    expect(readyNow).toMatchObject({ status: "False", reason: "Restoring" });
    await dbReady("restore-db");
    expect(restoresOf(id)).toBe(1);
    // Three more passes with the same token: not restored again.
    await env.repass("ManagedDatabase", key("restore-db"), 3);
    expect(restoresOf(id)).toBe(1);
    // Nothing read from the database in the pass that started the restore (the credentials are refused while it restores).
    expect(await refused() - refusedBefore).toBe(0);
  });

  it("restores from an automatic backup by id, once per token", async () => {
    const id = await readyDb("auto-db");
    env.emulator.advance(86_400); // a day: the daily automatic backup is made at 00:00 UTC
    const auto = await waitFor("an automatic backup", async () => (await backupsOf(id)).find((b) => b.type === "auto"), 30_000, 200);
    const refusedBefore = await refused();
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "auto-db" }, { spec: { requests: { restore: { token: "r2", backupId: auto.id } } } });
    await waitFor("restore r2 recorded", async () => {
      const r = ((await getDb("auto-db")).status?.lastRequests as { restore?: { token: string; completedAt?: string } } | undefined)?.restore;
      return r?.token === "r2" && r.completedAt !== undefined ? r : undefined;
    }, 30_000, 100);
    await dbReady("auto-db");
    expect(restoresOf(id)).toBe(1);
    // Three more passes with the same token: not restored again.
    await env.repass("ManagedDatabase", key("auto-db"), 3);
    expect(restoresOf(id)).toBe(1);
    expect(await refused() - refusedBefore).toBe(0);
    const listed = await waitFor("the automatic backup in status", async () => {
      const b = (await getDb("auto-db")).status?.backups as { id: number; type: string }[] | undefined;
      return b?.some((x) => x.type === "auto") === true ? b : undefined;
    }, 30_000, 200);
    expect(listed.find((b) => b.type === "auto")?.id).toBe(auto.id);
  });

  it("a restore after a credentials reset is refused unless forced; forced, the failed cluster is reported with a Warning", async () => {
    const { id } = await dbWithSnapshots("guarded-db", 1);
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "guarded-db" }, { spec: { requests: { resetCredentials: "c1" } } });
    await waitFor("reset recorded", async () => (((await getDb("guarded-db")).status?.lastRequests as { resetCredentials?: { token: string } } | undefined)?.resetCredentials?.token === "c1" ? true : undefined), 30_000, 100);
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "guarded-db" }, { spec: { requests: { resetCredentials: "c1", restore: { token: "r3", snapshotRef: { name: "guarded-db-s1" } } } } });
    const c = await waitFor("RestoreAfterCredentialsReset", async () => { const x = condOf(await getDb("guarded-db"), "Synced"); return x?.reason === "RestoreAfterCredentialsReset" ? x : undefined; }, 30_000, 100);
    expect(c.message).toMatch(/force: true/);
    // Three more passes: still refused, nothing sent.
    await env.repass("ManagedDatabase", key("guarded-db"), 3);
    expect(restoresOf(id)).toBe(0);
    expect(condOf(await getDb("guarded-db"), "Synced")?.reason).toBe("RestoreAfterCredentialsReset");
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "guarded-db" }, { spec: { requests: { resetCredentials: "c1", restore: { token: "r3", snapshotRef: { name: "guarded-db-s1" }, force: true } } } });
    const failed = await waitFor("RestoreFailed", async () => { const x = condOf(await getDb("guarded-db"), "Ready"); return x?.reason === "RestoreFailed" ? x : undefined; }, 30_000, 100);
    expect(failed.message).toMatch(/failed after restoring backup/);
    expect(restoresOf(id)).toBe(1);
    const events = await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns() });
    expect(events.items.some((e) => e.regarding?.name === "guarded-db" && e.type === "Warning" && e.reason === "RestoreFailed")).toBe(true);
  });

  it("a snapshot of a missing database waits for it (ReferenceNotFound), then is taken once it is Ready", async () => {
    await createSnap("early", "later");
    await snapReason("early", "ReferenceNotFound");
    await createDb("later");
    await dbReady("later");
    await available("early");
  });

  it("the database deleted under its snapshot: DatabaseGone, and the snapshot can still be deleted", async () => {
    const { id } = await dbWithSnapshots("doomed-db", 1);
    const t1 = await available("doomed-db-s1");
    expect(t1.status?.databaseId).toBe(id);
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "doomed-db" });
    await gone(() => getDb("doomed-db"), "doomed-db");
    const c = await snapReason("doomed-db-s1", "DatabaseGone");
    expect(c.message).toMatch(/no longer exists/);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "doomed-db-s1" });
    await gone(() => getSnap("doomed-db-s1"), "doomed-db-s1");
  });
});

// The operator calls the emulator through a proxy that can hold a backup in flight, so the test
// knows what the others do while one is being sent, without waiting for time to pass.
describe("three snapshots of one database created at once", () => {
  const cluster = useTestCluster("snap-trio");
  let emulator: RunningEmulator;
  let proxy: AnswerProxy;
  let env: OperatorEnv;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.5 });
    proxy = await startAnswerProxy(emulator.url);
    env = await startOperatorEnv(cluster, { reuseEmulator: emulator, linodeUrl: proxy.url, poll: { pendingMillis: 300, readyMillis: 2_000 } });
  });
  afterAll(async () => {
    await env.stop();
    await proxy.close();
    await emulator.close();
  });
  const { key, createSnap, getDb, getSnap, condOf, available, snapReason, snapshotPosts, refused, readyDb } = helpers(cluster, () => env);

  // Issue 43: the two behind the first were held on their database while it was busy with the
  // first's backup (ReferenceNotReady); woken together when it was Ready again, each took the
  // ones before it for stuck and sent its own backup at once: 4 POSTs for 3 backups.
  it("they are taken one after the other: exactly 3 backup POSTs, none refused, the third never sent while the second is", async () => {
    const id = await readyDb("trio-db");
    const refusedBefore = await refused({ route: "/backups", method: "POST" });
    // The emulator's clock stands still: the first backup stays being taken until it moves.
    emulator.setTimeScale(0);
    try {
      for (const n of [1, 2, 3]) await createSnap(`trio-${String(n)}`, "trio-db");
      await waitFor("trio-1 BackingUp", async () => ((await getSnap("trio-1")).status?.phase === "BackingUp" ? true : undefined), 30_000, 100);
      // The database is busy: its ManagedDatabase not Ready, and the two behind held on it.
      await waitFor("trio-db not Ready", async () => (condOf(await getDb("trio-db"), "Ready")?.status === "False" ? true : undefined), 30_000, 100);
      await snapReason("trio-2", "ReferenceNotReady");
      await snapReason("trio-3", "ReferenceNotReady");
      proxy.hold((method, path) => method === "POST" && path.endsWith(`/databases/mysql/instances/${String(id)}/backups`));
      emulator.advance(1);
      // The next backup is held in flight: the snapshot it is for has not ended its pass.
      await proxy.whenHeld(1);
      // What trio-3 makes of that: one more pass of it ends (it waits its turn), or it sends a backup too (held as well).
      await Promise.race([env.repass("DatabaseSnapshot", key("trio-3"), 1), proxy.whenHeld(2)]);
      const labels = proxy.held().map((r) => (JSON.parse(r.body) as { label?: string }).label);
      expect(labels).toEqual([snapshotLabel({ key: { namespace: cluster.namespace, name: "trio-2" }, spec: {} }, env.clusterId)]);
      expect(condOf(await getSnap("trio-3"), "Ready")?.reason).toBe("BackupInProgress");
    } finally {
      proxy.release();
      emulator.setTimeScale(1);
    }
    for (const n of [1, 2, 3]) await available(`trio-${String(n)}`);
    expect(snapshotPosts(id)).toBe(3);
    expect(await refused({ route: "/backups", method: "POST" }) - refusedBefore).toBe(0);
  });
});

// An env of its own (its namespace, its client's counters), so that the only snapshot read is
// this one, with a 1 s drift poll so that six of them pass quickly.
describe("an Available snapshot's refresh", () => {
  const cluster = useTestCluster("snap-refresh");
  const READY_MILLIS = 1_000;
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { provisionSeconds: 0.5, poll: { pendingMillis: 300, readyMillis: READY_MILLIS } }); });
  afterAll(async () => { await env.stop(); });
  const { key, createSnap, available, snapReason, gone, getSnap, getDb, readyDb } = helpers(cluster, () => env);

  // Here backups are listed again only after a day (the default), so every list is the snapshot's doing.
  it("a snapshot of a new database lists its backups once in all: none while it is taken, none to count, none by its ManagedDatabase", async () => {
    await readyDb("counted-db");
    const lists = (): Promise<number> => linodeCalls(env.operatorLinode, { route: "/databases/mysql/instances/{instanceId}/backups", exact: true, method: "GET" });
    const atStart = await lists();
    // The emulator's clock stands still: the backup stays being taken until it moves.
    env.emulator.setTimeScale(0);
    let whileTaken: number;
    try {
      await createSnap("counted", "counted-db");
      await waitFor("counted BackingUp", async () => ((await getSnap("counted")).status?.phase === "BackingUp" ? true : undefined), 30_000, 100);
      const before = await lists();
      await env.repass("DatabaseSnapshot", key("counted"), 3);
      whileTaken = await lists() - before;
    } finally {
      env.emulator.setTimeScale(1);
    }
    env.emulator.advance(1);
    await available("counted");
    // The count before it is what the ManagedDatabase's status shows (a database it created has
    // none); the one list finds it (the create answers {}); the ManagedDatabase adds it as found.
    await waitFor("the backup in the database's status", async () => ((await getDb("counted-db")).status?.backups as unknown[] | undefined)?.length === 1 ? true : undefined, 30_000, 100);
    expect(whileTaken).toBe(0);
    expect(await lists() - atStart).toBe(1);
  });

  it("an Available snapshot is read every 6 drift polls, not every poll; its backup deleted alone outside is reported within them", async () => {
    const soloDb = await readyDb("solo-db");
    await createSnap("solo", "solo-db");
    const backupId = Number((await available("solo")).status?.backupId);
    const reads = (): Promise<number> => linodeCalls(env.operatorLinode, { route: "/backups/{backupId}", method: "GET" });
    const r0 = await reads();
    const p0 = env.passes("DatabaseSnapshot", key("solo"));
    // Six drift polls of its database: the snapshot is read at most twice (one refresh, and one
    // at the window's edge), six times or more if it were read every poll.
    await env.afterPasses("ManagedDatabase", key("solo-db"), 6);
    expect(await reads() - r0).toBeLessThanOrEqual(2);
    expect(env.passes("DatabaseSnapshot", key("solo")) - p0).toBeLessThanOrEqual(2);
    await env.linode.databases.mysql.deleteBackup(soloDb, backupId);
    const t = Date.now();
    const p1 = env.passes("DatabaseSnapshot", key("solo"));
    await snapReason("solo", "ExternalResourceGone");
    // Reported by its next look (one in flight as the backup went may end first), within 6
    // polls, +10 % jitter, and the reconcile itself.
    expect(env.passes("DatabaseSnapshot", key("solo")) - p1).toBeLessThanOrEqual(2);
    expect(Date.now() - t).toBeLessThan(6 * READY_MILLIS * 1.1 + 2_000);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: cluster.namespace, name: "solo" });
    await gone(() => getSnap("solo"), "solo");
  });
});

describe("on Linode's current database platform (no backups API)", () => {
  const cluster = useTestCluster("snap-current");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { platform: "current", provisionSeconds: 0.5, poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });
  const { ns, key, createSnap, getDb, getSnap, condOf, snapReason, readyDb } = helpers(cluster, () => env);
  /** Every call about backups the operator sent (reads included), and every change the emulator saw under /backups. */
  const backupCalls = async (): Promise<number> => (await linodeCalls(env.operatorLinode, { route: "backups" })) + env.emulator.mutations().filter((m) => m.path.includes("/backups")).length;

  it("status says the platform; a DatabaseSnapshot is UnsupportedOnPlatform and a restore request refused with the same reason, not one backups call sent", async () => {
    const id = await readyDb("current-db");
    const db = await getDb("current-db");
    expect(db.status?.platform).toBe("current");
    // No backups listed for status: the current platform has no backups API.
    expect(db.status?.backups).toBeUndefined();

    await createSnap("current-snap", "current-db");
    const snap = await snapReason("current-snap", "UnsupportedOnPlatform");
    expect(snap.message).toContain("current platform");
    expect(snap.message).toContain("spec.restoreFrom.pointInTime.databaseRef.name: current-db");
    expect((await getSnap("current-snap")).status?.phase).toBe("Failed");

    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "current-db" }, { spec: { requests: { restore: { token: "r1", backupId: 1 } } } });
    const synced = await waitFor("restore refused", async () => { const c = condOf(await getDb("current-db"), "Synced"); return c?.reason === "UnsupportedOnPlatform" ? c : undefined; }, 60_000, 100);
    expect(synced.message).toContain("token r1 is not sent");
    expect(synced.message).toContain("spec.restoreFrom.pointInTime.databaseRef.name: current-db");
    // Three more passes of each: still nothing about backups sent.
    await env.repass("DatabaseSnapshot", key("current-snap"), 3);
    await env.repass("ManagedDatabase", key("current-db"), 3);
    expect(await backupCalls()).toBe(0);
    expect(condOf(await getDb("current-db"), "Ready")?.status).toBe("True");
    expect(id).toBeGreaterThan(0);
  });
});
