// The kind schemas as the controllers use them: parse fills the same defaults the CRD
// applies, and field-level limits hold at runtime too.
import { describe, expect, it } from "vitest";
import { databaseSnapshotSpecSchema } from "../../src/resources/database-snapshot/schema.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "../../src/resources/managed-database/schema.ts";
import { nodeBalancerSpecSchema } from "../../src/resources/node-balancer/schema.ts";

describe("kind schemas at runtime", () => {
  it("ManagedDatabase: defaults", () => {
    expect(managedDatabaseSpecSchema.parse({ engine: "mysql", version: "8.0", region: "us-east", type: "g6-nanode-1" })).toEqual({
      engine: "mysql", version: "8.0", region: "us-east", type: "g6-nanode-1",
      clusterSize: 1, encrypted: false, sslConnection: true, allowList: [], allowEmpty: false, suspended: false, deletionPolicy: "Delete", managementPolicy: "Manage",
    });
  });

  it("ManagedDatabase: field limits", () => {
    const base = { engine: "mysql", version: "8.0", region: "us-east", type: "g6-nanode-1" };
    expect(managedDatabaseSpecSchema.safeParse({ ...base, clusterSize: 4 }).success).toBe(false);
    expect(managedDatabaseSpecSchema.safeParse({ ...base, clusterSize: 2 }).success).toBe(true);
    const pit = (p: Record<string, unknown>) => managedDatabaseSpecSchema.safeParse({ ...base, restoreFrom: { pointInTime: p } }).success;
    expect(pit({ databaseId: 1, restoreTime: "2026-11-24T18:30:00Z" })).toBe(true);
    expect(pit({ databaseId: 1, restoreTime: "2026-11-24T19:30:00+01:00" })).toBe(true);
    expect(pit({ databaseId: 1, restoreTime: "2026-11-24 18:30:00" })).toBe(false);
    expect(managedDatabaseSpecSchema.safeParse({ ...base, label: "ab" }).success).toBe(false);
    expect(managedDatabaseSpecSchema.safeParse({ ...base, updates: { duration: 1, hourOfDay: 24, dayOfWeek: 1 } }).success).toBe(false);
    expect(managedDatabaseSpecSchema.parse({ ...base, updates: { duration: 1, hourOfDay: 0, dayOfWeek: 1 } }).updates?.frequency).toBe("weekly");
  });

  it("ManagedDatabase status: unknown fields are dropped, known ones typed", () => {
    const status = managedDatabaseStatusSchema.parse({ id: 1, status: "active", hosts: { primary: "h" }, extra: true });
    expect(status).toEqual({ id: 1, status: "active", hosts: { primary: "h" } });
  });

  it("DatabaseSnapshot: defaults and label rule", () => {
    expect(databaseSnapshotSpecSchema.parse({ databaseRef: { name: "db" } })).toEqual({ databaseRef: { name: "db" }, target: "primary", deletionPolicy: "Delete" });
    expect(databaseSnapshotSpecSchema.safeParse({ databaseRef: { name: "db" }, label: "with-dash" }).success).toBe(false);
  });

  it("NodeBalancer: the API's config defaults", () => {
    const spec = nodeBalancerSpecSchema.parse({ region: "us-east", configs: [{ port: 443, nodes: [{ label: "web", address: "192.168.128.5:443" }] }] });
    expect(spec).toEqual({
      region: "us-east", type: "common", clientConnThrottle: 0, clientUdpSessThrottle: 0, tags: [], deletionProtection: false, deletionPolicy: "Delete", managementPolicy: "Manage",
      configs: [{
        // checkPassive has no default: the API's depends on the protocol (on for http, none for udp).
        port: 443, protocol: "http", algorithm: "roundrobin", stickiness: "none", check: "none",
        checkInterval: 31, checkTimeout: 30, checkAttempts: 3, proxyProtocol: "none", cipherSuite: "recommended",
        nodes: [{ label: "web", address: "192.168.128.5:443" }],
      }],
    });
    expect(nodeBalancerSpecSchema.safeParse({ region: "us-east", clientConnThrottle: 21 }).success).toBe(false);
  });
});
