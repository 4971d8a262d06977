// spec.engineConfig against the engine's parameter catalogue (GET /databases/{engine}/config):
// parameters are checked before anything is sent (InvalidEngineConfig, naming the parameter and
// what it accepts), and only the parameters the spec sets are compared with what the API
// reports (the API adds defaults of its own), so drift of those is put back and nothing else
// is touched. Parameter names are the API's own (snake_case, as the catalogue lists them).
import { snakify } from "../../linode/index.ts";
import { emptyMap, isForbiddenKey } from "../../runtime/contract.ts";

/** A parameter as the catalogue describes it. */
interface Parameter {
  type: string | string[];
  requires_restart?: boolean;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
}

type Tree = Record<string, unknown>;

/** Joins a path's keys (parameter names may hold dots, e.g. pg_stat_monitor.pgsm_max_buckets). */
const SEP = "\u001f";
const show = (path: string): string => path.split(SEP).join(".");

const isTree = (v: unknown): v is Tree => v !== null && typeof v === "object" && !Array.isArray(v);
const isParameter = (v: unknown): v is Parameter => isTree(v) && "type" in v && ("requires_restart" in v || "description" in v);

/** The API's names back (the client camelizes what it reads; parameter names are snake_case). */
export const apiNames = (v: unknown): Tree => (isTree(v) ? snakify<Tree>(v) : {});

/** Every parameter of a catalogue or a config, by path ("mysql.connect_timeout", "work_mem"). */
function leaves(tree: Tree, isLeaf: (v: unknown) => boolean, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(tree)) {
    const path = prefix === "" ? k : `${prefix}${SEP}${k}`;
    if (isLeaf(v)) out.set(path, v);
    else if (isTree(v)) for (const [p, x] of leaves(v, isLeaf, path)) out.set(p, x);
  }
  return out;
}

const catalogueOf = (catalogue: Tree): Map<string, Parameter> => leaves(catalogue, isParameter) as Map<string, Parameter>;
/** A config's values: a group is an object, a value anything else (null included). */
const valuesOf = (config: Tree): Map<string, unknown> => leaves(config, (v) => !isTree(v));

function typeOk(types: string[], v: unknown): boolean {
  return types.some((t) => (t === "null" && v === null) || (t === "integer" && Number.isInteger(v)) || (t === "number" && typeof v === "number")
    || (t === "boolean" && typeof v === "boolean") || (t === "string" && typeof v === "string"));
}

function accepts(p: Parameter): string {
  const types = Array.isArray(p.type) ? p.type : [p.type];
  const parts = [types.join(" or ")];
  if (p.minimum !== undefined || p.maximum !== undefined) parts.push(`${String(p.minimum ?? "…")}..${String(p.maximum ?? "…")}`);
  if (p.enum !== undefined) parts.push(`one of ${p.enum.map(String).join(", ")}`);
  if (p.pattern !== undefined) parts.push(`matching ${p.pattern}`);
  if (p.minLength !== undefined || p.maxLength !== undefined) parts.push(`${String(p.minLength ?? 0)}..${String(p.maxLength ?? "…")} characters`);
  return parts.join(", ");
}

/** What is wrong with `config` by `catalogue` (empty: nothing). */
export function engineConfigProblems(config: Tree, catalogue: Tree): string[] {
  const params = catalogueOf(catalogue);
  const problems: string[] = [];
  for (const [path, v] of valuesOf(config)) {
    const p = params.get(path);
    if (p === undefined) {
      problems.push(`${show(path)} is not a parameter of this engine (GET /databases/{engine}/config lists ${[...params.keys()].slice(0, 12).map(show).join(", ")}${params.size > 12 ? ", …" : ""})`);
      continue;
    }
    const types = Array.isArray(p.type) ? p.type : [p.type];
    const bad = !typeOk(types, v)
      || (typeof v === "number" && ((p.minimum !== undefined && v < p.minimum) || (p.maximum !== undefined && v > p.maximum)))
      || (typeof v === "string" && ((p.enum !== undefined && !p.enum.includes(v)) || (p.pattern !== undefined && !new RegExp(p.pattern).test(v))
        || (p.minLength !== undefined && v.length < p.minLength) || (p.maxLength !== undefined && v.length > p.maxLength)));
    if (bad) problems.push(`${show(path)} is ${JSON.stringify(v)}; it accepts ${accepts(p)}`);
  }
  return problems;
}

/**
 * A parameter the API stores in another form than the one sent (it canonicalises it, as MySQL
 * does sql_mode): after that update, what it reads back is what was sent. Learned from the
 * update's answer, recorded in status (status.engineConfigForms) so a restart knows it too.
 */
export interface StoredForm {
  /** The parameter, dotted (e.g. mysql.sql_mode). */
  parameter: string;
  /** The value sent and the value the API stored instead, as JSON. */
  sent: string;
  stored: string;
}

/** One parameter an update changes: its path, what the spec wants, what the database has. */
export interface ParameterChange { path: string; want: unknown; have: unknown }

/**
 * The parameters the spec sets that the database has otherwise, as a nested update body, and
 * their paths (dotted). A value the database holds in the form `forms` says the API stores the
 * wanted value in is the same value. The body's objects have no prototype: a parameter name is
 * the tenant's text, and on an ordinary object `constructor` then `prototype` would walk into
 * Object.prototype. Such names never reach here (the runtime refuses them), and are skipped if
 * they did.
 */
export function engineConfigChanges(want: Tree, have: Tree, forms: readonly StoredForm[] = []): { body: Tree; paths: string[]; changes: ParameterChange[] } {
  const current = valuesOf(have);
  const body: Tree = emptyMap();
  const paths: string[] = [];
  const changes: ParameterChange[] = [];
  for (const [path, v] of valuesOf(want)) {
    const keys = path.split(SEP);
    if (keys.some(isForbiddenKey)) continue;
    const [sent, held] = [JSON.stringify(v), JSON.stringify(current.get(path) ?? null)];
    if (held === sent || forms.some((f) => f.parameter === show(path) && f.sent === sent && f.stored === held)) continue;
    paths.push(show(path));
    changes.push({ path: show(path), want: v, have: current.get(path) ?? null });
    let node = body;
    for (const k of keys.slice(0, -1)) {
      const next = Object.hasOwn(node, k) ? node[k] : undefined;
      node = isTree(next) ? next : (node[k] = emptyMap());
    }
    node[keys.at(-1) ?? path] = v;
  }
  return { body, paths, changes };
}

/**
 * The forms an update's answer shows: a parameter sent that reads back neither as sent nor as
 * it was (not merely unapplied) is stored in another form.
 */
export function storedForms(changes: readonly ParameterChange[], answer: Tree): StoredForm[] {
  const after = new Map([...valuesOf(answer)].map(([k, v]) => [show(k), v]));
  return changes.flatMap((c) => {
    const [sent, before, stored] = [JSON.stringify(c.want), JSON.stringify(c.have), JSON.stringify(after.get(c.path) ?? null)];
    return stored !== sent && stored !== before && stored !== "null" ? [{ parameter: c.path, sent, stored }] : [];
  });
}

/** Which of `paths` (dotted) the catalogue says restart the cluster when changed. */
export function restarting(paths: string[], catalogue: Tree): string[] {
  const params = new Map([...catalogueOf(catalogue)].map(([k, v]) => [show(k), v]));
  return paths.filter((p) => params.get(p)?.requires_restart === true);
}
