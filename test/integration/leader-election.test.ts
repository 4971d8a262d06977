// Several `linode-operator run` processes elect exactly one leader on a Lease; a killed
// leader is replaced once its lease expires, a SIGTERM'd one hands over at once.
import { CoordinationV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { KubeClient, microTime } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { isConflict } from "../../src/kube/errors.ts";
import { serviceAccountOf } from "../../src/kube/service-account.ts";

describe("leader election between operator processes", () => {
  const cluster = useTestCluster("leader");
  const procs: OperatorProcess[] = [];
  afterAll(() => { for (const p of procs) p.child.kill("SIGKILL"); });

  const start = (identity: string): OperatorProcess => {
    const p = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
      // Only this test's namespace: a leader watching the whole shared cluster would reconcile
      // (and write the status of) other test files' objects against an API that is not there.
      WATCH_NAMESPACES: cluster.namespace,
      POD_NAMESPACE: cluster.namespace, POD_NAME: identity, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    procs.push(p);
    return p;
  };
  const holder = async (): Promise<string | undefined> => {
    const lease = await cluster.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: cluster.namespace, name: "linode-operator" }).catch(() => undefined);
    return lease?.spec?.holderIdentity ?? undefined;
  };
  const leaderMetric = async (p: OperatorProcess): Promise<number> => {
    const started = await p.waitForLog((l) => l.msg === "operator started");
    const res = await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`);
    const text = await res.text();
    const m = /^linode_operator_leader(?:\{[^}]*\})? (\d+)/m.exec(text);
    return Number(m?.[1] ?? -1);
  };

  it("elects one leader, fails over within 20 s after a kill and within 5 s after SIGTERM; a standby's caches are warm before it leads", async () => {
    // An object the replicas list (the leader reconciles it against an API that is not there: harmless here).
    await installCrds(cluster);
    const object = { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "listed", namespace: cluster.namespace }, spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" } };
    const applied = await cluster.kubectl(["apply", "-f", "-"], { input: JSON.stringify(object) });
    expect(applied.code, applied.stderr).toBe(0);
    const a = start("replica-a");
    const b = start("replica-b");
    const first = await waitFor("a leader", holder, 30_000);
    expect(["replica-a", "replica-b"]).toContain(first);
    const [leader, standby] = first === "replica-a" ? [a, b] : [b, a];
    await waitFor("metrics agree", async () => ((await leaderMetric(leader)) === 1 ? true : undefined), 10_000);
    expect(await leaderMetric(standby)).toBe(0);
    // The standby watches: every object listed before it leads, nothing reconciled by it.
    const warm = await standby.waitForLog((l) => l.msg === "standby caches warm");
    expect(warm.objects).toMatchObject({ ManagedDatabase: 1 });
    expect(standby.logs.some((l) => l.msg === "cache synced; starting workers")).toBe(false);

    const killedAt = Date.now();
    leader.child.kill("SIGKILL");
    const second = await waitFor("failover after kill", async () => { const h = await holder(); return h !== undefined && h !== first ? h : undefined; }, 30_000, 200);
    const killFailoverMillis = Date.now() - killedAt;
    expect(killFailoverMillis).toBeLessThan(20_000);
    // Leading, it starts its workers on the caches it kept warm: no list of its own first.
    const workers = await standby.waitForLog((l) => l.msg === "cache synced; starting workers" && l.kind === "ManagedDatabase");
    expect(workers.objects).toBe(1);

    const c = start("replica-c");
    await c.waitForLog((l) => l.msg === "operator started");
    const termAt = Date.now();
    standby.child.kill("SIGTERM");
    const third = await waitFor("failover after SIGTERM", async () => { const h = await holder(); return h === "replica-c" ? h : undefined; }, 10_000, 100);
    const termFailoverMillis = Date.now() - termAt;
    expect(third).toBe("replica-c");
    expect(termFailoverMillis).toBeLessThan(5_000);
    expect(await standby.exited).toBe(0);
    expect(standby.logs.some((l) => l.msg === "released the leader lease")).toBe(true);
    process.stdout.write(`leader failover: ${killFailoverMillis} ms after SIGKILL, ${termFailoverMillis} ms after SIGTERM (second leader ${second})\n`);
  });

  it("running as a ServiceAccount, the Lease is owned by it: deleting the ServiceAccount (an uninstall) removes the Lease", async () => {
    const saKubeconfig = await cluster.serviceAccountKubeconfig("operator");
    const saKc = new KubeConfig();
    saKc.loadFromFile(saKubeconfig);
    const sa = await cluster.core.readNamespacedServiceAccount({ namespace: cluster.namespace, name: "operator" });
    // The identity comes from the real token's claims.
    expect(serviceAccountOf(saKc)).toEqual({ namespace: cluster.namespace, name: "operator", uid: sa.metadata?.uid });
    const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
    const binding = `${cluster.namespace}-operator`;
    await rbac.createClusterRoleBinding({ body: {
      metadata: { name: binding },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "operator", namespace: cluster.namespace }],
    } });
    const coordination = cluster.kc.makeApiClient(CoordinationV1Api);
    const lease = (): Promise<{ owners: string[] } | undefined> => coordination.readNamespacedLease({ namespace: cluster.namespace, name: "owned-lease" })
      .then((l) => ({ owners: (l.metadata?.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}/${o.uid}`) }), () => undefined);
    try {
      const p = startOperator([], {
        KUBECONFIG: saKubeconfig, LINODE_TOKEN: "unused-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
        POD_NAMESPACE: cluster.namespace, POD_NAME: "sa-replica", LEADER_ELECTION_ID: "owned-lease", WATCH_NAMESPACES: cluster.namespace, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
      });
      procs.push(p);
      const owned = await waitFor("the lease", lease, 30_000);
      expect(owned.owners).toEqual([`ServiceAccount/operator/${sa.metadata?.uid ?? ""}`]);
      const deletedAt = Date.now();
      await cluster.core.deleteNamespacedServiceAccount({ namespace: cluster.namespace, name: "operator" });
      await waitFor("the lease garbage-collected", async () => ((await lease()) === undefined ? true : undefined), 60_000, 200);
      process.stdout.write(`lease owned by the ServiceAccount removed ${Date.now() - deletedAt} ms after the ServiceAccount was deleted\n`);
      p.child.kill("SIGTERM");
      await p.exited;
    } finally {
      await rbac.deleteClusterRoleBinding({ name: binding }).catch(() => undefined);
    }
  });
  it("deleteLease deletes a Lease only at the version it was read: one renewed meanwhile stays (409)", async () => {
    const kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "test" });
    const key = { namespace: cluster.namespace, name: "shard-lease-delete" };
    const made = await kube.createLease(cluster.namespace, { metadata: { name: key.name, namespace: key.namespace }, spec: { holderIdentity: "op-a", leaseDurationSeconds: 15, renewTime: microTime() } });
    const read = made.metadata?.resourceVersion ?? "";
    await kube.replaceLease(key, { ...made, spec: { ...made.spec, renewTime: microTime() } });
    const err = await kube.deleteLease(key, read).then(() => undefined, (e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    const renewed = await kube.getLease(key);
    await kube.deleteLease(key, renewed.metadata?.resourceVersion ?? "");
    expect(await kube.getLease(key).then(() => "there", () => "gone")).toBe("gone");
  });
});
