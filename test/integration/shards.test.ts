// Replicas sharing the work (--shards): `linode-operator run` processes on a real API server,
// each holding a Lease of its own; the leader labels every object with its namespace's shard.
// A killed shard's objects move to the others once its Lease expires; a joining shard gets its
// share through a drain (the old shard lets go first); a SIGTERM'd shard hands over once its
// in-flight passes have ended (its Leases are released only then).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managedDatabaseType } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { DRAIN_LABEL, SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { tokenId } from "../../src/linode/token-id.ts";

/**
 * Eight namespaces, two of each way they hash onto shard-a/shard-b and onto shard-a/shard-c, so
 * that both shards get some and the joining shard takes some whatever the run's random prefix
 * (eight names taken in order once all landed on one shard).
 */
function pickTenants(prefix: string): string[] {
  const ab = new HashRing(["shard-a", "shard-b"]);
  const ac = new HashRing(["shard-a", "shard-c"]);
  const picked = new Map<string, string[]>();
  for (let i = 0; [...picked.values()].flat().length < 8 && i < 100_000; i++) {
    const ns = `${prefix}-t${String(i)}`;
    const way = `${ab.owner(ns) ?? ""}/${ac.owner(ns) ?? ""}`;
    const same = picked.get(way) ?? [];
    if (same.length < 2) picked.set(way, [...same, ns]);
  }
  return [...picked.values()].flat();
}

/**
 * The describe's tenant namespaces, each with a ManagedDatabase "db" (`prepare` makes what its
 * namespace needs and returns spec fields to add), and the operator processes it starts, killed
 * after it.
 */
function useTenants(cluster: ReturnType<typeof useTestCluster>, tenants: string[], prepare: (kube: KubeClient, namespace: string) => Promise<Record<string, unknown>>) {
  const procs: OperatorProcess[] = [];
  let kube: KubeClient | undefined;
  afterAll(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    for (const ns of tenants) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });
  beforeAll(async () => {
    await installCrds(cluster);
    const k = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "shards-test" });
    kube = k;
    for (const ns of tenants) {
      await cluster.core.createNamespace({ body: { metadata: { name: ns } } });
      const extra = await prepare(k, ns);
      await k.createCustom(managedDatabaseType, ns, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "db" }, spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", ...extra } });
    }
  });
  return { procs, kube: (): KubeClient => { if (kube === undefined) throw new Error("tenants not set up"); return kube; } };
}

describe("shards between operator processes", () => {
  const cluster = useTestCluster("shards");
  const tenants = pickTenants(cluster.namespace);
  const { procs, kube: kubeOf } = useTenants(cluster, tenants, () => Promise.resolve({}));
  let kube: KubeClient;
  beforeAll(() => { kube = kubeOf(); });

  const start = (identity: string): OperatorProcess => {
    const p = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
      WATCH_NAMESPACES: tenants.join(","), SHARDS: "true",
      POD_NAMESPACE: cluster.namespace, POD_NAME: identity, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    procs.push(p);
    return p;
  };
  const metricsOf = async (p: OperatorProcess): Promise<string> => {
    const started = await p.waitForLog((l) => l.msg === "operator started");
    return (await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`)).text();
  };
  const labels = async (): Promise<Map<string, Record<string, string>>> => new Map(await Promise.all(tenants.map(async (ns): Promise<[string, Record<string, string>]> =>
    [ns, (await kube.getCustom<ManagedObject>(managedDatabaseType, { namespace: ns, name: "db" })).metadata.labels ?? {}])));
  /** Every object on the shard `shards`' ring gives its namespace, none draining. */
  const settledOn = (shards: string[]) => async (): Promise<Map<string, Record<string, string>> | undefined> => {
    const ring = new HashRing(shards);
    const now = await labels();
    return tenants.every((ns) => now.get(ns)?.[SHARD_LABEL] === ring.owner(ns) && now.get(ns)?.[DRAIN_LABEL] === undefined) ? now : undefined;
  };

  it("assigns by namespace; a killed shard's objects move within 30 s; a joining shard takes its share through a drain; a SIGTERM'd shard hands over once its passes end", async () => {
    const a = start("shard-a");
    const b = start("shard-b");
    const first = await waitFor("assigned to a and b", settledOn(["shard-a", "shard-b"]), 60_000, 200);
    expect(new Set([...first.values()].map((l) => l[SHARD_LABEL])).size).toBe(2);
    const leases = await kube.listLeases(cluster.namespace, "linode.operator.dev/shard-ring=linode-operator");
    expect(leases.map((l) => l.spec?.holderIdentity).sort()).toEqual(["shard-a", "shard-b"]);
    // Each sees two shards alive (the one that is not leading once its next look at the Leases
    // finds the other's: the sharder may label by a ring it has not seen yet); the leader's
    // sharder counted its assignments.
    for (const p of [a, b]) await waitFor("two shards alive", async () => (/^linode_operator_shards\{[^}]*\} 2$/m.test(await metricsOf(p)) ? true : undefined), 30_000, 200);
    const scraped = await Promise.all([a, b].map(metricsOf));
    const assigned = scraped.map((t) => Number(/^linode_operator_shard_moves_total\{[^}]*action="assign"[^}]*\} (\d+)$/m.exec(t)?.[1] ?? 0)).reduce((x, y) => x + y, 0);
    expect(assigned).toBeGreaterThanOrEqual(tenants.length);
    // The operator's token's paginated class (answers that report no remaining of their own) is
    // divided between the two: 200 a minute × the share 0.5 ÷ 2, on each replica's next list.
    const listBudget = async (p: OperatorProcess): Promise<number | undefined> => {
      const m = /^linode_api_ratelimit_own\{[^}]*group="list"[^}]*\} (\d+)$/m.exec(await metricsOf(p));
      return m?.[1] !== undefined ? Number(m[1]) : undefined;
    };
    for (const p of [a, b]) await waitFor("a list budget of 50", async () => (await listBudget(p)) === 50 ? true : undefined, 60_000, 500);

    // b dies: its Lease expires (15 s), the sharder gives its objects to a directly.
    const killedAt = Date.now();
    b.child.kill("SIGKILL");
    await waitFor("all on a", settledOn(["shard-a"]), 45_000, 200);
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeLessThan(30_000);
    // Alone, a takes the whole share of it again.
    await waitFor("a list budget of 100", async () => (await listBudget(a)) === 100 ? true : undefined, 60_000, 500);

    // c joins: what hashes to it is drained from a, let go by a, then assigned to c.
    // Counted from here: at the start a may have held b's share for a moment (the sharder can
    // label by a ring in which b is not yet alive) and let go of it then.
    const logsBefore = a.logs.length;
    const c = start("shard-c");
    await waitFor("a and c", settledOn(["shard-a", "shard-c"]), 60_000, 200);
    const letGo = a.logs.slice(logsBefore).filter((l) => l.msg === "let go of an object the sharder moves to another shard").length;
    const movedToC = [...(await labels()).values()].filter((l) => l[SHARD_LABEL] === "shard-c").length;
    expect(movedToC).toBeGreaterThan(0);
    expect(letGo).toBe(movedToC);

    // a stops cleanly: its Lease released, its objects on c within seconds.
    const termAt = Date.now();
    a.child.kill("SIGTERM");
    await waitFor("all on c", settledOn(["shard-c"]), 30_000, 200);
    const handover = Date.now() - termAt;
    expect(await a.exited).toBe(0);
    process.stdout.write(`shards: a killed shard's objects moved in ${String(takeover)} ms; ${String(movedToC)} of ${String(tenants.length)} drained to a joining shard; a SIGTERM'd shard's moved in ${String(handover)} ms\n`);
    c.child.kill("SIGTERM");
    expect(await c.exited).toBe(0);
  });
});

