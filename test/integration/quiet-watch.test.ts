// Watches with nothing to report stay open. client-node 2.x aborts a watch after 30 s without
// data, and the apiserver sends a bookmark only about once a minute, so an operator with no
// objects of some kind used to tear those watches down and back off every 30 s (found with the
// operator running as a pod). A real `linode-operator run` on the real apiserver, watching
// kinds with no objects at all, keeps every watch for 40 s: no "watch failed", no restart.
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

describe("quiet watches", () => {
  const cluster = useTestCluster("quiet");
  let p: OperatorProcess | undefined;
  afterAll(() => { p?.child.kill("SIGKILL"); });

  it("stay open for 40 s without an event: no reconnect, no informer restart", async () => {
    await installCrds(cluster);
    p = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
      // Only this test's namespace, which holds none of our objects: every watch stays silent.
      WATCH_NAMESPACES: cluster.namespace, LEADER_ELECT: "false",
      POD_NAMESPACE: cluster.namespace, POD_NAME: "quiet", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    const started = await p.waitForLog((l) => l.msg === "operator started");
    await p.waitForLog((l) => l.msg === "cache synced; starting workers");
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 40_000));
    const metrics = await (await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`)).text();
    const restarts = metrics.split("\n").filter((l) => l.startsWith("linode_operator_informer_restarts_total{"));
    expect(p.logs.filter((l) => typeof l.msg === "string" && l.msg.startsWith("watch"))).toEqual([]);
    expect(restarts).toEqual([]);
    expect(p.child.exitCode).toBeNull();
    process.stdout.write(`quiet watches: ${Math.round((Date.now() - t0) / 1000)} s without an event, 0 reconnects\n`);
  }, 90_000);
});
