// X-Filter: a JSON object of field conditions, combined with +and / +or, ordered with
// +order_by / +order. Only a collection's filterable fields are accepted; anything else is
// the real API's "Cannot filter on <field>".
import { badRequest } from "./errors.ts";

type Getter = (item: never) => unknown;
type Pred = (item: unknown) => boolean;
export type Filterable = Record<string, Getter>;

const OPERATORS = new Set(["+gt", "+gte", "+lt", "+lte", "+contains", "+neq"]);

interface Compiled<T> {
  match: (item: T) => boolean;
  orderBy?: string;
  order: "asc" | "desc";
}

function fail(reason: string): never {
  throw badRequest(reason, "X-Filter");
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b));
}

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

function fieldMatcher(fields: Filterable, name: string, cond: unknown): Pred {
  const get = fields[name] as ((item: unknown) => unknown) | undefined;
  if (get === undefined) fail(`Cannot filter on ${name}`);
  const equals = (actual: unknown, expected: unknown): boolean =>
    Array.isArray(actual) ? actual.includes(expected) : actual === expected;
  if (isScalar(cond)) return (item) => equals(get(item), cond);
  if (typeof cond !== "object" || Array.isArray(cond)) fail(`Invalid filter value for ${name}`);
  const tests: ((v: unknown) => boolean)[] = [];
  for (const [op, operand] of Object.entries(cond as Record<string, unknown>)) {
    if (!OPERATORS.has(op)) fail(`Unknown operator ${op}`);
    if (!isScalar(operand)) fail(`Invalid filter value for ${name}`);
    switch (op) {
      case "+gt": tests.push((v) => compare(v, operand) > 0); break;
      case "+gte": tests.push((v) => compare(v, operand) >= 0); break;
      case "+lt": tests.push((v) => compare(v, operand) < 0); break;
      case "+lte": tests.push((v) => compare(v, operand) <= 0); break;
      case "+neq": tests.push((v) => !equals(v, operand)); break;
      default: tests.push((v) => Array.isArray(v)
        ? v.some((x) => String(x).includes(String(operand)))
        : String(v).toLowerCase().includes(String(operand).toLowerCase()));
    }
  }
  return (item) => { const v = get(item); return tests.every((t) => t(v)); };
}

function compileNode(fields: Filterable, node: unknown): Pred {
  if (typeof node !== "object" || node === null || Array.isArray(node)) fail("The filter must be an object");
  const parts: Pred[] = [];
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === "+order_by" || key === "+order") continue;
    if (key === "+and" || key === "+or") {
      if (!Array.isArray(value)) fail(`${key} must be an array`);
      const subs = value.map((v) => compileNode(fields, v));
      parts.push(key === "+and" ? (item) => subs.every((s) => s(item)) : (item) => subs.some((s) => s(item)));
      continue;
    }
    parts.push(fieldMatcher(fields, key, value));
  }
  return (item) => parts.every((p) => p(item));
}

export function compileFilter<T>(header: string | undefined, fields: Filterable): Compiled<T> | null {
  if (header === undefined || header.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(header);
  } catch {
    fail("Invalid JSON");
  }
  const match: (item: T) => boolean = compileNode(fields, parsed);
  const root = parsed as Record<string, unknown>;
  const orderBy = root["+order_by"];
  const order = root["+order"] ?? "asc";
  if (order !== "asc" && order !== "desc") fail("+order must be asc or desc");
  if (orderBy !== undefined) {
    if (typeof orderBy !== "string" || !(orderBy in fields)) fail(`Cannot order by ${JSON.stringify(orderBy)}`);
    return { match, orderBy, order };
  }
  return { match, order };
}

export function applyFilter<T>(items: readonly T[], header: string | undefined, fields: Filterable): T[] {
  const compiled = compileFilter<T>(header, fields);
  if (compiled === null) return [...items];
  const out = items.filter(compiled.match);
  const { orderBy } = compiled;
  if (orderBy !== undefined) {
    const get = fields[orderBy] as (item: T) => unknown;
    const sign = compiled.order === "desc" ? -1 : 1;
    out.sort((a, b) => sign * compare(get(a), get(b)));
  }
  return out;
}
