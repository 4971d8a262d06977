// A NodeBalancer's monthly transfer counts up with its traffic (the emulator's NodeBalancers
// carry traffic): status shows the figures refreshed at most hourly, so in steady state a
// counter moving alone costs no status write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

describe("NodeBalancer transfer counters", () => {
  const cluster = useTestCluster("nb-transfer");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 1_000 } }); });
  afterAll(async () => { await env.stop(); });
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(nbType, { namespace: cluster.namespace, name });
  type Transfer = { in?: number; out?: number; total?: number; at?: string };

  it("appear in status once, then only hourly: counters moving cost no status write", async () => {
    await env.deps.kube.createCustom(nbType, cluster.namespace, {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "busy" },
      spec: { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.210.1:80" }] }] },
    });
    const id = Number((await waitFor("Ready", async () => { const o = await get("busy"); return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? o : undefined; }, 60_000, 100)).status?.id);
    env.emulator.advance(600); // past the first statistics: traffic counts from there
    const shown = await waitFor("transfer in status", async () => { const t = (await get("busy")).status?.transfer as Transfer | undefined; return t?.at !== undefined ? t : undefined; }, 30_000, 100);
    expect(shown.in).toBeGreaterThan(0);
    expect(shown.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // Settled: status also records the `updated` its read can be trusted with (3 s after it).
    await waitFor("updated recorded", async () => (typeof (await get("busy")).status?.updated === "string" ? true : undefined), 30_000, 100);
    await env.repass("NodeBalancer", key("busy"), 1);
    const writes = env.statusWrites();
    for (let i = 0; i < 5; i++) {
      env.emulator.advance(600);
      await env.repass("NodeBalancer", key("busy"), 1);
    }
    const api = (await env.linode.nodeBalancers.get(id)).transfer;
    expect(api.in ?? 0).toBeGreaterThan(shown.in ?? 0);
    expect(env.statusWrites()).toBe(writes);
    expect((await get("busy")).status?.transfer).toEqual(shown);
  });
});
