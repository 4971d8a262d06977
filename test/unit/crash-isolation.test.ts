// One object's failure fails that object's pass, never the process nor the others: a kind's
// bug thrown from observe, from what is asked after the pass (contended), from what the queue
// asks outside any pass (flow), and a throw from the controller's own bookkeeping after a pass
// (onPass, as a broken metric would), each for one object while 50 others converge. On the
// in-memory API and Gadget cloud, as the decision table is; test/integration/runtime.test.ts
// proves the same on a real API server.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Informer, resourceSource } from "../../src/kube/informer.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { createOperatorMetrics } from "../../src/metrics/operator-metrics.ts";
import { Registry } from "prom-client";
import { GadgetCloud, gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const ns = "crash";
const running: Controller[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((c) => c.stop())); });

async function until<T>(what: string, fn: () => T | undefined | false, millis = 15_000): Promise<T> {
  const end = Date.now() + millis;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function harness(brokenPassKey?: string) {
  const kube = new MemoryKube();
  const cloud = new GadgetCloud();
  const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: false });
  const passes = new Map<string, number>();
  /** The backoff each failed pass of a key was given, from the line the controller logs for it. */
  const backoffs = new Map<string, number[]>();
  const sink = { write(line: string): void {
    const l = JSON.parse(line) as { msg?: string; key?: string; retryInMillis?: number };
    if (l.msg === "reconcile failed; backing off" && l.key !== undefined) backoffs.set(l.key, [...(backoffs.get(l.key) ?? []), l.retryInMillis ?? -1]);
  } };
  const controller = new Controller(cloud.kind({ pendingMillis: 30, readyMillis: 60_000 }), {
    kube, log: createLogger({ level: "warn" }, sink), events: new KubeEventRecorder(kube, { controller: "test", instance: "crash" }), metrics,
    onPass: (key) => {
      passes.set(key, (passes.get(key) ?? 0) + 1);
      // As a metric whose labels broke would throw after the pass, outside the reconciler.
      if (key === brokenPassKey) throw new TypeError("Added label \"x\" is not included in initial labelset");
    },
  }, { concurrency: 4, namespaces: [ns], coalesceMillis: 0, backoff: { baseMillis: 20, maxMillis: 400, jitter: 0 } });
  running.push(controller);
  await controller.start();
  const get = (name: string): ManagedObject | undefined => kube.peek(gadgetType, { namespace: ns, name }) as ManagedObject | undefined;
  const condition = (name: string, type: string) => get(name)?.status?.conditions?.find((c) => c.type === type);
  const unexpected = async (): Promise<Record<string, number>> => Object.fromEntries(
    (await metrics.unexpectedErrors.get()).values.map((v) => [String(v.labels.where), v.value]),
  );
  return { kube, cloud, controller, get, condition, passes, backoffs, unexpected };
}

const healthy = Array.from({ length: 50 }, (_, i) => `ok-${String(i)}`);

