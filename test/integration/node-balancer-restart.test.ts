// A restarted operator re-observes its NodeBalancers at the API's floor: one configs list each
// (the backends' health), the nodes and firewalls status recorded trusted while the
// NodeBalancer's `updated` is the one recorded with them. One whose `updated` moved while the
// operator was away (a node's weight changed outside) is read in full and put back. Real API
// server, the emulator over HTTP, two operator processes' worth of state (the second starts empty).
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeClient } from "../../src/linode/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const configs = [80, 81].map((port) => ({ port, protocol: "tcp", nodes: [1, 2].map((n) => ({ label: `web-${String(n)}`, address: `192.168.30.${String(n)}:${String(port)}`, weight: 50 })) }));

describe("NodeBalancer restart", () => {
  const cluster = useTestCluster("nb-restart");
  let env: OperatorEnv;
  /** The first operator's env, whose emulator the second reuses (closed last). */
  let first: OperatorEnv | undefined;
  const poll = { pendingMillis: 300, readyMillis: 1_000 };
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll }); });
  afterAll(async () => {
    await env.stop();
    await first?.emulator.close();
  });
  const { create, get, settled } = nodeBalancerHelpers(cluster, () => env, { configs });
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  /** The operator's Linode GETs so far, by route template. */
  const gets = async (): Promise<Map<string, number>> => {
    const metric = await env.registry.getSingleMetric("linode_api_requests_total")?.get();
    const out = new Map<string, number>();
    for (const v of metric?.values ?? []) if (v.labels.method === "GET") out.set(String(v.labels.route), (out.get(String(v.labels.route)) ?? 0) + v.value);
    return out;
  };

  /** Stops the operator and starts a new one (empty caches) on the same emulator. */
  const restart = async (): Promise<void> => {
    await env.stop({ keepEmulator: true });
    first ??= env;
    env = await startOperatorEnv(cluster, { poll, reuseEmulator: first.emulator });
  };
  const names = ["calm-1", "calm-2", "moved"];
  const versions = async (which: string[]): Promise<string[]> => Promise.all(which.map(async (name) => (await get(name)).metadata.resourceVersion ?? ""));

  it("re-reads each NodeBalancer's configs list only, and writes nothing", async () => {
    for (const name of names) await create(name, {});
    // Settled, with `updated` recorded by a read made after its second.
    for (const name of names) await settled(name, (o) => typeof o.status?.updated === "string");
    const before = await versions(names);
    await restart();
    for (const name of names) await env.afterPasses("NodeBalancer", key(name), 2);
    const byRoute = await gets();
    expect(byRoute.get("/nodebalancers/{nodeBalancerId}/configs")).toBeGreaterThanOrEqual(6);
    expect(byRoute.get("/nodebalancers/{nodeBalancerId}/configs/{configId}/nodes") ?? 0).toBe(0);
    expect(byRoute.get("/nodebalancers/{nodeBalancerId}/firewalls") ?? 0).toBe(0);
    expect(await versions(names)).toEqual(before);
  }, 120_000);

  it("one whose `updated` moved while no operator ran (a node's weight changed outside) is read in full and put back; the others are not written", async () => {
    const before = await versions(["calm-1", "calm-2"]);
    const movedId = Number((await get("moved")).status?.id);
    await env.stop({ keepEmulator: true });
    const outside = new LinodeClient({ token: TOKEN, baseUrl: env.emulator.url, registry: new Registry(), rateLimit: false });
    const cfg = (await outside.nodeBalancers.listAllConfigs(movedId)).find((c) => c.port === 81);
    const node = cfg === undefined ? undefined : (await outside.nodeBalancers.listAllNodes(movedId, cfg.id))[0];
    if (cfg === undefined || node === undefined) throw new Error("config 81 or its node missing");
    await outside.nodeBalancers.updateNode(movedId, cfg.id, node.id, { weight: 7 });
    await outside.close();
    env = await startOperatorEnv(cluster, { poll, reuseEmulator: first?.emulator ?? env.emulator });
    await waitFor("weight put back", async () => ((await env.linode.nodeBalancers.getNode(movedId, cfg.id, node.id)).weight === 50 ? true : undefined), 10_000, 100);
    for (const name of ["calm-1", "calm-2"]) await env.afterPasses("NodeBalancer", key(name), 2);
    expect(await versions(["calm-1", "calm-2"])).toEqual(before);
  }, 120_000);
});
