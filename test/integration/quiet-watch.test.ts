// Watches with nothing to report stay open. client-node 2.x aborts a watch after 30 s without
// data, and the apiserver sends a bookmark only about once a minute, so an operator with no
// objects of some kind used to tear those watches down and back off every 30 s (found with the
// operator running as a pod). The operator as `run` assembles it (assembleOperator: every
// kind's controller over the shared caches) on the real apiserver, watching kinds with no
// objects at all, then 40 s of quiet on an injected clock: the timers the watches set run on
// vitest's fake clock (advancing with real time as well), so the 40 s pass at once, every
// inactivity timer and watchdog due in them fires, and the real apiserver sees a watch that was
// opened a moment ago. Then one object of each kind, each seen by its controller: the barrier
// after which an aborted watch would have been reported (an informer counts a restart before it
// lists again). No "watch" log line, no informer restart.
import { Writable } from "node:stream";
import { afterAll, describe, expect, it, vi } from "vitest";
import { assembleOperator, type AssembledOperator } from "../../src/cli/assemble-operator.ts";
import { loadOperatorConfig } from "../../src/config/operator-config.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { databaseConnectionPoolType as poolType } from "../../src/resources/database-connection-pool/index.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { mysql } from "../harness/database-helpers.ts";
import { waitFor } from "../harness/operator-runtime.ts";

/** One object of each kind, admitted by its CRD; what the operator makes of them does not matter here. */
const probes: [ResourceType, Record<string, unknown>][] = [
  [mdbType, mysql],
  [snapType, { databaseRef: { name: "probe" } }],
  [nbType, { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.210.1:80" }] }] }],
  [poolType, { databaseRef: { name: "probe" }, database: "defaultdb", mode: "transaction", size: 10 }],
];

describe("quiet watches", () => {
  const cluster = useTestCluster("quiet");
  let operator: AssembledOperator | undefined;
  // Stopped on the clock it started on (its timers are the fake clock's), then the real one back.
  afterAll(async () => { await operator?.stop(); vi.useRealTimers(); });

  it("stay open through 40 s without an event: no reconnect, no informer restart", async () => {
    await installCrds(cluster);
    // Before anything sets a timer: every watch's inactivity timer, the watchdogs and Date.now
    // run on the clock the test moves.
    vi.useFakeTimers({ shouldAdvanceTime: true, toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { for (const l of chunk.toString("utf8").split("\n")) if (l !== "") lines.push(JSON.parse(l) as Record<string, unknown>); done(); } });
    const log = createLogger({ level: "info" }, sink);
    const config = loadOperatorConfig([], {
      LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
      // Only this test's namespace, which holds none of our objects: every watch stays silent.
      WATCH_NAMESPACES: cluster.namespace, LEADER_ELECT: "false",
      POD_NAMESPACE: cluster.namespace, POD_NAME: "quiet", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    }, kindDefinitions.flatMap((d) => Object.values(d.settings ?? {})));
    const kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "linode-operator" });
    operator = await assembleOperator({ config, kube, log, onLostLeadership: () => { throw new Error("no leader election here"); }, defaultMetrics: false });
    await operator.manager.start();
    await waitFor("every controller's caches synced", () => (lines.filter((l) => l.msg === "cache synced; starting workers").length === probes.length ? true : undefined), 60_000, 50);

    const t0 = Date.now();
    await vi.advanceTimersByTimeAsync(40_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(40_000);

    for (const [type, spec] of probes) await kube.createCustom(type, cluster.namespace, { apiVersion: `${type.group}/${type.version}`, kind: type.kind, metadata: { name: "probe" }, spec });
    const metrics = operator.metrics.registry;
    const objects = async (kind: string): Promise<number> => ((await metrics.getSingleMetric("linode_operator_resources")?.get())?.values ?? [])
      .filter((v) => v.labels.kind === kind).reduce((n, v) => n + v.value, 0);
    for (const [type] of probes) await waitFor(`the ${type.kind} probe in its controller's cache`, async () => ((await objects(type.kind)) === 1 ? true : undefined), 30_000, 50);

    const restarts = (await metrics.getSingleMetric("linode_operator_informer_restarts_total")?.get())?.values ?? [];
    expect(lines.filter((l) => typeof l.msg === "string" && l.msg.startsWith("watch"))).toEqual([]);
    expect(restarts.filter((v) => v.value > 0)).toEqual([]);
  }, 90_000);
});
