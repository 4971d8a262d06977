// Hostile tenant input, generated from the kinds' own CRD schemas rather than listed by hand:
// every map-typed field of every kind (a map, `additionalProperties`, or a free-form object,
// `x-kubernetes-preserve-unknown-fields`, in spec and in status, plus the two maps every object
// has in its metadata) gets maps whose keys name an object's prototype or one of Object's own
// methods, nested the ways that reach Object.prototype, with values a tenant might write to
// break a parser or a template. A new map field in a schema is covered without editing this.
import { buildCrd } from "../../src/crd/build-crd.ts";
import type { KindDefinition } from "../../src/runtime/kind-definition.ts";

type Schema = Record<string, unknown>;
type Json = Record<string, unknown>;

/** The keys the issue says never reach an ordinary object's prototype (refused at admission and in code). */
export const PROTOTYPE_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

/** Those, and every name Object.prototype has: each names something every ordinary object inherits. */
export const HOSTILE_KEYS: readonly string[] = [...new Set([...PROTOTYPE_KEYS, ...Object.getOwnPropertyNames(Object.prototype)])];

export interface MapField {
  kind: string;
  /** Dotted, arrays as `[]`: e.g. `spec.allowListFrom[].nodes.selector.matchLabels`. */
  path: string;
  segments: string[];
  /** `map`: typed values (additionalProperties); `free-form`: anything (preserve-unknown-fields). */
  shape: "map" | "free-form";
  /** Kubernetes' own map (ObjectMeta): string values, keys checked by the API server itself, no kind schema. */
  objectMeta: boolean;
  /** The schema of the map's values, for a typed map. */
  values?: Schema;
  /** The CEL rule on the map that names `__proto__`: what admission refuses prototype keys with. */
  keyRule?: { rule: string; message: string };
  /** The schema of the object at each segment but the map's own (an array's item schema at `[]`), for building parents. */
  parents: Schema[];
}

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

function keyRuleOf(s: Schema): MapField["keyRule"] {
  const rules = Array.isArray(s["x-kubernetes-validations"]) ? s["x-kubernetes-validations"] as { rule?: unknown; message?: unknown }[] : [];
  const r = rules.find((x) => typeof x.rule === "string" && x.rule.includes("__proto__"));
  return r === undefined ? undefined : { rule: String(r.rule), message: String(r.message) };
}

/** Every map-typed field of each kind's generated CRD (spec and status), and each kind's metadata maps. */
export function discoverMapFields(defs: readonly KindDefinition[]): MapField[] {
  const out: MapField[] = [];
  for (const def of defs) {
    const crd = buildCrd(def) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema;
    if (root === undefined) throw new Error(`${def.kind}: no schema`);
    const walk = (s: Schema, segments: string[], parents: Schema[]): void => {
      const path = segments.join(".").replaceAll(".[]", "[]");
      if (s["x-kubernetes-preserve-unknown-fields"] === true && !isSchema(s.properties)) {
        out.push({ kind: def.kind, path, segments, shape: "free-form", objectMeta: false, parents, ...(keyRuleOf(s) ? { keyRule: keyRuleOf(s) } : {}) });
        return;
      }
      if (isSchema(s.additionalProperties)) {
        const keyRule = keyRuleOf(s);
        out.push({ kind: def.kind, path, segments, shape: "map", objectMeta: false, values: s.additionalProperties, parents, ...(keyRule ? { keyRule } : {}) });
        return;
      }
      if (isSchema(s.properties)) for (const [k, child] of Object.entries(s.properties)) if (isSchema(child)) walk(child, [...segments, k], [...parents, s]);
      if (isSchema(s.items)) walk(s.items, [...segments, "[]"], [...parents, s]);
    };
    const props = root.properties as Record<string, Schema>;
    for (const top of ["spec", "status"]) {
      const s = props[top];
      if (s !== undefined) walk(s, [top], []);
    }
    // Not in the kind's schema (the API server owns ObjectMeta), but maps a tenant writes on every object.
    for (const m of ["labels", "annotations"]) out.push({ kind: def.kind, path: `metadata.${m}`, segments: ["metadata", m], shape: "map", objectMeta: true, values: { type: "string" }, parents: [] });
  }
  return out;
}