describe("crash isolation: a throw in one object's pass ends that pass only", () => {
  for (const where of ["observe", "contended", "flow"] as const) {
    it(`a kind's bug in ${where} for one object: 50 others converge, it is Synced=False ReconcileError with a Warning, backed off, counted`, async () => {
      const h = await harness();
      h.cloud.bugs.set(`${ns}/broken`, where);
      await h.kube.createCustom(gadgetType, ns, { metadata: { name: "broken" }, spec: { size: 1 } });
      for (const name of healthy) await h.kube.createCustom(gadgetType, ns, { metadata: { name }, spec: { size: 2 } });
      await until("50 Ready", () => healthy.every((n) => h.condition(n, "Ready")?.status === "True"));
      if (where === "flow") {
        // The queue asked outside any pass: the key still has its pass (in the shared flow), and converges.
        await until("broken Ready", () => h.condition("broken", "Ready")?.status === "True");
        expect((await h.unexpected()).flow).toBeGreaterThan(0);
        return;
      }
      const synced = await until("broken reported", () => { const c = h.condition("broken", "Synced"); return c?.status === "False" ? c : undefined; });
      expect(synced.reason).toBe("ReconcileError");
      expect(synced.message).toContain("bug");
      expect(h.kube.events.some((e) => (e as { reason?: string }).reason === "ReconcileError" && (e as { type?: string }).type === "Warning")).toBe(true);
      // Backed off, not a hot loop: each failed pass waits twice as long as the one before
      // (20 ms at first here, no jitter), as the controller logs it.
      const backoffs = await until("three failed passes", () => { const b = h.backoffs.get(`${ns}/broken`) ?? []; return b.length >= 3 ? b : undefined; });
      expect(backoffs.slice(0, 3)).toEqual([20, 40, 80]);
      expect((await h.unexpected()).reconcile).toBeGreaterThan(0);
      // The worker survived: a new object still converges.
      await h.kube.createCustom(gadgetType, ns, { metadata: { name: "late" }, spec: { size: 3 } });
      await until("late Ready", () => h.condition("late", "Ready")?.status === "True");
    });
  }

  it("a throw from the controller's bookkeeping after one object's pass (outside the reconciler) leaves the workers running: 50 others converge", async () => {
    const h = await harness(`${ns}/broken`);
    await h.kube.createCustom(gadgetType, ns, { metadata: { name: "broken" }, spec: { size: 1 } });
    for (const name of healthy) await h.kube.createCustom(gadgetType, ns, { metadata: { name }, spec: { size: 2 } });
    await until("50 Ready", () => healthy.every((n) => h.condition(n, "Ready")?.status === "True"));
    expect((await h.unexpected()).worker).toBeGreaterThan(0);
    // Four workers, and more than four throws have happened: had one ended any worker, these would starve.
    await until("several throws", () => (h.passes.get(`${ns}/broken`) ?? 0) >= 5, 10_000);
    await h.kube.createCustom(gadgetType, ns, { metadata: { name: "late" }, spec: { size: 3 } });
    await until("late Ready", () => h.condition("late", "Ready")?.status === "True");
  });

  it("an informer handler or index function that throws for one object skips that call only: the other handlers hear it and the cache goes on (list and watch)", async () => {
    const kube = new MemoryKube();
    const failures: string[] = [];
    const informer = new Informer<ManagedObject>(kube, resourceSource<ManagedObject>(kube, gadgetType, { namespace: ns }), {
      onUnexpectedError: (where) => { failures.push(where); },
    });
    const heard: string[] = [];
    // A kind's watch map with a bug, registered first: the handlers after it must still hear every event.
    informer.onEvent((_ev, obj) => { if (obj.metadata.name.startsWith("broken")) throw new TypeError("a bug in a watch's map"); });
    informer.onEvent((ev, obj) => { heard.push(`${ev} ${obj.metadata.name}`); });
    informer.addIndex("by-name", (obj) => { if (obj.metadata.name.startsWith("broken")) throw new TypeError("a bug in an index"); return [obj.metadata.name]; });
    // One through the first list, one through the watch.
    await kube.createCustom(gadgetType, ns, { metadata: { name: "broken-listed" }, spec: { size: 1 } });
    informer.start();
    try {
      await informer.synced;
      await kube.createCustom(gadgetType, ns, { metadata: { name: "broken-watched" }, spec: { size: 1 } });
      await kube.createCustom(gadgetType, ns, { metadata: { name: "fine" }, spec: { size: 1 } });
      await until("all heard", () => ["broken-listed", "broken-watched", "fine"].every((n) => heard.includes(`add ${n}`)));
      expect(informer.get(`${ns}/fine`)).toBeDefined();
      expect(informer.get(`${ns}/broken-watched`)).toBeDefined();
      expect(informer.byIndex("by-name", "fine")).toHaveLength(1);
      expect(failures.filter((f) => f === "informer-handler")).toHaveLength(2);
      expect(failures.filter((f) => f === "informer-index")).toHaveLength(2);
    } finally {
      await informer.stop();
    }
  });

  it("the process guard (a process of its own, as the operator's) logs and counts an unhandled rejection and an uncaught exception, and the process goes on", async () => {
    const guard = fileURLToPath(new URL("../../src/runtime/process-guard.ts", import.meta.url));
    const script = `
      import { guardProcess } from ${JSON.stringify(guard)};
      let count = 0;
      // Once both are counted, a later turn of the event loop: the process went on after them.
      const counted = () => { if (++count === 2) setImmediate(() => { process.stdout.write("still running, counted " + count + "\\n"); }); };
      guardProcess({ log: { error: (o, msg) => { process.stdout.write(JSON.stringify([o.err, msg]) + "\\n"); } }, count: counted });
      void Promise.reject(new Error("nobody awaited this"));
      setTimeout(() => { throw new Error("thrown from a timer"); }, 0);
    `;
    const { stdout, code } = await new Promise<{ stdout: string; code: number | null }>((resolve) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => { out += c; });
      child.once("close", (c) => { resolve({ stdout: out, code: c }); });
    });
    expect(stdout).toContain("nobody awaited this");
    expect(stdout).toContain("thrown from a timer");
    expect(stdout).toContain("still running, counted 2");
    expect(code).toBe(0);
  });
});
