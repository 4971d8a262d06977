// NodeBalancer spec.firewallId on a real API server and the emulator over HTTP. The firewall is
// assigned in the create itself, then changed in place through the API's firewall devices
// (beyond the spec's NodeBalancer document): a change is one removal and one assignment, a
// removal one removal, each sent once (the emulator's mutation log, the operator's token only).
// Someone else's hand (another token) removes the firewall (it is assigned again within the
// drift window, once: the firewalls of a NodeBalancer whose spec names one are read every look), deletes it (Synced=False FirewallNotFound, one Warning Event, nothing
// sent, polled at the drift cadence only), or assigns one of its own (never removed; while it
// keeps the spec's out, Synced=False FirewallConflict).
import { EventsV1Api } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeClient } from "../../src/linode/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { waitFor } from "../harness/operator-runtime.ts";

// Its first four characters differ from the operator token's: the mutation log tells them apart.
const OUTSIDE = "outside-hand-token";
const DEVICES = "POST /networking/firewalls/{firewallId}/devices";
const DEVICE = "DELETE /networking/firewalls/{firewallId}/devices/{deviceId}";
type FwStatus = { id?: number; firewalls?: { id: number }[]; managedFirewallIds?: number[] };

const config = { port: 80, nodes: [{ label: "web-1", address: "192.168.10.5:80" }] };

