// Decision table of the generic runtime (crossplane's reconciler_test.go style): each case
// sets up an in-memory Kubernetes API (behind the same KubeApi interface as KubeClient) and
// the in-memory Gadget cloud, runs the real Controller, and states what must have been
// written, called and reported. The same runtime is proven on a real API server by
// test/integration/runtime.test.ts and the ManagedDatabase tests.
import { afterEach, describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { RetryAfterError } from "../../src/runtime/errors.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { EXTERNAL_ID_ANNOTATION, FINALIZER } from "../../src/runtime/reconciler.ts";
import { Timings } from "../../src/runtime/timings.ts";
import { GadgetCloud, gadgetType, type GadgetSpec } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const ns = "table";
const POLL = { pendingMillis: 40, readyMillis: 60_000 };

interface Harness {
  kube: MemoryKube;
  cloud: GadgetCloud;
  controller: Controller;
  create(name: string, spec: Partial<GadgetSpec>, annotations?: Record<string, string>, status?: Record<string, unknown>): Promise<void>;
  get(name: string): ManagedObject | undefined;
  condition(name: string, type: string): { status: string; reason: string; message?: string } | undefined;
  waitFor<T>(what: string, fn: () => T | undefined | false): Promise<T>;
  quiet(millis: number): Promise<void>;
}

const running: Controller[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((c) => c.stop())); });

