// DatabaseSnapshot and restore on a real API server and the emulator over HTTP: snapshots
// taken once each, the API's limits as a queue (no 400s sent to find out), backups in the
// database's status, deletion and Retain, a database deleted under its snapshots, and
// restores from a snapshot and from an automatic backup, once per token, guarded after a
// credentials reset.
import { EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseSnapshotType as dbsnap } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
const SNAPSHOT_POST = "POST /databases/mysql/instances/{instanceId}/backups";
type Cond = { status: string; reason: string; message?: string };

describe("DatabaseSnapshot and restore", () => {
  const cluster = useTestCluster("snap");
  let env: OperatorEnv;
  // A backup takes 0.5 emulated seconds; a settled database's backups are read every 2 s.
  // Backups are listed again every 3 s here (a day by default), so an automatic one shows soon.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { provisionSeconds: 0.5, poll: { pendingMillis: 300, readyMillis: 2_000 }, backupsRefreshMillis: 3_000 }); });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const createDb = (name: string, spec: Record<string, unknown> = {}): Promise<ManagedObject> =>
    env.deps.kube.createCustom(mdb, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec: { ...base, ...spec } });
  const createSnap = (name: string, database: string, spec: Record<string, unknown> = {}): Promise<ManagedObject> =>
    env.deps.kube.createCustom(dbsnap, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name }, spec: { databaseRef: { name: database }, ...spec } });
  const getDb = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  const getSnap = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(dbsnap, { namespace: ns(), name });
  const ready = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const dbReady = (name: string): Promise<ManagedObject> => waitFor(`${name} Ready`, async () => { const o = await getDb(name); return ready(o) ? o : undefined; }, 60_000, 100);
  const available = (name: string): Promise<ManagedObject> => waitFor(`${name} Available`, async () => { const o = await getSnap(name); return o.status?.phase === "Available" && ready(o) ? o : undefined; }, 60_000, 100);
  const snapReason = (name: string, reason: string): Promise<Cond> => waitFor(`${name} ${reason}`, async () => { const c = condOf(await getSnap(name), "Ready"); return c?.reason === reason ? c : undefined; }, 60_000, 100);
  const gone = (get: () => Promise<unknown>, what: string): Promise<true> => waitFor(`${what} gone`, async () => get().then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
  const posts = (): number => env.emulator.requestCounts()[SNAPSHOT_POST] ?? 0;
  const backupsOf = async (id: number): Promise<{ id: number; type: string; label: string }[]> => env.linode.databases.mysql.listAllBackups(id);
  let dbId = 0;

  it("takes a snapshot once and mirrors it: Available, with the emulator's backup id", async () => {
    await createDb("db");
    dbId = Number((await dbReady("db")).status?.id);
    await createSnap("s1", "db");
    const s1 = await available("s1");
    const backups = await backupsOf(dbId);
    expect(backups).toHaveLength(1);
    expect(s1.status).toMatchObject({ backupId: backups[0]?.id, databaseId: dbId, label: backups[0]?.label, phase: "Available" });
    expect(s1.status?.label).toMatch(/^[a-zA-Z0-9]{1,30}$/);
    expect(posts()).toBe(1);
  });

  it("two created at once are taken one after the other, with no refusal from the API", async () => {
    const before = posts();
    await Promise.all([createSnap("s2", "db"), createSnap("s3", "db")]);
    await available("s2");
    await available("s3");
    expect(posts() - before).toBe(2);
    expect(await linodeCalls(env.operatorLinode, { route: "/backups", method: "POST", status: "400" })).toBe(0);
    expect(await backupsOf(dbId)).toHaveLength(3);
  });

  it("the database's status lists its backups", async () => {
    const o = await waitFor("backups in status", async () => {
      const x = await getDb("db");
      return ((x.status?.backups as unknown[] | undefined)?.length ?? 0) >= 3 ? x : undefined;
    }, 30_000, 200);
    const listed = o.status?.backups as { id: number; type: string; label: string; created: string }[];
    expect(listed.map((b) => b.id).sort()).toEqual((await backupsOf(dbId)).map((b) => b.id).sort());
    expect(listed.every((b) => b.type === "snapshot")).toBe(true);
  });

  it("a fourth waits (SnapshotLimitReached), sends nothing, and is taken by itself once one is deleted", async () => {
    const before = posts();
    await createSnap("s4", "db");
    const c = await snapReason("s4", "SnapshotLimitReached");
    expect(c.message).toMatch(/3 snapshots/);
    expect((await getSnap("s4")).status?.phase).toBe("Waiting");
    await new Promise((r) => setTimeout(r, 2_000));
    expect(posts() - before).toBe(0);
    const s1 = await getSnap("s1");
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "s1" });
    await gone(() => getSnap("s1"), "s1");
    expect((await backupsOf(dbId)).map((b) => b.id)).not.toContain(s1.status?.backupId);
    await available("s4");
    expect(posts() - before).toBe(1);
    expect(await linodeCalls(env.operatorLinode, { route: "/backups", method: "POST", status: "400" })).toBe(0);
  });

  it("Retain leaves the backup when the resource goes", async () => {
    await env.deps.kube.mergePatchCustom(dbsnap, { namespace: ns(), name: "s2" }, { spec: { deletionPolicy: "Retain" } });
    const s2 = await waitFor("Retain seen", async () => { const o = await getSnap("s2"); return o.metadata.generation === o.status?.observedGeneration ? o : undefined; }, 30_000, 100);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "s2" });
    await gone(() => getSnap("s2"), "s2");
    expect((await backupsOf(dbId)).map((b) => b.id)).toContain(s2.status?.backupId);
  });

  it("restores from a DatabaseSnapshot, once per token: restoring, then active, recorded", async () => {
    const s3 = await getSnap("s3");
    const restores = (): number => env.emulator.requestCounts()["POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore"] ?? 0;
    const before = restores();
    const refusedBefore = await linodeCalls(env.operatorLinode, { status: "400" });
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "db" }, { spec: { requests: { restore: { token: "r1", snapshotRef: { name: "s3" } } } } });
    const { r: recorded, readyNow } = await waitFor("restore recorded", async () => {
      const obj = await getDb("db");
      const r = (obj.status?.lastRequests as { restore?: { token: string; backupId?: number; completedAt?: string } } | undefined)?.restore;
      return r?.completedAt !== undefined ? { r, readyNow: condOf(obj, "Ready") } : undefined;
    }, 30_000, 100);
    expect(recorded).toMatchObject({ token: "r1", backupId: s3.status?.backupId });
    // The status that records the restore already says the database is out of service.
    expect(readyNow).toMatchObject({ status: "False", reason: "Restoring" });
    await dbReady("db");
    env.controller.enqueue(`${ns()}/db`);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(restores() - before).toBe(1);
    // Nothing read from the database in the pass that started the restore (the credentials are refused while it restores).
    expect(await linodeCalls(env.operatorLinode, { status: "400" }) - refusedBefore).toBe(0);
  });

  it("restores from an automatic backup by id, once per token", async () => {
    env.emulator.advance(86_400); // a day: the daily automatic backup is made at 00:00 UTC
    const auto = await waitFor("an automatic backup", async () => (await backupsOf(dbId)).find((b) => b.type === "auto"), 30_000, 200);
    const restores = (): number => env.emulator.requestCounts()["POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore"] ?? 0;
    const before = restores();
    const refusedBefore = await linodeCalls(env.operatorLinode, { status: "400" });
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "db" }, { spec: { requests: { restore: { token: "r2", backupId: auto.id, snapshotRef: null } } } });
    await waitFor("restore r2 recorded", async () => {
      const r = ((await getDb("db")).status?.lastRequests as { restore?: { token: string; completedAt?: string } } | undefined)?.restore;
      return r?.token === "r2" && r.completedAt !== undefined ? r : undefined;
    }, 30_000, 100);
    await dbReady("db");
    await new Promise((r) => setTimeout(r, 1_000));
    expect(restores() - before).toBe(1);
    expect(await linodeCalls(env.operatorLinode, { status: "400" }) - refusedBefore).toBe(0);
    const listed = await waitFor("the automatic backup in status", async () => {
      const b = (await getDb("db")).status?.backups as { id: number; type: string }[] | undefined;
      return b?.some((x) => x.type === "auto") === true ? b : undefined;
    }, 30_000, 200);
    expect(listed.find((b) => b.type === "auto")?.id).toBe(auto.id);
  });

  it("a restore after a credentials reset is refused unless forced; forced, the failed cluster is reported with a Warning", async () => {
    const restores = (): number => env.emulator.requestCounts()["POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore"] ?? 0;
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "db" }, { spec: { requests: { resetCredentials: "c1" } } });
    await waitFor("reset recorded", async () => (((await getDb("db")).status?.lastRequests as { resetCredentials?: { token: string } } | undefined)?.resetCredentials?.token === "c1" ? true : undefined), 30_000, 100);
    const before = restores();
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "db" }, { spec: { requests: { resetCredentials: "c1", restore: { token: "r3", snapshotRef: { name: "s3" }, backupId: null } } } });
    const c = await waitFor("RestoreAfterCredentialsReset", async () => { const x = condOf(await getDb("db"), "Synced"); return x?.reason === "RestoreAfterCredentialsReset" ? x : undefined; }, 30_000, 100);
    expect(c.message).toMatch(/force: true/);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(restores() - before).toBe(0);
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "db" }, { spec: { requests: { resetCredentials: "c1", restore: { token: "r3", snapshotRef: { name: "s3" }, force: true } } } });
    const failed = await waitFor("RestoreFailed", async () => { const x = condOf(await getDb("db"), "Ready"); return x?.reason === "RestoreFailed" ? x : undefined; }, 30_000, 100);
    expect(failed.message).toMatch(/failed after restoring backup/);
    expect(restores() - before).toBe(1);
    const events = await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns() });
    expect(events.items.some((e) => e.regarding?.name === "db" && e.type === "Warning" && e.reason === "RestoreFailed")).toBe(true);
  });

  it("a snapshot of a missing database waits for it (ReferenceNotFound), then is taken once it is Ready", async () => {
    await createSnap("early", "later");
    await snapReason("early", "ReferenceNotFound");
    await createDb("later");
    await dbReady("later");
    await available("early");
  });

  it("the database deleted under its snapshot: DatabaseGone, and the snapshot can still be deleted", async () => {
    const t1 = await available("early");
    expect(t1.status?.databaseId).toBe(Number((await getDb("later")).status?.id));
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "later" });
    await gone(() => getDb("later"), "later");
    const c = await snapReason("early", "DatabaseGone");
    expect(c.message).toMatch(/no longer exists/);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "early" });
    await gone(() => getSnap("early"), "early");
  });

  it("an Available snapshot is read every 6 drift polls, not every poll; its backup deleted alone outside is reported within them", async () => {
    await createDb("solo-db");
    const soloDb = Number((await dbReady("solo-db")).status?.id);
    await createSnap("solo", "solo-db");
    const backupId = Number((await available("solo")).status?.backupId);
    const reads = (): Promise<number> => linodeCalls(env.operatorLinode, { route: "/backups/{backupId}", method: "GET" });
    // 2 s drift polls: over 12 s at most two reads of each snapshot this namespace holds (six or
    // more each if they were read every poll).
    const holding = (await env.deps.kube.list<ManagedObject>(dbsnap, { namespace: ns() })).items.filter((o) => typeof o.status?.backupId === "number").length;
    const r0 = await reads();
    await new Promise((r) => setTimeout(r, 12_000));
    expect(await reads() - r0).toBeLessThanOrEqual(2 * holding);
    await env.linode.databases.mysql.deleteBackup(soloDb, backupId);
    const t = Date.now();
    await snapReason("solo", "ExternalResourceGone");
    // 6 polls of 2 s, +10 % jitter, and the reconcile itself.
    expect(Date.now() - t).toBeLessThan(6 * 2_000 * 1.1 + 2_000);
    await env.deps.kube.deleteCustom(dbsnap, { namespace: ns(), name: "solo" });
    await gone(() => getSnap("solo"), "solo");
  });
});
