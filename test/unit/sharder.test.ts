// The sharder on the in-memory Kubernetes API: new objects are assigned as they come (it
// watches only the unassigned); a shard joining drains what moves to it, and what its old
// shard let go is assigned to it; a dead shard's objects move at once; a write decided on a
// stale version is a conflict, decided again.
import { afterEach, describe, expect, it } from "vitest";
import { secretsType, type KubeObject, type ListOptions, type ResourceType } from "../../src/kube/types.ts";
import { FINALIZER } from "../../src/runtime/annotations.ts";
import { MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL } from "../../src/runtime/connection-secrets.ts";
import { DRAIN_LABEL, SHARD_LABEL, TAKEN_FROM_ANNOTATION } from "../../src/runtime/sharding/assignment.ts";
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
    // Each says whose it was (its new shard judges it from reads begun after it saw op-c dead);
    // the first assignment of an unassigned object says nobody's.
    const from = (ns: string): string | undefined => s.kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.annotations?.[TAKEN_FROM_ANNOTATION];
    for (const ns of namespaces) expect(from(ns)).toBe(orphaned.includes(ns) ? "op-c" : undefined);
  });

  it("an assignment of an unassigned object removes a taken-from annotation it carries (a tenant's, or a former takeover's)", async () => {
    const kube = new MemoryKube();
    await kube.createCustom(gadgetType, "team-1", { metadata: { name: "g", annotations: { [TAKEN_FROM_ANNOTATION]: "op-z" } }, spec: { size: 1 } });
    const sharder = new Sharder(kube, { types: [gadgetType], namespaces, sweepMillis: 60_000 });
    running.push(sharder);
    await sharder.start(new HashRing(["op-a"]));
    const o = kube.peek(gadgetType, { namespace: "team-1", name: "g" });
    expect(o?.metadata.labels?.[SHARD_LABEL]).toBe("op-a");
    expect(o?.metadata.annotations?.[TAKEN_FROM_ANNOTATION]).toBeUndefined();
  });

  it("an object worked on is assigned after the connection Secrets it controls are labelled to the same shard; a sweep lists a namespace's Secrets once, a new object's are not looked for", async () => {
    const kube = new MemoryKube();
    const ns = "team-1";
    const published = (name: string, owner: string, uid: string) => kube.createSecret({
      type: "Opaque", data: {},
      metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: owner, [SHARD_LABEL]: "op-dead" }, ownerReferences: [{ apiVersion: "x/v1", kind: "Other", name: owner, uid, controller: true }] },
    });
    const worked = async (name: string, labels: Record<string, string>) => {
      const o = await kube.createCustom(gadgetType, ns, { metadata: { name, finalizers: [FINALIZER], labels }, spec: { size: 1 } });
      await published(`${name}-gadget`, name, o.metadata.uid ?? "");
      return o;
    };
    for (const name of ["g", "h", "i"]) await worked(name, { [SHARD_LABEL]: "op-dead" });
    // Another kind's object named g: its Secret carries the same owner label, and is not this one's.
    await published("g-other", "g", "another-uid");
    const secretLists: string[] = [];
    const list = kube.list.bind(kube);
    kube.list = <T extends KubeObject>(t: ResourceType, o?: ListOptions) => { if (t.plural === "secrets") secretLists.push(o?.labelSelector ?? ""); return list<T>(t, o); };
    const sharder = new Sharder(kube, { types: [gadgetType], namespaces: [ns], sweepMillis: 60_000 });
    running.push(sharder);
    // op-dead's Lease is gone: its objects are assigned to op-a directly.
    await sharder.start(new HashRing(["op-a"]));
    const label = (name: string): string | undefined => kube.peek(secretsType, { namespace: ns, name })?.metadata.labels?.[SHARD_LABEL];
    for (const name of ["g", "h", "i"]) {
      expect(kube.peek(gadgetType, { namespace: ns, name })?.metadata.labels?.[SHARD_LABEL]).toBe("op-a");
      expect(label(`${name}-gadget`)).toBe("op-a");
      // Its Secret first, then itself: the new shard's cache has the Secret when the object reaches it.
      const writes = kube.writes.map((w) => w.key);
      expect(writes.lastIndexOf(`${ns}/${name}-gadget`)).toBeLessThan(writes.lastIndexOf(`${ns}/${name}`));
    }
    expect(label("g-other")).toBe("op-dead");
    // The sweep listed the namespace's connection Secrets once for its three objects.
    expect(secretLists).toEqual([`${MANAGED_BY_LABEL}=${MANAGED_BY}`]);
    // A new object (no finalizer: nothing published yet) costs no list of Secrets.
    await kube.createCustom(gadgetType, ns, { metadata: { name: "fresh" }, spec: { size: 1 } });
    await until("the new one assigned", () => kube.peek(gadgetType, { namespace: ns, name: "fresh" })?.metadata.labels?.[SHARD_LABEL] === "op-a");
    expect(secretLists).toHaveLength(1);
    // One let go by its shard (unlabelled, worked on) is assigned from its event: its own Secrets listed, by its owner label.
    await worked("later", { [SHARD_LABEL]: "op-a" });
    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "later" }, { metadata: { labels: { [SHARD_LABEL]: null } } });
    await until("the let-go one assigned", () => kube.peek(gadgetType, { namespace: ns, name: "later" })?.metadata.labels?.[SHARD_LABEL] === "op-a");
    expect(label("later-gadget")).toBe("op-a");
    expect(secretLists.slice(1)).toEqual([`${MANAGED_BY_LABEL}=${MANAGED_BY},${OWNER_LABEL}=later`]);
  });

  it("a shard that left the ring is taken over first: only its objects listed (by their label), each assigned after its connection Secrets are labelled to the same shard", async () => {
    const kube = new MemoryKube();
    for (const ns of namespaces) {
      const o = await kube.createCustom(gadgetType, ns, { metadata: { name: "g", finalizers: [FINALIZER] }, spec: { size: 1 } });
      await kube.createSecret({
        type: "Opaque", data: {},
        metadata: { name: "g-gadget", namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: "g" }, ownerReferences: [{ apiVersion: "x/v1", kind: "Gadget", name: "g", uid: o.metadata.uid ?? "", controller: true }] },
      });
    }
    const sharder = new Sharder(kube, { types: [gadgetType], namespaces, sweepMillis: 60_000 });
    running.push(sharder);
    await sharder.start(new HashRing(["op-a", "op-b", "op-c"]));
    const shardOf = (ns: string, plural = gadgetType.plural): string | undefined =>
      kube.peek(plural === "secrets" ? secretsType : gadgetType, { namespace: ns, name: plural === "secrets" ? "g-gadget" : "g" })?.metadata.labels?.[SHARD_LABEL];
    const theirs = namespaces.filter((ns) => shardOf(ns) === "op-c");
    expect(theirs.length).toBeGreaterThan(1);
    for (const ns of namespaces) expect(shardOf(ns, "secrets")).toBe(shardOf(ns));

    const gadgetLists: string[] = [];
    const list = kube.list.bind(kube);
    kube.list = <T extends KubeObject>(t: ResourceType, o?: ListOptions) => { if (t.plural === gadgetType.plural) gadgetLists.push(o?.labelSelector ?? ""); return list<T>(t, o); };
    const from = kube.writes.length;
    sharder.setRing(new HashRing(["op-a", "op-b"]));
    const counts = await sharder.sweep();
    expect(counts.assign).toBe(theirs.length);
    // The takeover's lists select op-c's objects; the full sweep's come after.
    expect(gadgetLists[0]).toBe(`${SHARD_LABEL} in (op-c)`);
    expect(gadgetLists.slice(namespaces.length).every((sel) => sel === "")).toBe(true);
    const writes = kube.writes.slice(from);
    // Only op-c's objects and their Secrets were written; each Secret before its object.
    expect(new Set(writes.map((w) => w.key))).toEqual(new Set(theirs.flatMap((ns) => [`${ns}/g`, `${ns}/g-gadget`])));
    const keys = writes.map((w) => w.key);
    for (const ns of theirs) expect(keys.lastIndexOf(`${ns}/g-gadget`)).toBeLessThan(keys.lastIndexOf(`${ns}/g`));
    for (const ns of theirs) {
      expect(["op-a", "op-b"]).toContain(shardOf(ns));
      expect(shardOf(ns, "secrets")).toBe(shardOf(ns));
      expect(kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.annotations?.[TAKEN_FROM_ANNOTATION]).toBe("op-c");
    }
  });

  it("a takeover that fails (its list refused) is tried again first by the next sweep", async () => {
    const s = await setup(["op-a", "op-b", "op-c"]);
    const theirs = namespaces.filter((ns) => s.shardOf(ns) === "op-c");
    const selectors: string[] = [];
    let refuse = true;
    const list = s.kube.list.bind(s.kube);
    s.kube.list = <T extends KubeObject>(t: ResourceType, o?: ListOptions) => {
      selectors.push(o?.labelSelector ?? "");
      if (refuse && o?.labelSelector !== undefined) { refuse = false; return Promise.reject(new Error("the API server is unavailable")); }
      return list<T>(t, o);
    };
    s.sharder.setRing(new HashRing(["op-a", "op-b"]));
    const failed = await s.sharder.sweep();
    expect(failed.assign).toBe(0);
    expect(theirs.every((ns) => s.shardOf(ns) === "op-c")).toBe(true);
    selectors.length = 0;
    const counts = await s.sharder.sweep();
    expect(counts.assign).toBe(theirs.length);
    expect(selectors[0]).toBe(`${SHARD_LABEL} in (op-c)`);
  });

  it("a replica that starts leading takes over first the shards its members' Leases say are dead, though it never saw them leave; afterSweep runs after a sweep that ended well, not after one that failed", async () => {
    const kube = new MemoryKube();
    for (const ns of namespaces) await kube.createCustom(gadgetType, ns, { metadata: { name: "g", labels: { [SHARD_LABEL]: Number(ns.split("-")[1]) % 3 === 0 ? "op-gone" : "op-a" } }, spec: { size: 1 } });
    const gone = namespaces.filter((ns) => Number(ns.split("-")[1]) % 3 === 0);
    const selectors: string[] = [];
    const list = kube.list.bind(kube);
    let refuse = false;
    kube.list = <T extends KubeObject>(t: ResourceType, o?: ListOptions) => {
      selectors.push(o?.labelSelector ?? "");
      return refuse ? Promise.reject(new Error("the API server is unavailable")) : list<T>(t, o);
    };
    let afterSweeps = 0;
    const sharder = new Sharder(kube, { types: [gadgetType], namespaces, sweepMillis: 60_000, afterSweep: () => { afterSweeps++; return Promise.resolve(); } });
    running.push(sharder);
    await sharder.start(new HashRing(["op-a", "op-b"]), ["op-gone", "op-a"]);
    // Only the dead one (op-a is alive whatever a stale Lease said): its objects listed first
    // (after the watch of the unassigned fills).
    expect(selectors.filter((sel) => !sel.startsWith("!"))[0]).toBe(`${SHARD_LABEL} in (op-gone)`);
    for (const ns of gone) expect(["op-a", "op-b"]).toContain(kube.peek(gadgetType, { namespace: ns, name: "g" })?.metadata.labels?.[SHARD_LABEL]);
    expect(afterSweeps).toBe(1);
    refuse = true;
    await sharder.sweep();
    expect(afterSweeps).toBe(1);
  });

  it("with no shard alive nothing is assigned", async () => {
    const s = await setup([]);
    expect(namespaces.map(s.shardOf).every((x) => x === undefined)).toBe(true);
  });
});
