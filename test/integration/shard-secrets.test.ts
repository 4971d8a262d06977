// The connection Secrets under shards: each shard labels the Secrets it publishes to itself and
// caches its own objects' alone; when a shard dies, the sharder labels its objects' Secrets to
// their new shard before the objects, so the survivor keeps them current and creates nothing
// twice. Two `linode-operator run` processes on a real API server and the emulator.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { eventsType, secretsType, type KubeObject } from "../../src/kube/types.ts";
import { managedDatabaseType } from "../../src/resources/managed-database/index.ts";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../src/runtime/connection-secrets.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { connectionSecretsCached, scrape, sum } from "../bench/metrics.ts";

describe("connection Secrets split by shard", () => {
  const cluster = useTestCluster("shard-secrets");
  // Three namespaces on each of the two shards.
  const ring = new HashRing(["shard-a", "shard-b"]);
  const tenants: string[] = [];
  for (let i = 0, a = 0, b = 0; a + b < 6; i++) {
    const ns = `${cluster.namespace}-t${String(i)}`;
    if (ring.owner(ns) === "shard-a" && a < 3) { tenants.push(ns); a++; }
    else if (ring.owner(ns) === "shard-b" && b < 3) { tenants.push(ns); b++; }
  }
  const procs: OperatorProcess[] = [];
  let emulator: RunningEmulator;
  let kube: KubeClient;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, tokens: ["shard-secrets-token"], provisionSeconds: 1 });
    await installCrds(cluster);
    kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "shard-secrets-test" });
    for (const ns of tenants) {
      await cluster.core.createNamespace({ body: { metadata: { name: ns } } });
      await kube.createCustom(managedDatabaseType, ns, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "db" }, spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" } });
    }
  });
  afterAll(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await emulator.close();
    for (const ns of tenants) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  const start = (identity: string): OperatorProcess => {
    const p = startOperator(["--poll-pending-seconds", "0.5"], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "shard-secrets-token", LINODE_API_URL: emulator.url,
      WATCH_NAMESPACES: tenants.join(","), SHARDS: "true", CLUSTER_ID: "shard-secrets",
      POD_NAMESPACE: cluster.namespace, POD_NAME: identity, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    procs.push(p);
    return p;
  };
  const objects = (): Promise<ManagedObject[]> => Promise.all(tenants.map((ns) => kube.getCustom<ManagedObject>(managedDatabaseType, { namespace: ns, name: "db" })));
  const ready = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  /** Each connection Secret's shard label, by its namespace. */
  const secretShards = async (): Promise<Map<string, string | undefined>> => {
    const out = new Map<string, string | undefined>();
    for (const ns of tenants) {
      const page = await kube.list<KubeObject>(secretsType, { namespace: ns, labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`, metadataOnly: true });
      for (const s of page.items) out.set(ns, s.metadata.labels?.[SHARD_LABEL]);
    }
    return out;
  };
  const metricsOf = async (p: OperatorProcess) => {
    const started = await p.waitForLog((l) => l.msg === "operator started");
    return scrape(`http://127.0.0.1:${String(started.metricsPort)}/metrics`);
  };
  /** The connection Secrets a replica's cache holds. */
  const cachedSecrets = async (p: OperatorProcess): Promise<number> => connectionSecretsCached(await metricsOf(p));

  /** Credentials read from Linode, all databases. */
  const credentialReads = (): number => Object.entries(emulator.requestCounts()).filter(([route]) => route.startsWith("GET ") && route.endsWith("/credentials")).reduce((n, [, c]) => n + c, 0);
  /** The operator's "wrote the connection Secret" Events, counting each repeat of a series. */
  const secretWrites = async (): Promise<number> => {
    let n = 0;
    for (const ns of tenants) {
      const events = await kube.list<KubeObject & { reason?: string; series?: { count?: number } }>(eventsType, { namespace: ns });
      for (const e of events.items) if (e.reason === "ConnectionSecretPublished") n += e.series?.count ?? 1;
    }
    return n;
  };

  it("each shard publishes and caches its own; a dead shard's Secrets move with its objects before them, and nothing is created twice", async () => {
    const a = start("shard-a");
    const b = start("shard-b");
    await waitFor("all Ready on their shards", async () => {
      const objs = await objects();
      return objs.every((o) => ready(o) && o.metadata.labels?.[SHARD_LABEL] === ring.owner(o.metadata.namespace ?? "")) ? true : undefined;
    }, 90_000, 250).catch(async (err: unknown) => {
      for (const o of await objects()) process.stdout.write(`not settled: ${o.metadata.namespace ?? ""} ${JSON.stringify(o.metadata.labels)} ${JSON.stringify(o.status?.conditions)}\n`);
      for (const p of [a, b]) for (const l of p.logs.filter((x) => Number(x.level) >= 40 || x.level === "warn" || x.level === "error").slice(0, 10)) process.stdout.write(`warning logged: ${JSON.stringify(l).slice(0, 400)}\n`);
      throw err;
    });
    await waitFor("every Secret published", async () => ((await secretShards()).size === tenants.length ? true : undefined), 30_000, 250);
    // Each Secret labelled to its database's shard, so cached by it alone: three each.
    for (const [ns, shard] of await secretShards()) expect(shard).toBe(ring.owner(ns));
    expect(await cachedSecrets(a)).toBe(3);
    expect(await cachedSecrets(b)).toBe(3);

    const creates = (): number => emulator.mutations().filter((m) => m.method === "POST" && m.path === "/databases/mysql/instances").length;
    expect(creates()).toBe(tenants.length);
    const writesBefore = emulator.mutations().length;
    const credentialReadsBefore = credentialReads();
    const secretWritesBefore = await secretWrites();
    // b dies: once its Lease expires, its objects and their Secrets are a's.
    b.child.kill("SIGKILL");
    await b.exited;
    await waitFor("all on a", async () => ((await objects()).every((o) => o.metadata.labels?.[SHARD_LABEL] === "shard-a") ? true : undefined), 45_000, 250);
    await waitFor("every Secret labelled to a", async () => ([...(await secretShards()).values()].every((s) => s === "shard-a") ? true : undefined), 15_000, 250);
    await waitFor("a caches all six", async () => ((await cachedSecrets(a)) === tenants.length ? true : undefined), 15_000, 250);
    // a works on all six now, and nothing was made or changed again in Linode.
    await waitFor("a works on all six", async () => (sum(await metricsOf(a), "linode_operator_resources", (l) => l.get("kind") === "ManagedDatabase") === tenants.length ? true : undefined), 15_000, 250);
    const after = await objects();
    for (const o of after.filter((x) => !ready(x))) {
      process.stdout.write(`not Ready after takeover: ${o.metadata.namespace ?? ""} ${JSON.stringify(o.metadata.labels)} ${JSON.stringify(o.status?.conditions)}\n`);
      for (const l of a.logs.filter((x) => JSON.stringify(x).includes(o.metadata.namespace ?? "")).slice(-15)) process.stdout.write(`a logged: ${JSON.stringify(l).slice(0, 600)}\n`);
    }
    expect(after.every(ready)).toBe(true);
    expect(creates()).toBe(tenants.length);
    expect(emulator.mutations().length).toBe(writesBefore);
    // The Secrets came with their objects: a kept them as they were (no write), and read no
    // credentials from Linode again (what they hold was trusted).
    expect(await secretWrites()).toBe(secretWritesBefore);
    expect(credentialReads()).toBe(credentialReadsBefore);
    a.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);
  });
});
