// The path our users take, for real and offline: the project's image (the local Node 24 base
// made by debootstrap + the npm registry, then `buildah bud` of the Dockerfile, both cached
// outside the repo) runs as a pod installed by the Helm chart, the examples are applied with kubectl,
// the example application mounts the connection Secret, and a credentials rotation reaches the
// file inside the running pod. The emulator runs inside the cluster's network namespace.
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_IMAGE, BASE_IMAGE, buildAppImage, buildBaseImage, exportImage, imageSize, removeImages, removeWorkingContainers } from "../../src/local-cluster/images.ts";
import { busyboxArchive } from "../../src/local-cluster/oci-archive.ts";
import { sleep, until } from "../../src/local-cluster/procs.ts";
import { startRealCluster, type NetnsEmulator, type RealCluster } from "../../src/local-cluster/real-node.ts";
import { kubectlOk, realClusterPrerequisites, waitDefaultServiceAccount } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true, images: true });
const repo = fileURLToPath(new URL("../../", import.meta.url));
const NS = "linode-operator";
const RELEASE = "op";
const TOKEN = "e2e-token";
// The image examples/app.yaml names: a local busybox tagged so, found without a pull.
const APP_BUSYBOX = "docker.io/library/busybox:1.37";
const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mb = (n: number | undefined): string => (n === undefined ? "? MB" : `${(n / 1e6).toFixed(0)} MB`);

