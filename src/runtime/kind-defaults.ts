// What most kinds would write the same way, written once: the spec parsed by the schema its
// definition already declares (the CRD's), the policies and the recreate token read from the
// spec's common fields. A kind gives its own only where it differs.
import type { z } from "zod";
import type { AnyKindParts, AnyManagedKind, ManagedObject, Policies } from "./managed.ts";

const field = (spec: unknown, name: string): unknown => (typeof spec === "object" && spec !== null ? (spec as Record<string, unknown>)[name] : undefined);

/** spec.deletionPolicy and spec.managementPolicy where the spec has them; Delete and Manage where it has none. */
export function policiesOf(spec: unknown): Policies {
  return { deletion: field(spec, "deletionPolicy") === "Retain" ? "Retain" : "Delete", management: field(spec, "managementPolicy") === "Observe" ? "Observe" : "Manage" };
}

/** spec.requests.recreate, where the spec has one. */
export function recreateTokenOf(spec: unknown): string | undefined {
  const token = field(field(spec, "requests"), "recreate");
  return typeof token === "string" ? token : undefined;
}

/**
 * For a kind whose operator once recorded its cloud id only in the annotation and in a numeric
 * status.id (before status.externalId): that id, where the status confirms it.
 */
export function legacyIdFromStatusId(obj: ManagedObject): string | undefined {
  return typeof obj.status?.id === "number" ? String(obj.status.id) : undefined;
}

/** The kind `parts` built, with the runtime's defaults where it gave none. */
export function completeKind(kindName: string, parts: AnyKindParts, specSchema: z.ZodType | undefined): AnyManagedKind {
  const parseSpec = parts.parseSpec?.bind(parts) ?? (specSchema !== undefined ? (raw: unknown): unknown => specSchema.parse(raw) : undefined);
  if (parseSpec === undefined) throw new Error(`${kindName}: its kind has no parseSpec and its definition no spec schema to parse with`);
  // Only what the kind lacks (on itself or its prototype: a kind written as a class keeps its methods).
  const defaults = {
    ...(parts.policies === undefined ? { policies: policiesOf } : {}),
    ...(parts.recreateToken === undefined ? { recreateToken: recreateTokenOf } : {}),
  };
  return Object.assign(Object.create(Object.getPrototypeOf(parts) as object | null) as AnyManagedKind, parts, defaults, { parseSpec });
}