export interface HostileValue { name: string; value: unknown }

/** Values built with JSON.parse where they hold `__proto__`, so it is an own key, as an API server's JSON gives it. */
export const HOSTILE_VALUES: readonly HostileValue[] = [
  // A value every map of strings accepts, so that the key alone decides admission.
  { name: "plain", value: "hostile" },
  { name: "template", value: "{{ .password }}" },
  { name: "template-prototype", value: "{{ .constructor }}{{ index . \"__proto__\" }}{{ .toString }}{{ .hasOwnProperty }}" },
  { name: "template-many", value: "{{ .host }}".repeat(370) },
  { name: "template-unclosed", value: "{{ index . \"".repeat(200) },
  { name: "long", value: "x".repeat(70_000) },
  { name: "empty", value: "" },
  { name: "control-characters", value: "a\u0000b\u202ec\r\nd\u{1F4A5}" },
  { name: "number", value: 1e308 },
  { name: "unsafe-integer", value: 2 ** 53 + 2 },
  { name: "negative", value: -1 },
  { name: "true", value: true },
  { name: "false", value: false },
  { name: "null", value: null },
  { name: "array", value: JSON.parse('["x", {"__proto__": {"polluted": "array"}}, [[[]]]]') as unknown },
  { name: "nested-object", value: { a: { b: { c: { d: "e" } } } } },
  { name: "nested-proto", value: JSON.parse('{"__proto__": {"polluted": "value"}}') as unknown },
  { name: "nested-constructor", value: { constructor: { prototype: { polluted: "value" } } } },
];

export const isStringValue = (v: HostileValue): boolean => typeof v.value === "string";

export interface KeyShape {
  name: string;
  /** The hostile map with `v` at its deepest point. */
  build(v: unknown): Json;
}

/** `{ [k1]: { [k2]: ... v } }` with every key an own key, whatever it is. */
function nest(keys: readonly string[], v: unknown): Json {
  let text = JSON.stringify(v);
  for (const k of [...keys].reverse()) text = `{${JSON.stringify(k)}:${text}}`;
  return JSON.parse(text) as Json;
}

/** Key shapes for a field: each hostile key alone, the nestings that walk into Object.prototype, and (free-form) each key one level down. */
export function keyShapes(field: MapField): KeyShape[] {
  const shapes: KeyShape[] = HOSTILE_KEYS.map((k) => ({ name: k, build: (v) => nest([k], v) }));
  for (const path of [["constructor", "prototype", "polluted"], ["__proto__", "polluted"], ["constructor", "prototype", "toString"], ["prototype", "constructor", "polluted"]]) {
    shapes.push({ name: path.join("."), build: (v) => nest(path, v) });
  }
  // A free-form field's own groups (engineConfig's `mysql: {...}`): the keys one level down as well.
  if (field.shape === "free-form") for (const k of HOSTILE_KEYS) shapes.push({ name: `mysql.${k}`, build: (v) => nest(["mysql", k], v) });
  return shapes;
}

/** Whether a prototype key occurs anywhere in `v`, at any depth (own keys, as JSON has them). */
export function hasPrototypeKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasPrototypeKey);
  if (v === null || typeof v !== "object") return false;
  return Object.keys(v).some((k) => PROTOTYPE_KEYS.includes(k) || hasPrototypeKey((v as Json)[k]));
}

/** A deep copy keeping `__proto__` as an own key. */
export const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** What every hostile object is built on: a valid object of its kind (status only for status fields). */
export interface BaseObject { spec: Json; status: Json }

