// Which changes of its ManagedDatabase wake a DatabaseSnapshot: all while it waits to be taken;
// once taken, only the database turning not Ready (gone, or busy) or being replaced, never its
// turning Ready again after the backup the snapshot itself caused.
import { describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { databaseReference } from "../../src/resources/database-snapshot/database-reference.ts";
import type { DatabaseView } from "../../src/resources/managed-database/reference-view.ts";
import type { Decoded } from "../../src/runtime/managed.ts";

const view = (id: number, apiStatus: string): DatabaseView => ({
  name: "db", engine: "mysql", id, apiStatus, platform: "legacy", managementPolicy: "Manage", paused: false, account: undefined, credentialsRef: undefined,
});
const ready = (id: number, apiStatus = "active"): Decoded<DatabaseView> => ({ value: view(id, apiStatus) });
const notReady = (id: number, apiStatus: string): Decoded<DatabaseView> => ({ value: view(id, apiStatus), notReady: "it is not Ready" });
const snapshot = (status: Record<string, unknown>): ManagedObject => ({ metadata: { name: "s", namespace: "ns" }, status });

describe("DatabaseSnapshot wakes on its ManagedDatabase", () => {
  const wakes = (referrer: ManagedObject, before: Decoded<DatabaseView>, after: Decoded<DatabaseView>): boolean => databaseReference.wakes?.(referrer, before, after) ?? true;
  const waiting = snapshot({ phase: "BackingUp" });
  const taken = snapshot({ phase: "Available", backupId: 9, externalId: "mysql/1/9" });

  it("one still to be taken: every change", () => {
    expect(wakes(waiting, notReady(1, "backing_up"), ready(1))).toBe(true);
    expect(wakes(waiting, ready(1), ready(1, "updating"))).toBe(true);
  });

  it("one taken: its database turning not Ready or replaced, not its turning Ready again nor its state moving", () => {
    expect(wakes(taken, ready(1), notReady(1, "failed"))).toBe(true);
    expect(wakes(taken, ready(1), ready(2))).toBe(true);
    expect(wakes(taken, notReady(1, "backing_up"), ready(1))).toBe(false);
    expect(wakes(taken, ready(1, "active"), ready(1, "updating"))).toBe(false);
  });
});
