// NodeBalancer spec.firewallId on a real API server and the emulator over HTTP. The firewall is
// assigned in the create itself, then changed in place (beyond the spec's NodeBalancer
// document): a change is one call that replaces the NodeBalancer's firewalls (never a moment
// without one: a probe reads the emulator's assignments after every request it answers), a
// removal one device removal, an addition one device assignment, each sent once (the
// emulator's mutation log, the operator's token only). Someone else's hand (another token)
// removes the firewall (it is assigned again within the drift window, once: the firewalls of a
// NodeBalancer whose spec names one are read every look), deletes it (Synced=False
// FirewallNotFound, one Warning Event, nothing sent, polled at the drift cadence only), or
// assigns one of its own (never removed, also once the spec has named it and stops; while it
// keeps the spec's out, Synced=False FirewallConflict). Naming a firewall by id follows the rule
// for every account object (namespaces A and C may name ids on the operator's token, B may not):
// refused in B unless with B's own token, refused for one another namespace's NodeBalancer
// holds, and each refusal reads as naming a missing id does.
import { EventsV1Api } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MutationRecord } from "../../src/emulator/server.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { kit } from "../harness/boundary-kit.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { waitFor } from "../harness/operator-runtime.ts";

// Its first four characters differ from the operator token's: the mutation log tells them apart.
const OUTSIDE = "outside-hand-token";
// Team B's own Linode account.
const TEAM_B = "bbbb-firewall-team-b";
const DEVICES = "POST /networking/firewalls/{firewallId}/devices";
const DEVICE = "DELETE /networking/firewalls/{firewallId}/devices/{deviceId}";
const REPLACE = "PUT /nodebalancers/{nodeBalancerId}/firewalls";
type FwStatus = { id?: number; firewalls?: { id: number; label?: string; assignedBy?: string }[]; managedFirewallIds?: number[] };

const config = { port: 80, nodes: [{ label: "web-1", address: "192.168.10.5:80" }] };

