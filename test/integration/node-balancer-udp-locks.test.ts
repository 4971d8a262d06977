// NodeBalancer udp configs and resource locks on a real API server and the emulator over HTTP:
// a udp config beside a tcp one on its port is made and read back with udp's own fields; what
// the API would refuse for udp is refused at admission, nothing sent; spec.deletionProtection
// makes a cannot_delete lock of its own and takes away only that one; deleting a locked
// NodeBalancer waits (Locked, naming the lock), sends no DELETE while the lock is there, is
// looked at again with growing waits, and completes once the lock is gone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { NodeBalancerConfigStatus } from "../../src/resources/node-balancer/schema.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const PENDING = 300;
const READY = 2_000;

/** How many looks waits doubling from PENDING up to READY allow in `millis`. */
function backoffLooks(millis: number): number {
  let looks = 0;
  for (let at = 0, wait = PENDING; at + wait <= millis; at += wait, wait = Math.min(READY, wait * 2)) looks++;
  return looks;
}

describe("NodeBalancer udp configs and locks", () => {
  const cluster = useTestCluster("nb-udp-locks");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: PENDING, readyMillis: READY } }); });
  afterAll(async () => { await env.stop(); });
  const { ns, create, get, patch, condOf, settled, reason } = nodeBalancerHelpers(cluster, () => env);
  const key = (name: string): string => `${ns()}/${name}`;
  const idOf = (o: ManagedObject): number => Number(o.status?.id);
  const configsOf = (o: ManagedObject): NodeBalancerConfigStatus[] => (o.status?.configs ?? []) as NodeBalancerConfigStatus[];
  /** Mutations (method and route) of one NodeBalancer, its configs and nodes, since `since`. */
  const mutationsOf = (id: number, since = 0): string[] => env.emulator.mutations()
    .filter((m) => m.receivedAt >= since && new RegExp(`^/nodebalancers/${String(id)}(/|$)`).test(m.path)).map((m) => m.route);
  const lockCalls = (method: string, since = 0): number => env.emulator.mutations().filter((m) => m.receivedAt >= since && m.method === method && m.path.startsWith("/locks")).length;
  const gone = (name: string): Promise<true> => waitFor(`${name} gone`, async () => {
    try {
      await get(name);
      return undefined;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return true;
      throw err;
    }
  }, 60_000, 100);
  const tcp53 = { port: 53, protocol: "tcp", nodes: [{ label: "dns-1", address: "192.168.40.1:53" }] };

  // Premium (udp is premium-only: CL26) outside a VPC takes public IPv6 backends only.
  const v6 = "[2600:3c03::f03c:91ff:fe24:3a2f]:53";

  it("a udp config beside a tcp one on its port: made with its own fields, read back in status, steady; a changed check port is one rebuild of it", async () => {
    await create("dns", {
      clientUdpSessThrottle: 5, type: "premium",
      configs: [{ ...tcp53, nodes: [{ label: "dns-1", address: v6 }] }, { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "session", udpCheckPort: 8053, nodes: [{ label: "dns-1", address: v6 }] }],
    });
    const o = await settled("dns", (x) => configsOf(x).length === 2);
    const id = idOf(o);
    expect((await env.linode.nodeBalancers.get(id)).clientUdpSessThrottle).toBe(5);
    const cloud = await env.linode.nodeBalancers.listAllConfigs(id);
    const udp = cloud.find((c) => c.protocol === "udp");
    expect(udp).toMatchObject({ port: 53, algorithm: "ring_hash", stickiness: "session", checkPassive: false, proxyProtocol: "none", udpCheckPort: 8053, udpSessionTimeout: 16 });
    expect((await env.linode.nodeBalancers.listAllNodes(id, udp?.id ?? 0)).map((n) => n.mode)).toEqual(["none"]);
    expect(configsOf(o).map((c) => [c.port, c.protocol, c.udpCheckPort, c.udpSessionTimeout, c.checkPassive])).toEqual([[53, "tcp", undefined, undefined, true], [53, "udp", 8053, 16, false]]);

    const t0 = Date.now();
    await env.repass("NodeBalancer", key("dns"), 3);
    expect(mutationsOf(id, t0)).toEqual([]);

    const spec = (await get("dns")).spec as { configs: Record<string, unknown>[] };
    await patch("dns", { configs: spec.configs.map((c) => (c.protocol === "udp" ? { ...c, udpCheckPort: 5353 } : c)) });
    await settled("dns", (x) => configsOf(x).find((c) => c.protocol === "udp")?.udpCheckPort === 5353);
    expect(mutationsOf(id, t0)).toEqual(["POST /nodebalancers/{nodeBalancerId}/configs/{configId}/rebuild"]);
  });

  it.each([
    ["algorithm source on udp", { algorithm: "source" }, "ring_hash for udp"],
    ["stickiness table on udp", { stickiness: "table" }, "session and source_ip for udp"],
    ["checkPassive on udp", { checkPassive: true }, "must be false (or unset) for protocol udp"],
    ["proxyProtocol v1 on udp", { proxyProtocol: "v1" }, "udp has no PROXY protocol"],
    ["a node mode on udp", { nodes: [{ label: "dns-1", address: v6, mode: "drain" }] }, "take no mode"],
  ])("%s is refused by the API server, nothing sent", async (_name, over, message) => {
    const t0 = Date.now();
    const err = await create("bad-udp", { type: "premium", configs: [{ port: 53, protocol: "udp", nodes: [{ label: "dns-1", address: v6 }], ...over }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 422 });
    expect((err as { message?: string }).message ?? JSON.stringify(err)).toContain(message);
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t0)).toEqual([]);
  });

  it("a udp config on a new common NodeBalancer is refused by the API server (premium only since 2026-09-30), nothing sent", async () => {
    const t0 = Date.now();
    const err = await create("common-udp", { configs: [{ port: 53, protocol: "udp", nodes: [{ label: "dns-1", address: "192.168.40.2:53" }] }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 422 });
    expect((err as { message?: string }).message ?? JSON.stringify(err)).toContain("udp configs need a premium type");
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t0)).toEqual([]);
  });

  it("deletionProtection makes a cannot_delete lock of its own and removes only that one", async () => {
    const t0 = Date.now();
    await create("guarded", { deletionProtection: true, configs: [tcp53] });
    const o = await settled("guarded", (x) => typeof x.status?.deletionLockId === "number");
    const id = idOf(o);
    const lockId = Number(o.status?.deletionLockId);
    expect(await env.linode.locks.get(lockId)).toMatchObject({ lockType: "cannot_delete", entity: { id, type: "nodebalancer" } });
    expect(o.status?.locks).toEqual(["cannot_delete"]);
    await env.repass("NodeBalancer", key("guarded"), 2);
    expect(lockCalls("POST", t0)).toBe(1);

    await patch("guarded", { deletionProtection: false });
    const open = await settled("guarded", (x) => x.status?.deletionLockId === undefined);
    expect(open.status?.locks).toEqual([]);
    await expect(env.linode.locks.get(lockId)).rejects.toMatchObject({ status: 404 });

    // Someone else's lock stays whatever the field says, and is not counted as this resource's.
    const theirs = await env.linode.locks.create({ entityType: "nodebalancer", entityId: id, lockType: "cannot_delete" });
    await settled("guarded", (x) => JSON.stringify(x.status?.locks) === JSON.stringify(["cannot_delete"]));
    await env.repass("NodeBalancer", key("guarded"), 2);
    await patch("guarded", { deletionProtection: true });
    const shown = await settled("guarded", (x) => (x.spec as { deletionProtection?: boolean }).deletionProtection === true);
    await env.repass("NodeBalancer", key("guarded"), 2);
    expect(shown.status?.deletionLockId).toBeUndefined();
    await patch("guarded", { deletionProtection: false });
    await settled("guarded", (x) => (x.spec as { deletionProtection?: boolean }).deletionProtection === false);
    await env.repass("NodeBalancer", key("guarded"), 2);
    expect(await env.linode.locks.get(theirs.id)).toMatchObject({ id: theirs.id });
    expect(lockCalls("POST", t0)).toBe(2); // ours, then theirs (made by this test)
    expect(lockCalls("DELETE", t0)).toBe(1); // ours only
    await env.linode.locks.delete(theirs.id);
  });

  it("deleting a locked NodeBalancer waits (Locked, naming the lock), sends no DELETE, backs off, and completes once the lock is gone", async () => {
    await create("held", { configs: [tcp53] });
    const id = idOf(await settled("held"));
    const lock = await env.linode.locks.create({ entityType: "nodebalancer", entityId: id, lockType: "cannot_delete_with_subresources" });
    const t0 = Date.now();
    await env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "held" });
    const c = await reason("held", "Synced", "Locked");
    expect(c.status).toBe("False");
    expect(c.message).toContain(`cannot_delete_with_subresources lock (lock id ${String(lock.id)})`);
    expect(c.message).toContain("remove it");
    // Over at least 5 s it is looked at again, but with doubling waits (300, 600, 1200 ms, then
    // the 2 s drift poll): a handful of looks (one or two more from wakes already queued), where
    // a fixed 300 ms retry would make 16 and a hot loop hundreds. None sends a DELETE.
    const p0 = env.passes("NodeBalancer", key("held"));
    const t1 = Date.now();
    await waitFor("5 s of waiting, looked at again", () => Promise.resolve(Date.now() - t1 >= 5_000 && env.passes("NodeBalancer", key("held")) - p0 >= 2 ? true : undefined), 60_000, 100);
    const elapsed = Date.now() - t1;
    expect(env.passes("NodeBalancer", key("held")) - p0).toBeLessThanOrEqual(backoffLooks(elapsed) + 3);
    expect(mutationsOf(id, t0)).toEqual([]);
    expect((await env.linode.nodeBalancers.get(id)).id).toBe(id);

    await env.linode.locks.delete(lock.id);
    await gone("held");
    await expect(env.linode.nodeBalancers.get(id)).rejects.toMatchObject({ status: 404 });
    expect(mutationsOf(id, t0)).toEqual(["DELETE /nodebalancers/{nodeBalancerId}"]);
  });

  it("deleting a resource whose deletionProtection lock is there waits, naming the field; turning it off lets the deletion remove the lock and finish", async () => {
    await create("kept", { deletionProtection: true, configs: [tcp53] });
    const o = await settled("kept", (x) => typeof x.status?.deletionLockId === "number");
    const id = idOf(o);
    const lockId = Number(o.status?.deletionLockId);
    const t0 = Date.now();
    await env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "kept" });
    const c = await reason("kept", "Synced", "Locked");
    expect(c.message).toContain(`lock id ${String(lockId)}`);
    expect(c.message).toContain("set spec.deletionProtection to false");
    expect(condOf(await get("kept"), "Synced")?.status).toBe("False");
    await patch("kept", { deletionProtection: false });
    await gone("kept");
    await expect(env.linode.locks.get(lockId)).rejects.toMatchObject({ status: 404 });
    expect(mutationsOf(id, t0)).toEqual(["DELETE /nodebalancers/{nodeBalancerId}"]);
    expect(lockCalls("DELETE", t0)).toBe(1);
  });
});