export const baseObjects = (now = new Date()): Record<string, BaseObject> => {
  // A create announced a moment ago: the one status map the operator reads (it then looks for what it created).
  const status = { createPending: { at: now.toISOString().replace(/\.\d{3}Z$/, "Z"), label: "hostile-pending" } };
  return {
    // allowEmpty: a selector that matches no Node still makes the database, so its map is compared, not held.
    ManagedDatabase: { spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowEmpty: true }, status },
    DatabaseSnapshot: { spec: { databaseRef: { name: "hostile-source" } }, status },
    DatabaseConnectionPool: { spec: { databaseRef: { name: "hostile-source" } }, status },
    NodeBalancer: { spec: { region: "us-east", configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.128.5:80" }] }] }, status },
  };
};

/** The smallest value a schema accepts: its default, first enum value, minimum, or an object of its required fields. */
function minimal(s: Schema): unknown {
  if (s.default !== undefined) return copy(s.default);
  if (Array.isArray(s.enum)) return s.enum[0];
  switch (s.type) {
    case "integer": case "number": return typeof s.minimum === "number" ? Math.max(s.minimum, 1) : 1;
    case "boolean": return false;
    case "string": return "hostile";
    case "array": return [];
    default: return fill({}, s);
  }
}

/** Adds the required fields `s` names that `obj` lacks. */
function fill(obj: Json, s: Schema): Json {
  const props = isSchema(s.properties) ? s.properties as Record<string, Schema> : {};
  for (const r of Array.isArray(s.required) ? s.required as string[] : []) {
    const p = props[r];
    if (!(r in obj) && p !== undefined) obj[r] = minimal(p);
  }
  return obj;
}

/** Sets `obj[key]` as an own property, whatever the key. */
function setOwn(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `base` with `map` at the field's path: the parents the path needs are made minimal and valid
 * (their required fields filled from the schema); a map already there keeps its keys beside the
 * hostile ones (status.createPending keeps `at`, so the operator reads it).
 */
export function placeMap(base: { metadata?: Json; spec: Json; status?: Json }, field: MapField, map: Json): { metadata?: Json; spec: Json; status?: Json } {
  const root = copy(base) as Json;
  let cursor: Json | unknown[] = root;
  const segs = field.segments;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i] ?? "";
    // The schema of the object at this segment (an array's item at `[]`).
    const schema = field.parents[i];
    if (Array.isArray(cursor)) {
      if (cursor.length === 0) cursor.push(schema === undefined ? {} : fill({}, schema));
      cursor = cursor[0] as Json;
      continue;
    }
    const here: Json = cursor;
    if (here[seg] === undefined || here[seg] === null) here[seg] = segs[i + 1] === "[]" ? [] : {};
    const child = here[seg] as Json | unknown[];
    if (!Array.isArray(child) && schema !== undefined) fill(child, schema);
    cursor = child;
  }
  const last = segs.at(-1) ?? "";
  if (Array.isArray(cursor)) throw new Error(`${field.path}: a map as an array item is not placed`);
  const existing = cursor[last];
  const merged: Json = {};
  if (isSchema(existing)) for (const [k, v] of Object.entries(existing)) setOwn(merged, k, v);
  for (const [k, v] of Object.entries(map)) setOwn(merged, k, v);
  setOwn(cursor, last, merged);
  return root as { metadata?: Json; spec: Json; status?: Json };
}

export interface HostileInput {
  /** Unique, a valid object name: `h-<n>`. */
  name: string;
  kind: string;
  field: MapField;
  shape: string;
  value: string;
  /** The hostile map placed at the field. */
  map: Json;
  /** Whether a prototype key occurs in the map at any depth. */
  prototypeKey: boolean;
  /** metadata (labels/annotations for an ObjectMeta field), spec and, for a status field, status. */
  object: { metadata?: Json; spec: Json; status?: Json };
}

/**
 * Every field × every key shape, each with `perKey` values: the first one every map accepts, the
 * others rotating, so every value occurs for every field when there are enough shapes. ObjectMeta
 * maps get string values only: the API server's type for them, whatever a client sends.
 */
