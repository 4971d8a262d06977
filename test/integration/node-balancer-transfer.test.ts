// A NodeBalancer's monthly transfer counts up with its traffic (the emulator's NodeBalancers
// carry traffic): it is a metric, read from the list the looks share, never status, so a
// counter moving costs no status write at all (not even the first figures, nor an hourly one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

describe("NodeBalancer transfer counters", () => {
  const cluster = useTestCluster("nb-transfer");
  let env: OperatorEnv;
  // Its first statistics (and transfer) 10 minutes of the emulator's clock after the create.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 1_000 }, emulatorConfig: { statsDelaySeconds: 600 } }); });
  afterAll(async () => { await env.stop(); });
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(nbType, { namespace: cluster.namespace, name });
  const transfer = async (id: number, direction: string): Promise<number | undefined> => {
    const m = await env.registry.getSingleMetric("linode_nodebalancer_transfer_megabytes")?.get();
    return m?.values.find((v) => v.labels.name === "busy" && v.labels.id === String(id) && v.labels.direction === direction)?.value;
  };

  it("is the metric linode_nodebalancer_transfer_megabytes, counting up with every look; status has none and is not written for it", async () => {
    await env.deps.kube.createCustom(nbType, cluster.namespace, {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "busy" },
      spec: { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.210.1:80" }] }] },
    });
    // Settled: Ready, its backend's first health check shown (UP), the `updated` its read can be trusted with recorded.
    const ready = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true && typeof o.status.updated === "string"
      && (o.status.configs as { nodes?: { status?: string }[] }[] | undefined)?.[0]?.nodes?.[0]?.status === "UP";
    const id = Number((await waitFor("settled", async () => { const o = await get("busy"); return ready(o) ? o : undefined; }, 60_000, 100)).status?.id);
    await env.repass("NodeBalancer", key("busy"), 1);
    // No figures yet (the API's are null): none exported.
    expect(await transfer(id, "total")).toBeUndefined();
    const writes = env.statusWrites();
    const logged = env.kubeWriteLog().length;

    // Each look reads the list its account's looks share (up to a drift window old): looks until one has them.
    const looked = (what: string, pred: (v: number) => boolean): Promise<number> => waitFor(what, async () => {
      await env.repass("NodeBalancer", key("busy"), 1);
      const v = await transfer(id, "in");
      return v !== undefined && pred(v) ? v : undefined;
    }, 30_000, 200);
    env.emulator.advance(900); // past the first statistics: traffic counts from there
    const first = await looked("the first figures", (v) => v > 0);
    expect(await transfer(id, "total")).toBeCloseTo(first + (await transfer(id, "out") ?? 0), 3);
    for (let i = 0; i < 5; i++) {
      env.emulator.advance(600);
      await env.repass("NodeBalancer", key("busy"), 1);
    }
    const later = await looked("figures counted up", (v) => v > first);
    expect(later).toBeLessThanOrEqual((await env.linode.nodeBalancers.get(id)).transfer.in ?? 0);
    expect(env.statusWrites(), env.kubeWriteLog().slice(logged).join("\n")).toBe(writes);
    expect((await get("busy")).status?.transfer).toBeUndefined();

    // Gone with its resource.
    await env.deps.kube.deleteCustom(nbType, { namespace: cluster.namespace, name: "busy" });
    await waitFor("busy gone", async () => get("busy").then(() => undefined, () => true), 60_000, 100);
    expect(await transfer(id, "total")).toBeUndefined();
  });
});
