// The real `linode-operator run` process, stopped by SIGTERM while its call budget holds a
// create back unsent: the create was announced (status.createPending) and never sent. The process
// takes the announcement back as it stops, even though its watches close before its last passes
// end (its cache then misses the status those passes wrote), so the next process creates the
// database at once instead of looking for it by label and waiting out the create grace (120 s).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { Timings } from "../../src/runtime/timings.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const TOKEN = "held-create-token-0123456789";
const CREATE = "POST /databases/mysql/instances";
const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };

describe("SIGTERM while the call budget holds a create back", () => {
  const cluster = useTestCluster("heldcreate");
  let emulator: RunningEmulator;
  let kube: KubeClient;
  const running: OperatorProcess[] = [];
  const ns = (): string => cluster.namespace;
  const start = (): OperatorProcess => {
    const p = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_API_URL: emulator.url, LINODE_TOKEN: TOKEN, WATCH_NAMESPACES: ns(),
      CLUSTER_ID: "held-create", LEADER_ELECT: "false", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    running.push(p);
    return p;
  };
  const get = (name: string): Promise<ManagedObject> => kube.getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  /** Database creates sent, answered or refused. */
  const creates = (): number => emulator.mutations().filter((m) => m.route === CREATE).length;

  beforeAll(async () => {
    // One database create a ten-minute window: the second waits longer than the client's 30 s for
    // the budget, so it is held back, never sent.
    emulator = await startEmulator({ tokens: [TOKEN], timeScale: 0, rateLimits: { routes: { [CREATE]: { limit: 1, windowSeconds: 600 } } } });
    await installCrds(cluster);
    kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "test" });
  });
  afterAll(async () => {
    for (const p of running) p.child.kill("SIGKILL");
    await Promise.all(running.map((p) => p.exited));
    await emulator.close();
  });

  it("takes the announcement back as it exits, and the next process creates it once, without the grace", async () => {
    const first = start();
    await first.waitForLog((l) => l.msg === "operator started", 60_000);
    await kube.createCustom(mdb, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "spends" }, spec: { ...base, label: "held-create-spends" } });
    await waitFor("the first create sent", () => Promise.resolve(creates() === 1 ? true : undefined), 30_000, 100);
    await kube.createCustom(mdb, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "held" }, spec: { ...base, label: "held-create-held" } });
    const held = await waitFor("the second create held back by the budget", async () => {
      const o = await get("held");
      const synced = o.status?.conditions?.find((c) => c.type === "Synced");
      return synced?.reason === "RateLimited" && o.status?.createPending !== undefined ? o : undefined;
    }, 60_000, 100);
    expect(held.status?.id).toBeUndefined();
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const after = await get("held");
    expect(after.status?.createPending).toBeUndefined();
    expect(creates()).toBe(1);
    expect(first.logs.filter((l) => l.msg === "an unsent create's announcement stays")).toEqual([]);

    // The budget back (a new window): the next process sends it at once.
    await fetch(`${emulator.adminUrl}/rate-limits`, { method: "PUT", body: JSON.stringify({}) });
    const startedAt = Date.now();
    start();
    const created = await waitFor("created by the next process", async () => { const o = await get("held"); return o.status?.id !== undefined ? o : undefined; }, 60_000, 100);
    expect(Date.now() - startedAt).toBeLessThan(Timings.createGraceMillis / 4);
    expect(created.status?.id).not.toBe((await get("spends")).status?.id);
    expect(creates()).toBe(2);
  });
});
