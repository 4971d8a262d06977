// What differs between a pool's spec and the pool: the body of one PUT with only what differs
// (the API warns an update may close in-use connections), and a one-line summary. A pool this
// resource created is held to the spec, unset fields to the API's defaults; an adopted one only
// in the fields the stored spec has, so nothing the user did not write is ever sent to it.
import type { ConnectionPool, ConnectionPoolUpdateRequest } from "../../linode/index.ts";
import { poolDefaults, type DatabaseConnectionPoolSpec } from "./schema.ts";

export interface PoolDiff { body: ConnectionPoolUpdateRequest; summary: string }

const written = (raw: unknown, field: string): boolean => typeof raw === "object" && raw !== null && Object.hasOwn(raw, field);

/** `raw`: the spec as stored (what the user wrote); `adopted`: the pool existed before this resource. */
export function diffPool(spec: DatabaseConnectionPoolSpec, raw: unknown, adopted: boolean, pool: ConnectionPool): PoolDiff {
  const managed = (field: string): boolean => !adopted || written(raw, field);
  const wanted: ConnectionPoolUpdateRequest = {
    ...(managed("database") ? { database: spec.database ?? poolDefaults.database } : {}),
    ...(managed("mode") ? { mode: spec.mode ?? poolDefaults.mode } : {}),
    ...(managed("size") ? { size: spec.size ?? poolDefaults.size } : {}),
    ...(managed("username") ? { username: spec.username ?? null } : {}),
  };
  const body: ConnectionPoolUpdateRequest = {};
  const parts: string[] = [];
  for (const [field, value] of Object.entries(wanted) as [keyof ConnectionPoolUpdateRequest, unknown][]) {
    const has = pool[field];
    if (has === value) continue;
    (body as Record<string, unknown>)[field] = value;
    parts.push(`${field} ${JSON.stringify(has)} → ${JSON.stringify(value)}`);
  }
  return { body, summary: parts.join(", ") };
}
