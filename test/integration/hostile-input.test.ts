// Hostile keys and values in every map-typed field of every kind, on a real API server with the
// emulator over HTTP and every kind's controller in this process (Linode's current platform).
// The inputs are generated from the kinds' CRD schemas (test/harness/hostile-input.ts). First
// admission: every map a CRD types refuses a prototype key with its CEL rule's message (counted
// per field: refused, admitted). Then the operator, with every input the API server admitted
// (engineConfig's prototype keys among them: the API server cannot see into a free-form field),
// at creation and as edits of objects that converged first: each ends a pass in a condition, a
// spec holding a prototype key is InvalidSpec, Object.prototype gains nothing, nothing escapes,
// no unexpected error is counted, and another namespace's resources converge afterwards.
// test/unit/hostile-input.test.ts puts what admission refuses through the operator as well.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/types.ts";
import { kindDefinitions, kinds } from "../../src/resources/index.ts";
import { PAUSED_ANNOTATION } from "../../src/runtime/annotations.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import {
  baseObjects, benignObject, carrierObject, discoverMapFields, hasPrototypeKey, HOSTILE_KEYS, hostileInputs, pointerOf, PROTOTYPE_KEYS, prototypeWatch, tally, type HostileInput,
} from "../harness/hostile-input.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

/** Kinds whose base object refers to a database that is not there: they settle without becoming Ready. */
const REFERRING_KINDS = ["DatabaseSnapshot", "DatabaseConnectionPool"];

type Json = Record<string, unknown>;
const GROUP = "linode.operator.dev";
const VERSION = "v1alpha1";
const typeOf = (kind: string): ResourceType => {
  const t = kinds.find((k) => k.type.kind === kind)?.type;
  if (t === undefined) throw new Error(`no kind ${kind}`);
  return t;
};
const describeInput = (input: HostileInput): string => `${input.kind} ${input.field.path} ${input.shape}=${input.value}`;

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i];
      if (item !== undefined) await fn(item, i);
    }
  }));
}

const fields = discoverMapFields(kindDefinitions);
const inputs = hostileInputs(kindDefinitions, { perKey: 2 });

