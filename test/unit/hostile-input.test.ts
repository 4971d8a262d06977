// Hostile keys and values in every map-typed field of every kind, as the operator meets them when
// nothing refused them first: the in-memory Kubernetes API validates nothing, so the keys the
// CRDs refuse at admission, and those in engineConfig, which the API server cannot see into,
// reach the operator's real kinds (talking to the Linode API emulator over HTTP). Each input is
// generated from the kinds' CRD schemas (test/harness/hostile-input.ts). Every object ends its
// pass in a condition, a spec holding a prototype key is InvalidSpec with nothing sent for it,
// Object.prototype gains nothing, nothing escapes to the process, and another namespace's
// resources converge afterwards. test/integration/hostile-input.test.ts does the same on a real
// API server, admission first.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodesType, secretsType, type ResourceType } from "../../src/kube/types.ts";
import { kindDefinitions, kinds } from "../../src/resources/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import {
  carrierObject, discoverMapFields, HOSTILE_KEYS, HOSTILE_VALUES, hostileInputs, pointerOf, PROTOTYPE_KEYS, prototypeWatch, tally, type HostileInput,
} from "../harness/hostile-input.ts";
import { startMemoryOperatorEnv, type MemoryOperatorEnv } from "../harness/memory-operator-env.ts";

/** Kinds whose base object refers to a database that is not there: they settle without becoming Ready. */
const REFERRING_KINDS = ["DatabaseSnapshot", "DatabaseConnectionPool"];

const TENANTS = ["tenant-a", "tenant-b", "tenant-c"];
const OTHER = "other-team";
const typeOf = (kind: string): ResourceType => {
  const t = kinds.find((k) => k.type.kind === kind)?.type;
  if (t === undefined) throw new Error(`no kind ${kind}`);
  return t;
};
const describeInput = (input: HostileInput): string => `${input.kind} ${input.field.path} ${input.shape}=${input.value}`;
const namespaceOf = (i: number): string => TENANTS[i % TENANTS.length] ?? "tenant-a";

