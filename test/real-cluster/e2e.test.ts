// The path our users take, for real and offline: the project's image (the local Node 24 base
// made by debootstrap + the npm registry, then `buildah bud` of the Dockerfile, both cached
// outside the repo) runs as a pod installed by the Helm chart, the examples are applied with kubectl,
// the example application mounts the connection Secret, and a credentials rotation reaches the
// file inside the running pod. The emulator runs inside the cluster's network namespace.
// One real node serves the whole file: first its safety (no route out of the network namespace),
// last its teardown (nothing left on the host).
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { APP_IMAGE, BASE_IMAGE, buildAppImage, buildBaseImage, exportImage, imageSize, removeImages } from "../../src/local-cluster/images.ts";
import { processes } from "../../src/local-cluster/host-state.ts";
import { KUBELET_SYNC_SECONDS } from "../../src/local-cluster/node-config.ts";
import { NETNS_PORTS } from "../../src/local-cluster/netns.ts";
import { busyboxArchive } from "../../src/local-cluster/oci-archive.ts";
import { until } from "../../src/local-cluster/procs.ts";
import type { NetnsEmulator, RealCluster } from "../../src/local-cluster/real-node.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { busyboxPod, kubectlOk, nodeEmulator, realClusterPrerequisites, startNodeWhile, stopNode, waitPodPhase } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true, images: true });
const repo = fileURLToPath(new URL("../../", import.meta.url));
const NS = "linode-operator";
const RELEASE = "op";
const TOKEN = "e2e-token";
/** A team's token of the same account, in a Secret of its namespace. */
const TEAM_TOKEN = "e2e-team-token";
// The image examples/app.yaml names: a local busybox tagged so, found without a pull.
const APP_BUSYBOX = "docker.io/library/busybox:1.37";
const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mb = (n: number | undefined): string => (n === undefined ? "? MB" : `${(n / 1e6).toFixed(0)} MB`);

