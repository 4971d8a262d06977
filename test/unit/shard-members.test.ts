// Which shards are alive, from their membership Leases: held and changed within their duration
// by the local clock; a cleared holder is gone at once; a Lease held by another identity than
// its name says, or of another ring, is no member; a failed list concludes nothing.
import { describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { microTime } from "../../src/kube/client.ts";
import { SHARD_RING_LABEL, ShardMembers, shardLeaseName } from "../../src/runtime/sharding/membership.ts";
import type { HashRing } from "../../src/runtime/sharding/ring.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const ns = "operators";
const ring = "linode-operator";

async function hold(kube: MemoryKube, identity: string, opts: { ring?: string; holder?: string } = {}): Promise<void> {
  const name = shardLeaseName(opts.ring ?? ring, identity);
  const spec = { holderIdentity: opts.holder ?? identity, leaseDurationSeconds: 15, renewTime: microTime() };
  try {
    const lease = await kube.getLease({ namespace: ns, name });
    await kube.replaceLease({ namespace: ns, name }, { ...lease, spec: { ...lease.spec, ...spec } });
  } catch {
    await kube.createLease(ns, { metadata: { name, namespace: ns, labels: { [SHARD_RING_LABEL]: opts.ring ?? ring } }, spec });
  }
}

function members(kube: MemoryKube) {
  let t = 1_000_000;
  const changes: string[][] = [];
  const m = new ShardMembers(kube, { namespace: ns, ring, onChange: (r: HashRing) => { changes.push([...r.shards]); }, now: () => t });
  return { m, changes, advance: (ms: number) => { t += ms; } };
}

describe("ShardMembers", () => {
  it("alive while held and renewed; dead once not renewed for its duration; back when it renews", async () => {
    const kube = new MemoryKube();
    await hold(kube, "op-a");
    await hold(kube, "op-b");
    const { m, changes, advance } = members(kube);
    await m.refresh();
    expect(m.shards).toEqual(["op-a", "op-b"]);
    // b renews every 10 s; a stops.
    for (let i = 0; i < 2; i++) { advance(10_000); await hold(kube, "op-b"); await m.refresh(); }
    expect(m.shards).toEqual(["op-b"]);
    await hold(kube, "op-a");
    await m.refresh();
    expect(changes).toEqual([["op-a", "op-b"], ["op-b"], ["op-a", "op-b"]]);
  });

  it("diedAt: when this replica first saw a shard it had seen alive go dead; forgotten when it is back, or after ten minutes", async () => {
    const kube = new MemoryKube();
    await hold(kube, "op-a");
    await hold(kube, "op-b");
    await hold(kube, "op-c");
    const { m, advance } = members(kube);
    await m.refresh();
    expect(m.diedAt("op-a")).toBeUndefined();
    // a and c stop renewing; b goes on. Dead on the look after their duration.
    advance(10_000); await hold(kube, "op-b"); await m.refresh();
    expect(m.diedAt("op-a")).toBeUndefined();
    advance(10_000); await hold(kube, "op-b"); await m.refresh();
    const seenDead = 1_000_000 + 20_000;
    expect(m.shards).toEqual(["op-b"]);
    expect(m.diedAt("op-a")).toBe(seenDead);
    expect(m.diedAt("op-c")).toBe(seenDead);
    // Later looks keep the first moment.
    advance(5_000); await hold(kube, "op-b"); await m.refresh();
    expect(m.diedAt("op-a")).toBe(seenDead);
    // a is back: no longer dead. c is forgotten ten minutes on.
    await hold(kube, "op-a"); await m.refresh();
    expect(m.diedAt("op-a")).toBeUndefined();
    expect(m.diedAt("op-c")).toBe(seenDead);
    advance(10 * 60_000); await hold(kube, "op-a"); await hold(kube, "op-b"); await m.refresh();
    expect(m.diedAt("op-c")).toBeUndefined();
    // A shard never seen alive has no death here (a replica started after it died).
    expect(m.diedAt("op-z")).toBeUndefined();
  });

  it("a cleared holder (a clean shutdown) is gone at once", async () => {
    const kube = new MemoryKube();
    await hold(kube, "op-a");
    await hold(kube, "op-b");
    const { m } = members(kube);
    await m.refresh();
    await hold(kube, "op-a", { holder: "" });
    await m.refresh();
    expect(m.shards).toEqual(["op-b"]);
  });

  it("is not a member: a Lease another identity holds, or one of another ring", async () => {
    const kube = new MemoryKube();
    await hold(kube, "op-a");
    await hold(kube, "op-b", { holder: "op-a" });
    await hold(kube, "op-c", { ring: "other-release" });
    const { m } = members(kube);
    await m.refresh();
    expect(m.shards).toEqual(["op-a"]);
  });

  it("dead(): the shards whose Leases are there but not alive, stopped or shut down; pruneDead deletes those unchanged for their duration and ten minutes, unless renewed meanwhile", async () => {
    const kube = new MemoryKube();
    for (const id of ["op-a", "op-b", "op-c", "op-d"]) await hold(kube, id);
    await hold(kube, "op-x", { ring: "other-release" });
    const { m, advance } = members(kube);
    await m.refresh();
    expect(m.dead()).toEqual([]);
    // b shuts down cleanly (holder cleared); c and d stop renewing; a goes on.
    await hold(kube, "op-b", { holder: "" });
    const renewA = async (): Promise<void> => { await hold(kube, "op-a"); await m.refresh(); };
    advance(10_000); await renewA();
    advance(10_000); await renewA();
    expect(m.dead().sort()).toEqual(["op-b", "op-c", "op-d"]);
    // Not yet ten minutes past their duration: nothing deleted.
    expect(await m.pruneDead()).toBe(0);
    for (let i = 0; i < 61; i++) { advance(10_000); await renewA(); }
    // d comes back between the list and the deletion: its Lease is a newer version, and stays.
    await hold(kube, "op-d");
    expect(await m.pruneDead()).toBe(2);
    const left = (await kube.listLeases(ns, `${SHARD_RING_LABEL}=${ring}`)).map((l) => l.metadata?.name);
    expect(left.sort()).toEqual([shardLeaseName(ring, "op-a"), shardLeaseName(ring, "op-d")]);
    // Another ring's Lease is never touched.
    expect(await kube.getLease({ namespace: ns, name: shardLeaseName("other-release", "op-x") })).toBeDefined();
    await m.refresh();
    expect(m.shards).toEqual(["op-a", "op-d"]);
    expect(m.dead()).toEqual([]);
  });

  it("dead() names only identities a shard label can carry: the takeover selects by that label", async () => {
    const kube = new MemoryKube();
    const long = `op-${"x".repeat(70)}`;
    await hold(kube, "op-a");
    await hold(kube, long, { holder: "" });
    const { m } = members(kube);
    await m.refresh();
    expect(m.dead()).toEqual([]);
    await hold(kube, "op-a", { holder: "" });
    await m.refresh();
    expect(m.dead()).toEqual(["op-a"]);
  });

  it("a failed list changes nothing", async () => {
    const kube = new MemoryKube();
    await hold(kube, "op-a");
    const { m, changes, advance } = members(kube);
    await m.refresh();
    kube.failNext("listLeases", new KubeApiError(500, "InternalError", "etcd is down"));
    advance(60_000);
    await m.refresh();
    expect(m.shards).toEqual(["op-a"]);
    expect(changes).toHaveLength(1);
  });
});
