// X-Filter: the API's JSON filter header. Field names are written in camelCase like the
// rest of the client and converted here; operators (+and, +or, +gt, ...) pass through.
import { toSnakeKey } from "./case.ts";

export type FilterScalar = string | number | boolean | null;
export type FilterValue = FilterScalar | FilterObject | FilterValue[];
export interface FilterObject {
  [key: string]: FilterValue;
}

export type FilterOperator = "+gt" | "+gte" | "+lt" | "+lte" | "+contains" | "+neq";

/** `{label: "db-1"}` style equality on every given field (implicitly ANDed by the API). */
export function where(fields: Record<string, FilterScalar>): FilterObject {
  return { ...fields };
}

export function compare(field: string, op: FilterOperator, value: FilterScalar): FilterObject {
  return { [field]: { [op]: value } };
}

export function and(...filters: FilterObject[]): FilterObject {
  return { "+and": filters };
}

export function or(...filters: FilterObject[]): FilterObject {
  return { "+or": filters };
}

export function orderBy(filter: FilterObject, field: string, order: "asc" | "desc" = "asc"): FilterObject {
  return { ...filter, "+order_by": field, "+order": order };
}

export function serializeFilter(filter: FilterObject): string {
  return JSON.stringify(snakeFilter(filter));
}

function snakeFilter(value: FilterValue): FilterValue {
  if (Array.isArray(value)) return value.map(snakeFilter);
  if (value === null || typeof value !== "object") return value;
  const out: FilterObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "+order_by" && typeof v === "string") out[k] = toSnakeKey(v);
    else out[k.startsWith("+") ? k : toSnakeKey(k)] = snakeFilter(v);
  }
  return out;
}