async function until<T>(what: string, fn: () => T | undefined | false, millis = 90_000): Promise<T> {
  const end = Date.now() + millis;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fields = discoverMapFields(kindDefinitions);
const inputs = hostileInputs(kindDefinitions, { perKey: 2 });

describe("hostile keys and values in every map of every kind, without admission", () => {
  it("discovery: every kind's map-typed fields, spec, status and metadata, each CRD map refusing prototype keys", () => {
    console.log(`hostile-input: ${String(fields.length)} map-typed fields found:\n${fields.map((f) => `  ${f.kind} ${f.path} (${f.shape}${f.objectMeta ? ", ObjectMeta" : ""})`).join("\n")}`);
    // A floor, so that a discovery that finds nothing (a schema walk gone wrong) fails here.
    for (const def of kindDefinitions) {
      expect(fields.filter((f) => f.kind === def.kind && !f.objectMeta).length, `${def.kind}: no map in its schema found`).toBeGreaterThan(0);
    }
    expect(fields.filter((f) => !f.objectMeta).length).toBeGreaterThanOrEqual(9);
    expect(fields.some((f) => f.shape === "free-form")).toBe(true);
    expect(HOSTILE_KEYS.length).toBeGreaterThanOrEqual(13);
    // Every field × every key (and nesting) with two values each.
    expect(inputs.length).toBeGreaterThanOrEqual(fields.length * HOSTILE_KEYS.length * 2);
    for (const f of fields.filter((x) => x.shape === "map" && !x.objectMeta)) {
      expect(f.keyRule, `${f.kind} ${f.path}: no CEL rule refuses prototype keys`).toBeDefined();
      for (const k of PROTOTYPE_KEYS) expect(f.keyRule?.rule).toContain(`'${k}'`);
    }
  });

  describe("through the operator (in-memory API, real kinds, the emulator over HTTP)", () => {
    let env: MemoryOperatorEnv;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
    const prototype = prototypeWatch();
    const peek = (input: { kind: string; name: string }, namespace: string): ManagedObject | undefined =>
      env.kube.peek(typeOf(input.kind), { namespace, name: input.name }) as ManagedObject | undefined;
    const cond = (o: ManagedObject | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

    beforeAll(async () => {
      process.on("unhandledRejection", onUnhandled);
      env = await startMemoryOperatorEnv({ namespaces: [...TENANTS, OTHER], platform: "current", readNodes: true, concurrency: 8 });
      // Nodes whose labels have Object's method names, so hostile selectors match something real.
      const nodeLabels: Record<string, string>[] = [{ toString: "hostile", constructor: "hostile", valueOf: "hostile", prototype: "hostile" }, { hasOwnProperty: "hostile" }];
      for (const [i, labels] of nodeLabels.entries()) {
        await env.kube.createCustom(nodesType, undefined as unknown as string, {
          apiVersion: "v1", kind: "Node", metadata: { name: `node-${String(i)}`, labels },
          status: { addresses: [{ type: "ExternalIP", address: `203.0.113.${String(10 + i)}` }, { type: "InternalIP", address: `192.168.1.${String(10 + i)}` }], conditions: [{ type: "Ready", status: "True" }] },
        });
      }
    });
    afterAll(async () => {
      process.off("unhandledRejection", onUnhandled);
      await env.stop();
    });

    const create = (input: HostileInput, i: number): Promise<unknown> => env.kube.createCustom(typeOf(input.kind), namespaceOf(i), {
      apiVersion: "linode.operator.dev/v1alpha1", kind: input.kind,
      metadata: { name: input.name, ...input.object.metadata },
      spec: input.object.spec, ...(input.object.status !== undefined ? { status: input.object.status } : {}),
    });

    it("a spec holding a prototype key is InvalidSpec naming it, and nothing is sent to the Linode API for it", async () => {
      const refused = inputs.map((input, i) => ({ input, i })).filter(({ input }) => input.field.segments[0] === "spec" && input.prototypeKey);
      expect(refused.length).toBeGreaterThanOrEqual(100);
      const sent = (): number => Object.values(env.emulator.requestCounts()).reduce((a, b) => a + b, 0);
      const before = sent();
      for (const { input, i } of refused) await create(input, i);
      const wrong: string[] = [];
      for (const { input, i } of refused) {
        const c = await until(`${input.name} has a condition`, () => cond(peek(input, namespaceOf(i)), "Synced"));
        if (c.reason !== "InvalidSpec" || !(c.message ?? "").includes(`spec.${input.field.segments[1] ?? ""}`)) wrong.push(`${describeInput(input)}: ${c.reason}`);
      }
      expect(prototype.changes()).toEqual([]);
      expect(wrong, `${String(wrong.length)} of ${String(refused.length)} specs with a prototype key not InvalidSpec naming it`).toEqual([]);
      // Nothing else exists yet: any request now would have been for one of these.
      expect(sent() - before).toBe(0);
      console.log(`hostile-input (offline): ${String(refused.length)} inputs with a prototype key in a spec, each InvalidSpec, 0 requests sent:\n${tally(refused.map(({ input }) => ({ field: `${input.kind} ${input.field.path}`, outcome: "InvalidSpec" })))}`);
    });

    it("every other input (typed values, Object's method names, status and metadata maps) ends its pass in a condition", async () => {
      const rest = inputs.map((input, i) => ({ input, i })).filter(({ input }) => !(input.field.segments[0] === "spec" && input.prototypeKey));
      expect(rest.length).toBeGreaterThanOrEqual(250);
      for (const { input, i } of rest) await create(input, i);
      const outcomes: { field: string; outcome: string }[] = [];
      for (const { input, i } of rest) {
        const o = await until(`${input.name} (${input.kind} ${input.field.path} ${input.shape}=${input.value}) has a condition`, () => {
          const got = peek(input, namespaceOf(i));
          return cond(got, "Synced") !== undefined && env.passes(input.kind, `${namespaceOf(i)}/${input.name}`) > 0 ? got : undefined;
        });
        outcomes.push({ field: `${input.kind} ${input.field.path}`, outcome: cond(o, "Synced")?.reason ?? "?" });
      }
      expect(prototype.changes()).toEqual([]);
      expect(unhandled).toEqual([]);
      console.log(`hostile-input (offline): ${String(rest.length)} more inputs reached the kinds at creation, each ended its pass in a condition (Synced reason per field):\n${tally(outcomes)}`);
    });

    it("the same inputs as edits of objects that converged first: a prototype key in a spec is InvalidSpec with nothing sent, the rest each end a pass in a condition", async () => {
      // One ordinary object per field, converged, then every input's map put in its place, one
      // edit after the other: the kinds then compare the hostile map with what the cloud has.
      const carriers = fields.map((field, fi) => ({ field, fi, kind: field.kind, name: `carrier-${String(fi)}`, namespace: namespaceOf(fi) }));
      for (const c of carriers) {
        const carrier = carrierObject(c.field);
        await env.kube.createCustom(typeOf(c.kind), c.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: c.kind, metadata: { name: c.name, ...carrier.metadata }, spec: carrier.spec });
      }
      const settled = (c: { kind: string; name: string; namespace: string }, generation: number): Promise<ManagedObject> => until(`${c.namespace}/${c.name} settled at generation ${String(generation)}`, () => {
        const o = peek(c, c.namespace);
        const synced = cond(o, "Synced");
        return synced !== undefined && (synced.observedGeneration ?? 0) >= generation ? o : undefined;
      });
      const mutationsOn = (id: number | undefined): number => (id === undefined ? 0 : env.emulator.mutations().filter((m) => m.path.split("/").includes(String(id))).length);
      const outcomes: { field: string; outcome: string }[] = [];
      let edits = 0;
      let pollutedBy: string | undefined;
      const notRefused: string[] = [];
      const sentFor: string[] = [];
      await Promise.all(carriers.map(async (c) => {
        const t = typeOf(c.kind);
        const key = { namespace: c.namespace, name: c.name };
        // Converged (or, for a kind that cannot here, settled) before the first edit.
        const first = await settled(c, 1);
        if (!REFERRING_KINDS.includes(c.kind)) await until(`${c.name} Ready`, () => cond(peek(c, c.namespace), "Ready")?.status === "True");
        const recorded = first.status?.id ?? peek(c, c.namespace)?.status?.id;
        const id = typeof recorded === "number" ? recorded : undefined;
        const mine = inputs.filter((x) => x.kind === c.kind && x.field.path === c.field.path);
        // Prototype keys first, while the object is converged: then any request made for it would be the edit's doing.
        const ordered = [...mine.filter((x) => x.prototypeKey), ...mine.filter((x) => !x.prototypeKey)];
        let policy = "Delete";
        const sentBefore = mutationsOn(id);
        const prototypeEdits = mine.filter((x) => x.prototypeKey && c.field.segments[0] === "spec").length;
        for (const [n, input] of ordered.entries()) {
          // Every edit also flips deletionPolicy, so each has a generation of its own to wait for.
          policy = policy === "Delete" ? "Retain" : "Delete";
          const ops: { op: "add"; path: string; value: unknown }[] = [{ op: "add", path: "/spec/deletionPolicy", value: policy }];
          if (c.field.segments[0] === "status") {
            await env.kube.patchCustomStatus(t, key, { createPending: null });
            await env.kube.patchCustomStatus(t, key, { createPending: input.object.status?.createPending });
          } else {
            ops.unshift({ op: "add", path: pointerOf(c.field), value: input.map });
          }
          const patched = await env.kube.jsonPatchCustom<ManagedObject>(t, key, ops);
          const o = await settled(c, patched.metadata.generation ?? 0);
          const synced = cond(o, "Synced");
          edits++;
          outcomes.push({ field: `${c.kind} ${c.field.path}`, outcome: synced?.reason ?? "?" });
          const changed = prototype.changes();
          if (changed.length > 0 && pollutedBy === undefined) pollutedBy = `${describeInput(input)}: ${changed.join(", ")}`;
          if (input.prototypeKey && c.field.segments[0] === "spec") {
            if (synced?.reason !== "InvalidSpec" || !(synced.message ?? "").includes(`spec.${c.field.segments[1] ?? ""}`)) notRefused.push(`${describeInput(input)}: ${synced?.reason ?? "?"}`);
            if (n === prototypeEdits - 1 && mutationsOn(id) > sentBefore) sentFor.push(`${c.kind} ${c.field.path}: ${String(mutationsOn(id) - sentBefore)} requests`);
          }
        }
      }));
      expect(pollutedBy, "Object.prototype changed after an edit").toBeUndefined();
      expect(notRefused, `${String(notRefused.length)} edits with a prototype key in the spec not InvalidSpec naming it`).toEqual([]);
      expect(sentFor, "requests sent for specs with a prototype key").toEqual([]);
      expect(edits).toBe(inputs.length);
      expect(unhandled).toEqual([]);
      console.log(`hostile-input (offline): ${String(edits)} edits of converged objects, each ended its pass in a condition (Synced reason per field):\n${tally(outcomes)}`);
    }, 300_000);

    it("afterwards: Object.prototype untouched, nothing escaped, no template rendered an inherited member, and another namespace's resources converge", async () => {
      expect(prototype.changes()).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(unhandled).toEqual([]);
      // A template naming Object's members (`{{ .constructor }}`) renders none of them into a Secret.
      for (const s of env.kube.writesTo(secretsType.plural)) {
        const data = (s.body as { data?: Record<string, string> } | undefined)?.data ?? {};
        for (const v of Object.values(data)) expect(Buffer.from(v, "base64").toString("utf8")).not.toMatch(/\[native code\]|\[object Object\]|^function /);
      }
      const unexpected = (await env.metrics.unexpectedErrors.get()).values.filter((v) => v.value > 0);
      expect(unexpected, "linode_operator_unexpected_errors_total").toEqual([]);
      const db = typeOf("ManagedDatabase"), nb = typeOf("NodeBalancer");
      await env.kube.createCustom(db, OTHER, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders" }, spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" } });
      await env.kube.createCustom(nb, OTHER, { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "web" }, spec: { region: "us-east", configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.128.5:80" }] }] } });
      for (const [t, name] of [[db, "orders"], [nb, "web"]] as const) {
        await until(`${OTHER}/${name} Ready`, () => cond(env.kube.peek(t, { namespace: OTHER, name }) as ManagedObject | undefined, "Ready")?.status === "True");
      }
      expect(prototype.changes()).toEqual([]);
      expect(unhandled).toEqual([]);
      console.log(`hostile-input (offline): ${String(inputs.length * 2)} inputs tried in all: ${String(inputs.length)} at creation and ${String(inputs.length)} as edits (${String(fields.length)} fields × ${String(HOSTILE_KEYS.length)} keys and their nestings × 2 of ${String(HOSTILE_VALUES.length)} values)`);
    });
  });
});