describe.skipIf(!pre.ok)("end to end on a real node: helm install, examples, application pod, rotation, failover, uninstall", () => {
  let c: RealCluster | undefined;
  let emu: NetnsEmulator | undefined;
  /** Milliseconds the operator image's import took, once it is in the node's containerd. */
  let appImported: Promise<number> | undefined;
  /** The operator pod helm install made; it runs until the upgrade. */
  let firstPod = "";
  const cluster = (): RealCluster => { if (c === undefined) throw new Error("no cluster"); return c; };
  const kubectl = (args: string[], input?: string): Promise<string> => kubectlOk(cluster(), args, input);
  const helm = async (args: string[]): Promise<string> => {
    const r = await cluster().helm(args, { timeoutMs: 300_000 });
    if (r.code !== 0) throw new Error(`helm ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  /** GET on the emulator, from inside the network namespace (the only place it can be reached). */
  const emulatorGet = <T>(path: string): Promise<T> => emulatorCall<T>("GET", path);
  /** A request to the emulator (its API or its admin routes, /_emulator/…), from inside the network namespace. */
  const emulatorCall = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    if (emu === undefined) throw new Error("no emulator");
    const script = `fetch(process.env.U, { method: process.env.M, headers: { authorization: "Bearer " + process.env.T, "content-type": "application/json" }, body: process.env.B || undefined }).then(async (r) => { if (!r.ok) process.exit(3); process.stdout.write(await r.text()); })`;
    const r = await cluster().exec(process.execPath, ["-e", script], { env: { ...process.env, U: `${new URL(emu.url).origin}${path}`, T: TOKEN, M: method, B: body === undefined ? "" : JSON.stringify(body) } });
    if (r.code !== 0) throw new Error(`emulator ${method} ${path}: exit ${r.code} ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  /** Operator pods not being deleted, with their Ready condition. */
  const podStates = async (): Promise<{ name: string; ready: boolean }[]> =>
    (await kubectl(["get", "pods", "-n", NS, "-l", "app.kubernetes.io/name=linode-operator", "-o", "jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}"]))
      .split("\n").map((l) => l.split(" ")).filter((f) => f.length === 3 && f[1] === "").map((f) => ({ name: f[0] ?? "", ready: f[2] === "True" }));
  const operatorPods = async (): Promise<string[]> => (await podStates()).map((p) => p.name);
  const readyPods = async (): Promise<string[]> => (await podStates()).filter((p) => p.ready).map((p) => p.name);
  const leaseHolder = async (): Promise<string> =>
    kubectl(["get", "lease", `${RELEASE}-linode-operator`, "-n", NS, "-o", "jsonpath={.spec.holderIdentity}"]).catch(() => "");
  /** The Running pod of an example application (label app=`app`). */
  const runningPod = async (app: string): Promise<string> =>
    until(`${app} pod Running`, 120_000, async () => {
      const out = await kubectl(["get", "pods", "-l", `app=${app}`, "-o", "jsonpath={range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}"]);
      return out.split("\n").find((l) => l.endsWith(" Running"))?.split(" ")[0];
    }, 500);
  const appPod = (): Promise<string> => runningPod("orders-app");
  const mountedPasswordHash = async (pod: string): Promise<string> =>
    (await kubectl(["exec", pod, "--", "sha256sum", "/bindings/orders/password"])).split(" ")[0] ?? "";
  const ordersId = async (): Promise<number> => Number(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.id}"]));
  const emulatorPasswordHash = async (): Promise<string> =>
    sha256((await emulatorGet<{ password: string }>(`/v4/databases/mysql/instances/${await ordersId()}/credentials`)).password);

  beforeAll(async () => {
    // The images are built on the host (they need the package registries) while the node starts.
    const images = (async () => {
      // LINODE_OPERATOR_COLD_IMAGES=1 drops the cached images first, to measure cold builds.
      if (process.env.LINODE_OPERATOR_COLD_IMAGES === "1") await removeImages([APP_IMAGE, BASE_IMAGE]);
      const base = await buildBaseImage();
      const appWarm = (await imageSize(APP_IMAGE)) !== undefined;
      const app = await buildAppImage({ contextDir: repo });
      const exported = await exportImage(APP_IMAGE);
      console.log(`[e2e] images: base ${BASE_IMAGE} ${base.cached ? "warm (cached)" : "cold"} ${secs(base.millis)} ${mb(base.bytes)}; `
        + `app ${APP_IMAGE} from the Dockerfile ${appWarm ? "warm (layer cache)" : "cold"} ${secs(app.millis)} ${mb(app.bytes)}; `
        + `docker-archive ${mb(exported.bytes)} ${exported.cached ? "unchanged (cached)" : "exported"} in ${secs(exported.millis)}`);
      return exported.path;
    })();
    const { rc, built: appArchive } = await startNodeWhile(images, (rc) => { c = rc; });
    console.log(`[e2e] cluster: control plane ${secs(rc.timings.controlPlaneMillis)}, node Ready ${secs(rc.timings.nodeReadyMillis)} after start`);
    // The operator image is imported while the first tests (busybox pods only) run; helm install waits for it.
    const t0 = Date.now();
    appImported = rc.importImage(appArchive).then(() => Date.now() - t0);
    appImported.catch(() => undefined);
    await Promise.all([busyboxArchive(APP_BUSYBOX).then((a) => rc.importImage(a)), busyboxArchive().then((a) => rc.importImage(a))]);
    emu = await nodeEmulator(rc, TOKEN, 3);
  }, 900_000);
  afterAll(async () => { await stopNode(c); });

  it("the node is Ready as localhost with its /32 address, and its network namespace has no route out", async () => {
    const out = await kubectl(["get", "node", "localhost", "-o", "jsonpath={.status.addresses[?(@.type==\"InternalIP\")].address} {.status.nodeInfo.containerRuntimeVersion}"]);
    expect(out.startsWith(`${cluster().nodeIp} containerd://`)).toBe(true);
    for (const addr of ["10.0.0.1", "203.0.113.1", "192.0.2.1"]) {
      const r = await cluster().exec("ip", ["route", "get", addr]);
      expect(r.code, `route to ${addr}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr).toMatch(/unreachable/i);
    }
  });

  it("a pod with the default in-cluster config fails at once with Network is unreachable", async () => {
    await kubectl(["apply", "-f", "-"], busyboxPod("no-route", {}, { command: ["sleep", "3600"] }));
    await waitPodPhase(cluster(), "no-route", ["Running"]);
    const env = await kubectl(["exec", "no-route", "--", "sh", "-c", "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT; ip route"]);
    // The kubelet injects the kubernetes Service IP: what client libraries use by default.
    expect(env.split("\n")[0]).toBe("10.0.0.1:443");
    expect(env).not.toMatch(/default/);
    for (const target of ["$KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT", "203.0.113.1 80"]) {
      const t0 = Date.now();
      const r = await cluster().kubectl(["exec", "no-route", "--", "sh", "-c", `echo | nc -w 5 ${target}; echo rc=$?`]);
      const millis = Date.now() - t0;
      expect(r.stdout + r.stderr).toMatch(/Network is unreachable/);
      expect(r.stdout).toMatch(/rc=1/);
      // nc -w 5 would take 5 s on a hang; "at once" includes kubectl exec's own ~0.3 s.
      expect(millis).toBeLessThan(3_000);
      console.log(`[e2e] connect to ${target} from a pod: Network is unreachable in ${millis} ms (incl. kubectl exec)`);
    }
    await kubectl(["delete", "pod", "no-route", "--grace-period=0", "--force", "--wait=false"]);
  });

  it("a hostNetwork pod with KUBERNETES_SERVICE_HOST/PORT on loopback reaches the apiserver, with its token mounted", async () => {
    await kubectl(["apply", "-f", "-"], busyboxPod("host-net", { hostNetwork: true }, {
      env: [{ name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1" }, { name: "KUBERNETES_SERVICE_PORT", value: String(cluster().apiPort) }],
      // busybox has no TLS client: a plain HTTP request gets the Go TLS server's answer.
      command: ["sh", "-c", "printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' | nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT; echo; ls /var/run/secrets/kubernetes.io/serviceaccount; echo TOKEN=$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)"],
    }));
    expect(await waitPodPhase(cluster(), "host-net", ["Succeeded", "Failed"])).toBe("Succeeded");
    const logs = await kubectl(["logs", "host-net"]);
    expect(logs).toMatch(/Client sent an HTTP request to an HTTPS server/);
    expect(logs).toMatch(/ca\.crt/);
    const token = /TOKEN=(\S+)/.exec(logs)?.[1] ?? "";
    expect(token).not.toBe("");
    expect(await kubectl(["--token", token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"])).toBe("system:serviceaccount:default:default");
  });

  it("an emulator on the namespace's loopback is reachable there, not from the host", async () => {
    const local = await cluster().startEmulator(["--token", "loopback-token"]);
    const url = new URL(local.url);
    expect(url.hostname).toBe("127.0.0.1");
    const script = `fetch(${JSON.stringify(`${url.origin}/v4/databases/engines`)}, { headers: { authorization: "Bearer loopback-token" } }).then((r) => console.log(r.status))`;
    expect((await cluster().exec(process.execPath, ["-e", script])).stdout.trim()).toBe("200");
    // The host's own loopback: nothing listens on that port there.
    const outside = await fetch(`${url.origin}/v4/databases/engines`).then(() => "reached", (e: unknown) => String((e as { cause?: { code?: string } }).cause?.code));
    expect(outside).toBe("ECONNREFUSED");
    await local.stop();
  });

  it("helm install: the operator runs as a restricted pod under the chart's ServiceAccount, probes pass, logs are JSON", async () => {
    if (appImported === undefined) throw new Error("the operator image was never imported");
    console.log(`[e2e] operator image imported into the node in ${secs(await appImported)}`);
    const t0 = Date.now();
    await helm(["install", RELEASE, join(repo, "helm", "linode-operator"), "-n", NS, "--create-namespace",
      "--set", `image.repository=${APP_IMAGE.split(":")[0] ?? ""}`, "--set", `image.tag=${APP_IMAGE.split(":")[1] ?? ""}`, "--set", "image.pullPolicy=Never",
      // No kube-proxy here: the host network of the test namespace, and the apiserver on loopback.
      "--set", "hostNetwork=true", "--set", "kubernetesServiceHost=127.0.0.1", "--set", `kubernetesServicePort=${cluster().apiPort}`,
      // The emulator is plain http on the node's address: a trusted test network.
      "--set", `linode.apiUrl=${emu?.url ?? ""}`, "--set", "linode.allowHttp=true", "--set", `linode.token=${TOKEN}`,
      // Allow lists that follow the nodes: the chart's read-only ClusterRole on nodes.
      "--set", "rbac.readNodes=true", "--wait", "--timeout", "3m"]);
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
    firstPod = name;
  });

  it("doctor in the operator's pod, as README and docs/token-scopes.md run it (the image has `linode-operator` on its PATH): token, scopes, every permission and the Nodes OK; the CRDs only warn (its account may not read them)", async () => {
    const out = await kubectl(["exec", "deploy/op-linode-operator", "-n", NS, "--", "linode-operator", "doctor", "--json"]);
    const checks = (JSON.parse(out) as { ok: boolean; checks: { check: string; status: string }[] }).checks;
    expect(checks.filter((c) => c.status !== "OK").map((c) => `${c.check} ${c.status}`)).toEqual(kindDefinitions.map((d) => `CRD ${d.plural}.linode.operator.dev WARN`));
    expect(checks.map((c) => c.check)).toEqual(expect.arrayContaining(["Linode token scopes", "RBAC", "Nodes"]));
  });

  it("kubectl apply -f examples/: the ManagedDatabases become Ready against the emulator", async () => {
    // The TLS Secret the example NodeBalancer's https port names (what cert-manager would make).
    const cert = generateCertificate({ commonName: "web.example.com" });
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "v1", kind: "Secret", type: "kubernetes.io/tls", metadata: { name: "web-tls" },
      data: { "tls.crt": Buffer.from(cert.certPem).toString("base64"), "tls.key": Buffer.from(cert.keyPem).toString("base64") },
    }));
    const t0 = Date.now();
    await kubectl(["apply", "-f", join(repo, "examples")]);
    await kubectl(["wait", "--for=condition=Ready", "manageddatabases", "--all", "--timeout=180s"]);
    console.log(`[e2e] examples' ManagedDatabases Ready ${secs(Date.now() - t0)} after kubectl apply (emulated provisioning 3 s)`);
    // The example snapshot backs up orders right away; the database is active again once it is Available.
    await kubectl(["wait", "--for=jsonpath={.status.phase}=Available", "databasesnapshot/orders-snapshot", "--timeout=120s"]);
    console.log(`[e2e] example DatabaseSnapshot Available ${secs(Date.now() - t0)} after kubectl apply`);
    const dbs = await emulatorGet<{ data: { label: string; engine: string; status: string }[] }>("/v4/databases/instances");
    expect(dbs.data.map((d) => `${d.engine}:${d.status}`).sort()).toEqual(["mysql:active", "postgresql:active"]);
    expect(await kubectl(["get", "secret", "analytics-db", "-o", "jsonpath={.data.jdbcUrl}"])).not.toBe("");
  });

  it("a database's allow list follows the real node (allowListFrom, through the chart's rbac.readNodes); a second Node added and removed shows within seconds", async () => {
    await kubectl(["label", "node", "localhost", "--overwrite", "linode.operator.dev/e2e-pool=web"]);
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "follower" },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowListFrom: [{ nodes: { selector: { matchLabels: { "linode.operator.dev/e2e-pool": "web" } }, addressType: "InternalIP" } }] },
    }));
    await kubectl(["wait", "--for=condition=Ready", "manageddatabase/follower", "--timeout=120s"]);
    const id = Number(await kubectl(["get", "manageddatabase", "follower", "-o", "jsonpath={.status.id}"]));
    const allowList = async (): Promise<string[]> => (await emulatorGet<{ allow_list: string[] }>(`/v4/databases/mysql/instances/${String(id)}`)).allow_list.sort();
    expect(await allowList()).toEqual([`${cluster().nodeIp}/32`]);
    const until = async (what: string, want: string[]): Promise<number> => {
      const t0 = Date.now();
      while (JSON.stringify(await allowList()) !== JSON.stringify([...want].sort())) {
        if (Date.now() - t0 > 60_000) throw new Error(`${what}: the allow list is ${JSON.stringify(await allowList())} after 60 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
      return Date.now() - t0;
    };
    // A Node object only (no kubelet behind it), as a node registering; removed at once so no pod is scheduled on it.
    await kubectl(["create", "-f", "-"], JSON.stringify({
      apiVersion: "v1", kind: "Node", metadata: { name: "e2e-extra", labels: { "linode.operator.dev/e2e-pool": "web" } },
      spec: { unschedulable: true }, status: { addresses: [{ type: "InternalIP", address: "192.168.150.2" }] },
    }));
    const added = await until("a Node added", [`${cluster().nodeIp}/32`, "192.168.150.2/32"]);
    await kubectl(["delete", "node", "e2e-extra"]);
    const removed = await until("a Node removed", [`${cluster().nodeIp}/32`]);
    console.log(`[e2e] allowListFrom: a Node added is in the database's allow list after ${secs(added)}, removed after ${secs(removed)} (updates spaced 10 s apart, as the API asks)`);
    expect(await kubectl(["get", "manageddatabase", "follower", "-o", "jsonpath={.status.allowList[0].from}"])).toBe("node localhost (InternalIP, linode.operator.dev/e2e-pool=web)");
    await kubectl(["delete", "manageddatabase", "follower", "--wait=true", "--timeout=120s"]);
  });

  it("a NodeBalancer's backends follow a NodePort Service (nodesFrom): the real node, whose address is not RFC 1918, is skipped and counted, never named in status; a private Node added and removed shows within seconds", async () => {
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "v1", kind: "Service", metadata: { name: "web-np" },
      spec: { type: "NodePort", selector: { app: "web-np" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    }));
    const nodePort = Number(await kubectl(["get", "service", "web-np", "-o", "jsonpath={.spec.ports[0].nodePort}"]));
    expect(nodePort).toBeGreaterThan(0);
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "follower-nb" },
      spec: { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "static", address: "192.168.200.9:80" }], nodesFrom: { serviceRef: { name: "web-np", port: "http" } } }] },
    }));
    const t0 = Date.now();
    let skipped = "";
    while (!skipped.includes("skipped") && Date.now() - t0 < 60_000) {
      skipped = await kubectl(["get", "nodebalancer", "follower-nb", "-o", "jsonpath={.status.skippedBackends[0]}"]);
      if (!skipped.includes("skipped")) await new Promise((r) => setTimeout(r, 200));
    }
    expect(skipped).toBe("1 node skipped, with no private IPv4 InternalIP: a NodeBalancer reaches backends on 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 only");
    expect(skipped).not.toContain(cluster().nodeIp);
    const id = Number(await kubectl(["get", "nodebalancer", "follower-nb", "-o", "jsonpath={.status.id}"]));
    const backends = async (): Promise<string[]> => {
      const configs = await emulatorGet<{ data: { id: number }[] }>(`/v4/nodebalancers/${String(id)}/configs`);
      const nodes = await emulatorGet<{ data: { address: string; mode: string }[] }>(`/v4/nodebalancers/${String(id)}/configs/${String(configs.data[0]?.id ?? 0)}/nodes`);
      return nodes.data.map((n) => `${n.address} ${n.mode}`).sort();
    };
    const until = async (what: string, want: string[]): Promise<number> => {
      const t0 = Date.now();
      while (JSON.stringify(await backends()) !== JSON.stringify([...want].sort())) {
        if (Date.now() - t0 > 60_000) throw new Error(`${what}: the backends are ${JSON.stringify(await backends())} after 60 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
      return Date.now() - t0;
    };
    await until("the static backend only", ["192.168.200.9:80 accept"]);
    // A Node object only (no kubelet behind it), Ready and unschedulable so no pod lands on it; removed at once.
    await kubectl(["create", "-f", "-"], JSON.stringify({
      apiVersion: "v1", kind: "Node", metadata: { name: "e2e-backend" }, spec: { unschedulable: true },
      status: { addresses: [{ type: "InternalIP", address: "192.168.151.2" }], conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "e2e" }] },
    }));
    // Cordoned, it joins draining: a node being taken out of service never takes new connections.
    const added = await until("a Node added", ["192.168.200.9:80 accept", `192.168.151.2:${String(nodePort)} drain`]);
    await kubectl(["delete", "node", "e2e-backend"]);
    const removed = await until("a Node removed", ["192.168.200.9:80 accept"]);
    console.log(`[e2e] nodesFrom: a Node added is a backend after ${secs(added)}, removed after ${secs(removed)}`);
    await kubectl(["delete", "nodebalancer", "follower-nb", "--wait=true", "--timeout=120s"]);
    await kubectl(["delete", "service", "web-np"]);
  });

  it("the example NodeBalancer becomes Ready with its https port from the TLS Secret, through the chart's RBAC", async () => {
    const t0 = Date.now();
    await kubectl(["wait", "--for=condition=Ready", "nodebalancer/web", "--timeout=120s"]);
    console.log(`[e2e] example NodeBalancer Ready ${secs(Date.now() - t0)} after the databases (backends UP after one 5 s check interval)`);
    const id = Number(await kubectl(["get", "nodebalancer", "web", "-o", "jsonpath={.status.id}"]));
    const configs = await emulatorGet<{ data: { port: number; protocol: string; ssl_fingerprint: string }[] }>(`/v4/nodebalancers/${String(id)}/configs`);
    expect(configs.data.map((c) => `${String(c.port)}/${c.protocol}`).sort()).toEqual(["443/https", "80/http"]);
    expect(configs.data.find((c) => c.port === 443)?.ssl_fingerprint).toBe(await kubectl(["get", "nodebalancer", "web", "-o", "jsonpath={.status.configs[?(@.port==443)].sslFingerprint}"]));
  });

  it("the example snapshot is taken, and restoring it puts the database through restoring back to active, once", async () => {
    const t0 = Date.now();
    const backupId = Number(await kubectl(["get", "databasesnapshot", "orders-snapshot", "-o", "jsonpath={.status.backupId}"]));
    const backups = await emulatorGet<{ data: { id: number; type: string }[] }>(`/v4/databases/mysql/instances/${await ordersId()}/backups`);
    expect(backups.data.map((b) => b.id)).toContain(backupId);
    await kubectl(["patch", "manageddatabase", "orders", "--type", "merge", "-p", JSON.stringify({ spec: { requests: { restore: { token: "restore-1", snapshotRef: { name: "orders-snapshot" } } } } })]);
    await until("the restore recorded", 120_000, async () =>
      ((await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.lastRequests.restore.completedAt}"])) !== "" ? true : undefined), 250);
    await kubectl(["wait", "--for=condition=Ready", "manageddatabase/orders", "--timeout=120s"]);
    expect(Number(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.lastRequests.restore.backupId}"]))).toBe(backupId);
    // Ready is the truth: the database is active again, not still restoring.
    expect((await emulatorGet<{ status: string }>(`/v4/databases/mysql/instances/${await ordersId()}`)).status).toBe("active");
    console.log(`[e2e] restore from the snapshot recorded and the database Ready again ${secs(Date.now() - t0)} after it was requested`);
  });

  it("the example application mounts the Secret (type servicebinding.io/mysql, named in status.binding): logs show host, port, a URI that verifies the server against the mounted CA, never the password; the mounted password is the emulator's", async () => {
    const pod = await appPod();
    const host = Buffer.from(await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.data.host}"]), "base64").toString();
    const port = Buffer.from(await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.data.port}"]), "base64").toString();
    const logs = await until("application logs", 30_000, async () => {
      const l = await kubectl(["logs", pod]);
      return l.includes("ca.crt:") ? l : undefined;
    });
    console.log(`[e2e] application pod logs: ${logs.trim().replace(/\n/g, " | ")}`);
    expect(logs).toContain(`database host: ${host} port: ${port} type: mysql`);
    expect(logs).toContain("uri verifies the server with: ssl-mode=VERIFY_IDENTITY&ssl-ca=/bindings/orders/ca.crt");
    expect(logs).toContain("ca.crt: PEM certificate at /bindings/orders/ca.crt");
    expect(await kubectl(["get", "secret", "orders-connection", "-o", "jsonpath={.type}"])).toBe("servicebinding.io/mysql");
    expect(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.binding.name}"])).toBe("orders-connection");
    const password = (await emulatorGet<{ password: string }>(`/v4/databases/mysql/instances/${await ordersId()}/credentials`)).password;
    expect(logs).not.toContain(password);
    expect(await mountedPasswordHash(pod)).toBe(sha256(password));
  });

  it("the example application through the pool reads DATABASE_URL from the pool's Secret: logs show the pool as the database at the cluster's host and port, verified against the mounted CA, never the password", async () => {
    // This emulator makes new databases on the legacy platform (the example snapshot needs one), where
    // the example pool is UnsupportedOnPlatform: the pool is made again on a current-platform
    // PostgreSQL cluster the account has, adopted with the namespace's own token (a team's, not the
    // operator's: adopting by id on the operator's token is for namespaces the admin allows).
    expect(await kubectl(["get", "databaseconnectionpool", "analytics-pool", "-o", "jsonpath={.status.conditions[?(@.type==\"Synced\")].reason}"])).toBe("UnsupportedOnPlatform");
    const seeded = (await emulatorCall<{ databases: { first_id: number } }>("POST", "/_emulator/seed", { databases: { count: 1, engine: "postgresql", platform: "current", labelPrefix: "analytics-2026" } })).databases;
    await emulatorCall("POST", "/_emulator/tokens", { token: TEAM_TOKEN });
    await kubectl(["create", "secret", "generic", "linode-e2e", `--from-literal=token=${TEAM_TOKEN}`]);
    await kubectl(["label", "secret", "linode-e2e", "linode.operator.dev/credentials=true"]);
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "analytics-current" },
      spec: { engine: "postgresql", version: "16", region: "us-east", type: "g6-nanode-1", databaseId: seeded.first_id, credentialsRef: { name: "linode-e2e" }, deletionPolicy: "Delete" },
    }));
    await kubectl(["delete", "databaseconnectionpool", "analytics-pool", "--timeout=60s"]);
    await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseConnectionPool", metadata: { name: "analytics-pool" },
      spec: { databaseRef: { name: "analytics-current" }, database: "defaultdb", mode: "transaction", size: 20 },
    }));
    const conditions = (what: string): Promise<string> => kubectl(["get", what, "-o", "jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{\"\\n\"}{end}"]);
    await until("analytics-pool Ready", 120_000, async () => ((await conditions("databaseconnectionpool/analytics-pool")).includes("Ready=True") ? true : undefined), 500)
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}\npool:\n${await conditions("databaseconnectionpool/analytics-pool")}\ndatabase:\n${await conditions("manageddatabase/analytics-current")}`);
      });
    const secret = async (key: string): Promise<string> => Buffer.from(await kubectl(["get", "secret", "analytics-pool-connection", "-o", `jsonpath={.data.${key}}`]), "base64").toString();
    const pod = await runningPod("analytics-app");
    const logs = await until("pool application logs", 30_000, async () => {
      const l = await kubectl(["logs", pod]);
      return l.includes("ca.crt:") ? l : undefined;
    });
    console.log(`[e2e] pool application pod logs: ${logs.trim().replace(/\n/g, " | ")}`);
    const [host, port] = [await secret("host"), await secret("port")];
    expect(logs).toContain(`connects through the pool: postgresql://${host}:${port}/analytics-pool?sslmode=verify-full&sslrootcert=/bindings/analytics-pool/ca.crt`);
    expect(logs).toContain("pool: analytics-pool type: postgresql");
    expect(logs).toContain("ca.crt: PEM certificate at /bindings/analytics-pool/ca.crt");
    expect(logs).not.toContain(await secret("password"));
    expect(await kubectl(["get", "databaseconnectionpool", "analytics-pool", "-o", "jsonpath={.status.binding.name}"])).toBe("analytics-pool-connection");
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
    console.log(`[e2e] rotation: Secret rewritten ${secs(secretMillis)} after the request, new password inside the pod ${secs(fileMillis)} after it (kubelet syncFrequency ${KUBELET_SYNC_SECONDS} s)`);
    expect(after).toBe(await emulatorPasswordHash());
    expect(await kubectl(["get", "manageddatabase", "orders", "-o", "jsonpath={.status.lastRequests.resetCredentials.token}"])).toBe("rotate-1");
  });

  it("the operator pod ran all of that without a restart or a failed liveness probe, and logged only JSON", async () => {
    const name = firstPod;
    const startedAt = Date.parse(await kubectl(["get", "pod", name, "-n", NS, "-o", "jsonpath={.status.containerStatuses[0].state.running.startedAt}"]));
    // At least two liveness probes have run (initial delay 5 s, period 10 s), as the kubelet counts
    // them: its /metrics/probes, read inside the namespace (the API server proxies to no loopback
    // address; the kubelet there takes anonymous reads and serves a self-signed certificate).
    const probes = async (): Promise<number> => {
      const script = `require("node:https").get({ host: "127.0.0.1", port: ${String(NETNS_PORTS.kubelet)}, path: "/metrics/probes", rejectUnauthorized: false }, (r) => { let b = ""; r.setEncoding("utf8").on("data", (c) => { b += c; }).on("end", () => { if (r.statusCode !== 200) process.exit(3); process.stdout.write(b); }); }).on("error", () => process.exit(4));`;
      const r = await cluster().exec(process.execPath, ["-e", script]);
      if (r.code !== 0) throw new Error(`the kubelet's /metrics/probes: exit ${String(r.code)} ${r.stderr}`);
      return r.stdout.split("\n")
        .filter((l) => l.startsWith("prober_probe_total{") && l.includes('probe_type="Liveness"') && l.includes(`pod="${name}"`))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    };
    await until("two liveness probes", 60_000, async () => ((await probes()) >= 2 ? true : undefined), 500);
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
    console.log(`[e2e] operator pod ${name}: ${secs(Date.now() - startedAt)} running, restartCount 0, ${lines.length} JSON log lines`);
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

    // Follow the leader's log to its end, then delete it (SIGTERM; grace period 30 s). The
    // Deployment replaces it at once: the standby or the replacement, whichever asks first after
    // the release, takes the lease.
    let attached!: () => void;
    const streaming = new Promise<void>((resolve) => { attached = resolve; });
    // Its first lines (the log so far) show it is following.
    const followed = cluster().kubectl(["logs", "-f", leader, "-n", NS], { timeoutMs: 60_000, onStdout: () => { attached(); } });
    await streaming;
    const t0 = Date.now();
    await kubectl(["delete", "pod", leader, "-n", NS, "--wait=false"]);
    const newLeader = await until("another replica takes the lease", 40_000, async () => {
      const h = await leaseHolder();
      return h !== "" && h !== leader ? h : undefined;
    }, 200).catch(async (err: unknown) => {
      const lease = await cluster().kubectl(["get", "lease", `${RELEASE}-linode-operator`, "-n", NS, "-o", "yaml"]);
      const podList = await cluster().kubectl(["get", "pods", "-n", NS, "-o", "wide"]);
      const kubelet = (await readFile(join(cluster().dir, "kubelet.log"), "utf8").catch(() => "")).split("\n")
        .filter((l) => l.includes(leader)).slice(-40).join("\n");
      console.log(`[e2e] no takeover. Lease:\n${lease.stdout}${lease.stderr}\npods:\n${podList.stdout}\nkubelet on ${leader}:\n${kubelet}`);
      throw err;
    });
    const takeoverMillis = Date.now() - t0;
    await until("the old leader pod gone", 40_000, async () =>
      (await cluster().kubectl(["get", "pod", leader, "-n", NS])).code !== 0 ? true : undefined, 250);
    const goneMillis = Date.now() - t0;
    const log = (await followed).stdout;
    console.log(`[e2e] failover: ${newLeader === standby ? "the standby" : "the replacement pod"} ${newLeader} holds the lease ${secs(takeoverMillis)} after the leader pod was deleted; the old pod was gone after ${secs(goneMillis)} (grace period 30 s)`);
    expect(await operatorPods()).toContain(newLeader);
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
    // The current-platform database the pool's application test adopted (its pool went with the examples).
    await kubectl(["delete", "manageddatabase", "analytics-current", "--ignore-not-found", "--timeout=180s"]);
    const left = await emulatorGet<{ data: unknown[] }>("/v4/databases/instances");
    console.log(`[e2e] kubectl delete -f examples/ returned after ${secs(Date.now() - t0)}; databases left in the emulator: ${left.data.length}`);
    expect(left.data).toEqual([]);
    expect((await emulatorGet<{ data: unknown[] }>("/v4/nodebalancers")).data).toEqual([]);
    expect((await kubectl(["get", "manageddatabases,nodebalancers", "-A", "-o", "name"])).trim()).toBe("");

    const t1 = Date.now();
    await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "2m"]);
    const kinds = "deployments,replicasets,pods,services,serviceaccounts,secrets,configmaps,roles,rolebindings,poddisruptionbudgets";
    // Pods and ReplicaSets go by garbage collection after the Deployment: wait for it.
    await until("no chart object left (throws after 90 s)", 90_000, async () =>
      ((await kubectl(["get", kinds, "-n", NS, "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "name"])).trim() === "" ? true : undefined), 500);
    expect((await kubectl(["get", "clusterroles,clusterrolebindings", "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "name"])).trim()).toBe("");
    // The Lease is the operator's own object, not the chart's: owned by the chart's
    // ServiceAccount, it goes with it (the last leader could not release it: its RBAC went first).
    await until("the Lease garbage-collected", 60_000, async () =>
      ((await cluster().kubectl(["get", "lease", `${RELEASE}-linode-operator`, "-n", NS])).code !== 0 ? true : undefined), 500);
    console.log(`[e2e] helm uninstall: the release's objects and the operator's Lease gone after ${secs(Date.now() - t1)}; the CRDs stay (Helm never deletes CRDs)`);
  });

  it("stop() leaves no processes, mounts, netns, links, cgroups, CNI state or iptables rules", async () => {
    const rc = cluster();
    const pids = rc.pids();
    await rc.stop();
    const before = rc.hostBefore;
    const after = rc.hostAfter;
    expect(after).toBeDefined();
    if (after === undefined) return;
    expect(after.netns).toEqual(before.netns);
    // Only what this run made: a namespace left by an earlier, killed run is not this stop()'s.
    expect(after.netns.filter((n) => !before.netns.includes(n)).join(" ")).not.toMatch(/cni-|linode-op-/);
    expect(after.links).toEqual(before.links);
    expect(after.links).not.toContain(rc.bridge);
    expect(after.mounts).toEqual(before.mounts);
    expect(after.iptables).toEqual(before.iptables);
    expect(after.kubepods).toEqual([]);
    const procs = await processes();
    expect(procs.filter((p) => pids.includes(p.pid))).toEqual([]);
    expect(procs.filter((p) => p.netns === rc.netnsId || p.cmdline.includes(rc.dir))).toEqual([]);
    expect((await readdir("/var/lib/cni/results").catch(() => [])).filter((f) => f.startsWith(rc.cniNetwork))).toEqual([]);
    expect(existsSync(rc.dir)).toBe(false);
    expect(existsSync(`/run/netns/${rc.netns}`)).toBe(false);
  });
});
