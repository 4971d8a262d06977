// Planned maintenance (the current platform's updates.pending) is news once: an entry status did
// not list yet is a Normal Event; one it already lists is not announced again.
import { describe, expect, it } from "vitest";
import { newPendingUpdates } from "../../src/resources/managed-database/external.ts";

describe("pending updates", () => {
  const a = { description: "OS patches", plannedFor: "2026-12-01T03:00:00", deadline: "2026-12-08T03:00:00" };
  const b = { description: "Engine minor upgrade", plannedFor: "2026-12-02T03:00:00" };
  it("are new when status did not list them", () => {
    expect(newPendingUpdates(undefined, [a])).toEqual([a]);
    expect(newPendingUpdates([a], [a, b])).toEqual([b]);
  });
  it("are not news again, and none is news when there are none", () => {
    expect(newPendingUpdates([a, b], [b, a])).toEqual([]);
    expect(newPendingUpdates([a], [])).toEqual([]);
    expect(newPendingUpdates("not a list", [])).toEqual([]);
  });
});