describe("hostile keys and values in every map of every kind, on a real API server", () => {
  const cluster = useTestCluster("hostile");
  let env: OperatorEnv;
  let api: CustomObjectsApi;
  const A = (): string => cluster.namespace;
  const B = (): string => `${cluster.namespace}-b`;
  const OTHER = (): string => `${cluster.namespace}-other`;
  // Where admission is tried (dry runs, and objects whose status a dry run patches): no operator watches it.
  const ADMISSION = (): string => `${cluster.namespace}-adm`;
  const tenant = (i: number): string => (i % 2 === 0 ? A() : B());
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
  const prototype = prototypeWatch();
  /** What the API server admitted, by input name, and the outcome of each (for the operator phase). */
  const admitted = new Set<string>();

  const body = (kind: string, name: string, object: { metadata?: Json; spec: Json }, annotations?: Json): Json => ({
    apiVersion: `${GROUP}/${VERSION}`, kind,
    metadata: { name, ...object.metadata, ...(annotations !== undefined ? { annotations: { ...(object.metadata?.annotations as Json | undefined), ...annotations } } : {}) },
    spec: object.spec,
  });
  const admit = async (call: () => Promise<unknown>): Promise<{ ok: true } | { ok: false; code: number; message: string }> => {
    try {
      await call();
      return { ok: true };
    } catch (err) {
      const e = err as { code?: number; body?: unknown };
      if (typeof e.code !== "number") throw err;
      const text = typeof e.body === "string" ? e.body : JSON.stringify(e.body);
      let message = text;
      try { message = (JSON.parse(text) as { message: string }).message; } catch { /* the raw body */ }
      return { ok: false, code: e.code, message };
    }
  };
  const create = (namespace: string, kind: string, name: string, object: { metadata?: Json; spec: Json }, opts: { dryRun?: boolean; annotations?: Json } = {}) => admit(() => api.createNamespacedCustomObject({
    group: GROUP, version: VERSION, namespace, plural: typeOf(kind).plural, body: body(kind, name, object, opts.annotations), ...(opts.dryRun === true ? { dryRun: "All" } : {}),
  }));
  const patchStatus = (namespace: string, kind: string, name: string, status: Json, dryRun = false) => admit(() => api.patchNamespacedCustomObjectStatus(
    { group: GROUP, version: VERSION, namespace, plural: typeOf(kind).plural, name, body: { status }, ...(dryRun ? { dryRun: "All" } : {}) },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  ));
  const cached = (kind: string, namespace: string, name: string): ManagedObject | undefined =>
    env.controllers[kind]?.list().find((o) => o.metadata.namespace === namespace && o.metadata.name === name);
  const cond = (o: ManagedObject | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

  beforeAll(async () => {
    process.on("unhandledRejection", onUnhandled);
    for (const ns of [B(), OTHER(), ADMISSION()]) await cluster.core.createNamespace({ body: { metadata: { name: ns, labels: { "linode.operator.dev/test": "true" } } } });
    env = await startOperatorEnv(cluster, {
      platform: "current", provisionSeconds: 0.3, poll: { pendingMillis: 300, readyMillis: 60_000 }, extraNamespaces: [B(), OTHER()],
      emulatorConfig: { rateLimits: { enabled: false } }, readNodes: true, concurrency: 8,
    });
    api = cluster.kc.makeApiClient(CustomObjectsApi);
  });
  afterAll(async () => {
    process.off("unhandledRejection", onUnhandled);
    await env.stop();
    for (const ns of [B(), OTHER(), ADMISSION()]) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("admission: every map a CRD types refuses a prototype key with its rule's message; every input counted per field", async () => {
    // An object of each kind for the status dry runs, and proof that each field's parents are valid (a benign map is admitted).
    for (const def of kindDefinitions) {
      const made = await create(ADMISSION(), def.kind, "status-base", { spec: baseObjects()[def.kind]?.spec ?? {} });
      expect(made, `${def.kind}: the base object`).toEqual({ ok: true });
    }
    for (const [i, f] of fields.entries()) {
      const benign = benignObject(f);
      const got = f.segments[0] === "status"
        ? await patchStatus(ADMISSION(), f.kind, "status-base", benign.status ?? {}, true)
        : await create(ADMISSION(), f.kind, `benign-${String(i)}`, benign, { dryRun: true });
      expect(got, `${f.kind} ${f.path} with a benign map`).toEqual({ ok: true });
    }
    // A floor: every field × every key (and nesting) with two values each, so a discovery that finds nothing fails here.
    expect(fields.length).toBeGreaterThanOrEqual(15);
    expect(inputs.length).toBeGreaterThanOrEqual(fields.length * HOSTILE_KEYS.length * 2);
    const rows: { field: string; outcome: string }[] = [];
    const wrong: string[] = [];
    await pool(inputs, 8, async (input) => {
      const got = input.field.segments[0] === "status"
        ? await patchStatus(ADMISSION(), input.kind, "status-base", input.object.status ?? {}, true)
        : await create(ADMISSION(), input.kind, input.name, input.object, { dryRun: true });
      if (got.ok) admitted.add(input.name);
      const rule = input.field.keyRule;
      const byRule = !got.ok && rule !== undefined && got.message.includes(rule.message);
      rows.push({ field: `${input.kind} ${input.field.path}`, outcome: got.ok ? "admitted" : byRule ? "refused by the key rule" : `refused (${String(got.code)}, other rules)` });
      if (input.field.objectMeta || input.field.shape === "free-form") return;
      // A map the CRD types: a prototype key of its own is refused by its rule, unless a value's type or size already
      // failed the schema (then the API server checks no rule, and says so); one deeper (in a value) by the value's type.
      // A null value is pruned before validation: that key is not stored.
      const ownKey = Object.entries(input.map).some(([k, v]) => PROTOTYPE_KEYS.includes(k) && v !== null);
      const skippedRules = !got.ok && got.message.includes("some validation rules were not checked");
      // Values every map takes: then nothing but the key rule can refuse it.
      const validValues = input.value === "plain" && Object.values(input.map).every((v) => typeof v === "string");
      if (ownKey && validValues && !byRule) wrong.push(`${describeInput(input)}: not refused by the key rule (${got.ok ? "admitted" : got.message})`);
      else if (ownKey && (got.ok || got.code !== 422 || !(byRule || skippedRules))) wrong.push(`${describeInput(input)}: ${got.ok ? "admitted" : got.message}`);
      else if (!ownKey && hasPrototypeKey(Object.values(input.map)) && got.ok) wrong.push(`${describeInput(input)}: admitted`);
    });
    console.log(`hostile-input (admission, real API server): ${String(inputs.length)} inputs tried, ${String(admitted.size)} admitted:\n${tally(rows)}`);
    expect(wrong, `${String(wrong.length)} inputs with a prototype key in a map the CRD types not refused by its rule`).toEqual([]);
    // What the API server cannot see: engineConfig's prototype keys reach the operator (the next test).
    expect(inputs.filter((x) => x.field.shape === "free-form" && x.prototypeKey && admitted.has(x.name)).length).toBeGreaterThan(0);
    expect(admitted.size).toBeGreaterThanOrEqual(150);
  }, 300_000);

  it("the operator, with every admitted input at creation: each ends a pass in a condition, a prototype key in a spec is InvalidSpec", async () => {
    const chosen = inputs.map((input, i) => ({ input, i, namespace: tenant(i) })).filter(({ input }) => admitted.has(input.name));
    expect(chosen.length).toBeGreaterThanOrEqual(150);
    await pool(chosen, 8, async ({ input, namespace }) => {
      if (input.field.segments[0] !== "status") {
        expect(await create(namespace, input.kind, input.name, input.object)).toEqual({ ok: true });
        return;
      }
      // Paused until its status is written, so the hostile status is what its first real pass reads.
      expect(await create(namespace, input.kind, input.name, input.object, { annotations: { [PAUSED_ANNOTATION]: "true" } })).toEqual({ ok: true });
      await waitFor(`${input.name} paused`, () => (cond(cached(input.kind, namespace, input.name), "Synced")?.reason === "Paused" ? true : undefined), 60_000, 50);
      expect(await patchStatus(namespace, input.kind, input.name, input.object.status ?? {})).toEqual({ ok: true });
      await env.deps.kube.mergePatchCustom(typeOf(input.kind), { namespace, name: input.name }, { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
    });
    const outcomes: { field: string; outcome: string }[] = [];
    const wrong: string[] = [];
    await pool(chosen, 8, async ({ input, namespace }) => {
      const o = await waitFor(`${describeInput(input)}: a condition`, () => {
        const got = cached(input.kind, namespace, input.name);
        const synced = cond(got, "Synced");
        return synced !== undefined && synced.reason !== "Paused" && env.passes(input.kind, `${namespace}/${input.name}`) > 0 ? got : undefined;
      }, 90_000, 100);
      const synced = cond(o, "Synced");
      outcomes.push({ field: `${input.kind} ${input.field.path}`, outcome: synced?.reason ?? "?" });
      // As stored: the API server prunes a null value's key.
      if (hasPrototypeKey(o.spec) && (synced?.reason !== "InvalidSpec" || !(synced.message ?? "").includes(`spec.${input.field.segments[1] ?? ""}`))) {
        wrong.push(`${describeInput(input)}: ${synced?.reason ?? "?"}`);
      }
    });
    expect(prototype.changes()).toEqual([]);
    expect(wrong, "admitted specs with a prototype key that are not InvalidSpec naming it").toEqual([]);
    expect(unhandled).toEqual([]);
    console.log(`hostile-input (operator, real API server): ${String(chosen.length)} admitted inputs created, each ended a pass in a condition (Synced reason per field):\n${tally(outcomes)}`);
  }, 600_000);

  it("the same admitted inputs as edits of objects that converged first, then another namespace converges, with nothing polluted, escaped or unexpected", async () => {
    const carriers = fields.map((field, fi) => ({ field, kind: field.kind, name: `carrier-${String(fi)}`, namespace: tenant(fi) }));
    for (const c of carriers) expect(await create(c.namespace, c.kind, c.name, carrierObject(c.field))).toEqual({ ok: true });
    const outcomes: { field: string; outcome: string }[] = [];
    const wrong: string[] = [];
    let edits = 0;
    await Promise.all(carriers.map(async (c) => {
      const t = typeOf(c.kind);
      const key = { namespace: c.namespace, name: c.name };
      const settled = (generation: number): Promise<ManagedObject> => waitFor(`${c.name} settled at generation ${String(generation)}`, () => {
        const o = cached(c.kind, c.namespace, c.name);
        return (cond(o, "Synced")?.observedGeneration ?? 0) >= generation ? o : undefined;
      }, 90_000, 50);
      await settled(1);
      if (!REFERRING_KINDS.includes(c.kind)) await waitFor(`${c.name} Ready`, () => (cond(cached(c.kind, c.namespace, c.name), "Ready")?.status === "True" ? true : undefined), 90_000, 100);
      let policy = "Delete";
      for (const input of inputs.filter((x) => x.kind === c.kind && x.field.path === c.field.path && admitted.has(x.name))) {
        // Every edit also flips deletionPolicy, so each has a generation of its own to wait for.
        policy = policy === "Delete" ? "Retain" : "Delete";
        const ops: { op: "add"; path: string; value: unknown }[] = [{ op: "add", path: "/spec/deletionPolicy", value: policy }];
        if (c.field.segments[0] === "status") {
          await env.deps.kube.patchCustomStatus(t, key, { createPending: null });
          await env.deps.kube.patchCustomStatus(t, key, { createPending: input.object.status?.createPending });
        } else {
          ops.unshift({ op: "add", path: pointerOf(c.field), value: input.map });
        }
        const patched = await env.deps.kube.jsonPatchCustom<ManagedObject>(t, key, ops);
        const o = await settled(patched.metadata.generation ?? 0);
        const synced = cond(o, "Synced");
        edits++;
        outcomes.push({ field: `${c.kind} ${c.field.path}`, outcome: synced?.reason ?? "?" });
        if (hasPrototypeKey(o.spec) && synced?.reason !== "InvalidSpec") wrong.push(`${describeInput(input)}: ${synced?.reason ?? "?"}`);
      }
    }));
    expect(prototype.changes()).toEqual([]);
    expect(wrong, "edits with a prototype key in the spec that are not InvalidSpec").toEqual([]);
    console.log(`hostile-input (operator, real API server): ${String(edits)} admitted inputs as edits of converged objects (Synced reason per field):\n${tally(outcomes)}`);

    // Another team's resources, made after all that, converge.
    expect(await create(OTHER(), "ManagedDatabase", "orders", { spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" } })).toEqual({ ok: true });
    expect(await create(OTHER(), "NodeBalancer", "web", { spec: { region: "us-east", configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.128.5:80" }] }] } })).toEqual({ ok: true });
    for (const [kind, name] of [["ManagedDatabase", "orders"], ["NodeBalancer", "web"]] as const) {
      await waitFor(`${OTHER()}/${name} Ready`, () => (cond(cached(kind, OTHER(), name), "Ready")?.status === "True" ? true : undefined), 90_000, 100);
    }
    expect(prototype.changes()).toEqual([]);
    expect(({} as Json).polluted).toBeUndefined();
    expect(unhandled).toEqual([]);
    const unexpected = (await env.deps.metrics.unexpectedErrors.get()).values.filter((v) => v.value > 0);
    expect(unexpected, "linode_operator_unexpected_errors_total").toEqual([]);
    console.log(`hostile-input (real API server): ${String(inputs.length)} inputs tried at admission (${String(fields.length)} fields × ${String(HOSTILE_KEYS.length)} keys and their nestings × 2 values); ${String(admitted.size)} admitted, each put through the operator at creation and as an edit`);
  }, 600_000);
});
