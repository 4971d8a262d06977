// The sharder's decision for one object, row by row: assign the unassigned and the dead shard's
// objects, drain a live shard's object that is to move (never relabel it in one step), call a
// drain off when the ring moved back, and do nothing with no shard alive.
import { describe, expect, it } from "vitest";
import { DRAIN_LABEL, planShard, SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";

const two = new HashRing(["op-a", "op-b"]);
// A namespace each of the two owns.
const nsOf = (shard: string): string => {
  for (let i = 0; ; i++) if (two.owner(`team-${String(i)}`) === shard) return `team-${String(i)}`;
};
const a = nsOf("op-a");
const labels = (shard?: string, drain = false): Record<string, string> => ({ app: "x", ...(shard !== undefined ? { [SHARD_LABEL]: shard } : {}), ...(drain ? { [DRAIN_LABEL]: "true" } : {}) });

describe("planShard", () => {
  it.each([
    ["unassigned", labels(), { type: "assign", shard: "op-a" }],
    ["no labels at all", undefined, { type: "assign", shard: "op-a" }],
    ["an empty shard label", { [SHARD_LABEL]: "" }, { type: "assign", shard: "op-a" }],
    ["on its shard", labels("op-a"), { type: "none" }],
    ["on another live shard: drained first", labels("op-b"), { type: "drain" }],
    ["draining from a live shard: wait for it to let go", labels("op-b", true), { type: "none" }],
    ["on a dead shard: moved at once", labels("op-c"), { type: "assign", shard: "op-a" }],
    ["draining from a shard that died meanwhile: moved at once", labels("op-c", true), { type: "assign", shard: "op-a" }],
    ["let go with the drain label left: assigned", { [DRAIN_LABEL]: "true" }, { type: "assign", shard: "op-a" }],
    ["draining while the ring moved back to its shard: drain called off", labels("op-a", true), { type: "undrain" }],
  ] as const)("%s", (_what, l, action) => {
    expect(planShard(l, a, two)).toEqual(action);
  });

  it("with no shard alive nothing is assigned or moved", () => {
    expect(planShard(labels(), a, new HashRing([]))).toEqual({ type: "none" });
    expect(planShard(labels("op-a"), a, new HashRing([]))).toEqual({ type: "none" });
  });
});