export function hostileInputs(defs: readonly KindDefinition[], opts: { perKey?: number; fields?: (f: MapField) => boolean; now?: Date } = {}): HostileInput[] {
  const perKey = opts.perKey ?? 2;
  const bases = baseObjects(opts.now);
  const out: HostileInput[] = [];
  const fields = discoverMapFields(defs).filter(opts.fields ?? (() => true));
  for (const [fi, field] of fields.entries()) {
    const base = bases[field.kind];
    if (base === undefined) throw new Error(`no base object for ${field.kind}: add one to baseObjects`);
    const [plain, ...others] = HOSTILE_VALUES.filter((v) => !field.objectMeta || isStringValue(v));
    if (plain === undefined) throw new Error("no values");
    const shapes = keyShapes(field);
    if (shapes.length * (perKey - 1) < others.length) throw new Error(`${field.path}: ${String(shapes.length)} shapes × ${String(perKey - 1)} cannot carry every value`);
    for (const [si, shape] of shapes.entries()) {
      for (let j = 0; j < perKey; j++) {
        // Each key once with a value every map takes (so admission judges the key alone), then the others in turn.
        const value = j === 0 ? plain : others[(si * (perKey - 1) + j - 1 + fi) % others.length];
        if (value === undefined) continue;
        const map = shape.build(value.value);
        const status = field.segments[0] === "status" ? base.status : undefined;
        const object = placeMap({ spec: base.spec, ...(status !== undefined ? { status } : {}) }, field, map);
        out.push({ name: `h-${String(out.length)}`, kind: field.kind, field, shape: shape.name, value: value.name, map, prototypeKey: hasPrototypeKey(map), object });
      }
    }
  }
  return out;
}

/** The same field with a benign map: proof that the parents placeMap builds are valid, so a refusal is the map's doing. */
export function benignObject(field: MapField, now?: Date): { metadata?: Json; spec: Json; status?: Json } {
  const base = baseObjects(now)[field.kind];
  if (base === undefined) throw new Error(`no base object for ${field.kind}`);
  const status = field.segments[0] === "status" ? base.status : undefined;
  return placeMap({ spec: base.spec, ...(status !== undefined ? { status } : {}) }, field, { "benign-key": "benign" });
}

/**
 * An ordinary object that hostile edits are applied to: the field's parents in place with an
 * empty map (valid for every field, free-form ones included), no status of its own.
 */
export function carrierObject(field: MapField): { metadata?: Json; spec: Json } {
  const base = baseObjects()[field.kind];
  if (base === undefined) throw new Error(`no base object for ${field.kind}`);
  if (field.segments[0] === "status") return { spec: copy(base.spec) };
  return placeMap({ spec: base.spec }, field, {});
}

/** The JSON pointer of the field in an object placeMap built (the first item of each array). */
export const pointerOf = (field: MapField): string => `/${field.segments.map((s) => (s === "[]" ? "0" : s.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/")}`;

/**
 * Watches the prototypes every object of the process shares (Object's, Array's, Function's,
 * String's): `changes()` names each property added, removed or replaced since the watch began.
 */
export function prototypeWatch(): { changes(): string[] } {
  const targets: [string, object][] = [["Object", Object.prototype], ["Array", Array.prototype], ["Function", Function.prototype], ["String", String.prototype]];
  const read = (t: object): Map<string | symbol, PropertyDescriptor | undefined> => new Map(Reflect.ownKeys(t).map((k) => [k, Object.getOwnPropertyDescriptor(t, k)]));
  const before = targets.map(([, t]) => read(t));
  return {
    changes() {
      const out: string[] = [];
      for (const [i, [name, t]] of targets.entries()) {
        const was = before[i] ?? new Map<string | symbol, PropertyDescriptor | undefined>();
        const now = read(t);
        for (const [k, d] of now) {
          const w = was.get(k);
          if (w === undefined) out.push(`${name}.prototype.${String(k)} added`);
          else if (!Object.is(w.value, d?.value) || w.get !== d?.get || w.set !== d?.set) out.push(`${name}.prototype.${String(k)} replaced`);
        }
        for (const k of was.keys()) if (!now.has(k)) out.push(`${name}.prototype.${String(k)} removed`);
      }
      if (Object.getPrototypeOf(Object.prototype) !== null) out.push("Object.prototype has a prototype");
      return out;
    },
  };
}

/** Counts per field of something (refused/admitted...), printed as one line per field. */
export function tally(rows: { field: string; outcome: string }[]): string {
  const by = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const m = by.get(r.field) ?? new Map<string, number>();
    m.set(r.outcome, (m.get(r.outcome) ?? 0) + 1);
    by.set(r.field, m);
  }
  return [...by].map(([f, m]) => `  ${f}: ${[...m].map(([o, n]) => `${o} ${String(n)}`).join(", ")}`).join("\n");
}
