// The zod → structural OpenAPI conversion, offline.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StructuralSchemaError, toStructural, zodToOpenApi } from "../../src/crd/to-openapi.ts";
import "../../src/runtime/schema-rules.ts";

describe("zodToOpenApi", () => {
  it("emits a plain structural object: types, required, no $schema", () => {
    const out = zodToOpenApi(z.object({ a: z.string(), b: z.string().optional() }).meta({ description: "D" }));
    expect(out).toEqual({
      description: "D", type: "object", required: ["a"],
      properties: { a: { type: "string" }, b: { type: "string" } },
    });
  });

  it("makes defaulted fields optional and carries the default", () => {
    const out = zodToOpenApi(z.object({ n: z.int().min(1).max(3).default(1), e: z.enum(["x", "y"]).default("y"), l: z.array(z.string()).default([]) }));
    expect(out.required).toBeUndefined();
    expect(out.properties).toEqual({
      n: { type: "integer", default: 1, minimum: 1, maximum: 3 },
      e: { type: "string", enum: ["x", "y"], default: "y" },
      l: { type: "array", default: [], items: { type: "string" } },
    });
  });

  it("drops the safe-integer bounds zod puts on every int, keeps real ones", () => {
    expect(zodToOpenApi(z.int())).toEqual({ type: "integer" });
    expect(zodToOpenApi(z.int().min(0))).toEqual({ type: "integer", minimum: 0 });
  });

  it("types integer literal enums as integer, and turns const into enum", () => {
    expect(zodToOpenApi(z.literal([1, 3]))).toEqual({ type: "integer", enum: [1, 3] });
    expect(zodToOpenApi(z.literal("only"))).toEqual({ type: "string", enum: ["only"] });
  });

  it("removes additionalProperties beside properties (strict objects)", () => {
    expect(zodToOpenApi(z.strictObject({ a: z.string() }))).toEqual({ type: "object", required: ["a"], properties: { a: { type: "string" } } });
  });

  it("maps records to additionalProperties and keeps nullable", () => {
    // Every map refuses keys that name an object's prototype, at admission.
    expect(zodToOpenApi(z.record(z.string(), z.string().max(9)))).toEqual({
      type: "object", additionalProperties: { type: "string", maxLength: 9 },
      "x-kubernetes-validations": [{ rule: "!('__proto__' in self) && !('constructor' in self) && !('prototype' in self)", message: "keys __proto__, constructor, prototype are not allowed: they name an object's prototype" }],
    });
    expect(zodToOpenApi(z.string().nullable())).toEqual({ type: "string", nullable: true });
  });

  it("carries x-kubernetes extensions and CEL rules from .meta(), in a stable key order", () => {
    const out = zodToOpenApi(z.array(z.object({ port: z.int() })).max(4).meta({
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["port"],
      "x-kubernetes-validations": [{ rule: "self.size() > 0", message: "not empty" }],
      description: "Ports.",
    }));
    expect(Object.keys(out)).toEqual(["description", "type", "maxItems", "items", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations"]);
    expect(out["x-kubernetes-validations"]).toEqual([{ rule: "self.size() > 0", message: "not empty" }]);
  });

  it("drops annotation-only keywords CRDs do not know", () => {
    expect(zodToOpenApi(z.string().meta({ title: "T", examples: ["a"], deprecated: true }))).toEqual({ type: "string" });
  });

  it("rejects what a CRD cannot express, naming the path", () => {
    expect(() => zodToOpenApi(z.object({ u: z.union([z.string(), z.number()]) }))).toThrow(/\.u: "anyOf" is not structural/);
    expect(() => zodToOpenApi(z.object({ o: z.string().optional().nullable() }))).not.toThrow();
    expect(() => zodToOpenApi(z.object({ a: z.any() }))).toThrow(StructuralSchemaError);
    expect(() => zodToOpenApi(z.tuple([z.string(), z.number()]))).toThrow(StructuralSchemaError);
    expect(() => toStructural({ type: "string", propertyNames: { pattern: "x" } }, ".m")).toThrow(/\.m: keyword "propertyNames"/);
    expect(() => toStructural({ type: "object" }, ".free")).toThrow(/needs properties or additionalProperties/);
  });

  it("accepts a typeless node only with int-or-string or preserve-unknown-fields", () => {
    expect(toStructural({ "x-kubernetes-int-or-string": true }, "")).toEqual({ "x-kubernetes-int-or-string": true });
    expect(toStructural({ type: "object", "x-kubernetes-preserve-unknown-fields": true }, "")).toEqual({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
  });
});