describe("NodeBalancer firewall", () => {
  const cluster = useTestCluster("nb-firewall");
  let env: OperatorEnv;
  /** Someone else acting on the same account (its calls are not the operator's). */
  let outside: LinodeClient;
  const k = kit(cluster, () => env);
  const B = (): string => `${cluster.namespace}-b`;
  const C = (): string => `${cluster.namespace}-c`;
  // Ready polls 1 s apart (the drift window).
  beforeAll(async () => {
    for (const n of [B(), C()]) await cluster.core.createNamespace({ body: { metadata: { name: n, labels: { "linode.operator.dev/test": "true" } } } });
    env = await startOperatorEnv(cluster, {
      poll: { pendingMillis: 300, readyMillis: 1_000 },
      emulatorConfig: { tokens: [{ token: OUTSIDE, scopes: "*" }, { token: TEAM_B, account: "team-b" }] },
      extraNamespaces: [B(), C()], adoptNamespaces: [cluster.namespace, C()],
    });
    outside = new LinodeClient({ token: OUTSIDE, baseUrl: env.emulator.url, registry: new Registry(), rateLimit: false });
  });
  afterAll(async () => {
    await outside.close();
    await k.close();
    await env.stop();
    for (const n of [B(), C()]) await cluster.core.deleteNamespace({ name: n }).catch(() => undefined);
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
  /** The operator's calls that change firewall assignments since `since`, by route. */
  const operatorRoutes = (since: number): string[] => env.emulator.mutations()
    .filter((m) => m.receivedAt >= since && m.token === `${TOKEN.slice(0, 4)}…` && (m.route === DEVICES || m.route === DEVICE || m.route === REPLACE))
    .map((m) => m.route);
  const cloudFirewalls = async (id: number): Promise<number[]> => (await outside.nodeBalancers.listAllFirewalls(id)).map((f) => f.id);
  /**
   * The firewalls NodeBalancer `id` has after each request the emulator answers, from now until
   * stop(): its handlers run whole, one at a time, and each is logged as it ends, so these are
   * all the states any request could have seen.
   */
  const probe = (id: number): { states: number[][]; stop: () => void } => {
    const log = env.emulator.mutations() as MutationRecord[];
    const states: number[][] = [];
    const assigned = (): number[] => [...env.emulator.context.state.firewalls.values()]
      .filter((f) => f.deleted !== true && (f.devices ?? []).some((d) => d.entity_id === id)).map((f) => f.id);
    states.push(assigned());
    Object.defineProperty(log, "push", {
      configurable: true,
      value: (...records: MutationRecord[]): number => {
        const n = Array.prototype.push.apply(log, records);
        states.push(assigned());
        return n;
      },
    });
    return { states, stop: () => { Reflect.deleteProperty(log, "push"); } };
  };
  /** A refusal's message with the firewall's id and the namespace taken out: what it says of anything else. */
  const shape = (message: string | undefined, firewallId: number): string => (message ?? "").replaceAll(String(firewallId), "<id>").replace(/namespace \S+ \(/, "namespace <ns> (");
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

  it("assigns the spec's firewall in the create; a change is one call that puts the new one in place of the old (never a moment without one), a removal one removal, an addition one assignment", async () => {
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
    const seen = probe(id);
    await patch("shop", { firewallId: 810_002 });
    let o = await settled("shop", (x) => firewallIds(x).join() === "810002");
    expect(status(o).managedFirewallIds).toEqual([810_002]);
    expect(await cloudFirewalls(id)).toEqual([810_002]);
    await env.repass("NodeBalancer", key("shop"), 2);
    seen.stop();
    // The old firewall until the change, the new one from it: never none (nor both)...
    expect(seen.states.length).toBeGreaterThan(1);
    expect(seen.states.filter((s) => s.length !== 1)).toEqual([]);
    expect([...new Set(seen.states.map((s) => s.join()))]).toEqual(["810001", "810002"]);
    // ...as one replacement, sent once.
    expect(operatorRoutes(t1)).toEqual([REPLACE]);
    expect(operatorCalls(t1)).toEqual([]);
    expect(status(o).firewalls).toEqual([expect.objectContaining({ id: 810_002, assignedBy: "ThisResource" })]);

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
    // Looked at again and again: nothing sent, the same reason, no second Event, and each pass
    // leaves the next one a drift window away (1 s here), read off the queue rather than waited out.
    await env.repass("NodeBalancer", key("orphan"), 3);
    expect(env.controllers.NodeBalancer?.queue.dueIn(key("orphan"))).toBeGreaterThan(500);
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
  it("a firewall already assigned when the spec names it is not this resource's: left assigned when the spec stops naming it, and never swapped away", async () => {
    await create("borrower", {});
    const id = Number(status(await settled("borrower")).id);
    await outside.firewalls.createDevice(850_001, { id, type: "nodebalancer" });
    const t0 = Date.now();
    await patch("borrower", { firewallId: 850_001 });
    const o = await settled("borrower", (x) => firewallIds(x).join() === "850001");
    // Not recorded as its own; status says whose it is.
    expect(status(o).managedFirewallIds).toBeUndefined();
    expect(status(o).firewalls).toEqual([expect.objectContaining({ id: 850_001, assignedBy: "Other" })]);

    await patch("borrower", { firewallId: null });
    await settled("borrower");
    await env.repass("NodeBalancer", key("borrower"), 3);
    expect(await cloudFirewalls(id)).toEqual([850_001]);
    expect(status(await get("borrower")).firewalls).toEqual([expect.objectContaining({ id: 850_001, assignedBy: "Other" })]);

    // Named again, then changed: refused (FirewallConflict), nothing removed, nothing sent.
    await patch("borrower", { firewallId: 850_001 });
    await settled("borrower", (x) => (x.spec as { firewallId?: number }).firewallId === 850_001);
    await patch("borrower", { firewallId: 850_002 });
    const c = await reason("borrower", "Synced", "FirewallConflict");
    expect(c.message).toContain("850001");
    expect(c.message).toContain("did not assign");
    await env.repass("NodeBalancer", key("borrower"), 3);
    expect(await cloudFirewalls(id)).toEqual([850_001]);
    expect(operatorRoutes(t0)).toEqual([]);
  }, 120_000);

  it("naming a firewall by id is refused where the operator's shared token may not name ids, exactly as naming a missing one; the namespace's own token may", async () => {
    const t0 = Date.now();
    // B may not name ids on the shared token: an existing firewall (one its create would have assigned) and a missing one read the same; nothing is created.
    await deleteFirewall(860_009);
    await k.create(nbType, B(), "walled", { region: "us-east", firewallId: 860_001, configs: [config] });
    await k.create(nbType, B(), "walled-missing", { region: "us-east", firewallId: 860_009, configs: [config] });
    const existing = await k.condWith(nbType, B(), "walled", "Synced", "FirewallNotFound");
    const missing = await k.condWith(nbType, B(), "walled-missing", "Synced", "FirewallNotFound");
    expect(shape(existing.message, 860_001)).toBe(shape(missing.message, 860_009));
    // The same as naming a missing id where naming is allowed (A).
    await create("missing-here", { firewallId: 860_009 });
    const here = await reason("missing-here", "Synced", "FirewallNotFound");
    expect(shape(existing.message, 860_001)).toBe(shape(here.message, 860_009));
    await Promise.all([k.repass(nbType, B(), "walled", 2), k.repass(nbType, B(), "walled-missing", 2)]);
    for (const name of ["walled", "walled-missing"]) expect((await k.get(nbType, B(), name)).status?.id).toBeUndefined();
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t0 && m.route === "POST /nodebalancers")).toEqual([]);
    expect(await outside.firewalls.listAllDevices(860_001)).toEqual([]);

    // An existing NodeBalancer of B's: the assignment is refused the same way, nothing sent.
    await k.create(nbType, B(), "open", { region: "us-east", configs: [config] });
    const openId = Number((await k.ready(nbType, B(), "open")).status?.id);
    const t1 = Date.now();
    await k.patch(nbType, B(), "open", { spec: { firewallId: 860_001 } });
    const assign = await k.condWith(nbType, B(), "open", "Synced", "FirewallNotFound");
    expect(shape(assign.message, 860_001)).toBe(shape(missing.message, 860_009));
    await k.repass(nbType, B(), "open", 2);
    expect(operatorRoutes(t1)).toEqual([]);
    expect(await cloudFirewalls(openId)).toEqual([]);
    expect(JSON.stringify((await k.get(nbType, B(), "open")).status)).not.toContain("firewall-860001");

    // Naming it where it may not be named keeps it from no one: A, which may, assigns it.
    await create("after-walled", { firewallId: 860_001 });
    expect(status(await settled("after-walled", (o) => firewallIds(o).join() === "860001")).managedFirewallIds).toEqual([860_001]);

    // With B's own token (its own account), naming its own firewall is B's to do.
    await k.tokenSecret(B(), "team-b", TEAM_B);
    await k.create(nbType, B(), "own", { region: "us-east", firewallId: 861_001, credentialsRef: { name: "team-b" }, configs: [config] });
    const own = await k.ready(nbType, B(), "own");
    expect(status(own).managedFirewallIds).toEqual([861_001]);
    expect((await k.as(TEAM_B).nodeBalancers.listAllFirewalls(Number(status(own).id))).map((f) => f.id)).toEqual([861_001]);
  }, 120_000);

  it("a firewall another namespace's NodeBalancer holds or names is refused, exactly as naming a missing one", async () => {
    await create("holder", { firewallId: 870_001 });
    await settled("holder", (o) => firewallIds(o).join() === "870001");
    await deleteFirewall(870_009);
    const t0 = Date.now();
    // C may name ids on the shared token; 870001 exists, but namespace A's NodeBalancer holds it.
    await k.create(nbType, C(), "taker", { region: "us-east", firewallId: 870_001, configs: [config] });
    await k.create(nbType, C(), "taker-missing", { region: "us-east", firewallId: 870_009, configs: [config] });
    const held = await k.condWith(nbType, C(), "taker", "Synced", "FirewallNotFound");
    const missing = await k.condWith(nbType, C(), "taker-missing", "Synced", "FirewallNotFound");
    expect(shape(held.message, 870_001)).toBe(shape(missing.message, 870_009));
    expect((await k.get(nbType, C(), "taker")).status?.id).toBeUndefined();

    // An existing NodeBalancer of C's: a swap to it is refused, the one it has stays; naming it in a spec (not yet assigned) is enough to hold it.
    await k.create(nbType, C(), "swapper", { region: "us-east", firewallId: 870_002, configs: [config] });
    const swapperId = Number((await k.ready(nbType, C(), "swapper")).status?.id);
    await k.patch(nbType, C(), "swapper", { spec: { firewallId: 870_001 } });
    const swap = await k.condWith(nbType, C(), "swapper", "Synced", "FirewallNotFound");
    expect(shape(swap.message, 870_001)).toBe(shape(missing.message, 870_009));
    await create("namer", { firewallId: 870_003 });
    // The operator has seen it (it acted on it): its cache holds what it names.
    await settled("namer", (o) => firewallIds(o).join() === "870003");
    await k.patch(nbType, C(), "swapper", { spec: { firewallId: 870_003 } });
    await waitFor("refused for 870003", async () => {
      const c = k.cond(await k.get(nbType, C(), "swapper"), "Synced");
      return c?.reason === "FirewallNotFound" && c.message?.includes("870003") === true ? c : undefined;
    }, 60_000, 100);
    await k.repass(nbType, C(), "swapper", 2);
    expect(await cloudFirewalls(swapperId)).toEqual([870_002]);
    expect(operatorRoutes(t0)).toEqual([]);
    expect(JSON.stringify((await k.get(nbType, C(), "swapper")).status)).not.toContain("firewall-870001");
    // The holder is untouched.
    expect(firewallIds(await settled("holder"))).toEqual([870_001]);
  }, 120_000);
});
