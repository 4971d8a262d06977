// The generic runtime (informer → queue → reconciler → status) on a real API server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Controller } from "../../src/runtime/controller.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { metricValue, runtimeDeps, waitFor } from "../harness/operator-runtime.ts";
import { GadgetCloud, gadgetCrd, gadgetType } from "../fixtures/gadget-kind.ts";

describe("generic runtime on a real API server", () => {
  const cluster = useTestCluster("runtime");
  const cloud = new GadgetCloud();
  let deps: ReturnType<typeof runtimeDeps>;
  let controller: Controller;

  const get = (name: string): Promise<ManagedObject> => deps.kube.getCustom<ManagedObject>(gadgetType, { namespace: cluster.namespace, name });
  const reconciles = (): Promise<number> => metricValue(deps.metrics, "linode_operator_reconcile_total", { kind: "Gadget", result: "success" });
  const ready = async (name: string): Promise<ManagedObject | undefined> => {
    const o = await get(name);
    return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true && o.status.observedGeneration === o.metadata.generation ? o : undefined;
  };

  beforeAll(async () => {
    const applied = await cluster.kubectl(["apply", "--server-side", "-f", "-"], { input: JSON.stringify(gadgetCrd) });
    expect(applied.code, applied.stderr).toBe(0);
    await cluster.kubectl(["wait", "--for=condition=Established", `crd/${gadgetCrd.metadata.name}`, "--timeout=30s"]);
    deps = runtimeDeps(cluster.adminKubeconfig);
    controller = new Controller(cloud.kind({ pendingMillis: 200, readyMillis: 60_000 }), deps, {
      concurrency: 2, namespaces: [cluster.namespace], backoff: { baseMillis: 300, maxMillis: 10_000, jitter: 0.2 }, coalesceMillis: 2_000,
    });
    await controller.start();
  });
  afterAll(async () => { await controller.stop(); });

  const create = (name: string, size: number): Promise<ManagedObject> => deps.kube.createCustom(gadgetType, cluster.namespace, {
    apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name }, spec: { size },
  });

  it("creates the cloud object, records its id, adds the finalizer and reports Ready", async () => {
    await create("g1", 1);
    const o = await waitFor("g1 ready", () => ready("g1"));
    expect(o.metadata.finalizers).toContain("linode.operator.dev/finalizer");
    const id = o.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    expect(cloud.objects.get(id)?.size).toBe(1);
    expect(o.status?.conditions?.find((c) => c.type === "Synced")?.reason).toBe("ReconcileSuccess");
  });

  it("turns a burst of spec changes into exactly one reconcile and one update", async () => {
    await waitFor("g1 ready", () => ready("g1"));
    const reconcilesBefore = await reconciles();
    const updatesBefore = cloud.updates.length;
    const started = Date.now();
    let last: ManagedObject | undefined;
    for (let size = 2; size <= 11; size++) {
      last = await deps.kube.mergePatchCustom<ManagedObject>(gadgetType, { namespace: cluster.namespace, name: "g1" }, { spec: { size } });
    }
    const burstMillis = Date.now() - started;
    expect(burstMillis).toBeLessThan(2_000); // the burst fits in the coalescing window
    const o = await waitFor("g1 at size 11", async () => { const x = await ready("g1"); return x?.metadata.generation === last?.metadata.generation ? x : undefined; });
    expect(o.status?.size).toBe(11);
    await new Promise((r) => setTimeout(r, 1_500)); // anything late would show up by now
    expect(await reconciles() - reconcilesBefore).toBe(1);
    expect(cloud.updates.slice(updatesBefore)).toEqual([{ key: `${cluster.namespace}/g1`, size: 11 }]);
  });

  it("writes no status when nothing changed, however often it polls", async () => {
    // A second controller polling every ~300 ms, in a namespace of its own.
    const ns = `${cluster.namespace}-poll`;
    await cluster.core.createNamespace({ body: { metadata: { name: ns } } });
    let writes = 0;
    const poller = new Controller(cloud.kind({ pendingMillis: 300, readyMillis: 300 }), { ...deps, onStatusWrite: () => { writes++; } }, { concurrency: 1, namespaces: [ns] });
    await poller.start();
    try {
      await deps.kube.createCustom(gadgetType, ns, { apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name: "p" }, spec: { size: 1 } });
      const getP = (): Promise<ManagedObject> => deps.kube.getCustom<ManagedObject>(gadgetType, { namespace: ns, name: "p" });
      await waitFor("p ready", async () => { const o = await getP(); return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? o : undefined; });
      await new Promise((r) => setTimeout(r, 500));
      const rv = (await getP()).metadata.resourceVersion;
      const writesBefore = writes;
      const polls = cloud.observeCalls.filter((c) => c.key === `${ns}/p`).length;
      await new Promise((r) => setTimeout(r, 3_000));
      const pollsDuring = cloud.observeCalls.filter((c) => c.key === `${ns}/p`).length - polls;
      expect(pollsDuring).toBeGreaterThanOrEqual(6); // it did poll (every ~300 ms)…
      expect(writes - writesBefore).toBe(0); // …and wrote nothing
      expect((await getP()).metadata.resourceVersion).toBe(rv);
      process.stdout.write(`steady state: ${pollsDuring} polls in 3 s, ${writes - writesBefore} status writes\n`);
      await deps.kube.deleteCustom(gadgetType, { namespace: ns, name: "p" });
      await waitFor("p gone", async () => getP().then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)));
    } finally {
      await poller.stop();
      await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });

  it("backs off a failing reconcile with growing intervals, then recovers", async () => {
    await create("g2", 1);
    await waitFor("g2 ready", () => ready("g2"));
    const key = `${cluster.namespace}/g2`;
    cloud.failNext.set(key, 5);
    const from = cloud.observeCalls.length;
    await deps.kube.mergePatchCustom(gadgetType, { namespace: cluster.namespace, name: "g2" }, { spec: { size: 2 } });
    const failing = await waitFor("Synced=False", async () => {
      const o = await get("g2");
      return o.status?.conditions?.find((c) => c.type === "Synced" && c.status === "False");
    });
    expect(failing.reason).toBe("ReconcileError");
    expect(failing.message).toContain("injected failure");
    const o = await waitFor("g2 recovered", async () => { const x = await ready("g2"); return x?.status?.size === 2 ? x : undefined; }, 30_000);
    expect(o.status?.conditions?.find((c) => c.type === "Synced")?.status).toBe("True");
    const times = cloud.observeCalls.slice(from).filter((c) => c.key === key).slice(0, 6).map((c) => c.at);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
    // 5 failures: base 300 ms doubling (jitter ≤ 20%): ~300, 600, 1200, 2400, 4800. Timers can
    // fire late on a busy machine, which only lengthens a gap: each must still clearly grow.
    expect(gaps.length).toBe(5);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i] ?? 0).toBeGreaterThan((gaps[i - 1] ?? 0) * 1.1);
    expect(gaps[4] ?? 0).toBeGreaterThan(3_800);
    process.stdout.write(`backoff intervals (ms): ${gaps.join(", ")}\n`);
  });

  it("deletes the cloud object before letting the resource go; Retain keeps it", async () => {
    const g1 = await get("g1");
    const id1 = g1.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    await deps.kube.deleteCustom(gadgetType, { namespace: cluster.namespace, name: "g1" });
    await waitFor("g1 gone", async () => get("g1").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)));
    expect(cloud.objects.has(id1)).toBe(false);

    await deps.kube.mergePatchCustom(gadgetType, { namespace: cluster.namespace, name: "g2" }, { spec: { deletionPolicy: "Retain" } });
    const g2 = await waitFor("g2 retain seen", async () => { const x = await ready("g2"); return x; });
    const id2 = g2.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    await deps.kube.deleteCustom(gadgetType, { namespace: cluster.namespace, name: "g2" });
    await waitFor("g2 gone", async () => get("g2").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)));
    expect(cloud.objects.has(id2)).toBe(true);
  });
});
