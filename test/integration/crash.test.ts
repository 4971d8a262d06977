// The operator process killed (SIGKILL) right after it sent a create or a one-shot action and
// before it could record it: the emulator holds the request (latency on that route) so the
// kill lands exactly there, then applies it. A new process must not create a second database
// and must not send the patch again; it says the patch's outcome is unknown instead.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { databaseSnapshotType as dbsnap } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const TOKEN = "crash-token";
const CLUSTER_ID = "crash-test";
const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };

describe("the operator killed between a call and its record", () => {
  const cluster = useTestCluster("crash");
  let emulator: RunningEmulator;
  let kube: KubeClient;
  let linode: LinodeClient;
  let operator: OperatorProcess | undefined;

  const start = async (): Promise<OperatorProcess> => {
    const p = startOperator(["--poll-pending-seconds", "0.5", "--poll-ready-seconds", "5"], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: TOKEN, LINODE_API_URL: emulator.url, CLUSTER_ID: CLUSTER_ID,
      POD_NAMESPACE: cluster.namespace, WATCH_NAMESPACES: cluster.namespace, LEADER_ELECT: "false",
      HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
      // Every pass's end is logged at debug: what the tests count passes by.
      LOG_LEVEL: "debug",
    });
    // Recorded before it is waited for: one that never comes up is still killed after the test.
    operator = p;
    await p.waitForLog((l) => l.msg === "cache synced; starting workers");
    return p;
  };
  const kill = async (): Promise<void> => {
    operator?.child.kill("SIGKILL");
    await operator?.exited;
    operator = undefined;
  };
  const get = (name: string): Promise<ManagedObject> => kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name });
  const condition = async (name: string, type: string): Promise<{ status: string; reason: string; message?: string } | undefined> => (await get(name)).status?.conditions?.find((c) => c.type === type);
  const count = (route: string): number => emulator.requestCounts()[route] ?? 0;
  /** Requests sent to one database's path (`suffix` under it), from the emulator's log. */
  const sentTo = (id: number, suffix: string): number => emulator.mutations().filter((m) => m.method === "POST" && m.path === `/databases/mysql/instances/${String(id)}${suffix}`).length;
  const labelOf = (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: cluster.namespace, name });
  const ready = (x: ManagedObject): boolean => x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  /** A database of the test's own, Ready (the operator must be running): no test relies on another's objects. */
  const readyDatabase = async (name: string): Promise<ManagedObject> => {
    await kube.createCustom(mdb, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec: base });
    return waitFor(`${name} Ready`, async () => { const x = await get(name); return ready(x) ? x : undefined; }, 60_000, 200);
  };
  /**
   * Makes the running operator look at a database `times` more times, one pass after the
   * other, by touching an annotation (a change its controller reacts to, nothing the kind reads).
   */
  const repass = async (name: string, times: number): Promise<void> => {
    for (let i = 0; i < times; i++) {
      const p = operator?.afterPasses("ManagedDatabase", `${cluster.namespace}/${name}`, 1);
      await kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name }, { metadata: { annotations: { "test.linode.operator.dev/touched": `${String(Date.now())}-${String(i)}` } } });
      await p;
    }
  };
  /** Holds requests on a route for a while: a process killed meanwhile has sent it but never hears back. */
  const hold = (route: string): void => { emulator.setFaults({ latencyMs: 3_000, routes: [route] }); };

  beforeAll(async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.5 });
    kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "test" });
    linode = new LinodeClient({ token: TOKEN, baseUrl: emulator.url, rateLimit: false });
  });
  afterEach(async () => { await kill(); emulator.setFaults({ latencyMs: 0, routes: [] }); });
  afterAll(async () => { await linode.close(); await emulator.close(); });

  it("killed after a create was sent: the next process adopts that database, no second one", async () => {
    await start();
    const route = "POST /databases/mysql/instances";
    const sent = count(route);
    const mine = async (): Promise<{ id: number }[]> => (await linode.databases.mysql.listAll()).filter((d) => d.label === labelOf("created"));
    hold(route);
    await kube.createCustom(mdb, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "created" }, spec: base });
    await waitFor("the create sent", () => (count(route) >= sent + 1 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await waitFor("the held create applied", async () => ((await mine()).length === 1 ? true : undefined), 30_000, 100);
    expect((await get("created")).status?.createPending).toMatchObject({ at: expect.any(String) as string });
    await start();
    const o = await waitFor("Ready", async () => { const x = await get("created"); return ready(x) ? x : undefined; }, 60_000, 200);
    const all = await mine();
    expect(all).toHaveLength(1);
    expect(o.status?.id).toBe(all[0]?.id);
    expect(count(route) - sent).toBe(1);
  });

  it("killed after a NodeBalancer create was sent: the next process adopts that NodeBalancer, no second one", async () => {
    await start();
    const route = "POST /nodebalancers";
    const sent = count(route);
    hold(route);
    const spec = { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "n-1", address: "192.168.50.1:80" }] }] };
    await kube.createCustom(nbType, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "lb" }, spec });
    await waitFor("the create sent", () => (count(route) >= sent + 1 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await waitFor("the held create applied", async () => ((await linode.nodeBalancers.listAll()).length === 1 ? true : undefined), 30_000, 100);
    await start();
    const o = await waitFor("Ready", async () => {
      const x = await kube.getCustom<ManagedObject>(nbType, { namespace: cluster.namespace, name: "lb" });
      return x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? x : undefined;
    }, 60_000, 200);
    const all = await linode.nodeBalancers.listAll();
    expect(all).toHaveLength(1);
    expect(o.status?.id).toBe(all[0]?.id);
    expect(count(route) - sent).toBe(1);
  });

  it("killed after a patch was sent: the next process does not send it again, and says so", async () => {
    await start();
    const route = "POST /databases/mysql/instances/{instanceId}/patch";
    const id = Number((await readyDatabase("patched")).status?.id);
    const sent = count(route);
    hold(route);
    await kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "patched" }, { spec: { requests: { patch: "p1" } } });
    await waitFor("the patch sent", () => (count(route) >= sent + 1 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await start();
    const c = await waitFor("RequestOutcomeUnknown", async () => { const x = await condition("patched", "Synced"); return x?.reason === "RequestOutcomeUnknown" ? x : undefined; }, 60_000, 200);
    expect(c.message).toMatch(/token p1/);
    // The held patch is answered (to no one); the new process looks three more times and never sends it.
    await waitFor("the held patch applied", () => (sentTo(id, "/patch") === 1 ? true : undefined), 30_000, 50);
    await repass("patched", 3);
    expect(count(route) - sent).toBe(1);
    expect(sentTo(id, "/patch")).toBe(1);
    expect((await condition("patched", "Synced"))?.reason).toBe("RequestOutcomeUnknown");
    // A new token asks again: performed once, recorded.
    await kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "patched" }, { spec: { requests: { patch: "p2" } } });
    await waitFor("p2 recorded", async () => ((((await get("patched")).status?.lastRequests as { patch?: { token: string; completedAt?: string } } | undefined)?.patch?.completedAt !== undefined) ? true : undefined), 60_000, 200);
    expect(count(route) - sent).toBe(2);
    expect(sentTo(id, "/patch")).toBe(2);
    // Killed again with a third token in flight: p2's completion must not read as p3's (the
    // intent replaces the record whole; merged, p2's completedAt stayed and p3 read as done).
    hold(route);
    await kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "patched" }, { spec: { requests: { patch: "p3" } } });
    await waitFor("p3 sent", () => (count(route) >= sent + 3 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await start();
    const c3 = await waitFor("RequestOutcomeUnknown for p3", async () => { const x = await condition("patched", "Synced"); return x?.reason === "RequestOutcomeUnknown" ? x : undefined; }, 60_000, 200);
    expect(c3.message).toMatch(/token p3/);
    expect(count(route) - sent).toBe(3);
  });

  it("killed after a snapshot was sent: the next process finds that backup, no second one", async () => {
    await start();
    const route = "POST /databases/mysql/instances/{instanceId}/backups";
    const dbId = Number((await readyDatabase("snapped")).status?.id);
    const sent = count(route);
    hold(route);
    await kube.createCustom(dbsnap, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name: "snap" }, spec: { databaseRef: { name: "snapped" } } });
    await waitFor("the snapshot sent", () => (count(route) >= sent + 1 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await start();
    const snap = await waitFor("Available", async () => {
      const x = await kube.getCustom<ManagedObject>(dbsnap, { namespace: cluster.namespace, name: "snap" });
      return x.status?.phase === "Available" ? x : undefined;
    }, 60_000, 200);
    const backups = (await linode.databases.mysql.listAllBackups(dbId)).filter((b) => b.type === "snapshot");
    expect(backups).toHaveLength(1);
    expect(snap.status?.backupId).toBe(backups[0]?.id);
    expect(count(route) - sent).toBe(1);
    expect(sentTo(dbId, "/backups")).toBe(1);
  });

  it("killed after a restore was sent: the next process never restores again, and says so", async () => {
    await start();
    const route = "POST /databases/mysql/instances/{instanceId}/backups/{backupId}/restore";
    const dbId = Number((await readyDatabase("restored")).status?.id);
    // A snapshot of its own to restore from, Available.
    await kube.createCustom(dbsnap, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name: "restored-snap" }, spec: { databaseRef: { name: "restored" } } });
    const snap = await waitFor("restored-snap Available", async () => {
      const x = await kube.getCustom<ManagedObject>(dbsnap, { namespace: cluster.namespace, name: "restored-snap" });
      return x.status?.phase === "Available" ? x : undefined;
    }, 60_000, 200);
    await waitFor("restored Ready", async () => ((await condition("restored", "Ready"))?.status === "True" ? true : undefined), 60_000, 200);
    const sent = count(route);
    hold(route);
    await kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "restored" }, { spec: { requests: { restore: { token: "r1", snapshotRef: { name: "restored-snap" } } } } });
    await waitFor("the restore sent", () => (count(route) >= sent + 1 ? true : undefined), 30_000, 20);
    await kill();
    emulator.setFaults({ latencyMs: 0, routes: [] });
    await start();
    const c = await waitFor("RequestOutcomeUnknown for r1", async () => { const x = await condition("restored", "Synced"); return x?.reason === "RequestOutcomeUnknown" && /token r1/.test(x.message ?? "") ? x : undefined; }, 60_000, 200);
    expect(c.message).toMatch(/restore requested by token r1/);
    // The held restore is answered (to no one); the new process looks three more times and never sends it.
    const restores = (): number => sentTo(dbId, `/backups/${String(snap.status?.backupId)}/restore`);
    await waitFor("the held restore applied", () => (restores() === 1 ? true : undefined), 30_000, 50);
    await repass("restored", 3);
    expect(count(route) - sent).toBe(1);
    expect(restores()).toBe(1);
    expect((await condition("restored", "Synced"))?.reason).toBe("RequestOutcomeUnknown");
  });
});