// --shard-by account: the key is the account an object's token is in, not its namespace. Two
// tokens each named in two namespaces, and a namespace on the operator's own token: every
// object of one account on one shard, and that shard acts on it (its own view agrees).
describe("shards by account", () => {
  const cluster = useTestCluster("shards-acct");
  const ring = new HashRing(["shard-x", "shard-y"]);
  // Two tokens whose accounts land on different shards.
  const tokA = "token-a-0";
  let tokB = "token-b-0";
  for (let i = 1; ring.owner(tokenId(tokB)) === ring.owner(tokenId(tokA)); i++) tokB = `token-b-${String(i)}`;
  const tenants = ["a0", "a1", "b0", "b1", "op"].map((t) => `${cluster.namespace}-${t}`);
  const tokenOf = (ns: string): string | undefined => (ns.endsWith("-a0") || ns.endsWith("-a1") ? tokA : ns.endsWith("-op") ? undefined : tokB);
  const { procs, kube: kubeOf } = useTenants(cluster, tenants, async (k, ns) => {
    const token = tokenOf(ns);
    if (token === undefined) return {};
    await k.applySecret({ metadata: { namespace: ns, name: "linode", labels: { "linode.operator.dev/credentials": "true" } }, data: { token: Buffer.from(token).toString("base64") } });
    return { credentialsRef: { name: "linode" } };
  });
  let kube: KubeClient;
  beforeAll(() => { kube = kubeOf(); });

  it("places each object by its token's account: one account's namespaces on one shard, the operator's token on one, and the owning shard acts", async () => {
    for (const identity of ["shard-x", "shard-y"]) {
      procs.push(startOperator([], {
        KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
        WATCH_NAMESPACES: tenants.join(","), SHARDS: "true", SHARD_BY: "account",
        POD_NAMESPACE: cluster.namespace, POD_NAME: identity, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
      }));
    }
    const want = (ns: string): string | undefined => { const t = tokenOf(ns); return ring.owner(t === undefined ? "operator" : tokenId(t)); };
    const placed = await waitFor("placed by account", async () => {
      const objs = await Promise.all(tenants.map((ns) => kube.getCustom<ManagedObject>(managedDatabaseType, { namespace: ns, name: "db" })));
      return objs.every((o) => o.metadata.labels?.[SHARD_LABEL] === want(o.metadata.namespace ?? "") && o.metadata.labels?.[DRAIN_LABEL] === undefined) ? objs : undefined;
    }, 60_000, 200);
    expect(new Set(placed.map((o) => o.metadata.labels?.[SHARD_LABEL])).size).toBe(2);
    // The owning shard's own view agrees: it acts (a pass writes its conditions; the API is not there).
    await waitFor("every object acted on", async () => {
      const objs = await Promise.all(tenants.map((ns) => kube.getCustom<ManagedObject>(managedDatabaseType, { namespace: ns, name: "db" })));
      return objs.every((o) => (o.status?.conditions?.length ?? 0) > 0) ? true : undefined;
    }, 60_000, 200);
    for (const p of procs) p.child.kill("SIGTERM");
    for (const p of procs) expect(await p.exited).toBe(0);
  });
});
