// The shards' consistent hash ring: every replica agrees, the load spreads evenly, and a shard
// joining or leaving moves only the keys it takes or gives up.
import { describe, expect, it } from "vitest";
import { HashRing } from "../../src/runtime/sharding/ring.ts";

const keys = Array.from({ length: 20_000 }, (_, i) => `team-${String(i)}`);
const shardsOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `linode-operator-${String(i)}`);
const assign = (ring: HashRing): Map<string, string | undefined> => new Map(keys.map((k) => [k, ring.owner(k)]));

describe("HashRing", () => {
  it("is the same ring whatever order the shards are listed in", () => {
    const a = new HashRing(shardsOf(5));
    const b = new HashRing([...shardsOf(5)].reverse());
    expect([...assign(a)]).toEqual([...assign(b)]);
  });

  it("spreads namespaces evenly: five shards each within 15 % of a fifth", () => {
    const counts = new Map<string, number>();
    for (const owner of assign(new HashRing(shardsOf(5))).values()) counts.set(owner ?? "none", (counts.get(owner ?? "none") ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(shardsOf(5));
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(keys.length / 5 * 0.85);
      expect(n).toBeLessThan(keys.length / 5 * 1.15);
    }
  });

  it("a shard joining takes about its share, from the others only; one leaving gives only its own", () => {
    const before = assign(new HashRing(shardsOf(4)));
    const after = assign(new HashRing(shardsOf(5)));
    const moved = keys.filter((k) => before.get(k) !== after.get(k));
    // Every moved key went to the new shard; about a fifth moved.
    expect(moved.every((k) => after.get(k) === "linode-operator-4")).toBe(true);
    expect(moved.length).toBeGreaterThan(keys.length / 5 * 0.8);
    expect(moved.length).toBeLessThan(keys.length / 5 * 1.2);
    // Back to four: exactly those keys go back where they were.
    const back = assign(new HashRing(shardsOf(4)));
    expect(keys.filter((k) => back.get(k) !== before.get(k))).toEqual([]);
    // One of the four dying: only its keys move.
    const dead = "linode-operator-2";
    const without = assign(new HashRing(shardsOf(4).filter((s) => s !== dead)));
    expect(keys.filter((k) => before.get(k) !== without.get(k)).every((k) => before.get(k) === dead)).toBe(true);
  });

  it("no shards: no owner; one shard: it owns everything", () => {
    expect(new HashRing([]).owner("team-1")).toBeUndefined();
    const one = new HashRing(["only"]);
    expect(keys.every((k) => one.owner(k) === "only")).toBe(true);
  });
});
