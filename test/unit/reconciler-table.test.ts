// Decision table of the generic reconciler (crossplane's reconciler_test.go style): each case
// gives an object, the cloud and the cluster around it, runs exactly one reconcile pass through
// the real Controller's caches on an in-memory Kubernetes API (behind the same KubeApi as
// KubeClient) and the in-memory Gadget cloud, and states what the pass must have written,
// called, reported and asked for next. No case waits for time to pass: "nothing was sent" is
// read from the counters after the one pass. The same runtime is proven on a real API server by
// test/integration/runtime.test.ts and the kinds' integration tests; what spans passes (the
// queue, backoff, terminal errors, deadlines) is in test/unit/controller-queue.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { RetryAfterError } from "../../src/runtime/errors.ts";
import type { EventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { EXTERNAL_ID_ANNOTATION, FINALIZER, INITIALIZED_FROM_ANNOTATION, PAUSED_ANNOTATION } from "../../src/runtime/annotations.ts";
import { conditionReasonMeanings } from "../../src/runtime/reasons.ts";
import { Timings } from "../../src/runtime/timings.ts";
import { GadgetCloud, gadgetType, type GadgetObject, type GadgetSpec } from "../fixtures/gadget-kind.ts";
import { MemoryKube, type WriteRecord } from "../fixtures/memory-kube.ts";

const ns = "table";
const POLL = { pendingMillis: 40, readyMillis: 60_000 };
const LONG_AGO = "2026-01-01T00:00:00Z";

interface GadgetGiven {
  spec?: Partial<GadgetSpec>;
  status?: Record<string, unknown>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  /** Being deleted (deletionTimestamp set; it keeps its finalizers). */
  deleting?: boolean;
}

interface Given {
  /** The object the pass reconciles ("g"). */
  object: GadgetGiven;
  /** Other Gadgets in the namespace, by name. */
  others?: Record<string, GadgetGiven>;
  /** Cloud objects by id. */
  cloud?: Record<string, GadgetObject>;
  /** Steers the cloud before the pass (e.g. a failure to inject). */
  steer?: (cloud: GadgetCloud, kube: MemoryKube) => void;
  connection?: boolean;
  /** The type the kind gives its connection Secret (default Opaque). */
  connectionType?: string;
  /** The kind only reads its cloud objects (its external client has no create, update or delete). */
  readOnly?: boolean;
  /** Secrets in the namespace (e.g. one the pass published before), as data. */
  secrets?: Record<string, { data: Record<string, string>; ownedByG?: boolean }>;
}

type Cond = [status: "True" | "False", reason: string, message?: RegExp];

interface Want {
  ready?: Cond | "unchanged";
  synced?: Cond | "unchanged";
  /** Status fields (a subset). */
  status?: Record<string, unknown>;
  finalizers?: string[];
  /** The resource is gone from the API after the pass. */
  deleted?: boolean;
  /** Cloud calls: creates and deletes by id, updates as sizes, observes as a count. */
  creates?: number;
  updates?: number[];
  deletes?: string[];
  observes?: number;
  /** Writes to the object, in order (create/jsonPatch/mergePatch/patchStatus). */
  writes?: string[];
  /** The status patches' bodies, exactly (when the case is about what is written). */
  statusPatches?: unknown[];
  /** Events as "Type/Reason". */
  events?: string[];
  /** What the pass asks for next: none (wait for a change), a poll of a range, or what it threw (its reason, e.g. Waiting or a Kubernetes Conflict; any other error's message). */
  requeue?: "none" | [min: number, max: number];
  /** The requeue is a settled object's routine look (queued behind what is not settled). */
  routine?: boolean;
  throws?: string;
  /**
   * Every error the Kubernetes API answered the pass with ("method code"), those the runtime
   * handled included; none unless the case says so, so no case passes on an unexpected one.
   */
  kubeErrors?: string[];
  /** Anything else to check. */
  check?: (r: PassResult) => void;
}

interface Case { name: string; given: Given; want: Want }

interface PassResult {
  obj: ManagedObject | undefined;
  cloud: GadgetCloud;
  kube: MemoryKube;
  writes: WriteRecord[];
  events: string[];
  requeueAfterMillis: number | undefined;
  routine: boolean | undefined;
  error: unknown;
  /** The Kubernetes API's errors during the pass, as "method code". */
  kubeErrors: string[];
}

const key = `${ns}/g`;

type RuntimeReason = keyof typeof conditionReasonMeanings;
/** Reasons the runtime declares that one pass cannot show, and where they are proven. */
const provenElsewhere: Partial<Record<RuntimeReason, string>> = {
  NotConverging: "the same update three passes running: test/unit/controller-queue.test.ts and test/integration/tenant-boundary.test.ts",
};
/** Reasons the runtime declares for the kinds to write (their errors and states), never written by the runtime itself (checked below). */
const writtenByKinds: RuntimeReason[] = ["Updating", "Forbidden", "RequestOutcomeUnknown"];

/** Runs one reconcile pass of "g" in the world `given` describes. */
async function onePass(given: Given): Promise<PassResult> {
  const kube = new MemoryKube();
  const cloud = new GadgetCloud();
  for (const [id, o] of Object.entries(given.cloud ?? {})) cloud.objects.set(id, { ...o });
  const put = async (name: string, g: GadgetGiven): Promise<void> => {
    await kube.createCustom(gadgetType, ns, {
      metadata: { name, ...(g.annotations !== undefined ? { annotations: g.annotations } : {}), ...(g.finalizers !== undefined ? { finalizers: g.finalizers } : {}) },
      spec: { size: 1, ...g.spec },
      ...(g.status !== undefined ? { status: g.status } : {}),
    });
    if (g.deleting === true) await kube.deleteCustom(gadgetType, { namespace: ns, name });
  };
  for (const [name, g] of Object.entries(given.others ?? {})) await put(name, g);
  await put("g", given.object);
  const uid = kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.uid;
  for (const [name, s] of Object.entries(given.secrets ?? {})) {
    await kube.applySecret({
      metadata: {
        name, namespace: ns,
        labels: { "app.kubernetes.io/managed-by": "linode-operator", "linode.operator.dev/owner": "g" },
        ...(s.ownedByG === true ? { ownerReferences: [{ apiVersion: "runtime.test.linode.operator.dev/v1", kind: "Gadget", name: "g", uid: uid ?? "", controller: true }] } : {}),
      },
      type: "Opaque",
      data: Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    });
  }
  given.steer?.(cloud, kube);
  const events: string[] = [];
  const recorder: EventRecorder = {
    normal: (_o, reason) => { events.push(`Normal/${reason}`); },
    warning: (_o, reason) => { events.push(`Warning/${reason}`); },
  };
  const controller = new Controller(cloud.kind(POLL, { connection: given.connection ?? false, readOnly: given.readOnly ?? false, ...(given.connectionType !== undefined ? { connectionType: given.connectionType } : {}) }), {
    kube, log: createLogger({ level: "silent" }), events: recorder,
  }, { concurrency: 1, namespaces: [ns] });
  await controller.syncCaches();
  const before = kube.writes.length;
  const errorsBefore = kube.errors.length;
  let requeueAfterMillis: number | undefined;
  let routine: boolean | undefined;
  let error: unknown;
  try {
    const result = await controller.reconcileOnce(key);
    requeueAfterMillis = result?.requeueAfterMillis;
    routine = result?.routine;
  } catch (err) {
    error = err;
  }
  await controller.stop();
  return {
    obj: kube.peek(gadgetType, { namespace: ns, name: "g" }) as ManagedObject | undefined,
    cloud, kube, events, requeueAfterMillis, routine, error,
    kubeErrors: kube.errors.slice(errorsBefore).map((e) => `${e.method} ${e.error instanceof KubeApiError ? String(e.error.code) : e.error.message}`),
    writes: kube.writes.slice(before).filter((w) => w.plural === "gadgets" && w.key === key),
  };
}

const recorded = (id: string, more: Record<string, unknown> = {}): GadgetGiven =>
  ({ finalizers: [FINALIZER], annotations: { [EXTERNAL_ID_ANNOTATION]: id }, status: { externalId: id, size: 1, ...more } });
const inSync = (generation = 1): Record<string, unknown> => ({
  observedGeneration: generation,
  conditions: [
    { type: "Ready", status: "True", reason: "Available", lastTransitionTime: LONG_AGO, observedGeneration: generation },
    { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: LONG_AGO, observedGeneration: generation },
  ],
});
const gadget = (size = 1, more: Partial<GadgetObject> = {}): GadgetObject => ({ size, label: `${ns}/g`, ...more });
const drift: [number, number] = [POLL.readyMillis * 0.8, POLL.readyMillis * 1.2];
const pending: [number, number] = [POLL.pendingMillis * 0.8, POLL.pendingMillis * 1.2];

const cases: Case[] = [
  {
    name: "new, the kind saying when it is first worth a look (a health check due then): looked at then, not at once",
    given: { object: {}, steer: (cloud) => { cloud.firstLookMillis = 31_000; } },
    want: { creates: 1, ready: ["False", "Creating"], requeue: [31_000, 31_000], routine: false },
  },
  {
    name: "new: finalizer first, the create announced, sent once, its id recorded; Creating",
    given: { object: {} },
    want: {
      writes: ["jsonPatch", "patchStatus", "patchStatus", "mergePatch", "patchStatus"],
      creates: 1, finalizers: [FINALIZER],
      ready: ["False", "Creating"], synced: ["True", "ReconcileSuccess"],
      status: { externalId: "1", size: 1 }, events: ["Normal/Created"], requeue: pending,
      check: (r) => {
        expect(r.writes[1]?.body).toMatchObject({ createPending: { at: expect.any(String) as string } });
        // What the create returned is recorded with its id, in the same write (a later conflict cannot lose it).
        expect(r.writes[2]?.body).toEqual({ size: 1, externalId: "1", createPending: null });
        expect(r.obj?.metadata.annotations?.[EXTERNAL_ID_ANNOTATION]).toBe("1");
      },
    },
  },
  {
    name: "recorded and in step: Available, nothing sent, the drift poll",
    given: { object: recorded("7"), cloud: { 7: gadget() } },
    want: { ready: ["True", "Available"], synced: ["True", "ReconcileSuccess"], creates: 0, updates: [], writes: ["patchStatus"], events: [], requeue: drift, routine: true },
  },
  {
    name: "in step and already reported: not one write",
    given: { object: recorded("7", inSync()), cloud: { 7: gadget() } },
    want: { writes: [], events: [], creates: 0, observes: 1, requeue: drift, routine: true },
  },
  {
    name: "in step while its calls are contended (the account's budget nearly spent): its next look one more drift window later",
    given: { object: recorded("7", inSync()), cloud: { 7: gadget() }, steer: (cloud) => { cloud.contended = true; } },
    want: { writes: [], events: [], observes: 1, requeue: [2 * drift[0], 2 * drift[1]] },
  },
  {
    name: "not Ready while its calls are contended: looked at again on the pending cadence as ever",
    given: { object: recorded("7", inSync()), cloud: { 7: gadget(1, { failed: true }) }, steer: (cloud) => { cloud.contended = true; } },
    want: { ready: ["False", "Failed"], observes: 1, requeue: pending, routine: false },
  },
  {
    name: "a create announced long ago and lost: the object it left is adopted, not duplicated",
    given: { object: { finalizers: [FINALIZER], status: { createPending: { at: LONG_AGO } } }, cloud: { 3: gadget(1) } },
    want: { creates: 0, status: { externalId: "3" }, ready: ["True", "Available"], check: (r) => { expect(r.obj?.status?.createPending).toBeUndefined(); } },
  },
  {
    name: "a create announced moments ago and not seen yet: waits, not sent again",
    given: { object: { finalizers: [FINALIZER], status: { createPending: { at: new Date().toISOString() } } } },
    want: { creates: 0, ready: ["False", "Creating", /not sent again before \d+ s/], synced: ["True", "ReconcileSuccess"], requeue: pending },
  },
  {
    name: "its label taken by an object it did not create: LabelInUse, nothing created, no mark of a possible create left",
    given: { object: {}, cloud: { 9: gadget() } },
    want: { creates: 0, throws: "LabelInUse", synced: ["False", "LabelInUse"], events: ["Warning/LabelInUse"], check: (r) => { expect(r.obj?.status?.createPending).toBeUndefined(); expect(r.obj?.status?.externalId).toBeUndefined(); } },
  },
  {
    name: "the API refuses the create: ApiRejected (terminal), reported once, nothing to look for later",
    given: { object: { spec: { size: 1000 } }, steer: (c) => { c.maxSize = 10; } },
    want: { creates: 0, throws: "ApiRejected", synced: ["False", "ApiRejected", /size 1000 is larger than 10/], events: ["Warning/ApiRejected"], check: (r) => { expect(r.cloud.createAttempts).toEqual([key]); expect(r.obj?.status?.createPending).toBeUndefined(); } },
  },
  {
    name: "the recorded object vanished: ExternalResourceGone, a Warning, never recreated by itself",
    given: { object: recorded("4", inSync()) },
    want: { creates: 0, ready: ["False", "ExternalResourceGone", /spec\.requests\.recreate/], synced: ["False", "ExternalResourceGone"], events: ["Warning/ExternalResourceGone"], requeue: drift },
  },
  {
    name: "vanished and already reported: no second Warning",
    given: {
      object: recorded("4", { conditions: [
        { type: "Ready", status: "False", reason: "ExternalResourceGone", message: "", lastTransitionTime: LONG_AGO },
        { type: "Synced", status: "False", reason: "ExternalResourceGone", message: "", lastTransitionTime: LONG_AGO },
      ] }),
    },
    want: { creates: 0, events: [] },
  },
  {
    name: "vanished, and a new recreate token: the old id forgotten, one create, the token recorded",
    given: { object: { ...recorded("4"), spec: { recreate: "r1" } } },
    want: {
      creates: 1, status: { externalId: "1" }, ready: ["False", "Creating"],
      // The token's record is written at the version read before the forget, which the forget's own write moved on: one conflict, read again, retried.
      kubeErrors: ["patchCustomStatus 409"],
      check: (r) => { expect((r.obj?.status?.lastRequests as { recreate?: { token: string } }).recreate?.token).toBe("r1"); },
    },
  },
  {
    name: "vanished, and the recreate token already spent: ExternalResourceGone, no create",
    given: { object: { ...recorded("4", { lastRequests: { recreate: { token: "r1", completedAt: LONG_AGO } } }), spec: { recreate: "r1" } } },
    want: { creates: 0, ready: ["False", "ExternalResourceGone"] },
  },
  {
    name: "a recreate token set while the object exists is spent doing nothing",
    given: { object: { ...recorded("7"), spec: { recreate: "early" } }, cloud: { 7: gadget() } },
    want: { creates: 0, ready: ["True", "Available"], check: (r) => { expect((r.obj?.status?.lastRequests as { recreate?: { token: string } }).recreate?.token).toBe("early"); } },
  },
  {
    name: "differs: one update, an Updated Event, the new state mirrored",
    given: { object: { ...recorded("7", inSync()), spec: { size: 4 } }, cloud: { 7: gadget(1) } },
    want: { updates: [4], observes: 2, status: { size: 4 }, ready: ["True", "Available"], synced: ["True", "ReconcileSuccess"], events: ["Normal/Updated"] },
  },
  {
    name: "differs while busy: Waiting, no update sent, the observed state written",
    given: { object: { ...recorded("7"), spec: { size: 4 } }, cloud: { 7: gadget(1, { busy: true }) } },
    want: { updates: [], throws: "Waiting", synced: ["False", "Waiting", /busy/], ready: ["True", "Available"], events: ["Normal/Waiting"] },
  },
  {
    name: "the update fails on a failed object: status tells the truth (Ready=False Failed) with the error",
    given: { object: { ...recorded("7"), spec: { size: 2 } }, cloud: { 7: gadget(1, { failed: true }) } },
    want: { updates: [], ready: ["False", "Failed"], synced: ["False", "Waiting", /the gadget is failed/], throws: "Waiting" },
  },
  {
    name: "a re-check held back by the call budget before anything was sent, of an object in sync: no write, no Event",
    given: {
      object: recorded("7", inSync()), cloud: { 7: gadget() },
      steer: (c) => { c.failNext.set(key, [new RetryAfterError("RateLimited", "reading: waiting for the call budget", 30, { unsent: true })]); },
    },
    want: { writes: [], events: [], throws: "RateLimited" },
  },
  {
    name: "an update held back by the call budget is news: Synced RateLimited",
    given: { object: { ...recorded("7", inSync()), spec: { size: 2 } }, cloud: { 7: gadget(1, { held: true }) } },
    want: { updates: [], synced: ["False", "RateLimited"], ready: ["True", "Available"], throws: "RateLimited", events: ["Normal/RateLimited"] },
  },
  {
    name: "observe only, with drift: mirrors, reports the difference, changes nothing, holds no finalizer",
    given: { object: { spec: { size: 5, managementPolicy: "Observe", id: "2" } }, cloud: { 2: { size: 2, label: "made elsewhere" } } },
    want: { updates: [], creates: 0, finalizers: [], status: { size: 2, externalId: "2" }, ready: ["True", "Available"], synced: ["True", "Observing", /size 2 → 5/] },
  },
  {
    name: "observe only, nothing to observe: NotFound, nothing created",
    given: { object: { spec: { managementPolicy: "Observe", id: "2" } } },
    want: { creates: 0, ready: ["False", "NotFound"], synced: ["False", "NotFound"], requeue: [POLL.pendingMillis * Timings.observeMissingFactor * 0.8, POLL.pendingMillis * Timings.observeMissingFactor * 1.2] },
  },
  {
    name: "deleting, the delete not finished: Deleting, the finalizer kept, the delete poll",
    given: { object: { ...recorded("7"), deleting: true }, cloud: { 7: gadget(1, { deleteDelays: 1 }) } },
    want: { deletes: ["7"], finalizers: [FINALIZER], ready: ["False", "Deleting"], requeue: [Timings.deletePollMillis, Timings.deletePollMillis], check: (r) => { expect(r.cloud.objects.has("7")).toBe(true); } },
  },
  {
    name: "deleting: the cloud object deleted, a Deleted Event, the finalizer removed",
    given: { object: { ...recorded("7"), deleting: true }, cloud: { 7: gadget() } },
    want: { deletes: ["7"], deleted: true, events: ["Normal/Deleted"], requeue: "none", check: (r) => { expect(r.cloud.objects.has("7")).toBe(false); } },
  },
  {
    name: "deleting with Retain: the resource goes, the cloud object stays, no delete",
    given: { object: { ...recorded("7"), spec: { deletionPolicy: "Retain" }, deleting: true }, cloud: { 7: gadget() } },
    want: { deletes: [], deleted: true, observes: 0, check: (r) => { expect(r.cloud.objects.has("7")).toBe(true); } },
  },
  {
    name: "deleting an object another resource also records: left in place for its owner",
    given: { object: { ...recorded("7"), deleting: true }, others: { first: recorded("7") }, cloud: { 7: gadget() } },
    want: { deletes: [], deleted: true, events: ["Normal/NotDeleted"] },
  },
  {
    name: "a nested status field that disappeared is removed with exactly one patch",
    given: { object: recorded("7", { ...inSync(), details: { primary: "p.example", secondary: "s.example" } }), cloud: { 7: gadget(1, { details: { primary: "p.example" } }) } },
    want: { statusPatches: [{ details: { secondary: null } }] },
  },
  {
    name: "a conflict adding the finalizer: thrown to be retried with a fresh copy, nothing reported or sent",
    given: { object: {}, steer: (_c, k) => { k.failNext("jsonPatchCustom", new KubeApiError(409, "Conflict", "test of /metadata/resourceVersion failed")); } },
    want: { writes: [], events: [], creates: 0, observes: 0, throws: "Conflict", kubeErrors: ["jsonPatchCustom 409"] },
  },
  {
    name: "a reference not found: waits with its reason, no cloud call, no poll (its creation wakes it)",
    given: { object: { spec: { dependsOn: "db" } } },
    want: { observes: 0, creates: 0, ready: ["False", "ReferenceNotFound", /db/], synced: ["False", "ReferenceNotFound"], requeue: "none", events: [] },
  },
  {
    name: "a reference not ready: ReferenceNotReady, no cloud call",
    given: { object: { spec: { dependsOn: "db" } }, others: { db: {} } },
    want: { observes: 0, creates: 0, ready: ["False", "ReferenceNotReady"], requeue: "none" },
  },
  {
    name: "a reference Ready: proceeds",
    given: { object: { spec: { dependsOn: "db" } }, others: { db: { status: { conditions: [{ type: "Ready", status: "True", reason: "Available", message: "", lastTransitionTime: LONG_AGO }] } } } },
    want: { creates: 1 },
  },
  {
    name: "the connection Secret: published owned by the object, recorded in status, Ready",
    given: { object: { ...recorded("7", { size: 7 }), spec: { size: 7 } }, cloud: { 7: gadget(7) }, connection: true },
    want: {
      ready: ["True", "Available"], status: { connectionSecretName: "g-gadget", binding: { name: "g-gadget" } }, events: ["Normal/ConnectionSecretPublished"],
      // Not in the cache of its own Secrets: looked up on the API server, where no one else's is.
      kubeErrors: ["getSecret 404"],
      check: (r) => {
        const created = r.kube.writesTo("secrets");
        expect(created.map((w) => w.method)).toEqual(["create"]);
        expect(created[0]?.body).toMatchObject({ metadata: { ownerReferences: [{ kind: "Gadget", name: "g", controller: true }] } });
      },
    },
  },
  {
    name: "the connection Secret already holds the content: not written again",
    given: { object: { ...recorded("7", { ...inSync(), size: 7, connectionSecretName: "g-gadget", binding: { name: "g-gadget" } }), spec: { size: 7 } }, cloud: { 7: gadget(7) }, connection: true, secrets: { "g-gadget": { data: { size: "7" }, ownedByG: true } } },
    want: { writes: [], events: [], check: (r) => { expect(r.kube.writesTo("secrets").filter((w) => w.method === "apply")).toHaveLength(1); } },
  },
  {
    name: "a connection Secret of another type (the type is immutable): replaced, deleted then created, not patched",
    given: { object: { ...recorded("7", { ...inSync(), size: 7 }), spec: { size: 7 } }, cloud: { 7: gadget(7) }, connection: true, connectionType: "servicebinding.io/gadget", secrets: { "g-gadget": { data: { size: "7" }, ownedByG: true } } },
    want: {
      ready: ["True", "Available"], events: ["Normal/ConnectionSecretPublished"],
      check: (r) => {
        expect(r.kube.writesTo("secrets").map((w) => w.method)).toEqual(["apply", "delete", "create"]);
        expect(r.kube.writesTo("secrets").at(-1)?.body).toMatchObject({ type: "servicebinding.io/gadget" });
      },
    },
  },
  {
    name: "no connection details to publish yet (the kind cannot read them): Ready=False SecretPending, no Secret written, looked at again soon",
    given: { object: { ...recorded("7", { ...inSync(), size: 7 }), spec: { size: 7 } }, cloud: { 7: gadget(7, { noDetails: true }) }, connection: true },
    want: {
      ready: ["False", "SecretPending"], synced: ["True", "ReconcileSuccess"], events: [], requeue: pending, kubeErrors: ["getSecret 404"],
      check: (r) => { expect(r.kube.writesTo("secrets")).toEqual([]); expect(r.obj?.status?.connectionSecretName).toBeUndefined(); },
    },
  },
  {
    name: "a Secret of that name someone else made: SecretConflict naming it, never written",
    given: { object: { ...recorded("7", { ...inSync(), size: 7 }), spec: { size: 7 } }, cloud: { 7: gadget(7) }, connection: true, secrets: { "g-gadget": { data: { theirs: "yes" } } } },
    want: {
      ready: ["False", "SecretConflict", /g-gadget already exists .* never overwritten/], synced: ["True", "ReconcileSuccess"], events: [],
      // Only the Secret the case made.
      check: (r) => { expect(r.kube.writesTo("secrets").map((w) => w.method)).toEqual(["apply"]); },
    },
  },
  {
    name: "up but not usable, the kind not saying why: Ready=False Unavailable, looked at again soon",
    given: { object: recorded("7", inSync()), cloud: { 7: gadget(1, { starting: true }) } },
    want: { ready: ["False", "Unavailable"], synced: ["True", "ReconcileSuccess"], updates: [], events: [], requeue: pending },
  },
  {
    name: "observe fails (not an error the kind classified): Synced=False ReconcileError with its message, a Warning, thrown for backoff",
    given: { object: recorded("7"), cloud: { 7: gadget() }, steer: (c) => { c.failNext.set(key, 1); } },
    want: { throws: "injected failure", ready: "unchanged", synced: ["False", "ReconcileError", /injected failure/], events: ["Warning/ReconcileError"], updates: [] },
  },
  {
    name: "two problems no update fixes (a shape it cannot change, a size over its capacity): Synced=False with the first one's reason, the message naming both; nothing sent",
    given: { object: { ...recorded("7", inSync()), spec: { size: 4 } }, cloud: { 7: gadget(1, { shape: "square", capacity: 2 }) } },
    want: {
      updates: [], observes: 1, ready: ["True", "Available"],
      synced: ["False", "ShapeMismatch", /^2 problems \(ShapeMismatch, OverCapacity\)\. ShapeMismatch: the gadget is square.*\. OverCapacity: spec\.size 4 is more than the 2 this gadget takes$/],
    },
  },
  {
    name: "paused: the one write is Synced=False Paused; no finalizer, no cloud call",
    given: { object: { annotations: { [PAUSED_ANNOTATION]: "true" } } },
    want: { writes: ["patchStatus"], synced: ["False", "Paused"], ready: "unchanged", finalizers: [], observes: 0, creates: 0, requeue: "none" },
  },
  {
    name: "an invalid spec: InvalidSpec, nothing else",
    given: { object: { spec: { size: 0 } } },
    want: { writes: ["patchStatus"], synced: ["False", "InvalidSpec"], throws: "InvalidSpec", observes: 0 },
  },
  {
    name: "an external-id annotation that disagrees with the record is refused, never followed",
    given: { object: { ...recorded("7"), annotations: { [EXTERNAL_ID_ANNOTATION]: "8" } }, cloud: { 7: gadget(), 8: gadget() } },
    want: { throws: "ExternalIdMismatch", observes: 0, updates: [], synced: ["False", "ExternalIdMismatch", /never followed/] },
  },
  {
    name: "an id another resource records: ExternalIdInUse, nothing read or written to it",
    given: { object: { spec: { id: "7" } }, others: { owner: recorded("7") }, cloud: { 7: gadget(3) } },
    want: { observes: 0, updates: [], creates: 0, ready: ["False", "ExternalIdInUse"], synced: ["False", "ExternalIdInUse"], events: ["Warning/ExternalIdInUse"], requeue: drift },
  },
  // Late initialization on adoption: the cloud gadget is blue; the spec's default is red.
  {
    name: "adopting by id (Manage): the field the spec leaves unset takes the cloud object's value, written to the spec once with the mark, conditionally; nothing sent; the pass ends",
    given: { object: { spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue" }) } },
    want: {
      updates: [], creates: 0, writes: ["jsonPatch", "patchStatus", "mergePatch", "mergePatch"], events: ["Normal/LateInitialized"],
      requeue: [Timings.afterUpdateMillis, Timings.afterUpdateMillis],
      check: (r) => {
        // Only what the spec left unset (size was written), with the version it was read at.
        expect(r.writes.at(-1)?.body).toEqual({ metadata: { resourceVersion: expect.any(String) as string, annotations: { [INITIALIZED_FROM_ANNOTATION]: "7" } }, spec: { color: "blue" } });
        expect(r.obj?.spec).toMatchObject({ size: 1, id: "7", color: "blue" });
        expect(r.cloud.objects.get("7")?.color).toBe("blue");
      },
    },
  },
  {
    name: "the pass after a crash that followed the init patch: the mark says it was done, nothing initialized again, nothing sent; in step",
    given: { object: { finalizers: [FINALIZER], annotations: { [INITIALIZED_FROM_ANNOTATION]: "7" }, spec: { id: "7", color: "blue" } }, cloud: { 7: gadget(1, { color: "blue" }) } },
    want: { updates: [], writes: ["patchStatus", "mergePatch", "patchStatus"], events: [], ready: ["True", "Available"], synced: ["True", "ReconcileSuccess"], status: { externalId: "7" } },
  },
  {
    name: "initialized before, the field removed by the user since: not filled again; the spec (its default) is what is kept",
    given: { object: { ...recorded("7"), annotations: { [EXTERNAL_ID_ANNOTATION]: "7", [INITIALIZED_FROM_ANNOTATION]: "7" }, spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue" }) } },
    want: { updates: [1], events: ["Normal/Updated"], check: (r) => { expect(r.writes.filter((w) => w.method === "mergePatch")).toEqual([]); expect(r.cloud.objects.get("7")?.color).toBe("red"); } },
  },
  {
    name: "bound already but never initialized (observed first, now Manage): initialized on this first Manage pass, nothing sent",
    given: { object: { ...recorded("7"), spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue" }) } },
    want: { updates: [], writes: ["mergePatch"], events: ["Normal/LateInitialized"], check: (r) => { expect(r.obj?.spec).toMatchObject({ color: "blue" }); } },
  },
  {
    name: "a user's edit meanwhile: the init patch conflicts, thrown to be retried from a fresh copy; nothing written to the spec, nothing sent",
    given: { object: { ...recorded("7"), spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue" }) }, steer: (_c, k) => { k.failNext("mergePatchCustom", new KubeApiError(409, "Conflict", "the object has been modified")); } },
    want: { updates: [], writes: [], events: [], throws: "Conflict", kubeErrors: ["mergePatchCustom 409"], check: (r) => { expect(r.obj?.spec).not.toHaveProperty("color"); } },
  },
  {
    name: "Observe: nothing initialized, nothing written to the spec; the difference reported",
    given: { object: { spec: { id: "7", managementPolicy: "Observe" } }, cloud: { 7: gadget(1, { color: "blue" }) } },
    want: { updates: [], synced: ["True", "Observing", /color blue → red/], check: (r) => { expect(r.obj?.spec).not.toHaveProperty("color"); expect(r.obj?.metadata.annotations?.[INITIALIZED_FROM_ANNOTATION]).toBeUndefined(); } },
  },
  {
    name: "a value the spec's schema cannot hold: CannotExpress naming the field and the value, nothing written or sent",
    given: { object: { spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "green" }) } },
    want: {
      updates: [], ready: ["False", "CannotExpress"], synced: ["False", "CannotExpress", /spec\.color: it has "green"/], events: ["Warning/CannotExpress"], requeue: drift,
      check: (r) => { expect(r.obj?.spec).not.toHaveProperty("color"); expect(r.obj?.metadata.annotations?.[INITIALIZED_FROM_ANNOTATION]).toBeUndefined(); },
    },
  },
  {
    name: "a setting the spec has no field for (the kind says so): CannotExpress naming it, nothing written or sent",
    given: { object: { spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue", finish: "matte" }) } },
    want: { updates: [], synced: ["False", "CannotExpress", /spec\.color: a matte finish/], check: (r) => { expect(r.obj?.spec).not.toHaveProperty("color"); } },
  },
  {
    name: "what the spec cannot express, in a field the user wrote: their value is the desired state, sent as usual (the mark written, no field)",
    given: { object: { spec: { id: "7", color: "red" } }, cloud: { 7: gadget(1, { color: "green" }) } },
    want: {
      updates: [1], synced: ["True", "ReconcileSuccess"],
      check: (r) => {
        expect(r.writes.filter((w) => w.method === "mergePatch").at(-1)?.body).toEqual({ metadata: { resourceVersion: expect.any(String) as string, annotations: { [INITIALIZED_FROM_ANNOTATION]: "7" } } });
        expect(r.cloud.objects.get("7")?.color).toBe("red");
      },
    },
  },
  {
    name: "a rule of the CRD refuses the values (422): CannotExpress with the API server's word, nothing sent",
    given: { object: { ...recorded("7"), spec: { id: "7" } }, cloud: { 7: gadget(1, { color: "blue" }) }, steer: (_c, k) => { k.failNext("mergePatchCustom", new KubeApiError(422, "Invalid", "Gadget \"g\" is invalid: spec.color: blue is not allowed here")); } },
    want: { updates: [], synced: ["False", "CannotExpress", /blue is not allowed here/], kubeErrors: ["mergePatchCustom 422"], check: (r) => { expect(r.obj?.spec).not.toHaveProperty("color"); } },
  },
  {
    name: "a read-only kind: mirrors what its spec names, reports differences, changes nothing, holds no finalizer",
    given: { readOnly: true, object: { spec: { size: 5, id: "2" } }, cloud: { 2: { size: 2, label: "made elsewhere" } } },
    want: { finalizers: [], creates: 0, updates: [], status: { size: 2, externalId: "2" }, ready: ["True", "Available"], synced: ["True", "Observing", /size 2 → 5/] },
  },
  {
    name: "a read-only kind with nothing to read: NotFound, nothing created",
    given: { readOnly: true, object: {} },
    want: { finalizers: [], creates: 0, ready: ["False", "NotFound"], synced: ["False", "NotFound"] },
  },
  {
    name: "a read-only kind being deleted with a finalizer left from before: let go, nothing deleted",
    given: { readOnly: true, object: { ...recorded("7"), deleting: true }, cloud: { 7: gadget() } },
    want: { deleted: true, deletes: [], observes: 0, check: (r) => { expect(r.cloud.objects.has("7")).toBe(true); } },
  },
];

function expectCondition(r: PassResult, type: string, want: Cond | "unchanged" | undefined): void {
  if (want === undefined) return;
  const c = r.obj?.status?.conditions?.find((x) => x.type === type);
  if (want === "unchanged") {
    expect(c, `${type} written`).toBeUndefined();
    return;
  }
  expect({ status: c?.status, reason: c?.reason }, type).toEqual({ status: want[0], reason: want[1] });
  if (want[2] !== undefined) expect(c?.message, `${type} message`).toMatch(want[2]);
}

describe("generic reconciler decision table: one pass per case", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, { given, want }) => {
    const r = await onePass(given);
    expect(r.kubeErrors, "Kubernetes API errors").toEqual(want.kubeErrors ?? []);
    if (want.throws !== undefined) expect(r.error instanceof Error ? ((r.error as { reason?: string }).reason ?? r.error.message) : r.error).toBe(want.throws);
    else expect(r.error).toBeUndefined();
    expectCondition(r, "Ready", want.ready);
    expectCondition(r, "Synced", want.synced);
    if (want.status !== undefined) expect(r.obj?.status).toMatchObject(want.status);
    if (want.finalizers !== undefined) expect(r.obj?.metadata.finalizers ?? []).toEqual(want.finalizers);
    if (want.deleted !== undefined) expect(r.obj === undefined).toBe(want.deleted);
    if (want.creates !== undefined) expect(r.cloud.creates).toHaveLength(want.creates);
    if (want.updates !== undefined) expect(r.cloud.updates.map((u) => u.size)).toEqual(want.updates);
    if (want.deletes !== undefined) expect(r.cloud.deletes).toEqual(want.deletes);
    if (want.observes !== undefined) expect(r.cloud.observeCalls.filter((c) => c.key === key)).toHaveLength(want.observes);
    if (want.writes !== undefined) expect(r.writes.map((w) => w.method)).toEqual(want.writes);
    if (want.statusPatches !== undefined) expect(r.writes.filter((w) => w.method === "patchStatus").map((w) => w.body)).toEqual(want.statusPatches);
    if (want.events !== undefined) expect(r.events).toEqual(want.events);
    if (want.requeue === "none") expect(r.requeueAfterMillis).toBeUndefined();
    else if (want.requeue !== undefined) {
      expect(r.requeueAfterMillis).toBeGreaterThanOrEqual(want.requeue[0]);
      expect(r.requeueAfterMillis).toBeLessThanOrEqual(want.requeue[1]);
    }
    if (want.routine !== undefined) expect(r.routine === true).toBe(want.routine);
    want.check?.(r);
  });

  it("every condition reason the runtime declares is shown by a case, or said where it is proven", () => {
    const shown = new Set(cases.flatMap((c) => [c.want.ready, c.want.synced]).flatMap((w) => (Array.isArray(w) ? [w[1]] : [])));
    for (const r of Object.keys(conditionReasonMeanings) as RuntimeReason[]) {
      const excused = provenElsewhere[r] !== undefined || writtenByKinds.includes(r);
      if (excused) expect(shown, `${r} is shown by a case now: take it off the list of reasons the table leaves out`).not.toContain(r);
      else expect(shown, `${r}: the runtime declares it and no case shows it`).toContain(r);
    }
  });

  it("a reason the table leaves to the kinds is never written by the runtime itself", () => {
    const dir = new URL("../../src/runtime/", import.meta.url);
    const runtime = readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "reasons.ts").map((f) => readFileSync(new URL(f, dir), "utf8")).join("\n");
    for (const r of writtenByKinds) expect(runtime, r).not.toMatch(new RegExp(`\\b(R|ConditionReasons)\\.${r}\\b|"${r}"`));
  });
});
