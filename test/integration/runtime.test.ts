// The generic runtime (informer → queue → reconciler → status) on a real API server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Controller } from "../../src/runtime/controller.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { metricValue, runtimeDeps, waitFor } from "../harness/operator-runtime.ts";
import { passCounter } from "../harness/pass-counter.ts";
import { GadgetCloud, gadgetCrd, gadgetType } from "../fixtures/gadget-kind.ts";


const COALESCE_MILLIS = 5_000;
describe("generic runtime on a real API server", () => {
  const cluster = useTestCluster("runtime");
  const cloud = new GadgetCloud();
  let deps: ReturnType<typeof runtimeDeps>;
  let controller: Controller;
  const counted = passCounter();
  const key = (name: string): string => `${cluster.namespace}/${name}`;

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
    controller = new Controller(cloud.kind({ pendingMillis: 200, readyMillis: 60_000 }), { ...deps, onPass: counted.onPass }, {
      concurrency: 2, namespaces: [cluster.namespace], backoff: { baseMillis: 300, maxMillis: 10_000, jitter: 0.2 },
      // Wide enough that ten edits in a row fit in it on a loaded 2-core machine (a first run
      // builds binaries beside the tests: 10 patches once took over 2 s).
      coalesceMillis: COALESCE_MILLIS,
    });
    await controller.start();
  });
  afterAll(async () => { await controller.stop(); });

  const create = (name: string, size: number): Promise<ManagedObject> => deps.kube.createCustom(gadgetType, cluster.namespace, {
    apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name }, spec: { size },
  });
  const resize = (name: string, size: number): Promise<ManagedObject> => deps.kube.mergePatchCustom<ManagedObject>(gadgetType, { namespace: cluster.namespace, name }, { spec: { size } });
  /** A Gadget of the test's own, Ready: no test relies on another's objects. */
  const readyGadget = async (name: string, size = 1): Promise<ManagedObject> => {
    await create(name, size);
    return waitFor(`${name} ready`, () => ready(name));
  };

  it("creates the cloud object, records its id, adds the finalizer and reports Ready", async () => {
    await create("g1", 1);
    const o = await waitFor("g1 ready", () => ready("g1"));
    expect(o.metadata.finalizers).toContain("linode.operator.dev/finalizer");
    const id = o.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    expect(cloud.objects.get(id)?.size).toBe(1);
    expect(o.status?.conditions?.find((c) => c.type === "Synced")?.reason).toBe("ReconcileSuccess");
  });

  it("turns a burst of spec changes into exactly one reconcile and one update", async () => {
    await Promise.all([readyGadget("burst"), readyGadget("fence")]);
    // Ready is visible once its status write is stored, a moment before the pass that wrote it
    // ends and is counted: on a loaded machine that pass was once counted as the burst's.
    await waitFor("the passes that wrote Ready ended", () => (controller.queue.inFlight === 0 ? true : undefined), 30_000, 20);
    const reconcilesBefore = await reconciles();
    const updatesBefore = cloud.updates.length;
    const passes = counted.passes(key("burst"));
    const fencePasses = counted.passes(key("fence"));
    const started = Date.now();
    let last: ManagedObject | undefined;
    for (let size = 2; size <= 11; size++) last = await resize("burst", size);
    const burstMillis = Date.now() - started;
    // The fence: another object edited right after the burst, so reconciled one coalescing
    // window after every edit of the burst: once its pass of that edit is done and the queue is
    // empty, anything the burst could still cause has run. (Its pass is the one that reports its
    // new generation: a pass of it already due when the edit came, on a loaded machine, is not.)
    const fence = await resize("fence", 2);
    expect(burstMillis).toBeLessThan(COALESCE_MILLIS); // the burst fits in the coalescing window
    const o = await waitFor("burst at size 11", async () => { const x = await ready("burst"); return x?.metadata.generation === last?.metadata.generation ? x : undefined; });
    expect(o.status?.size).toBe(11);
    await waitFor("the fence reconciled at its edit", async () => { const x = await ready("fence"); return x?.status?.observedGeneration === fence.metadata.generation && x?.status?.size === 2 ? true : undefined; });
    await waitFor("the queue idle", () => (controller.queue.length === 0 && controller.queue.inFlight === 0 ? true : undefined), 30_000, 20);
    expect(counted.passes(key("burst")) - passes).toBe(1);
    const fenceRuns = counted.passes(key("fence")) - fencePasses;
    expect(await reconciles() - reconcilesBefore).toBe(1 + fenceRuns); // the burst's one, and the fence's
    const updates = cloud.updates.slice(updatesBefore);
    expect(updates.filter((u) => u.key === key("burst"))).toEqual([{ key: key("burst"), size: 11 }]);
    expect(updates.filter((u) => u.key === key("fence"))).toEqual([{ key: key("fence"), size: 2 }]);
    expect(updates).toHaveLength(2);
  });

  it("writes no status when nothing changed, however often it polls", async () => {
    // A second controller polling every ~300 ms, in a namespace of its own.
    const ns = `${cluster.namespace}-poll`;
    await cluster.core.createNamespace({ body: { metadata: { name: ns } } });
    let writes = 0;
    const polled = passCounter();
    const poller = new Controller(cloud.kind({ pendingMillis: 300, readyMillis: 300 }), { ...deps, onStatusWrite: () => { writes++; }, onPass: polled.onPass }, { concurrency: 1, namespaces: [ns] });
    await poller.start();
    try {
      await deps.kube.createCustom(gadgetType, ns, { apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name: "p" }, spec: { size: 1 } });
      const getP = (): Promise<ManagedObject> => deps.kube.getCustom<ManagedObject>(gadgetType, { namespace: ns, name: "p" });
      await waitFor("p ready", async () => { const o = await getP(); return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? o : undefined; });
      // One more pass ended after Ready was seen: the pass that wrote it is over.
      await polled.afterPasses(`${ns}/p`, 1);
      const rv = (await getP()).metadata.resourceVersion;
      const writesBefore = writes;
      const polls = cloud.observeCalls.filter((c) => c.key === `${ns}/p`).length;
      const started = Date.now();
      await polled.afterPasses(`${ns}/p`, 6);
      const pollsDuring = cloud.observeCalls.filter((c) => c.key === `${ns}/p`).length - polls;
      expect(pollsDuring).toBeGreaterThanOrEqual(6); // it did poll (every ~300 ms)…
      expect(writes - writesBefore).toBe(0); // …and wrote nothing
      expect((await getP()).metadata.resourceVersion).toBe(rv);
      process.stdout.write(`steady state: ${pollsDuring} polls in ${String(Date.now() - started)} ms, ${writes - writesBefore} status writes\n`);
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
    // fire late on a busy machine, never early, so a late one only lengthens its gap (and could
    // make the next look no longer than it): each gap is held to its own floor, which doubles.
    expect(gaps.length).toBe(5);
    for (let i = 0; i < gaps.length; i++) expect(gaps[i] ?? 0, `gap ${String(i)}`).toBeGreaterThanOrEqual(300 * 2 ** i * 0.8 - 20);
    process.stdout.write(`backoff intervals (ms): ${gaps.join(", ")}\n`);
  });

  it("deletes the cloud object before letting the resource go; Retain keeps it", async () => {
    const [deleted, retained] = await Promise.all([readyGadget("deleted"), readyGadget("retained")]);
    const id1 = deleted.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    expect(cloud.objects.has(id1)).toBe(true);
    await deps.kube.deleteCustom(gadgetType, { namespace: cluster.namespace, name: "deleted" });
    await waitFor("deleted gone", async () => get("deleted").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)));
    expect(cloud.objects.has(id1)).toBe(false);

    await deps.kube.mergePatchCustom(gadgetType, { namespace: cluster.namespace, name: "retained" }, { spec: { deletionPolicy: "Retain" } });
    const g2 = await waitFor("retain seen", async () => { const x = await ready("retained"); return x !== undefined && x.metadata.generation !== retained.metadata.generation ? x : undefined; });
    const id2 = g2.metadata.annotations?.["linode.operator.dev/external-id"] ?? "";
    await deps.kube.deleteCustom(gadgetType, { namespace: cluster.namespace, name: "retained" });
    await waitFor("retained gone", async () => get("retained").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)));
    expect(cloud.objects.has(id2)).toBe(true);
  });
});

