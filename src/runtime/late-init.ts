// Late initialization on adoption (Crossplane's LateInitialize): a resource bound to a cloud
// object it did not create takes, for each field its spec leaves unset, the object's value,
// written to the spec once; from then on the spec is the desired state as ever. Without it a
// short spec would be completed by defaults and those sent (an adopted 3-node cluster shrunk to
// one). What the user wrote is what the stored spec holds: the CRD carries no default for these
// fields (initializedOnAdoption), zod adds them only when a spec is parsed.
import { z } from "zod";
import type { AnyManagedKind } from "./managed.ts";

export type LateInitPlan =
  /** The fields to write (none: the spec says every one already). */
  | { fields: Record<string, unknown>; refused?: undefined }
  /** What the spec cannot express, each naming its field: nothing may be written or sent. */
  | { refused: string[]; fields?: undefined };

const written = (raw: unknown, field: string): boolean => typeof raw === "object" && raw !== null && Object.hasOwn(raw, field);

/** `configs[0].protocol`, from a zod issue's path. */
const pathOf = (path: readonly PropertyKey[]): string =>
  path.map((p, i) => (typeof p === "number" ? `[${String(p)}]` : `${i === 0 ? "" : "."}${String(p)}`)).join("");

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let v = doc;
  for (const p of path) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, p)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** What adopting `external` writes to the spec `raw` (as stored: only what the user wrote). */
export function planLateInit(kind: AnyManagedKind, raw: unknown, external: unknown): LateInitPlan {
  const mapped = kind.lateInit?.(external) ?? { fields: {} };
  const fields = Object.fromEntries(Object.entries(mapped.fields).filter(([k, v]) => v !== undefined && !written(raw, k)));
  const refused = Object.entries(mapped.inexpressible ?? {}).filter(([k]) => !written(raw, k)).map(([k, why]) => `spec.${k}: ${why}`);
  const candidate = { ...(typeof raw === "object" && raw !== null ? raw : {}), ...fields };
  try {
    kind.parseSpec(candidate);
  } catch (err) {
    if (!(err instanceof z.ZodError)) throw err;
    // A value of the object the schema refuses (an enum it lacks, a bound it exceeds).
    for (const issue of err.issues) {
      const field = issue.path[0];
      if (typeof field !== "string" || !Object.hasOwn(fields, field)) continue;
      const has = valueAt(candidate, issue.path);
      refused.push(`spec.${pathOf(issue.path)}: it has ${has === undefined ? "a value" : JSON.stringify(has)}, which the spec cannot hold (${issue.message})`);
    }
  }
  return refused.length > 0 ? { refused } : { fields };
}