async function harness(opts: { resyncMillis?: number; backoffBaseMillis?: number; connection?: boolean } = {}): Promise<Harness> {
  const kube = new MemoryKube();
  const cloud = new GadgetCloud();
  const log = createLogger({ level: "silent" });
  const controller = new Controller(cloud.kind(POLL, { connection: opts.connection ?? false }), {
    kube, log, events: new KubeEventRecorder(kube, { controller: "test", instance: "table" }),
  }, {
    concurrency: 2, namespaces: [ns], coalesceMillis: 0, conflictRetryMillis: 20,
    backoff: { baseMillis: opts.backoffBaseMillis ?? 20, maxMillis: 200, jitter: 0 },
    ...(opts.resyncMillis !== undefined ? { resyncMillis: opts.resyncMillis } : {}),
  });
  running.push(controller);
  await controller.start();
  const get = (name: string): ManagedObject | undefined => kube.peek(gadgetType, { namespace: ns, name }) as ManagedObject | undefined;
  return {
    kube, cloud, controller, get,
    async create(name, spec, annotations, status) {
      await kube.createCustom(gadgetType, ns, { metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, spec: { size: 1, ...spec }, ...(status !== undefined ? { status } : {}) });
    },
    condition: (name, type) => get(name)?.status?.conditions?.find((c) => c.type === type),
    async waitFor(what, fn) {
      const end = Date.now() + 5_000;
      for (;;) {
        const v = fn();
        if (v !== undefined && v !== false) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    quiet: (millis) => new Promise((r) => setTimeout(r, millis)),
  };
}

const key = (name: string): string => `${ns}/${name}`;
const readyTrue = (h: Harness, name: string): boolean => h.condition(name, "Ready")?.status === "True" && h.get(name)?.status?.observedGeneration === h.get(name)?.metadata.generation;

describe("generic reconciler decision table", () => {
  it("create: finalizer first, one cloud create, id recorded, Creating then Available", async () => {
    const h = await harness();
    await h.create("g", { size: 3 });
    await h.waitFor("Ready", () => readyTrue(h, "g"));
    const o = h.get("g");
    expect(o?.metadata.finalizers).toEqual([FINALIZER]);
    expect(h.cloud.creates).toHaveLength(1);
    expect(o?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION]).toBe(h.cloud.creates[0]);
    expect(o?.status).toMatchObject({ size: 3 });
    const writes = h.kube.writesTo("gadgets", key("g")).map((w) => w.method);
    // After the test's own create, the finalizer is written before anything happens in the cloud.
    expect(writes.slice(0, 2)).toEqual(["create", "jsonPatch"]);
    const statusWrites = h.kube.writesTo("gadgets", key("g")).filter((w) => w.method === "patchStatus").map((w) => w.body as Record<string, unknown>);
    // The intent to create, then the id, are recorded through the status subresource (never an annotation alone).
    expect(statusWrites[0]?.createPending).toMatchObject({ at: expect.any(String) as string });
    expect(statusWrites[1]).toMatchObject({ externalId: h.cloud.creates[0], createPending: null });
    expect(o?.status?.externalId).toBe(h.cloud.creates[0]);
    const reasons = statusWrites.filter((b) => b.conditions !== undefined)
      .map((b) => (b.conditions as { type: string; reason: string }[]).find((c) => c.type === "Ready")?.reason);
    expect(reasons).toEqual(["Creating", "Available"]);
    expect(h.kube.events.map((e) => e.reason)).toContain("Created");
  });

  it("adopt after lost create: with create-pending, the object the lost response left is adopted, not duplicated", async () => {
    const h = await harness();
    // The operator announced a create, sent it, and died before recording the id.
    const id = h.cloud.put({ size: 2, label: h.cloud.labelOf(ns, "lost") });
    await h.create("lost", { size: 2 }, undefined, { createPending: { at: "2026-01-01T00:00:00Z" } });
    await h.waitFor("Ready", () => readyTrue(h, "lost"));
    expect(h.cloud.creates).toHaveLength(0);
    expect(h.get("lost")?.status?.externalId).toBe(id);
    expect(h.get("lost")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION]).toBe(id);
    expect(h.get("lost")?.status?.createPending).toBeUndefined();
    expect(h.cloud.objects.size).toBe(1);
  });

  it("a create that hangs is abandoned at the create deadline, stays announced, and is not sent again within the grace", async () => {
    // The grace that keeps a second create from being sent must outlast the longest a first can take.
    expect(Timings.createGraceMillis).toBeGreaterThanOrEqual(2 * Timings.createDeadlineMillis);
    const timings = Timings as { createDeadlineMillis: number };
    const deadline = timings.createDeadlineMillis;
    timings.createDeadlineMillis = 150;
    try {
      const h = await harness();
      h.cloud.createHangs = true;
      await h.create("hung", { size: 2 });
      const c = await h.waitFor("deadline reported", () => { const x = h.condition("hung", "Synced"); return x?.status === "False" ? x : undefined; });
      expect(c.message).toContain("not answered within 0.15 s");
      expect(h.get("hung")?.status?.createPending).toMatchObject({ at: expect.any(String) as string });
      h.cloud.createHangs = false;
      await h.quiet(600); // many backoff periods: each later pass waits for the announced create instead
      expect(h.cloud.createAttempts).toEqual([key("hung")]);
      expect(h.condition("hung", "Ready")?.reason).toBe("Creating");
      expect(h.condition("hung", "Ready")?.message).toMatch(/not sent again before \d+ s/);
    } finally {
      timings.createDeadlineMillis = deadline;
    }
  });

  it("without create-pending an object with its label is never adopted: LabelInUse, nothing created or adopted", async () => {
    const h = await harness();
    const theirs = h.cloud.put({ size: 2, label: h.cloud.labelOf(ns, "taken") });
    await h.create("taken", { size: 2 });
    const c = await h.waitFor("LabelInUse", () => { const x = h.condition("taken", "Synced"); return x?.status === "False" ? x : undefined; });
    expect(c.reason).toBe("LabelInUse");
    const o = h.get("taken");
    expect(o?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION]).toBeUndefined();
    expect(o?.status?.externalId).toBeUndefined();
    // The refused create is known not to have happened: nothing is marked as possibly lost.
    expect(o?.status?.createPending).toBeUndefined();
    expect(h.cloud.creates).toEqual([]);
    await h.kube.deleteCustom(gadgetType, { namespace: ns, name: "taken" });
    await h.waitFor("resource gone", () => h.get("taken") === undefined);
    expect(h.cloud.objects.has(theirs)).toBe(true);
    expect(h.cloud.deletes).toEqual([]);
  });

  it("a recorded object that vanished: ExternalResourceGone, never recreated by itself; a recreate token creates one, once", async () => {
    const h = await harness();
    await h.create("gone", { size: 1, recreate: "early" }); // set while it exists: spent doing nothing
    await h.waitFor("Ready", () => readyTrue(h, "gone"));
    const first = h.get("gone")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    await h.waitFor("idle token spent", () => (h.get("gone")?.status?.lastRequests as { recreate?: { token: string } } | undefined)?.recreate?.token === "early");
    h.cloud.objects.delete(first); // deleted behind the operator's back
    h.controller.enqueue(key("gone"));
    const c = await h.waitFor("ExternalResourceGone", () => { const x = h.condition("gone", "Ready"); return x?.reason === "ExternalResourceGone" ? x : undefined; });
    expect(c.message).toContain("spec.requests.recreate");
    await h.quiet(30);
    expect(h.cloud.creates).toHaveLength(1);
    expect(h.kube.events.filter((e) => e.reason === "ExternalResourceGone" && e.type === "Warning")).toHaveLength(1);
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "gone" }, { spec: { recreate: "r1" } });
    await h.waitFor("Ready again", () => readyTrue(h, "gone"));
    const second = h.get("gone")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION];
    expect(second).not.toBe(first);
    expect(h.cloud.creates).toHaveLength(2);
    expect((h.get("gone")?.status?.lastRequests as { recreate?: { token: string } } | undefined)?.recreate?.token).toBe("r1");
    h.controller.enqueue(key("gone"));
    await h.quiet(30);
    expect(h.cloud.creates).toHaveLength(2);
  });

  it("status tells the truth when the update fails: the observed state (failed, Ready=False) is written with the error", async () => {
    const h = await harness();
    await h.create("truth", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "truth"));
    const cloudObj = h.cloud.objects.get(h.get("truth")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "");
    if (cloudObj === undefined) throw new Error("no cloud object");
    cloudObj.failed = true;
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "truth" }, { spec: { size: 2 } });
    await h.waitFor("Synced=False", () => h.condition("truth", "Synced")?.status === "False");
    expect(h.condition("truth", "Ready")).toMatchObject({ status: "False", reason: "Failed" });
    expect(h.condition("truth", "Synced")).toMatchObject({ reason: "Waiting", message: "the gadget is failed" });
  });

  it("a re-check held back by the client's own call budget: a Synced object keeps its conditions (no write, no Event); a held-back update says RateLimited", async () => {
    const h = await harness();
    await h.create("held", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "held"));
    await h.quiet(20);
    const statusWrites = (): number => h.kube.writesTo("gadgets", key("held")).filter((w) => w.method === "patchStatus").length;
    const writes = statusWrites();
    const events = h.kube.events.length;
    const unsent = (): RetryAfterError => new RetryAfterError("RateLimited", "reading: waiting for the call budget", 30, { unsent: true });
    h.cloud.failNext.set(key("held"), [unsent(), unsent()]);
    h.controller.enqueue(key("held"));
    const observes = (): number => h.cloud.observeCalls.filter((c) => c.key === key("held")).length;
    await h.waitFor("both deferrals taken", () => (h.cloud.failNext.get(key("held")) as Error[] | undefined)?.length === 0);
    const n = observes();
    await h.waitFor("retried after the wait", () => observes() > n);
    await h.quiet(20);
    expect(statusWrites()).toBe(writes);
    expect(h.kube.events.length).toBe(events);
    expect(h.condition("held", "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    // The same deferral with work waiting (a spec change to apply) is news: RateLimited, then done.
    const o = h.cloud.objects.get(h.get("held")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "");
    if (o === undefined) throw new Error("no cloud object");
    o.held = true;
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "held" }, { spec: { size: 2 } });
    await h.waitFor("RateLimited", () => h.condition("held", "Synced")?.reason === "RateLimited");
    o.held = false;
    await h.waitFor("updated", () => readyTrue(h, "held") && h.get("held")?.status?.size === 2 && h.condition("held", "Synced")?.status === "True");
  });

  it("observe-only with drift: mirrors, reports the difference, changes nothing, holds no finalizer", async () => {
    const h = await harness();
    const id = h.cloud.put({ size: 2, label: "made elsewhere" });
    await h.create("watched", { size: 5, managementPolicy: "Observe", id });
    await h.waitFor("Ready", () => readyTrue(h, "watched"));
    const synced = h.condition("watched", "Synced");
    expect(synced).toMatchObject({ status: "True", reason: "Observing" });
    expect(synced?.message).toContain("size 2 → 5");
    expect(h.get("watched")?.status).toMatchObject({ size: 2 });
    expect(h.cloud.updates).toHaveLength(0);
    expect(h.cloud.creates).toHaveLength(0);
    expect(h.get("watched")?.metadata.finalizers ?? []).toEqual([]);
  });

  it("update waiting on a status precondition: Waiting, no update sent, then exactly one when it clears", async () => {
    const h = await harness();
    await h.create("busy", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "busy"));
    const id = h.get("busy")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    const cloudObj = h.cloud.objects.get(id);
    if (cloudObj === undefined) throw new Error("no cloud object");
    cloudObj.busy = true;
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "busy" }, { spec: { size: 4 } });
    const waiting = await h.waitFor("Waiting", () => { const c = h.condition("busy", "Synced"); return c?.status === "False" ? c : undefined; });
    expect(waiting.reason).toBe("Waiting");
    expect(h.cloud.updates).toHaveLength(0);
    cloudObj.busy = false;
    await h.waitFor("updated and Ready", () => readyTrue(h, "busy") && h.get("busy")?.status?.size === 4);
    expect(h.cloud.updates).toEqual([{ key: key("busy"), size: 4 }]);
    expect(h.condition("busy", "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
  });

  it("delete not yet gone: keeps the finalizer and says Deleting until the cloud object is gone", async () => {
    const h = await harness();
    await h.create("slow", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "slow"));
    const id = h.get("slow")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    const cloudObj = h.cloud.objects.get(id);
    if (cloudObj === undefined) throw new Error("no cloud object");
    cloudObj.deleteDelays = 1;
    await h.kube.deleteCustom(gadgetType, { namespace: ns, name: "slow" });
    await h.waitFor("Deleting", () => h.condition("slow", "Ready")?.reason === "Deleting");
    expect(h.get("slow")?.metadata.finalizers).toEqual([FINALIZER]);
    expect(h.cloud.objects.has(id)).toBe(true);
    // The next pass (the delete poll; driven here rather than waited for) finds it gone.
    h.controller.enqueue(key("slow"));
    await h.waitFor("resource gone", () => h.get("slow") === undefined);
    expect(h.cloud.objects.has(id)).toBe(false);
    expect(h.cloud.deletes).toEqual([id, id]);
  });

  it("delete with Retain: the resource goes, the cloud object stays, no delete call", async () => {
    const h = await harness();
    await h.create("keep", { size: 1, deletionPolicy: "Retain" });
    await h.waitFor("Ready", () => readyTrue(h, "keep"));
    const id = h.get("keep")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "";
    await h.kube.deleteCustom(gadgetType, { namespace: ns, name: "keep" });
    await h.waitFor("resource gone", () => h.get("keep") === undefined);
    expect(h.cloud.objects.has(id)).toBe(true);
    expect(h.cloud.deletes).toEqual([]);
  });

  it("terminal error: tried once, reported, not retried by the periodic resync, retried on a spec change", async () => {
    const h = await harness({ resyncMillis: 30 });
    h.cloud.maxSize = 10;
    await h.create("healthy", { size: 1 });
    await h.create("bad", { size: 1000 });
    const c = await h.waitFor("Synced=False", () => { const x = h.condition("bad", "Synced"); return x?.status === "False" ? x : undefined; });
    expect(c).toMatchObject({ reason: "ApiRejected", message: "size 1000 is larger than 10" });
    const healthyCalls = (): number => h.cloud.observeCalls.filter((x) => x.key === key("healthy")).length;
    const healthyBefore = healthyCalls();
    await h.quiet(250);
    // Not even the watch event of our own finalizer write tries it again.
    expect(h.cloud.createAttempts.filter((k) => k === key("bad"))).toHaveLength(1); // several resyncs went by…
    expect(healthyCalls()).toBeGreaterThan(healthyBefore + 3); // …and did reconcile the others
    expect(h.kube.events.filter((e) => e.reason === "ApiRejected")).toHaveLength(1);
    await h.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "bad" }, { spec: { size: 2 } });
    await h.waitFor("Ready after the spec change", () => readyTrue(h, "bad"));
  });

  it("a nested status field that disappears is removed with exactly one write", async () => {
    const h = await harness();
    await h.create("nested", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "nested"));
    const cloudObj = h.cloud.objects.get(h.get("nested")?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION] ?? "");
    if (cloudObj === undefined) throw new Error("no cloud object");
    cloudObj.details = { primary: "p.example", secondary: "s.example" };
    h.controller.enqueue(key("nested"));
    await h.waitFor("both hosts", () => (h.get("nested")?.status?.details as Record<string, string> | undefined)?.secondary === "s.example");
    cloudObj.details = { primary: "p.example" };
    const before = h.kube.writesTo("gadgets", key("nested")).filter((w) => w.method === "patchStatus").length;
    h.controller.enqueue(key("nested"));
    await h.waitFor("secondary removed", () => (h.get("nested")?.status?.details as Record<string, string> | undefined)?.secondary === undefined);
    // More passes once the cache has the write: nothing more to send.
    await h.quiet(100);
    for (let i = 0; i < 3; i++) {
      h.controller.enqueue(key("nested"));
      await h.quiet(20);
    }
    const writes = h.kube.writesTo("gadgets", key("nested")).filter((w) => w.method === "patchStatus").slice(before);
    expect(writes.map((w) => w.body)).toEqual([{ details: { secondary: null } }]);
  });

  it("a conflict adding the finalizer is retried at once, unreported and without backoff", async () => {
    const h = await harness({ backoffBaseMillis: 5_000 });
    h.kube.failNext("jsonPatchCustom", new KubeApiError(409, "Conflict", "test of /metadata/resourceVersion failed"));
    const t0 = Date.now();
    await h.create("race", { size: 1 });
    await h.waitFor("Ready", () => readyTrue(h, "race"));
    expect(Date.now() - t0).toBeLessThan(2_000); // a backoff would have waited 5 s
    expect(h.cloud.creates).toHaveLength(1);
    const reported = h.kube.writesTo("gadgets", key("race")).filter((w) => JSON.stringify(w.body ?? {}).includes("ReconcileError"));
    expect(reported).toEqual([]);
    expect(h.kube.events.filter((e) => e.type === "Warning")).toEqual([]);
  });

  it("a reference not found or not ready: waits with its reason, no cloud call, proceeds when the referenced object becomes Ready", async () => {
    const h = await harness();
    await h.create("app", { size: 1, dependsOn: "db" });
    const notFound = await h.waitFor("ReferenceNotFound", () => { const c = h.condition("app", "Ready"); return c?.status === "False" ? c : undefined; });
    expect(notFound).toMatchObject({ reason: "ReferenceNotFound" });
    expect(notFound.message).toContain("db");
    expect(h.condition("app", "Synced")).toMatchObject({ status: "False", reason: "ReferenceNotFound" });
    // db refers to a missing "net": it exists but is not Ready.
    await h.create("db", { size: 1, dependsOn: "net" });
    await h.waitFor("ReferenceNotReady", () => h.condition("app", "Ready")?.reason === "ReferenceNotReady");
    await h.quiet(150); // many pending polls long: nothing polls while it waits
    expect(h.cloud.observeCalls.filter((c) => c.key === key("app"))).toEqual([]);
    expect(h.cloud.creates).toHaveLength(0);
    await h.create("net", { size: 1 });
    await h.waitFor("all Ready, woken by the changes", () => readyTrue(h, "net") && readyTrue(h, "db") && readyTrue(h, "app"));
    expect(h.cloud.creates).toHaveLength(3);
  });

  it("the connection Secret is published by the runtime, owned by the object, and put back when deleted", async () => {
    const h = await harness({ connection: true });
    await h.create("conn", { size: 7 });
    await h.waitFor("Ready", () => readyTrue(h, "conn"));
    const secret = await h.kube.getSecret({ namespace: ns, name: "conn-gadget" });
    expect(Buffer.from(secret.data?.size ?? "", "base64").toString()).toBe("7");
    expect(secret.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Gadget", name: "conn", uid: h.get("conn")?.metadata.uid, controller: true });
    expect(h.get("conn")?.status?.connectionSecretName).toBe("conn-gadget");
    const applies = (): number => h.kube.writesTo("secrets").filter((w) => w.method === "apply" || w.method === "create").length;
    expect(applies()).toBe(1);
    await h.quiet(100); // the watch brings the new Secret into the operator's cache
    h.controller.enqueue(key("conn"));
    await h.quiet(30);
    expect(applies()).toBe(1); // unchanged content: no write
    await h.kube.deleteSecret({ namespace: ns, name: "conn-gadget" });
    await h.waitFor("Secret back", () => applies() === 2);
  });
});
