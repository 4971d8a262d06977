// DatabaseConnectionPool's pure logic: the label (metadata.name by default, when the API would
// take it), the recorded id, what an update sends (only what differs; for an adopted pool only
// what the spec says) and the connection URI through the pool.
import { describe, expect, it } from "vitest";
import type { ConnectionPool } from "../../src/linode/index.ts";
import { poolUri } from "../../src/resources/database-connection-pool/connection.ts";
import { diffPool } from "../../src/resources/database-connection-pool/diff.ts";
import { formatPoolId, parsePoolId, poolLabel } from "../../src/resources/database-connection-pool/external.ts";
import { databaseConnectionPoolSpecSchema } from "../../src/resources/database-connection-pool/schema.ts";

const spec = (raw: Record<string, unknown>) => databaseConnectionPoolSpecSchema.parse({ databaseRef: { name: "db" }, ...raw });
const pool = (over: Partial<ConnectionPool> = {}): ConnectionPool => ({ label: "app", database: "defaultdb", mode: "transaction", size: 10, username: null, ...over });

describe("connection pool label and id", () => {
  it("takes metadata.name when spec.label is unset and the name is a valid label; never a name with a dot or over 63", () => {
    expect(poolLabel({ spec: {}, key: { name: "orders-pool" } })).toBe("orders-pool");
    expect(poolLabel({ spec: { label: "Other_1" }, key: { name: "orders.pool" } })).toBe("Other_1");
    expect(poolLabel({ spec: {}, key: { name: "orders.pool" } })).toBeUndefined();
    expect(poolLabel({ spec: {}, key: { name: "x".repeat(64) } })).toBeUndefined();
  });

  it("records postgresql/<database>/<label> and reads back only that form", () => {
    expect(formatPoolId({ databaseId: 12, label: "a_b-c" })).toBe("postgresql/12/a_b-c");
    expect(parsePoolId("postgresql/12/a_b-c")).toEqual({ databaseId: 12, label: "a_b-c" });
    for (const bad of ["mysql/12/a", "postgresql/x/a", "postgresql/12/-a", "12"]) expect(parsePoolId(bad), bad).toBeUndefined();
  });
});

describe("diffPool", () => {
  it("a pool made here: every field held to the spec, unset ones to the API's defaults; only what differs is sent", () => {
    expect(diffPool(spec({}), { databaseRef: { name: "db" } }, false, pool())).toEqual({ body: {}, summary: "" });
    const d = diffPool(spec({ size: 20 }), { databaseRef: { name: "db" }, size: 20 }, false, pool({ mode: "session", username: "x" }));
    expect(d.body).toEqual({ mode: "transaction", size: 20, username: null });
    expect(d.summary).toBe('mode "session" → "transaction", size 10 → 20, username "x" → null');
  });

  it("an adopted pool: only the fields the stored spec has", () => {
    const raw = { databaseRef: { name: "db" }, size: 8 };
    expect(diffPool(spec(raw), raw, true, pool({ mode: "session", username: "reporting", size: 5 })).body).toEqual({ size: 8 });
    expect(diffPool(spec(raw), raw, true, pool({ mode: "session", username: "reporting", size: 8 })).body).toEqual({});
  });
});

describe("poolUri", () => {
  it("names the pool as the database, escapes the credentials and verifies the server against ca.crt", () => {
    expect(poolUri({ username: "u@x", password: "p/w:d", host: "h.example", port: 5432, dbname: "app_pool", caPath: "/bindings/app/ca.crt" }))
      .toBe("postgresql://u%40x:p%2Fw%3Ad@h.example:5432/app_pool?sslmode=verify-full&sslrootcert=/bindings/app/ca.crt");
  });
});
