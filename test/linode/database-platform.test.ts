// What the client makes of a database object's platform and of the API's two spellings of
// PostgreSQL's asynchronous replication (the spec's enum says asynch, its own sample async).
import { describe, expect, it } from "vitest";
import { camelize } from "../../src/linode/case.ts";
import { databasePlatform } from "../../src/linode/databases.ts";
import { databaseSchema } from "../../src/linode/schemas/databases.ts";

const body = (more: Record<string, unknown>): Record<string, unknown> => ({
  id: 1, label: "a-db", engine: "postgresql", version: "16", region: "us-east", type: "g6-nanode-1", status: "active",
  cluster_size: 3, hosts: { primary: "p.example", secondary: null }, created: "2026-01-01T00:00:00", updated: "2026-01-01T00:00:00", ...more,
});

describe("database platform and synonyms", () => {
  it("reads the platform: rdbms-legacy and no field are legacy; rdbms-default (and anything newer) is current", () => {
    expect(databasePlatform({ platform: "rdbms-legacy" })).toBe("legacy");
    expect(databasePlatform({ platform: undefined })).toBe("legacy");
    expect(databasePlatform({ platform: "rdbms-default" })).toBe("current");
    expect(databasePlatform({ platform: "rdbms-next" })).toBe("current");
  });

  it("async and asynch are one replication type, so neither spelling freezes updates as a difference", () => {
    const a = camelize(databaseSchema.parse(body({ replication_type: "async" }))) as { replicationType: string | null };
    const b = camelize(databaseSchema.parse(body({ replication_type: "asynch" }))) as { replicationType: string | null };
    expect(a.replicationType).toBe("asynch");
    expect(b.replicationType).toBe("asynch");
    expect((camelize(databaseSchema.parse(body({}))) as { replicationType: string | null }).replicationType).toBeNull();
  });
});
