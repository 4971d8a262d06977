// The snake_case <-> camelCase layer every answer and request goes through: keys converted,
// data keys kept, hostile keys kept as data, and its key memo bounded without changing results.
import { describe, expect, it } from "vitest";
import { camelize, snakify, toCamelKey } from "../../src/linode/case.ts";

describe("camelize and snakify", () => {
  it("convert identifier keys at every depth and keep data keys verbatim", () => {
    const wire = { allow_list: ["192.0.2.0/24"], hosts: { primary: "p", secondary_host: "s" }, members: { "192.0.2.1": "primary" }, engine_config: { pg: { max_connections: 100 } } };
    const edge = camelize(wire);
    expect(edge).toEqual({ allowList: ["192.0.2.0/24"], hosts: { primary: "p", secondaryHost: "s" }, members: { "192.0.2.1": "primary" }, engineConfig: { pg: { maxConnections: 100 } } });
    expect(snakify(edge)).toEqual(wire);
  });

  it("keep `__proto__` and Object.prototype's names as own data, polluting nothing", () => {
    const wire = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": "c", "to_string": "t", "nested": [{"__proto__": {"polluted": 2}}]}') as Record<string, unknown>;
    const edge = camelize(wire) as Record<string, unknown>;
    expect(Object.getPrototypeOf(edge)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(edge, "__proto__")?.value).toEqual({ polluted: 1 });
    expect(edge.constructor).toBe("c");
    expect(Object.getOwnPropertyDescriptor(edge, "toString")?.value).toBe("t");
    const item = (edge.nested as Record<string, unknown>[])[0] ?? {};
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.keys(item)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("drop undefined members so unset options never reach the wire", () => {
    expect(snakify({ label: "a", clusterSize: undefined })).toEqual({ label: "a" });
  });

  it("give the same answer past the key memo's bound as before it", () => {
    // More distinct keys than the memo keeps: each is still converted as toCamelKey would.
    const wire = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key_${String(i)}_x`, i]));
    const edge = camelize(wire) as Record<string, number>;
    for (let i = 0; i < 5000; i += 499) expect(edge[toCamelKey(`key_${String(i)}_x`)]).toBe(i);
    expect(Object.keys(edge)).toHaveLength(5000);
    expect(camelize({ key_4999_x: 1 })).toEqual({ key4999X: 1 });
  });
});