describe("NodeBalancer firewall", () => {
  const cluster = useTestCluster("nb-firewall");
  let env: OperatorEnv;
  /** Someone else acting on the same account (its calls are not the operator's). */
  let outside: LinodeClient;
  // Ready polls 1 s apart (the drift window).
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 1_000 }, emulatorConfig: { tokens: [{ token: OUTSIDE, scopes: "*" }] } });
    outside = new LinodeClient({ token: OUTSIDE, baseUrl: env.emulator.url, registry: new Registry(), rateLimit: false });
  });
  afterAll(async () => {
    await outside.close();
    await env.stop();
  });

  const ns = (): string => cluster.namespace;
  const key = (name: string): string => `${ns()}/${name}`;
  const { create, get, patch, condOf, settled, reason } = nodeBalancerHelpers(cluster, () => env, { configs: [config] });
  const status = (o: ManagedObject): FwStatus => (o.status ?? {}) as FwStatus;
  const firewallIds = (o: ManagedObject): number[] => (status(o).firewalls ?? []).map((f) => f.id);
  /** The operator's firewall-device calls since `since`, as "POST 123" / "DELETE 123" (the firewall's id). */
  const operatorCalls = (since: number): string[] => env.emulator.mutations()
    .filter((m) => m.receivedAt >= since && m.token === `${TOKEN.slice(0, 4)}…` && m.path.startsWith("/networking/firewalls/"))
    .map((m) => `${m.method} ${m.path.split("/")[3] ?? ""}`);
  const cloudFirewalls = async (id: number): Promise<number[]> => (await outside.nodeBalancers.listAllFirewalls(id)).map((f) => f.id);
  const deviceOf = async (firewallId: number, nbId: number): Promise<number> => {
    const d = (await outside.firewalls.listAllDevices(firewallId)).find((x) => x.entity.id === nbId);
    if (d === undefined) throw new Error(`no device of firewall ${String(firewallId)} for ${String(nbId)}`);
    return d.id;
  };
  const warnings = async (name: string, why: string): Promise<number> => {
    const list = await env.deps.kube.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns() });
    return list.items.filter((e) => e.regarding?.name === name && e.type === "Warning" && e.reason === why).length;
  };
  const deleteFirewall = async (firewallId: number): Promise<void> => {
    const res = await fetch(`${env.emulator.url}/networking/firewalls/${String(firewallId)}`, { method: "DELETE", headers: { Authorization: `Bearer ${OUTSIDE}` } });
    expect(res.status).toBe(200);
  };

  it("assigns the spec's firewall in the create; a change is one removal and one assignment, a removal one removal, an addition one assignment", async () => {
    const t0 = Date.now();
    await create("shop", { firewallId: 810_001 });
    await settled("shop", (o) => firewallIds(o).length === 1);
    const id = Number(status(await get("shop")).id);
    expect(await cloudFirewalls(id)).toEqual([810_001]);
    expect(status(await get("shop")).managedFirewallIds).toEqual([810_001]);
    // In the create itself: no device call.
    expect(operatorCalls(t0)).toEqual([]);
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t0 && m.route === "POST /nodebalancers")).toHaveLength(1);

    const t1 = Date.now();
    await patch("shop", { firewallId: 810_002 });
    let o = await settled("shop", (x) => firewallIds(x).join() === "810002");
    expect(status(o).managedFirewallIds).toEqual([810_002]);
    expect(await cloudFirewalls(id)).toEqual([810_002]);
    await env.repass("NodeBalancer", key("shop"), 2);
    // The old one removed first (a NodeBalancer takes one enabled firewall), each call once.
    expect(operatorCalls(t1)).toEqual(["DELETE 810001", "POST 810002"]);
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t1 && (m.route === DEVICES || m.route === DEVICE)).map((m) => m.route)).toEqual([DEVICE, DEVICES]);

    const t2 = Date.now();
    await patch("shop", { firewallId: null });
    o = await settled("shop", (x) => firewallIds(x).length === 0);
    expect(status(o).managedFirewallIds).toBeUndefined();
    expect(await cloudFirewalls(id)).toEqual([]);
    await env.repass("NodeBalancer", key("shop"), 2);
    expect(operatorCalls(t2)).toEqual(["DELETE 810002"]);

    const t3 = Date.now();
    await patch("shop", { firewallId: 810_003 });
    await settled("shop", (x) => firewallIds(x).join() === "810003");
    await env.repass("NodeBalancer", key("shop"), 2);
    expect(operatorCalls(t3)).toEqual(["POST 810003"]);
    expect(await cloudFirewalls(id)).toEqual([810_003]);
  }, 120_000);

  it("a firewall removed outside is assigned again within the drift window, once", async () => {
    await create("guarded", { firewallId: 820_001 });
    const id = Number(status(await settled("guarded", (o) => firewallIds(o).length === 1)).id);
    const t0 = Date.now();
    await outside.firewalls.deleteDevice(820_001, await deviceOf(820_001, id));
    expect(await cloudFirewalls(id)).toEqual([]);
    // Noticed at the next ready poll, put back.
    await waitFor("firewall assigned again", async () => ((await cloudFirewalls(id)).join() === "820001" ? true : undefined), 5_000, 100);
    await settled("guarded", (o) => firewallIds(o).join() === "820001");
    await env.repass("NodeBalancer", key("guarded"), 3);
    expect(operatorCalls(t0)).toEqual(["POST 820001"]);
  }, 120_000);

  it("a firewall deleted outside is Synced=False FirewallNotFound with one Warning Event, sends nothing and does not loop; naming another fixes it", async () => {
    await create("orphan", { firewallId: 830_001 });
    const id = Number(status(await settled("orphan", (o) => firewallIds(o).length === 1)).id);
    const t0 = Date.now();
    await deleteFirewall(830_001);
    const c = await reason("orphan", "Synced", "FirewallNotFound");
    expect(c.status).toBe("False");
    expect(c.message).toContain("830001");
    expect(c.message).toContain("spec.firewallId");
    let o = await get("orphan");
    // Still serving: Ready is about the NodeBalancer, and the firewall list shows the truth.
    expect(condOf(o, "Ready")?.status).toBe("True");
    expect(firewallIds(o)).toEqual([]);
    await waitFor("Warning Event", async () => ((await warnings("orphan", "FirewallNotFound")) > 0 ? true : undefined), 10_000, 100);
    // Looked at again and again: nothing sent, the same reason, no second Event, the drift cadence.
    const passes = env.passes("NodeBalancer", key("orphan"));
    await env.repass("NodeBalancer", key("orphan"), 3);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(env.passes("NodeBalancer", key("orphan")) - passes).toBeLessThanOrEqual(3 + 5);
    expect(operatorCalls(t0)).toEqual([]);
    expect(condOf(await get("orphan"), "Synced")?.reason).toBe("FirewallNotFound");
    expect(await warnings("orphan", "FirewallNotFound")).toBe(1);

    const t1 = Date.now();
    await patch("orphan", { firewallId: 830_002 });
    o = await settled("orphan", (x) => firewallIds(x).join() === "830002");
    expect(status(o).managedFirewallIds).toEqual([830_002]);
    expect(await cloudFirewalls(id)).toEqual([830_002]);
    expect(operatorCalls(t1)).toEqual(["POST 830002"]);
  }, 120_000);

  it("a firewall assigned outside and never named is left alone; it keeps the spec's out (FirewallConflict) until it is gone", async () => {
    await create("shared", {});
    const id = Number(status(await settled("shared")).id);
    const t0 = Date.now();
    await outside.firewalls.createDevice(840_001, { id, type: "nodebalancer" });
    // Never removed. (Not shown yet either: a device change need not move the NodeBalancer's
    // `updated`, and firewalls are read every look only while the spec names one; the
    // --nodebalancer-reread-seconds safety net would show it.)
    await env.repass("NodeBalancer", key("shared"), 2);
    expect(status(await get("shared")).managedFirewallIds).toBeUndefined();
    expect(operatorCalls(t0)).toEqual([]);

    await patch("shared", { firewallId: 840_002 });
    const c = await reason("shared", "Synced", "FirewallConflict");
    expect(c.message).toContain("840001");
    expect(firewallIds(await get("shared"))).toEqual([840_001]);
    await waitFor("Warning Event", async () => ((await warnings("shared", "FirewallConflict")) > 0 ? true : undefined), 10_000, 100);
    await env.repass("NodeBalancer", key("shared"), 3);
    expect(operatorCalls(t0)).toEqual([]);
    expect(await cloudFirewalls(id)).toEqual([840_001]);

    // Its owner removes it: the spec's is assigned (noticed at the next look).
    await outside.firewalls.deleteDevice(840_001, await deviceOf(840_001, id));
    await settled("shared", (o) => firewallIds(o).join() === "840002");
    expect(operatorCalls(t0)).toEqual(["POST 840002"]);
  }, 120_000);
});