describe("crash isolation on a real API server", () => {
  const cluster = useTestCluster("crash-iso");
  const cloud = new GadgetCloud();
  let deps: ReturnType<typeof runtimeDeps>;
  let controller: Controller;
  const healthy = Array.from({ length: 50 }, (_, i) => `ok-${String(i)}`);

  beforeAll(async () => {
    const applied = await cluster.kubectl(["apply", "--server-side", "-f", "-"], { input: JSON.stringify(gadgetCrd) });
    expect(applied.code, applied.stderr).toBe(0);
    await cluster.kubectl(["wait", "--for=condition=Established", `crd/${gadgetCrd.metadata.name}`, "--timeout=30s"]);
    deps = runtimeDeps(cluster.adminKubeconfig);
    controller = new Controller(cloud.kind({ pendingMillis: 200, readyMillis: 60_000 }), deps, {
      concurrency: 4, namespaces: [cluster.namespace], backoff: { baseMillis: 300, maxMillis: 10_000, jitter: 0.2 }, coalesceMillis: 0,
    });
    await controller.start();
  });
  afterAll(async () => { await controller.stop(); });

  it("a kind that throws for one object (a bug in its observe) while 50 others converge: that one is Synced=False ReconcileError with a Warning, counted; the others are Ready", async () => {
    cloud.bugs.set(`${cluster.namespace}/broken`, "observe");
    const create = (name: string): Promise<ManagedObject> => deps.kube.createCustom(gadgetType, cluster.namespace, {
      apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name }, spec: { size: 1 },
    });
    await create("broken");
    for (const name of healthy) await create(name);
    const objects = async (): Promise<ManagedObject[]> => (await deps.kube.list<ManagedObject>(gadgetType, { namespace: cluster.namespace })).items;
    const isReady = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
    await waitFor("50 Ready", async () => ((await objects()).filter((o) => healthy.includes(o.metadata.name) && isReady(o)).length === 50 ? true : undefined), 120_000, 250);
    const broken = await deps.kube.getCustom<ManagedObject>(gadgetType, { namespace: cluster.namespace, name: "broken" });
    const synced = broken.status?.conditions?.find((c) => c.type === "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("bug");
    const events = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace });
    expect(events.items.some((e) => e.involvedObject.name === "broken" && e.type === "Warning" && e.reason === "ReconcileError")).toBe(true);
    expect(await metricValue(deps.metrics, "linode_operator_unexpected_errors_total", { where: "reconcile" })).toBeGreaterThan(0);
  });
});
