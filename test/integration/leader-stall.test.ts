// Two `linode-operator run` replicas, the leader reaching the API server through a proxy that
// then stalls (the connection hangs: no error, no close). The leader must stop acting on
// Linode before the other replica can take the lease: the emulator's mutation log (each
// replica has its own token) shows every write of the first leader before the first write of
// the second. Work keeps coming from the Linode side (drift made directly in the emulator),
// which a stalled leader could otherwise keep "correcting" from its stale cache.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, describe, expect, inject, it } from "vitest";
import { LinodeClient } from "../../src/linode/index.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { startStallingProxy, type StallingProxy } from "../harness/stalling-proxy.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";

describe("a leader whose API server connection hangs", () => {
  const cluster = useTestCluster("stall");
  const procs: OperatorProcess[] = [];
  let emulator: RunningEmulator | undefined;
  let proxy: StallingProxy | undefined;
  afterAll(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await proxy?.close();
    await emulator?.close();
  });

  it("stops acting before the other replica takes over: no overlap of their Linode writes", async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, tokens: ["repA-token", "repB-token", "test-token"], provisionSeconds: 0.3 });
    const apiPort = Number(new URL(cluster.server).port);
    const cpDir = inject("controlPlane").dir;
    proxy = await startStallingProxy({
      target: cluster.server, ca: await readFile(join(cpDir, "ca.crt"), "utf8"),
      cert: await readFile(join(cpDir, "apiserver.crt"), "utf8"), key: await readFile(join(cpDir, "apiserver.key"), "utf8"),
    });
    const viaProxy = join(cluster.tmp, "via-proxy.kubeconfig");
    await writeFile(viaProxy, (await readFile(cluster.adminKubeconfig, "utf8")).replaceAll(`127.0.0.1:${String(apiPort)}`, `127.0.0.1:${String(proxy.port)}`), { mode: 0o600 });
    const start = (identity: string, kubeconfig: string, token: string): OperatorProcess => {
      const p = startOperator(["--poll-ready-seconds", "1", "--poll-pending-seconds", "0.5"], {
        KUBECONFIG: kubeconfig, LINODE_TOKEN: token, LINODE_API_URL: emulator?.url ?? "", CLUSTER_ID: "stall-test",
        POD_NAMESPACE: cluster.namespace, POD_NAME: identity, WATCH_NAMESPACES: cluster.namespace,
        HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", LOG_LEVEL: "info",
      });
      procs.push(p);
      return p;
    };
    const holder = async (): Promise<string | undefined> => {
      const lease = await cluster.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: cluster.namespace, name: "linode-operator" }).catch(() => undefined);
      return lease?.spec?.holderIdentity ?? undefined;
    };

    const a = start("replica-a", viaProxy, "repA-token");
    await waitFor("replica-a leads", async () => ((await holder()) === "replica-a" ? true : undefined), 30_000, 200);
    const b = start("replica-b", cluster.adminKubeconfig, "repB-token");
    await b.waitForLog((l) => l.msg === "operator started");

    const kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "test" });
    const names = ["d0", "d1", "d2", "d3", "d4", "d5"];
    for (const name of names) {
      await kube.createCustom(mdb, cluster.namespace, {
        apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name },
        spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", label: `stall-${name}` },
      });
    }
    const ids = await waitFor("all Ready", async () => {
      const list = await kube.list<ManagedObject>(mdb, { namespace: cluster.namespace });
      const ready = list.items.filter((o) => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      return ready.length === names.length ? ready.map((o) => Number(o.status?.id)) : undefined;
    }, 60_000, 200);

    // Drift made in the cloud, round robin: whoever leads puts the labels back. The next drift
    // once a replica has written since the last one, so there is always drift to act on.
    const linode = new LinodeClient({ token: "test-token", baseUrl: emulator.url, rateLimit: false, retry: { maxAttempts: 1 } });
    const writesBy = (prefix: string): number[] => emulator?.mutations().filter((m) => m.token === `${prefix}…`).map((m) => m.receivedAt) ?? [];
    const replicaWrites = (): number => writesBy("repA").length + writesBy("repB").length;
    let drifting = true;
    let n = 0;
    const drift = (async () => {
      while (drifting) {
        const id = ids[n++ % ids.length] ?? 0;
        const written = replicaWrites();
        await linode.databases.mysql.update(id, { label: `drift-${String(n)}` }).catch(() => undefined);
        await waitFor("a replica's write after the drift", () => (!drifting || replicaWrites() > written ? true : undefined), 90_000, 50);
      }
    })();
    await waitFor("replica-a correcting drift", () => (writesBy("repA").length >= 3 ? true : undefined), 30_000, 100);

    const stalledAt = Date.now();
    proxy.stall();
    await waitFor("replica-b leads and corrects drift", async () => ((await holder()) === "replica-b" && writesBy("repB").length >= 3 ? true : undefined), 60_000, 200);
    drifting = false;
    await drift;
    await linode.close();

    const exitCode = await Promise.race([a.exited, new Promise<string>((r) => setTimeout(() => { r("still running"); }, 5_000))]);
    const aWrites = writesBy("repA");
    const bWrites = writesBy("repB");
    const lastA = Math.max(...aWrites);
    const firstB = Math.min(...bWrites);
    const lost = a.logs.find((l) => typeof l.msg === "string" && l.msg.startsWith("lost the leader lease"));
    const lostAt = lost !== undefined ? Date.parse(String(lost.time)) : Number.NaN;
    const led = b.logs.find((l) => l.msg === "became leader");
    const ledAt = led !== undefined ? Date.parse(String(led.time)) : Number.NaN;
    if (process.env.STALL_DEBUG !== undefined) process.stdout.write(`${JSON.stringify(a.logs.filter((l) => ["warn", "error", "fatal"].includes(String(l.level)) || String(l.msg).includes("leader")).slice(-10))}\n`);
    process.stdout.write(`stalled leader: last Linode write ${String(lastA - stalledAt)} ms after the stall, stopped leading ${String(lostAt - stalledAt)} ms after it (exit ${String(exitCode)}); the other replica led ${String(ledAt - stalledAt)} ms after it and wrote first ${String(firstB - stalledAt)} ms after it; ${String(aWrites.length)} + ${String(bWrites.length)} writes\n`);
    expect(lastA).toBeLessThan(firstB);
    expect(lost).toBeDefined();
    // Never two leaders: the stalled one gave up before the other one took over.
    expect(lostAt).toBeLessThan(ledAt);
    expect(lostAt - stalledAt).toBeLessThan(12_500); // the renew deadline (10 s) after its last renew (≤ 2 s before the stall)
    expect(exitCode).toBe(1);
  });
});
