// The create body and what the spec may ask for, per Linode database platform: the current
// platform's create carries no encrypted, replication or ssl_connection field and its maintenance
// is weekly and 4 hours; the legacy one takes what it always did; Valkey is created on the current one.
import { describe, expect, it } from "vitest";
import { camelize, type Database } from "../../src/linode/index.ts";
import { databaseSchema } from "../../src/linode/schemas/databases.ts";
import { diffDatabase } from "../../src/resources/managed-database/diff.ts";
import { createRequest, newDatabasePlatform, unsupportedOnPlatform } from "../../src/resources/managed-database/platform.ts";
import { managedDatabaseSpecSchema } from "../../src/resources/managed-database/schema.ts";

const written = { engine: "postgresql", version: "16", region: "us-east", type: "g6-dedicated-2", clusterSize: 3, encrypted: true, sslConnection: true, replicationType: "asynch", replicationCommitType: "local", allowList: ["203.0.113.1"] };
const spec = managedDatabaseSpecSchema.parse(written);

describe("the create body per platform", () => {
  it("current: none of encrypted, ssl_connection, replication_type, replication_commit_type", () => {
    const body = createRequest(spec, "current", "orders", ["203.0.113.1/32"]);
    expect(body).toEqual({ label: "orders", region: "us-east", type: "g6-dedicated-2", version: "16", clusterSize: 3, allowList: ["203.0.113.1/32"] });
  });

  it("legacy: what it always took", () => {
    const body = createRequest(spec, "legacy", "orders", ["203.0.113.1/32"]);
    expect(body).toEqual({ label: "orders", region: "us-east", type: "g6-dedicated-2", version: "16", clusterSize: 3, allowList: ["203.0.113.1/32"], encrypted: true, sslConnection: true, replicationType: "asynch", replicationCommitType: "local" });
    // Defaults are sent as before (the legacy API's own defaults are the same).
    expect(createRequest(managedDatabaseSpecSchema.parse({ ...written, clusterSize: 1, replicationType: undefined, replicationCommitType: undefined, encrypted: undefined }), "legacy", "x", [])).toMatchObject({ encrypted: false, sslConnection: true });
  });

  it("both: engine parameters, a VPC and a fork go as given", () => {
    const current = managedDatabaseSpecSchema.parse({ ...written, replicationType: undefined, replicationCommitType: undefined, engineConfig: { work_mem: 8 }, privateNetwork: { vpcId: 7, subnetId: 70 } });
    expect(createRequest(current, "current", "x", [], { source: 5, restoreTime: "2026-11-01T00:00:00" })).toMatchObject({ engineConfig: { work_mem: 8 }, privateNetwork: { vpcId: 7, subnetId: 70, publicAccess: false }, fork: { source: 5, restoreTime: "2026-11-01T00:00:00" } });
  });

  it("Valkey is created on the current platform whatever --database-platform says", () => {
    expect(newDatabasePlatform("valkey", "legacy")).toBe("current");
    expect(newDatabasePlatform("mysql", "legacy")).toBe("legacy");
    expect(newDatabasePlatform("postgresql", "current")).toBe("current");
  });
});

describe("what a platform does not take", () => {
  const window = { frequency: "weekly", hourOfDay: 2, dayOfWeek: 6 };
  const names = (raw: Record<string, unknown>, platform: "current" | "legacy"): string[] =>
    unsupportedOnPlatform(managedDatabaseSpecSchema.parse(raw), raw, platform).map((f) => f.split(" ")[0] ?? "");

  it("current: replication fields, encrypted or sslConnection written false, monthly, a duration other than 4", () => {
    expect(names(written, "current")).toEqual(["spec.replicationType", "spec.replicationCommitType"]);
    const plain = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
    expect(names(plain, "current")).toEqual([]);
    // What the platform does anyway is no conflict; the defaults (unwritten) ask for nothing.
    expect(names({ ...plain, encrypted: true, sslConnection: true }, "current")).toEqual([]);
    expect(names({ ...plain, encrypted: false }, "current")).toEqual(["spec.encrypted:"]);
    expect(names({ ...plain, sslConnection: false }, "current")).toEqual(["spec.sslConnection:"]);
    expect(names({ ...plain, updates: { ...window, duration: 4 } }, "current")).toEqual([]);
    expect(names({ ...plain, updates: window }, "current")).toEqual([]);
    expect(names({ ...plain, updates: { ...window, duration: 3 } }, "current")).toEqual(["spec.updates.duration:"]);
    expect(names({ ...plain, updates: { ...window, frequency: "monthly", weekOfMonth: 2 } }, "current")).toEqual(["spec.updates.frequency:"]);
  });

  it("legacy: a duration outside 1..3, and what only the current platform has", () => {
    const plain = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
    expect(names({ ...plain, encrypted: false, sslConnection: false, replicationType: "none", updates: { ...window, frequency: "monthly", weekOfMonth: 2, duration: 3 } }, "legacy")).toEqual([]);
    expect(names({ ...plain, updates: { ...window, duration: 4 } }, "legacy")).toEqual(["spec.updates.duration:"]);
    expect(names({ ...plain, suspended: true, privateNetwork: { vpcId: 1, subnetId: 2 }, engineConfig: {} }, "legacy")).toEqual(["spec.suspended:", "spec.privateNetwork", "spec.engineConfig"]);
  });
});

describe("a maintenance window without duration", () => {
  const db: Database = camelize(databaseSchema.parse({
    id: 9, label: "l", engine: "mysql", version: "8.0.35", region: "us-east", type: "g6-nanode-1", status: "active", platform: "rdbms-default",
    cluster_size: 1, encrypted: true, ssl_connection: true, allow_list: [], hosts: { primary: "p", standby: null }, port: 18000,
    created: "2026-01-01T00:00:00", updated: "2026-01-01T00:00:00", updates: { frequency: "weekly", duration: 4, hour_of_day: 9, day_of_week: 3, pending: [] },
  }));
  const spec = (updates: Record<string, unknown>) => managedDatabaseSpecSchema.parse({ engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", updates });

  it("matches whatever length the database has, and a change sends the window whole, with the database's length", () => {
    expect(diffDatabase(spec({ hourOfDay: 9, dayOfWeek: 3 }), undefined, db).update).toEqual({});
    expect(diffDatabase(spec({ hourOfDay: 2, dayOfWeek: 3 }), undefined, db).update.updates).toEqual({ frequency: "weekly", duration: 4, hourOfDay: 2, dayOfWeek: 3 });
    expect(diffDatabase(spec({ hourOfDay: 9, dayOfWeek: 3, duration: 3 }), undefined, db).update.updates).toMatchObject({ duration: 3 });
  });
});
