// The sharder on the in-memory Kubernetes API: new objects are assigned as they come (it
// watches only the unassigned); a shard joining drains what moves to it, and what its old
// shard let go is assigned to it; a dead shard's objects move at once; a write decided on a
// stale version is a conflict, decided again.
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/types.ts";
import { DRAIN_LABEL, SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { Sharder } from "../../src/runtime/sharding/sharder.ts";
import { gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { waitFor } from "../harness/operator-runtime.ts";

/** Until `fn` holds, polled on the event loop (the 5 s bound only turns a hang into a failure). */
const until = async (what: string, fn: () => boolean): Promise<void> => { await waitFor(what, fn, 5_000, 5); };

const namespaces = Array.from({ length: 12 }, (_, i) => `team-${String(i)}`);
const running: Sharder[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((s) => s.stop())); });

async function setup(shards: string[]) {
  const kube = new MemoryKube();
  for (const ns of namespaces) await kube.createCustom(gadgetType, ns, { metadata: { name: "g", labels: { app: "x" } }, spec: { size: 1 } });
  const sharder = new Sharder(kube, { types: [gadgetType], namespaces, sweepMillis: 60_000 });
  running.push(sharder);
  await sharder.start(new HashRing(shards));
  const shardOf = (ns: string): string | undefined => kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.labels?.[SHARD_LABEL];
  const drainOf = (ns: string): string | undefined => kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.labels?.[DRAIN_LABEL];
  return { kube, sharder, shardOf, drainOf };
}


describe("Sharder", () => {
  it("assigns every object to its namespace's shard, and a new one as it comes", async () => {
    const ring = new HashRing(["op-a", "op-b", "op-c"]);
    const s = await setup(["op-a", "op-b", "op-c"]);
    expect(namespaces.map(s.shardOf)).toEqual(namespaces.map((ns) => ring.owner(ns)));
    // Spread over the three.
    expect(new Set(namespaces.map(s.shardOf)).size).toBe(3);
    await s.kube.createCustom(gadgetType, "team-5", { metadata: { name: "late" }, spec: { size: 1 } });
    await until("the new one assigned", () => s.kube.peek(gadgetType, { namespace: "team-5", name: "late" })?.metadata.labels?.[SHARD_LABEL] === ring.owner("team-5"));
    // Its other labels are kept.
    expect(s.kube.peek(gadgetType, { namespace: namespaces[0] ?? "", name: "g" })?.metadata.labels?.app).toBe("x");
  });

  it("by account (keyOf): objects whose key is one are on one shard whatever their namespaces; the sweep lists whole objects", async () => {
    const kube = new MemoryKube();
    for (const ns of namespaces) await kube.createCustom(gadgetType, ns, { metadata: { name: "g" }, spec: { size: Number(ns.split("-")[1]) % 2 } });
    const seen: unknown[] = [];
    const keyOf = (o: KubeObject): Promise<string> => { const spec = (o as { spec?: { size: number } }).spec; seen.push(spec); return Promise.resolve(`account-${String(spec?.size)}`); };
    const sharder = new Sharder(kube, { types: [gadgetType], namespaces, sweepMillis: 60_000, keyOf });
    running.push(sharder);
    const ring = new HashRing(["op-a", "op-b", "op-c"]);
    await sharder.start(ring);
    const shardOf = (ns: string): string | undefined => kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.labels?.[SHARD_LABEL];
    for (const ns of namespaces) expect(shardOf(ns)).toBe(ring.owner(`account-${String(Number(ns.split("-")[1]) % 2)}`));
    expect(new Set(namespaces.filter((ns) => Number(ns.split("-")[1]) % 2 === 0).map(shardOf)).size).toBe(1);
    expect(seen.every((spec) => spec !== undefined)).toBe(true);
  });

  it("a shard joining: what moves to it is drained first, and assigned to it once its old shard lets go", async () => {
    const s = await setup(["op-a", "op-b"]);
    const before = new Map(namespaces.map((ns) => [ns, s.shardOf(ns)]));
    const three = new HashRing(["op-a", "op-b", "op-c"]);
    const moving = namespaces.filter((ns) => three.owner(ns) === "op-c");
    expect(moving.length).toBeGreaterThan(0);
    s.sharder.setRing(three);
    const counts = await s.sharder.sweep();
    expect(counts.drain).toBe(moving.length);
    // Drained, still on their old shard; the rest untouched.
    for (const ns of namespaces) {
      expect(s.shardOf(ns)).toBe(before.get(ns));
      expect(s.drainOf(ns)).toBe(moving.includes(ns) ? "true" : undefined);
    }
    // The old shards let go (as a Controller does: both labels removed).
    for (const ns of moving) {
      const o = s.kube.peek(gadgetType, { namespace: ns, name: "g" });
      await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "g" }, { metadata: { labels: { ...o?.metadata.labels, [SHARD_LABEL]: null, [DRAIN_LABEL]: null } } });
    }
    await until("assigned to the new shard", () => moving.every((ns) => s.shardOf(ns) === "op-c" && s.drainOf(ns) === undefined));
  });

  it("a dead shard's objects move at once, with no drain", async () => {
    const s = await setup(["op-a", "op-b", "op-c"]);
    const orphaned = namespaces.filter((ns) => s.shardOf(ns) === "op-c");
    expect(orphaned.length).toBeGreaterThan(0);
    s.sharder.setRing(new HashRing(["op-a", "op-b"]));
    const counts = await s.sharder.sweep();
    expect(counts.assign).toBe(orphaned.length);
    expect(counts.drain).toBe(0);
    for (const ns of namespaces) expect(["op-a", "op-b"]).toContain(s.shardOf(ns));
  });

  it("with no shard alive nothing is assigned", async () => {
    const s = await setup([]);
    expect(namespaces.map(s.shardOf).every((x) => x === undefined)).toBe(true);
  });
});
