// locateOwned (every kind's ownership rule): a create that may have been lost is looked for by
// label; one this process knows it never sent is not (Managed.createUnsent), since the look is a
// paginated call and nothing can have been made.
import { describe, expect, it } from "vitest";
import { locateOwned, type Owned } from "../../src/resources/shared/locate.ts";
import type { Managed } from "../../src/runtime/managed.ts";

const owned = (lookups: string[]): Owned<{ id: number }> => ({
  kind: "Gadget", what: "gadget", idField: "gadgetId", named: undefined, mismatchReason: "GadgetIdMismatch", label: "derived-label",
  byId: () => Promise.resolve(undefined),
  byLabel: (label) => { lookups.push(label); return Promise.resolve({ id: 7 }); },
});
const managed = (extra: Partial<Managed<{ label?: string }>>): Managed<{ label?: string }> => ({
  obj: { metadata: { name: "g", namespace: "ns" } }, key: { namespace: "ns", name: "g" }, spec: {}, externalId: undefined,
  createPending: { at: "2026-11-28T15:00:00.000Z", label: "sent-label" },
  policies: { management: "Manage", deletion: "Delete" }, refs: {}, actions: undefined as never, ...extra,
});

describe("locateOwned", () => {
  it("looks for a create that may have been lost by the label it was sent with, and finds it", async () => {
    const lookups: string[] = [];
    expect(await locateOwned(managed({}), owned(lookups))).toEqual({ id: 7 });
    expect(lookups).toEqual(["sent-label"]);
  });

  it("does not look for a create this process knows was never sent", async () => {
    const lookups: string[] = [];
    expect(await locateOwned(managed({ createUnsent: true }), owned(lookups))).toBeUndefined();
    expect(lookups).toEqual([]);
  });
});
