// The runtime's defaults for what kinds would otherwise each write the same way: the spec parsed
// by the definition's schema, the policies and the recreate token read from the spec.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { completeKind, legacyIdFromStatusId, policiesOf, recreateTokenOf } from "../../src/runtime/kind-defaults.ts";
import type { AnyKindParts, ManagedObject } from "../../src/runtime/managed.ts";

const type = { group: "example.dev", version: "v1", plural: "widgets", kind: "Widget", namespaced: true };
const parts = (over: Partial<AnyKindParts> = {}): AnyKindParts => ({
  type, poll: { pendingMillis: 1, readyMillis: 1 },
  external: { observe: () => Promise.resolve({ exists: false }) },
  ...over,
});
const schema = z.object({ size: z.int().default(1), deletionPolicy: z.enum(["Delete", "Retain"]).default("Delete") });

describe("kind defaults", () => {
  it("policies: spec.deletionPolicy and spec.managementPolicy where the spec has them, Delete and Manage where not", () => {
    expect(policiesOf({ deletionPolicy: "Retain", managementPolicy: "Observe" })).toEqual({ deletion: "Retain", management: "Observe" });
    expect(policiesOf({ deletionPolicy: "Delete" })).toEqual({ deletion: "Delete", management: "Manage" });
    expect(policiesOf({})).toEqual({ deletion: "Delete", management: "Manage" });
    expect(policiesOf(undefined)).toEqual({ deletion: "Delete", management: "Manage" });
  });

  it("the recreate token: spec.requests.recreate, a string only", () => {
    expect(recreateTokenOf({ requests: { recreate: "r1" } })).toBe("r1");
    expect(recreateTokenOf({ requests: {} })).toBeUndefined();
    expect(recreateTokenOf({ requests: { recreate: 7 } })).toBeUndefined();
    expect(recreateTokenOf({})).toBeUndefined();
  });

  it("legacyIdFromStatusId: a numeric status.id only", () => {
    const obj = (status: Record<string, unknown>): ManagedObject => ({ metadata: { name: "w" }, status });
    expect(legacyIdFromStatusId(obj({ id: 42 }))).toBe("42");
    expect(legacyIdFromStatusId(obj({ id: "42" }))).toBeUndefined();
    expect(legacyIdFromStatusId(obj({}))).toBeUndefined();
  });

  it("a kind that gives none parses its spec with its definition's schema and reads its policies from it", () => {
    const kind = completeKind("Widget", parts(), schema);
    expect(kind.parseSpec({})).toEqual({ size: 1, deletionPolicy: "Delete" });
    expect(() => { kind.parseSpec({ size: "big" }); }).toThrow();
    expect(kind.policies({ deletionPolicy: "Retain" })).toEqual({ deletion: "Retain", management: "Manage" });
    expect(kind.recreateToken?.({ requests: { recreate: "x" } })).toBe("x");
  });

  it("what a kind gives wins, on itself or on its prototype (a kind written as a class keeps its methods)", () => {
    const own = completeKind("Widget", parts({ parseSpec: () => "own", policies: () => ({ deletion: "Retain", management: "Observe" }) }), schema);
    expect(own.parseSpec({})).toBe("own");
    expect(own.policies({})).toEqual({ deletion: "Retain", management: "Observe" });
    class Widgets {
      readonly type = type;
      readonly poll = { pendingMillis: 1, readyMillis: 1 };
      readonly external = { observe: () => Promise.resolve({ exists: false as const }) };
      private readonly fixed = "kept";
      recreateToken(): string { return this.fixed; }
    }
    const fromClass = completeKind("Widget", new Widgets(), schema);
    expect(fromClass.recreateToken?.({ requests: { recreate: "x" } })).toBe("kept");
  });

  it("a kind with neither a parser nor a schema is refused at start, by name", () => {
    expect(() => completeKind("Widget", parts(), undefined)).toThrow(/Widget: its kind has no parseSpec and its definition no spec schema/);
  });
});
