// A JSON merge patch (RFC 7386) from the status the server has to the status we want. Computed
// against the original, so a nested field that disappears (e.g. hosts.secondary) is sent as
// null and removed in one write, instead of surviving the merge and being re-written on
// every poll.

import { setOwn } from "./safe-keys.ts";

type Json = unknown;

const isPlainObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The merge patch that turns `from` into `to`, or undefined when they are equal. */
export function mergePatch(from: Json, to: Json): Json {
  if (isPlainObject(from) && isPlainObject(to)) {
    const patch: Record<string, Json> = {};
    for (const [k, v] of Object.entries(to)) {
      if (v === undefined) continue;
      // Own members only, set as own members: a status anyone wrote may carry any key.
      const sub = Object.hasOwn(from, k) && from[k] !== undefined ? mergePatch(from[k], v) : v;
      if (sub !== undefined) setOwn(patch, k, sub);
    }
    for (const [k, v] of Object.entries(from)) {
      if (v !== undefined && (!Object.hasOwn(to, k) || to[k] === undefined)) setOwn(patch, k, null);
    }
    return Object.keys(patch).length === 0 ? undefined : patch;
  }
  return stableJson(from) === stableJson(to) ? undefined : to;
}

/** JSON with object keys sorted and undefined members dropped, for equality checks. */
export function stableJson(v: Json): string {
  return JSON.stringify(v, (_k, val: Json) => {
    if (isPlainObject(val)) {
      return Object.fromEntries(Object.entries(val).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)));
    }
    return val;
  });
}

/** Applies a JSON merge patch (RFC 7386) to a value, returning a new value. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, Json> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(out, k);
    else setOwn(out, k, applyMergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}
