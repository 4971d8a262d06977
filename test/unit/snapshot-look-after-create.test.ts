// A snapshot's looks after its create: its database is read (still backing_up?) until a read
// begun after the create shows it done; from then on a look goes straight to the backups list.
// Before, each look the call budget deferred at that list had read the database again first.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LinodeClient } from "../../src/linode/index.ts";
import { DatabaseSnapshotExternal } from "../../src/resources/database-snapshot/external.ts";
import { databaseReference } from "../../src/resources/database-snapshot/database-reference.ts";
import type { DatabaseSnapshotSpec } from "../../src/resources/database-snapshot/schema.ts";
import type { DatabaseListCache } from "../../src/resources/managed-database/database-cache.ts";
import { databaseView } from "../../src/resources/managed-database/reference-view.ts";
import { RetryAfterError } from "../../src/runtime/errors.ts";
import type { Managed, ManagedObject } from "../../src/runtime/managed.ts";
import type { ReadStore } from "../../src/runtime/stores.ts";

const ns = "looks";
const signal = new AbortController().signal;

const database: ManagedObject = {
  apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase",
  metadata: { name: "db", namespace: ns },
  spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" },
  status: { id: 7, status: "active", conditions: [{ type: "Ready", status: "True", reason: "Available", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }] },
};

function harness(name: string) {
  const snapshot: ManagedObject = { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z" }, spec: { databaseRef: { name: "db" } }, status: {} };
  const self: ReadStore<ManagedObject> = { get: () => snapshot, list: () => [snapshot], byIndex: () => [snapshot] };
  const calls: string[] = [];
  let status = "backing_up";
  const lists: ("defer" | "found" | "none")[] = [];
  const api = {
    createSnapshot: () => { calls.push("createSnapshot"); return Promise.resolve({}); },
    listAllBackups: () => {
      calls.push("listAllBackups");
      const next = lists.shift() ?? "none";
      if (next === "defer") return Promise.reject(new RetryAfterError("RateLimited", "waiting for the call budget", 1_000, { unsent: true }));
      return Promise.resolve(next === "found" ? [{ id: 11, type: "snapshot", label: external.labelFor(m), created: "2026-01-01T00:00:10Z" }] : []);
    },
  };
  const external = new DatabaseSnapshotExternal({
    linode: { databases: { engine: () => api } } as unknown as LinodeClient,
    self, clusterId: "looks", poll: { pendingMillis: 5_000, readyMillis: 60_000 },
    databases: { fresh: () => { calls.push("fresh"); return Promise.resolve({ status }); } } as unknown as DatabaseListCache,
    shownSnapshots: () => [],
  });
  const spec: DatabaseSnapshotSpec = { databaseRef: { name: "db" }, target: "primary", deletionPolicy: "Delete" };
  const m = {
    obj: snapshot, key: { namespace: ns, name }, spec, externalId: undefined, createPending: undefined as unknown,
    policies: { deletion: "Delete", management: "Manage" },
    refs: { [databaseReference.name]: new Map([["db", { obj: database, decoded: databaseView(database) }]]) },
  } as unknown as Managed<DatabaseSnapshotSpec> & { createPending: unknown };
  return { external, m, calls, lists, done: () => { status = "active"; } };
}

describe("DatabaseSnapshot: looks after its create", () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); });
  afterEach(() => { vi.useRealTimers(); });

  it("reads the database until a read after the create shows the backup done; a look deferred at the backups list then does not read it again", async () => {
    const h = harness("s1");
    h.m.createPending = { at: new Date().toISOString(), label: h.external.labelFor(h.m), database: "mysql/7" };
    await h.external.create(h.m, signal);
    vi.setSystemTime(Date.now() + 5_000);
    // Still backing up: no backups list.
    expect((await h.external.observe(h.m, signal)).exists).toBe(false);
    expect(h.calls).toEqual(["createSnapshot", "fresh"]);
    h.done();
    vi.setSystemTime(Date.now() + 5_000);
    // Done: the backups list, deferred by the budget.
    h.lists.push("defer", "found");
    await expect(h.external.observe(h.m, signal)).rejects.toThrow(/call budget/);
    vi.setSystemTime(Date.now() + 1_000);
    const found = await h.external.observe(h.m, signal);
    expect(found.exists).toBe(true);
    expect(h.calls).toEqual(["createSnapshot", "fresh", "fresh", "listAllBackups", "listAllBackups"]);
  });

  it("without a create of this process (a restart), every look reads the database first, as before", async () => {
    const h = harness("s2");
    h.m.createPending = { at: new Date().toISOString(), label: h.external.labelFor(h.m), database: "mysql/7" };
    h.done();
    h.lists.push("defer", "found");
    await expect(h.external.observe(h.m, signal)).rejects.toThrow(/call budget/);
    vi.setSystemTime(Date.now() + 1_000);
    expect((await h.external.observe(h.m, signal)).exists).toBe(true);
    expect(h.calls).toEqual(["fresh", "listAllBackups", "fresh", "listAllBackups"]);
  });
});