describe.skipIf(!pre.ok)("end to end on a real node: helm install, examples, application pod, rotation, failover, uninstall", () => {
  let c: RealCluster | undefined;
  let emu: NetnsEmulator | undefined;
  let tmp = "";
  const cluster = (): RealCluster => { if (c === undefined) throw new Error("no cluster"); return c; };
  const kubectl = (args: string[], input?: string): Promise<string> => kubectlOk(cluster(), args, input);
  const helm = async (args: string[]): Promise<string> => {
    const r = await cluster().helm(args, { timeoutMs: 300_000 });
    if (r.code !== 0) throw new Error(`helm ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  /** GET on the emulator, from inside the network namespace (the only place it can be reached). */
  const emulatorGet = async <T>(path: string): Promise<T> => {
    if (emu === undefined) throw new Error("no emulator");
    const script = `fetch(process.env.U, { headers: { authorization: "Bearer " + process.env.T } }).then(async (r) => { if (!r.ok) process.exit(3); process.stdout.write(await r.text()); })`;
    const r = await cluster().exec(process.execPath, ["-e", script], { env: { ...process.env, U: `${new URL(emu.url).origin}${path}`, T: TOKEN } });
    if (r.code !== 0) throw new Error(`emulator GET ${path}: exit ${r.code} ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  /** Operator pods not being deleted, with their Ready condition. */
  const podStates = async (): Promise<{ name: string; ready: boolean }[]> =>
    (await kubectl(["get", "pods", "-n", NS, "-l", "app.kubernetes.io/name=linode-operator", "-o", "jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}"]))
      .split("\n").map((l) => l.split(" ")).filter((f) => f.length === 3 && f[1] === "").map((f) => ({ name: f[0] ?? "", ready: f[2] === "True" }));
  const operatorPods = async (): Promise<string[]> => (await podStates()).map((p) => p.name);
  const readyPods = async (): Promise<string[]> => (await podStates()).filter((p) => p.ready).map((p) => p.name);
  const leaseHolder = async (): Promise<string> =>
    kubectl(["get", "lease", "linode-operator", "-n", NS, "-o", "jsonpath={.spec.holderIdentity}"]).catch(() => "");
  const appPod = async (): Promise<string> =>
    until("orders-app pod Running", 120_000, async () => {
      const out = await kubectl(["get", "pods", "-l", "app=orders-app", "-o", "jsonpath={range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}"]);
      return out.split("\n").find((l) => l.endsWith(" Running"))?.split(" ")[0];
    }, 500);
  const mountedPasswordHash = async (pod: string): Promise<string> =>
    (await kubectl(["exec", pod, "--", "sha256sum", "/etc/db/password"])).split(" ")[0] ?? "";
  const ordersId = async (): Promise<number> => Number(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.id}"]));
  const emulatorPasswordHash = async (): Promise<string> =>
    sha256((await emulatorGet<{ password: string }>(`/v4/databases/mysql/instances/${await ordersId()}/credentials`)).password);

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), "linode-operator-e2e-"));
    // LINODE_OPERATOR_COLD_IMAGES=1 drops the cached images first, to measure cold builds.
    if (process.env.LINODE_OPERATOR_COLD_IMAGES === "1") await removeImages([APP_IMAGE, BASE_IMAGE]);
    const base = await buildBaseImage();
    const appWarm = (await imageSize(APP_IMAGE)) !== undefined;
    const app = await buildAppImage({ contextDir: repo });
    const archive = join(tmp, "app.tar");
    const exported = await exportImage(APP_IMAGE, archive);
    console.log(`[e2e] images: base ${BASE_IMAGE} ${base.cached ? "warm (cached)" : "cold"} ${secs(base.millis)} ${mb(base.bytes)}; `
      + `app ${APP_IMAGE} from the Dockerfile ${appWarm ? "warm (layer cache)" : "cold"} ${secs(app.millis)} ${mb(app.bytes)}; docker-archive ${mb(exported.bytes)}`);
    c = await startRealCluster();
    const t0 = Date.now();
    await c.importImage(archive);
    await c.importImage(await busyboxArchive(APP_BUSYBOX));
    console.log(`[e2e] cluster: node Ready ${secs(c.timings.nodeReadyMillis)} after start; images imported in ${secs(Date.now() - t0)}`);
    // Bound to the node address: reachable from hostNetwork pods and, by the pod network's one
    // route, from ordinary pods; still nowhere outside the namespace.
    emu = await c.startEmulator(["--host", c.nodeIp, "--token", TOKEN, "--provision-seconds", "3"]);
    await waitDefaultServiceAccount(c);
  }, 900_000);
  afterAll(async () => {
    await c?.stop();
    await removeWorkingContainers();
    if (tmp !== "") await rm(tmp, { recursive: true, force: true });
  });

  it("helm install: the operator runs as a restricted pod under the chart's ServiceAccount, probes pass, logs are JSON", async () => {
    const t0 = Date.now();
    await helm(["install", RELEASE, join(repo, "helm", "linode-operator"), "-n", NS, "--create-namespace",
      "--set", `image.repository=${APP_IMAGE.split(":")[0] ?? ""}`, "--set", `image.tag=${APP_IMAGE.split(":")[1] ?? ""}`, "--set", "image.pullPolicy=Never",
      // No kube-proxy here: the host network of the test namespace, and the apiserver on loopback.
      "--set", "hostNetwork=true", "--set", "kubernetesServiceHost=127.0.0.1", "--set", `kubernetesServicePort=${cluster().apiPort}`,
      "--set", `linode.apiUrl=${emu?.url ?? ""}`, "--set", `linode.token=${TOKEN}`, "--wait", "--timeout", "3m"]);
    const [pod] = await readyPods();
    console.log(`[e2e] operator pod Ready ${secs(Date.now() - t0)} after helm install`);
    expect(pod).toBeDefined();
    const name = pod ?? "";
    const spec = JSON.parse(await kubectl(["get", "pod", name, "-n", NS, "-o", "json"])) as {
      spec: { serviceAccountName: string; hostNetwork?: boolean; securityContext: Record<string, unknown>; containers: { image: string; securityContext: Record<string, unknown> }[] };
    };
    expect(spec.spec.serviceAccountName).toBe("op-linode-operator");
    expect(spec.spec.hostNetwork).toBe(true);
    expect(spec.spec.containers[0]?.image).toBe(APP_IMAGE);
    expect(spec.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(spec.spec.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
    expect((await kubectl(["exec", name, "-n", NS, "--", "id", "-u"])).trim()).toBe("1000");
    // The liveness probe starts after 5 s and runs every 10 s: let it run a few times. And the
    // watches stay quiet longer than client-node's 30 s inactivity default, which tore them
    // down and backed off (until KubeClient.watch set its own limit): no "watch failed" below.
    await sleep(36_000);
    const state = await kubectl(["get", "pod", name, "-n", NS, "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.conditions[?(@.type==\"Ready\")].status}"]);
    expect(state).toBe("0 True");
    // Readiness may fail while the process starts (caches not synced yet); liveness never.
    const unhealthy = (await kubectl(["get", "events", "-n", NS, "--field-selector", `involvedObject.name=${name},reason=Unhealthy`, "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}"]))
      .split("\n").filter((l) => l !== "");
    if (unhealthy.length > 0) console.log(`[e2e] probe events while starting: ${unhealthy.join(" | ")}`);
    expect(unhealthy.filter((m) => !m.startsWith("Readiness probe failed"))).toEqual([]);
    const lines = (await kubectl(["logs", name, "-n", NS])).trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.anything() as unknown, msg: expect.any(String) as unknown });
    expect(lines.some((l) => l.includes("became leader"))).toBe(true);
    expect(lines.filter((l) => l.includes("watch failed"))).toEqual([]);
  });

  it("kubectl apply -f examples/: the ManagedDatabases become Ready against the emulator", async () => {
    const t0 = Date.now();
    await kubectl(["apply", "-f", join(repo, "examples")]);
    await kubectl(["wait", "--for=condition=Ready", "manageddatabases", "--all", "--timeout=180s"]);
    console.log(`[e2e] examples' ManagedDatabases Ready ${secs(Date.now() - t0)} after kubectl apply (emulated provisioning 3 s)`);
    const dbs = await emulatorGet<{ data: { label: string; engine: string; status: string }[] }>("/v4/databases/instances");
    expect(dbs.data.map((d) => `${d.engine}:${d.status}`).sort()).toEqual(["mysql:active", "postgresql:active"]);
    expect(await kubectl(["get", "secret", "analytics-db", "-o", "jsonpath={.data.jdbcUrl}"])).not.toBe("");
  });

  it("the example application mounts the Secret: logs show host, port and a PEM CA, never the password; the mounted password is the emulator's", async () => {
    const pod = await appPod();
    const host = Buffer.from(await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.data.host}"]), "base64").toString();
    const port = Buffer.from(await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.data.port}"]), "base64").toString();
    const logs = await until("application logs", 30_000, async () => {
      const l = await kubectl(["logs", pod]);
      return l.includes("ca.crt:") ? l : undefined;
    });
    console.log(`[e2e] application pod logs: ${logs.trim().replace(/\n/g, " | ")}`);
    expect(logs).toContain(`database host: ${host} port: ${port} type: mysql`);
    expect(logs).toContain("ca.crt: PEM certificate");
    const password = (await emulatorGet<{ password: string }>(`/v4/databases/mysql/instances/${await ordersId()}/credentials`)).password;
    expect(logs).not.toContain(password);
    expect(await mountedPasswordHash(pod)).toBe(sha256(password));
  });

  it("a credentials rotation by request token rewrites the Secret and the file inside the running pod changes", async () => {
    const pod = await appPod();
    const before = await mountedPasswordHash(pod);
    const secretRv = await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.metadata.resourceVersion}"]);
    const t0 = Date.now();
    await kubectl(["patch", "manageddatabase", "orders", "--type", "merge", "-p", JSON.stringify({ spec: { requests: { resetCredentials: "rotate-1" } } })]);
    const secretMillis = await until("Secret rewritten", 120_000, async () =>
      (await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.metadata.resourceVersion}"])) !== secretRv ? Date.now() - t0 : undefined, 250);
    const after = await until("new password in the pod", 180_000, async () => {
      const h = await mountedPasswordHash(pod);
      return h !== before ? h : undefined;
    }, 500);
    const fileMillis = Date.now() - t0;
    console.log(`[e2e] rotation: Secret rewritten ${secs(secretMillis)} after the request, new password inside the pod ${secs(fileMillis)} after it (kubelet syncFrequency 10 s)`);
    expect(after).toBe(await emulatorPasswordHash());
    expect(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.lastRequests.resetCredentials.token}"])).toBe("rotate-1");
  });

  it("helm upgrade to 2 replicas: one leader; the leader pod deleted stops within its grace period and the other takes over and reconciles", async () => {
    // Two hostNetwork replicas on one node would ask for the same host ports (the scheduler
    // refuses the second), so the replicas move to the pod network: its one route reaches the
    // apiserver and the emulator on the node address.
    await helm(["upgrade", RELEASE, join(repo, "helm", "linode-operator"), "-n", NS, "--reuse-values",
      "--set", "replicaCount=2", "--set", "hostNetwork=false", "--set", `kubernetesServiceHost=${cluster().nodeIp}`, "--wait", "--timeout", "3m"]);
    await until("2 replicas Ready, the old pod gone", 120_000, async () => {
      const [all, ready] = [await operatorPods(), await readyPods()];
      return all.length === 2 && ready.length === 2 ? true : undefined;
    }, 500);
    const pods = await operatorPods();
    const leader = await until("a leader among the new pods", 60_000, async () => {
      const h = await leaseHolder();
      return pods.includes(h) ? h : undefined;
    }, 500);
    const leaders = [];
    for (const p of pods) if ((await kubectl(["logs", p, "-n", NS])).includes("became leader")) leaders.push(p);
    expect(leaders).toEqual([leader]);
    const standby = pods.find((p) => p !== leader) ?? "";

    // Follow the leader's log to its end, then delete it (SIGTERM; grace period 30 s).
    const followed = cluster().kubectl(["logs", "-f", leader, "-n", NS], { timeoutMs: 60_000 });
    await sleep(500);
    const t0 = Date.now();
    await kubectl(["delete", "pod", leader, "-n", NS, "--wait=false"]);
    const newLeader = await until("the standby takes the lease", 40_000, async () => ((await leaseHolder()) === standby ? standby : undefined), 200);
    const takeoverMillis = Date.now() - t0;
    await until("the old leader pod gone", 40_000, async () =>
      (await cluster().kubectl(["get", "pod", leader, "-n", NS])).code !== 0 ? true : undefined, 250);
    const goneMillis = Date.now() - t0;
    const log = (await followed).stdout;
    console.log(`[e2e] failover: ${standby} holds the lease ${secs(takeoverMillis)} after the leader pod was deleted; the old pod was gone after ${secs(goneMillis)} (grace period 30 s)`);
    expect(newLeader).toBe(standby);
    expect(goneMillis).toBeLessThan(30_000);
    expect(log).toContain("shutting down");
    expect(log).toContain("released the leader lease");
    expect(log).toContain("\"msg\":\"stopped\"");

    // The new leader reconciles: an allowList change reaches the cloud database.
    await kubectl(["patch", "manageddatabase", "orders", "--type", "json", "-p", JSON.stringify([{ op: "add", path: "/spec/allowList/-", value: "203.0.113.77" }])]);
    const t1 = Date.now();
    const id = await ordersId();
    await until("allow_list updated by the new leader", 60_000, async () => {
      const db = await emulatorGet<{ allow_list: string[] }>(`/v4/databases/mysql/instances/${id}`);
      return db.allow_list.includes("203.0.113.77/32") ? true : undefined;
    }, 500);
    console.log(`[e2e] the new leader applied an allowList change in ${secs(Date.now() - t1)}`);
  });

  it("kubectl delete the examples: no database is left in the emulator; helm uninstall leaves no operator object", async () => {
    const t0 = Date.now();
    await kubectl(["delete", "-f", join(repo, "examples"), "--timeout=180s"]);
    const left = await emulatorGet<{ data: unknown[] }>("/v4/databases/instances");
    console.log(`[e2e] kubectl delete -f examples/ returned after ${secs(Date.now() - t0)}; databases left in the emulator: ${left.data.length}`);
    expect(left.data).toEqual([]);
    expect((await kubectl(["get", "manageddatabases", "-A", "-o", "name"])).trim()).toBe("");

    const t1 = Date.now();
    await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "2m"]);
    const kinds = "deployments,replicasets,pods,services,serviceaccounts,secrets,configmaps,roles,rolebindings,poddisruptionbudgets";
    // Pods and ReplicaSets go by garbage collection after the Deployment: wait for it.
    await until("no chart object left (throws after 90 s)", 90_000, async () =>
      ((await kubectl(["get", kinds, "-n", NS, "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "name"])).trim() === "" ? true : undefined), 500);
    console.log(`[e2e] helm uninstall: nothing of the release left after ${secs(Date.now() - t1)}`);
    expect((await kubectl(["get", "clusterroles,clusterrolebindings", "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "name"])).trim()).toBe("");
    // What stays, as with any operator: the CRDs (Helm never deletes them) and the Lease, which
    // the last leader cannot release (Helm removes its RBAC before the pod stops); it expires 15 s on.
    console.log(`[e2e] left after uninstall: the CRDs and the Lease (holder ${await leaseHolder() || "none"})`);
  });
});
