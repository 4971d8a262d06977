// A token's client is released once nothing needs it, on a real API server and the emulator: a
// rotated-away token's client (connections, rate-limit state, list caches) once every object
// recorded the new one; the new one's once its last object is deleted. And every per-object
// map the operator keeps (linode_operator_cache_entries) is back to empty after the deletion.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_ENTRIES_METRIC } from "../../src/metrics/cache-entries.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { tokenId } from "../../src/resources/shared/credentials.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const OLD = "rrrr-rotating-token-1";
const NEW = "ssss-rotating-token-2";

describe("releasing the clients of tokens no longer used", () => {
  const cluster = useTestCluster("acctrel");
  let env: OperatorEnv;
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, {
      poll: { pendingMillis: 300, readyMillis: 2_000 },
      // The operator's 5 minutes, shortened: released a second after the last use.
      unusedAccountReleaseMillis: 1_000,
      emulatorConfig: { tokens: [{ token: OLD, account: "team-r" }, { token: NEW, account: "team-r" }] },
    });
  });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  const tokenSecret = (token: string): Promise<unknown> => env.deps.kube.applySecret({
    metadata: { name: "rotating", namespace: ns(), labels: { "linode.operator.dev/credentials": "true" } },
    type: "Opaque", data: { token: Buffer.from(token).toString("base64") },
  });
  const entries = async (): Promise<Map<string, number>> => {
    const values = (await env.deps.metrics.registry.getSingleMetric(CACHE_ENTRIES_METRIC)?.get())?.values ?? [];
    return new Map(values.map((v) => [String(v.labels.map), v.value]));
  };

  it("a rotated-away token's client is closed once the object records the new token; the new one's once the object is gone; the per-object maps are empty again", async () => {
    await tokenSecret(OLD);
    await env.deps.kube.createCustom(mdb, ns(), {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "rotated" },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", credentialsRef: { name: "rotating" } },
    });
    await waitFor("Ready", async () => (await get("rotated")).status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"), 60_000, 100);
    expect(env.accounts.holds(tokenId(OLD))).toBe(true);
    expect((await entries()).get("ManagedDatabase.listCache")).toBe(1);

    await tokenSecret(NEW);
    await waitFor("the record to follow the rotation", async () => ((await get("rotated")).status?.account as { id?: string } | undefined)?.id === tokenId(NEW), 30_000, 100);
    await waitFor("the old token's client released", () => !env.accounts.holds(tokenId(OLD)), 15_000, 100);
    // The object records the new one: kept past the grace, however long it is not used. A sweep
    // as if well past the grace (the clock moved, not the test; still within the idle hour):
    await env.accounts.releaseIdle(Date.now() + 5_000);
    expect(env.accounts.holds(tokenId(NEW))).toBe(true);
    expect(env.accounts.held).toBe(1);
    expect((await entries()).get("linode.accounts")).toBe(1);
    // The old account's list cache went with it: the new one's alone is counted.
    expect((await entries()).get("ManagedDatabase.listCache")).toBeLessThanOrEqual(1);

    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "rotated" });
    await waitFor("the resource gone", () => get("rotated").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
    await waitFor("the new token's client released", () => env.accounts.held === 0, 15_000, 100);
    // Drained, not at once: a queue keeps a flow's turn a little after its last pass (two pending polls).
    const perObject = async (): Promise<[string, number][]> => [...await entries()].filter(([map, n]) => n !== 0 && !map.startsWith("informer.secrets"));
    await waitFor("the per-object maps empty", async () => ((await perObject()).length === 0 ? true : undefined), 10_000, 100).catch(() => undefined);
    expect(await perObject()).toEqual([]);
  });
});
