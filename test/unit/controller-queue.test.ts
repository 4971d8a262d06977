// What spans reconcile passes: the running Controller's queue, backoff, terminal errors, the
// create deadline, and wake-ups by watches and references, on an in-memory Kubernetes API and
// the in-memory Gadget cloud. What one pass decides is the decision table's
// (reconciler-table.test.ts). Negatives are proven by counters (passes that did run), never by
// sleeping.
import { afterEach, describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { NotSentError, RetryAfterError } from "../../src/runtime/errors.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { EXTERNAL_ID_ANNOTATION } from "../../src/runtime/annotations.ts";
import { Timings } from "../../src/runtime/timings.ts";
import { GadgetCloud, gadgetType, type GadgetSpec } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const ns = "queue";
const POLL = { pendingMillis: 40, readyMillis: 60_000 };
const key = (name: string): string => `${ns}/${name}`;

const running: Controller[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((c) => c.stop())); });

async function harness(opts: { resyncMillis?: number; backoffBaseMillis?: number; connection?: boolean; eventsBeforeAnswer?: boolean } = {}) {
  const kube = new MemoryKube();
  kube.eventsBeforeAnswer = opts.eventsBeforeAnswer ?? false;
  const cloud = new GadgetCloud();
  const controller = new Controller(cloud.kind(POLL, { connection: opts.connection ?? false }), {
    kube, log: createLogger({ level: "silent" }), events: new KubeEventRecorder(kube, { controller: "test", instance: "queue" }),
  }, {
    concurrency: 2, namespaces: [ns], coalesceMillis: 0, conflictRetryMillis: 20,
    backoff: { baseMillis: opts.backoffBaseMillis ?? 20, maxMillis: 200, jitter: 0 },
    ...(opts.resyncMillis !== undefined ? { resyncMillis: opts.resyncMillis } : {}),
  });
  running.push(controller);
  await controller.start();
  const get = (name: string): ManagedObject | undefined => kube.peek(gadgetType, { namespace: ns, name }) as ManagedObject | undefined;
  const condition = (name: string, type: string) => get(name)?.status?.conditions?.find((c) => c.type === type);
  const observes = (name: string): number => cloud.observeCalls.filter((c) => c.key === key(name)).length;
  return {
    kube, cloud, controller, get, condition, observes,
    create: async (name: string, spec: Partial<GadgetSpec>): Promise<void> => {
      await kube.createCustom(gadgetType, ns, { metadata: { name }, spec: { size: 1, ...spec } });
    },
    ready: (name: string): boolean => condition(name, "Ready")?.status === "True" && get(name)?.status?.observedGeneration === get(name)?.metadata.generation,
    /** Resolves once `fn` holds (polled on the event loop; the 5 s bound only turns a hang into a failure). */
    async until<T>(what: string, fn: () => T | undefined | false): Promise<T> {
      const end = Date.now() + 5_000;
      for (;;) {
        const v = fn();
        if (v !== undefined && v !== false) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

describe("controller: what spans passes", () => {
  it("a create that hangs is abandoned at the deadline, stays announced, and later passes wait instead of sending another", async () => {
    // The grace that keeps a second create from being sent must outlast the longest a first can take.
    expect(Timings.createGraceMillis).toBeGreaterThanOrEqual(2 * Timings.createDeadlineMillis);
    const timings = Timings as { createDeadlineMillis: number };
    const deadline = timings.createDeadlineMillis;
    timings.createDeadlineMillis = 150;
    try {
      const h = await harness();
      h.cloud.createHangs = true;
      await h.create("hung", {});
      const c = await h.until("deadline reported", () => { const x = h.condition("hung", "Synced"); return x?.status === "False" ? x : undefined; });
      expect(c.message).toContain("not answered within 0.15 s");
      expect(h.get("hung")?.status?.createPending).toMatchObject({ at: expect.any(String) as string });
      h.cloud.createHangs = false;
      // Five more passes (backoff, then the pending poll): each waits for the announced create.
      const passes = h.observes("hung");
      await h.until("five more passes", () => h.observes("hung") >= passes + 5);
      expect(h.cloud.createAttempts).toEqual([key("hung")]);
      expect(h.condition("hung", "Ready")?.reason).toBe("Creating");
      expect(h.condition("hung", "Ready")?.message).toMatch(/not sent again before \d+ s/);
    } finally {
      timings.createDeadlineMillis = deadline;
    }
  });

  it("a terminal error is tried once and not retried by the periodic resync (which queues it: it has no pass coming), then retried on a spec change", async () => {
    const h = await harness({ resyncMillis: 30 });
    h.cloud.maxSize = 10;
    const resyncs: number[] = [];
    const resync = h.controller.resync.bind(h.controller);
    h.controller.resync = () => { const n = resync(); resyncs.push(n); return n; };
    await h.create("healthy", {});
    await h.create("bad", { size: 1000 });
    await h.until("Synced=False", () => h.condition("bad", "Synced")?.status === "False");
    await h.until("no pass running", () => h.controller.queue.inFlight === 0);
    const from = resyncs.length;
    await h.until("three resyncs that queued it", () => resyncs.slice(from).filter((n) => n >= 1).length >= 3);
    await h.until("no pass running", () => h.controller.queue.inFlight === 0 && h.controller.queue.length === 0);
    // Not even the watch event of our own finalizer write tries it again.
    expect(h.cloud.createAttempts.filter((k) => k === key("bad"))).toHaveLength(1);
    expect(h.kube.events.filter((e) => e.reason === "ApiRejected")).toHaveLength(1);
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "bad" }, { spec: { size: 2 } });
    await h.until("Ready after the spec change", () => h.ready("bad"));
  });

  it("a resync queues only the objects no pass is planned for: not one whose poll is scheduled, however far off", async () => {
    // Polls of Ready objects are due in 60 s: a pass is planned, nothing to add.
    const h = await harness();
    h.cloud.maxSize = 10;
    await h.create("a", {});
    await h.create("b", {});
    await h.create("bad", { size: 1000 });
    await h.until("both Ready", () => h.ready("a") && h.ready("b"));
    await h.until("bad failed terminally", () => h.condition("bad", "Synced")?.status === "False");
    await h.until("no pass running", () => h.controller.queue.inFlight === 0);
    expect(h.controller.queue.dueIn(key("a"))).toBeGreaterThan(0);
    const passes = h.observes("a") + h.observes("b");
    // Only the terminally failed one has nothing scheduled (and its unchanged failure is skipped).
    expect(h.controller.resync()).toBe(1);
    expect(h.cloud.createAttempts.filter((k) => k === key("bad"))).toHaveLength(1);
    expect(h.observes("a") + h.observes("b")).toBe(passes);
    // A resync far shorter than the poll leaves it too: its look is the kind's plan (an Available
    // snapshot's every sixth window), which the resync used to bring forward every interval.
    const short = await harness({ resyncMillis: 1_000 });
    await short.create("c", {});
    await short.until("Ready", () => short.ready("c"));
    await short.until("no pass running", () => short.controller.queue.inFlight === 0);
    expect(short.controller.queue.dueIn(key("c"))).toBeGreaterThan(1_000);
    expect(short.controller.resync()).toBe(0);
  });

  it("the watch event of its own write, come before the write's answer, queues no pass: the first look is when the create said; an edit made during a pass is not lost", async () => {
    const h = await harness({ eventsBeforeAnswer: true });
    // The create's own first look, e.g. a NodeBalancer's after its first health check.
    h.cloud.firstLookMillis = 400;
    await h.create("a", {});
    await h.until("Ready", () => h.ready("a"));
    await h.until("idle", () => h.controller.queue.inFlight === 0 && h.controller.queue.length === 0 && (h.controller.queue.dueIn(key("a")) ?? 0) > 1_000);
    // The finalizer, the id and the status: each write's event came before its answer, and none
    // brought the look forward (which, for a NodeBalancer, made it too early to trust).
    const looks = h.cloud.observeCalls.filter((c) => c.key === key("a")).map((c) => c.at);
    expect(looks).toHaveLength(2);
    expect((looks[1] ?? 0) - (looks[0] ?? 0)).toBeGreaterThanOrEqual(400);
    // Someone else's edit while a pass runs is judged when the pass ends: reconciled.
    h.cloud.observeDelayMillis = 200;
    h.controller.enqueue(key("a"));
    await h.until("a pass running", () => h.controller.queue.isProcessing(key("a")));
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "a" }, { spec: { size: 3 } });
    h.cloud.observeDelayMillis = 0;
    await h.until("the edit reconciled", () => h.ready("a") && h.get("a")?.status?.size === 3);
  });

  it("a new process looks at a new object before re-observing what the last one left settled; nothing is queued before it starts", async () => {
    const h = await harness();
    for (let i = 0; i < 30; i++) await h.create(`old-${String(i)}`, {});
    await h.until("all Ready", () => Array.from({ length: 30 }, (_, i) => h.ready(`old-${String(i)}`)).every(Boolean));
    await h.controller.stop();
    await h.create("fresh", {});
    // The next process, one worker: its caches warm first (a standby's), with nothing queued.
    const next = new Controller(h.cloud.kind(POLL, { connection: false }), {
      kube: h.kube, log: createLogger({ level: "silent" }), events: new KubeEventRecorder(h.kube, { controller: "test", instance: "next" }),
    }, { concurrency: 1, namespaces: [ns], coalesceMillis: 0 });
    running.push(next);
    await next.warm();
    expect(next.list()).toHaveLength(31);
    expect(next.queue.length).toBe(0);
    const seen = h.cloud.observeCalls.length;
    await next.start();
    await h.until("the fresh one observed", () => h.cloud.observeCalls.slice(seen).some((c) => c.key === key("fresh")));
    expect(h.cloud.observeCalls[seen]?.key).toBe(key("fresh"));
    await h.until("the settled ones re-observed", () => new Set(h.cloud.observeCalls.slice(seen).map((c) => c.key)).size === 31);
  });

  it("a pass held back by the call budget is retried after its delay, not backed off, and writes nothing", async () => {
    const h = await harness({ backoffBaseMillis: 5_000 });
    await h.create("held", {});
    await h.until("Ready", () => h.ready("held"));
    const writes = h.kube.writesTo("gadgets", key("held")).filter((w) => w.method === "patchStatus").length;
    h.cloud.failNext.set(key("held"), [new RetryAfterError("RateLimited", "waiting for the call budget", 30, { unsent: true })]);
    const passes = h.observes("held");
    h.controller.enqueue(key("held"));
    // The deferred pass, then the retry 30 ms later (a backoff would have waited 5 s).
    await h.until("retried after the delay", () => h.observes("held") >= passes + 2);
    expect(h.kube.writesTo("gadgets", key("held")).filter((w) => w.method === "patchStatus").length).toBe(writes);
    expect(h.condition("held", "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
  });

  it("a routine look the call budget held back goes back behind what was asked for meanwhile (a drift a list woke)", async () => {
    const h = await harness();
    for (const name of ["a", "c", "d"]) await h.create(name, {});
    await h.until("all Ready", () => ["a", "c", "d"].every((n) => h.ready(n)));
    await h.controller.stop();
    // One worker, everything settled and nothing queued.
    const next = new Controller(h.cloud.kind(POLL, { connection: false }), {
      kube: h.kube, log: createLogger({ level: "silent" }), events: new KubeEventRecorder(h.kube, { controller: "test", instance: "next" }),
    }, { concurrency: 1, namespaces: [ns], coalesceMillis: 0 });
    running.push(next);
    await next.start();
    await h.until("the settled ones re-observed", () => next.queue.length === 0 && next.queue.inFlight === 0);
    const seen = h.cloud.observeCalls.length;
    h.cloud.observeDelayMillis = 300;
    h.cloud.failNext.set(key("a"), [new RetryAfterError("RateLimited", "waiting for the call budget", 50, { unsent: true })]);
    next.queue.addRoutine(key("a"));
    next.queue.addRoutine(key("c"));
    await h.until("a deferred, c's look running", () => next.queue.isProcessing(key("c")));
    await h.until("a due again", () => next.queue.dueIn(key("a")) === 0);
    expect(next.queue.isProcessing(key("c"))).toBe(true);
    // While c's look runs, d is woken: it goes before a's routine look.
    next.enqueue(key("d"));
    await h.until("a looked at again", () => h.cloud.observeCalls.slice(seen).filter((c) => c.key === key("a")).length === 2);
    h.cloud.observeDelayMillis = 0;
    expect(h.cloud.observeCalls.slice(seen).map((c) => c.key)).toEqual([key("a"), key("c"), key("d"), key("a")]);
  });

  it("a create the call budget held back unsent is not looked for by label at the next pass (a paginated call), and is sent once", async () => {
    const h = await harness();
    h.cloud.createFails.push(new RetryAfterError("RateLimited", "creating: waiting for the call budget", 30, { unsent: true }));
    await h.create("held", {});
    await h.until("Ready", () => h.ready("held"));
    expect(h.cloud.createAttempts).toEqual([key("held"), key("held")]);
    expect(h.cloud.creates).toHaveLength(1);
    expect(h.cloud.labelLookups).toEqual([]);
    // A create that may have been sent (no answer) is still looked for.
    h.cloud.createFails.push(new Error("socket hang up"));
    await h.create("lost", {});
    await h.until("looked for by label", () => h.cloud.labelLookups.includes(key("lost")));
    expect(h.cloud.createAttempts.filter((k) => k === key("lost"))).toHaveLength(1);
  });

  it("a create cancelled before it was sent takes its announcement back: the next pass creates at once, not after the grace", async () => {
    const h = await harness();
    let announced: unknown;
    h.cloud.createFails.push((k) => {
      announced = h.get(k.split("/")[1] ?? "")?.status?.createPending;
      return Promise.resolve(new NotSentError("creating: cancelled before it was sent"));
    });
    await h.create("cut", {});
    await h.until("Ready", () => h.ready("cut"));
    expect(announced).toMatchObject({ at: expect.any(String) as unknown });
    expect(h.cloud.createAttempts).toEqual([key("cut"), key("cut")]);
    expect(h.cloud.creates).toHaveLength(1);
    expect(h.cloud.labelLookups).toEqual([]);
  });

  it("a stopping process takes back the announcement of a create the call budget held unsent: the next process creates at once", async () => {
    const h = await harness();
    h.cloud.createFails.push(new RetryAfterError("RateLimited", "creating: waiting for the call budget", 60_000, { unsent: true }));
    await h.create("held", {});
    await h.until("held back", () => h.condition("held", "Synced")?.reason === "RateLimited");
    expect(h.get("held")?.status?.createPending).toBeDefined();
    await h.controller.stop();
    expect(h.get("held")?.status?.createPending).toBeUndefined();
    const next = new Controller(h.cloud.kind(POLL, { connection: false }), {
      kube: h.kube, log: createLogger({ level: "silent" }), events: new KubeEventRecorder(h.kube, { controller: "test", instance: "next" }),
    }, { concurrency: 1, namespaces: [ns], coalesceMillis: 0 });
    running.push(next);
    await next.start();
    await h.until("Ready, created by the next process", () => h.ready("held"));
    expect(h.cloud.createAttempts).toEqual([key("held"), key("held")]);
    expect(h.cloud.creates).toHaveLength(1);
    expect(h.cloud.labelLookups).toEqual([]);
  });

  it("a create cancelled unsent after someone else wrote the object leaves its announcement as it is", async () => {
    const h = await harness();
    const theirs = { at: new Date().toISOString() };
    h.cloud.createFails.push(async () => {
      // Another writer (a shard a tenant's label woke) announces its own create meanwhile.
      await h.kube.patchCustomStatus(gadgetType, { namespace: ns, name: "raced" }, { createPending: theirs });
      return new NotSentError("creating: cancelled before it was sent");
    });
    await h.create("raced", {});
    await h.until("looked for by label: their create may land", () => h.cloud.labelLookups.includes(key("raced")));
    await h.until("waiting out their create", () => h.condition("raced", "Ready")?.reason === "Creating");
    expect(h.get("raced")?.status?.createPending).toEqual(theirs);
    expect(h.cloud.createAttempts).toEqual([key("raced")]);
  });

  it("a conflict adding the finalizer is retried at once, unreported and without backoff", async () => {
    const h = await harness({ backoffBaseMillis: 5_000 });
    h.kube.failNext("jsonPatchCustom", new KubeApiError(409, "Conflict", "test of /metadata/resourceVersion failed"));
    const t0 = Date.now();
    await h.create("race", {});
    await h.until("Ready", () => h.ready("race"));
    expect(Date.now() - t0).toBeLessThan(2_000); // a backoff would have waited 5 s
    expect(h.cloud.creates).toHaveLength(1);
    expect(h.kube.writesTo("gadgets", key("race")).filter((w) => JSON.stringify(w.body ?? {}).includes("ReconcileError"))).toEqual([]);
    expect(h.kube.events.filter((e) => e.type === "Warning")).toEqual([]);
  });

  it("a referenced object becoming Ready wakes its referrers: a chain of references converges without polling", async () => {
    const h = await harness();
    await h.create("app", { dependsOn: "db" });
    await h.until("ReferenceNotFound", () => h.condition("app", "Ready")?.reason === "ReferenceNotFound");
    await h.create("db", { dependsOn: "net" });
    await h.until("ReferenceNotReady", () => h.condition("app", "Ready")?.reason === "ReferenceNotReady");
    await h.create("net", {});
    await h.until("all Ready, woken by the changes", () => h.ready("net") && h.ready("db") && h.ready("app"));
    expect(h.cloud.creates).toHaveLength(3);
  });

  it("a recorded object deleted behind its back is noticed on the next pass; a recreate token then makes one, once", async () => {
    const h = await harness();
    await h.create("gone", {});
    await h.until("Ready", () => h.ready("gone"));
    const first = h.get("gone")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    h.cloud.objects.delete(first);
    h.controller.enqueue(key("gone"));
    await h.until("ExternalResourceGone", () => h.condition("gone", "Ready")?.reason === "ExternalResourceGone");
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "gone" }, { spec: { recreate: "r1" } });
    await h.until("Ready again", () => h.ready("gone") && h.get("gone")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] !== first);
    const passes = h.observes("gone");
    h.controller.enqueue(key("gone"));
    await h.until("another pass", () => h.observes("gone") > passes);
    expect(h.cloud.creates).toHaveLength(2);
  });

  it("a resource leaving the cluster has its kind forget it; the cloud id goes too only when no other resource records it", async () => {
    const h = await harness();
    await h.create("first", { deletionPolicy: "Retain" });
    await h.until("Ready", () => h.ready("first"));
    const id = h.get("first")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    // Another resource recording the same id (a restore tool bringing back its annotation and status under another name).
    await h.create("copy", { deletionPolicy: "Retain" });
    await h.until("the copy Ready", () => h.ready("copy"));
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "copy" }, { metadata: { annotations: { [EXTERNAL_ID_ANNOTATION]: id } } });
    await h.kube.patchCustomStatus(gadgetType, { namespace: ns, name: "copy" }, { externalId: id });
    // A status edit alone wakes nothing (the next poll would see it): asked for until a pass has seen it.
    await h.until("the copy held", () => { h.controller.enqueue(key("copy")); return h.condition("copy", "Synced")?.reason === "ExternalIdInUse"; });
    await h.kube.deleteCustom(gadgetType, { namespace: ns, name: "first" });
    await h.until("first forgotten", () => h.cloud.forgets.length === 1);
    expect(h.cloud.forgets).toEqual([{ key: key("first"), externalId: undefined }]);
    await h.kube.deleteCustom(gadgetType, { namespace: ns, name: "copy" });
    await h.until("copy forgotten", () => h.cloud.forgets.length === 2);
    expect(h.cloud.forgets[1]).toEqual({ key: key("copy"), externalId: id });
    expect(h.cloud.objects.has(id)).toBe(true);
    expect(h.cloud.deletes).toEqual([]);
  });

  it("the connection Secret deleted by someone is put back (its watch wakes the owner)", async () => {
    const h = await harness({ connection: true });
    await h.create("conn", { size: 7 });
    await h.until("Ready", () => h.ready("conn"));
    const writes = (): number => h.kube.writesTo("secrets").filter((w) => w.method === "apply" || w.method === "create").length;
    expect(writes()).toBe(1);
    await h.kube.deleteSecret({ namespace: ns, name: "conn-gadget" });
    await h.until("Secret back", () => writes() === 2);
    const secret = await h.kube.getSecret({ namespace: ns, name: "conn-gadget" });
    expect(Buffer.from(secret.data?.size ?? "", "base64").toString()).toBe("7");
  });

  it("an update that never takes is sent three passes running, then not again (Synced=False NotConverging, one Warning) until the spec changes", async () => {
    const h = await harness();
    await h.create("stuck", { size: 1 });
    await h.until("Ready", () => h.ready("stuck"));
    const id = String(h.get("stuck")?.status?.externalId);
    const o = h.cloud.objects.get(id);
    if (o === undefined) throw new Error("no gadget");
    o.ignoresUpdates = true;
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "stuck" }, { spec: { size: 2 } });
    const c = await h.until("NotConverging", () => { const x = h.condition("stuck", "Synced"); return x?.reason === "NotConverging" ? x : undefined; });
    expect(c.message).toContain("sent 3 passes running");
    // Five more passes: nothing more sent.
    for (let i = 0; i < 5; i++) {
      const passes = h.observes("stuck");
      h.controller.enqueue(key("stuck"));
      await h.until("one more pass", () => h.observes("stuck") > passes);
    }
    expect(h.cloud.updates.filter((u) => u.key === key("stuck"))).toHaveLength(3);
    expect(h.kube.events.filter((e) => (e as { reason?: string }).reason === "NotConverging")).toHaveLength(1);
    // A new spec is a new update, sent (and this one takes).
    o.ignoresUpdates = false;
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "stuck" }, { spec: { size: 3 } });
    await h.until("in step", () => h.ready("stuck") && h.condition("stuck", "Synced")?.reason === "ReconcileSuccess");
    expect(h.cloud.updates.filter((u) => u.key === key("stuck"))).toHaveLength(4);
  });

});
