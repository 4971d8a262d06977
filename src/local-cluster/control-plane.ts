// A real local Kubernetes control plane for tests and the demo, in the spirit of
// controller-runtime's envtest: etcd + kube-apiserver (+ kube-controller-manager for garbage
// collection, namespace deletion and default ServiceAccounts) built by ./build.sh, on free
// loopback ports, with a token admin, RBAC on and service-account signing keys so
// TokenRequest works. Everything lives in one temp dir that stop() removes.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { mkdtemp, rm, writeFile, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { Agent, fetch } from "undici";
import { execCapture } from "./exec.ts";
import { NETNS_PORTS } from "./netns.ts";

const run = promisify(execFile);
// From src/ (tests, `node src/...`) or dist/ (the built CLI), the script stays in src/.
const buildScript = [new URL("./build.sh", import.meta.url), new URL("../../src/local-cluster/build.sh", import.meta.url)]
  .map((u) => fileURLToPath(u)).find((p) => existsSync(p)) ?? "build.sh";

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager (GC of owned objects, namespace deletion, default SA). */
  controllerManager?: boolean;
  /** Keep logs and the temp dir after stop (for debugging). */
  keep?: boolean;
  /**
   * Keep the ServiceAccount admission plugin on, so pods get their token volume mounted (a real
   * kubelet needs it; without a kubelet it only gets in the way). Default false: disabled.
   */
  serviceAccountAdmission?: boolean;
  /** More kube-controller-manager controllers, e.g. root-ca-certificate-publisher-controller. */
  extraControllers?: string[];
  /**
   * Run every process inside this network namespace (`nsenter --net=/run/netns/<name>`): the
   * real one-node cluster must have no route out (netns.ts says why).
   * The apiserver is then reachable only from inside; readiness is probed with kubectl there.
   */
  netns?: string;
  /**
   * One more address the apiserver serves on (listening on all of the namespace's addresses,
   * with this IP in its certificate): pods on the pod network reach it there. Only with netns.
   */
  podReachableIp?: string;
  /** "oldest": the oldest Kubernetes the chart supports (build.sh's kube-apiserver-oldest). */
  apiserver?: "current" | "oldest";
}

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  server: string;
  dir: string;
  binDir: string;
  caFile: string;
  adminToken: string;
  adminKubeconfig: string;
  /** Milliseconds from spawning etcd to the apiserver's /readyz answering ok. */
  startMillis: number;
  version: string;
  stop(): Promise<void>;
  /** Kills only the kube-apiserver (SIGKILL: a crash) and starts it again on the same port and data. */
  restartApiServer(): Promise<void>;
  /** Kills only the kube-apiserver (SIGKILL: a crash); etcd and the rest keep running. No-op if stopped. */
  stopApiServer(): Promise<void>;
  /** Starts a stopped kube-apiserver again on the same port and data, until /readyz. No-op if running. */
  startApiServer(): Promise<void>;
  pids(): number[];
}

/**
 * Builds (or finds in the cache) the binaries and returns their directory; `withKubelet` adds
 * the kubelet and kube-scheduler (the one-node real cluster), `withOldest` the kube-apiserver
 * of the oldest Kubernetes the chart supports.
 */
export async function controlPlaneBinaries(opts: { withKubelet?: boolean; withOldest?: boolean } = {}): Promise<string> {
  // A cold build takes minutes: say what it is doing (its own lines, not Go's download chatter).
  let partial = "";
  const r = await execCapture("bash", [buildScript], {
    env: { ...process.env, ...(opts.withKubelet === true ? { WITH_KUBELET: "1" } : {}), ...(opts.withOldest === true ? { WITH_OLDEST: "1" } : {}) },
    timeoutMs: 60 * 60 * 1000,
    onStderr: (chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) if (l.startsWith("[control-plane]")) process.stderr.write(`${l}\n`);
    },
  });
  if (r.code !== 0) throw new Error(`build.sh exited ${r.code}: ${r.stderr.trim().split("\n").slice(-20).join("\n")}`);
  const dir = r.stdout.trim().split("\n").pop();
  if (dir === undefined || dir === "") throw new Error("build.sh printed no bin directory");
  return dir;
}

/**
 * A loopback port that is free now, for a server started next. Picked below the kernel's
 * ephemeral range: a port the kernel handed out for `listen(0)` can be taken again at once as
 * the local port of any outgoing connection (the machine makes thousands during a test run),
 * and etcd then fails to bind it.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
    .then((s) => Number(s.trim().split(/\s+/)[0]), () => 32_768);
  const low = 10_000;
  const high = Math.max(low + 1_000, Number.isFinite(ephemeralLow) ? ephemeralLow : 32_768);
  for (let i = 0; i < 50; i++) {
    const candidate = low + Math.floor(Math.random() * (high - low));
    if (await canBind(candidate)) return candidate;
  }
  throw new Error("no free loopback port below the ephemeral range");
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", () => { resolve(false); });
    srv.listen(port, "127.0.0.1", () => { srv.close(() => { resolve(true); }); });
  });
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run("openssl", args, { cwd: dir });
}

async function makeCertificates(dir: string, extraIps: string[]): Promise<void> {
  await openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
    "-subj", "/CN=linode-operator-test-ca", "-keyout", "ca.key", "-out", "ca.crt");
  await openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
    "-keyout", "apiserver.key", "-out", "apiserver.csr");
  await writeFile(join(dir, "ext"), `subjectAltName=${["IP:127.0.0.1", ...extraIps.map((ip) => `IP:${ip}`), "DNS:localhost"].join(",")}\nextendedKeyUsage=serverAuth\n`);
  await openssl(dir, "x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
    "-CAcreateserial", "-days", "3650", "-extfile", "ext", "-out", "apiserver.crt");
  await openssl(dir, "genrsa", "-out", "sa.key", "2048");
  await openssl(dir, "rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub");
}

export function kubeconfigYaml(opts: { server: string; caData: string; token: string; user: string; namespace?: string }): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${opts.server}`,
    `    certificate-authority-data: ${Buffer.from(opts.caData).toString("base64")}`,
    "users:",
    `- name: ${opts.user}`,
    "  user:",
    `    token: ${opts.token}`,
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    `    user: ${opts.user}`,
    ...(opts.namespace !== undefined ? [`    namespace: ${opts.namespace}`] : []),
    "current-context: test",
    "",
  ].join("\n");
}

interface Proc { name: string; child: ChildProcess; exited: Promise<void> }

/** The command line that runs `cmd args` inside the network namespace, or as is without one. */
export function inNetns(netns: string | undefined, cmd: string, args: string[]): [string, string[]] {
  // nsenter, not `ip netns exec`: the latter remounts /sys, which hides the cgroup tree from
  // the kubelet. nsenter execs the command, so the child's pid is the command's own.
  return netns === undefined ? [cmd, args] : ["nsenter", [`--net=/run/netns/${netns}`, "--", cmd, ...args]];
}

function startProcess(dir: string, bin: string, name: string, args: string[], netns?: string): Proc {
  const log = createWriteStream(join(dir, `${name}.log`));
  const [cmd, argv] = inNetns(netns, join(bin, name), args);
  const child = spawn(cmd, argv, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.once("exit", () => { resolve(); }));
  return { name, child, exited };
}

async function stopProcess(p: Proc, graceMillis: number): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(graceMillis === 0 ? "SIGKILL" : "SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMillis);
  await p.exited;
  clearTimeout(timer);
}

async function waitReady(url: string, ca: string, token: string, deadlineMillis: number, procs: Proc[], netns?: { name: string; kubectl: string; kubeconfig: string; env: NodeJS.ProcessEnv }): Promise<void> {
  const dispatcher = new Agent({ connect: { ca } });
  const end = Date.now() + deadlineMillis;
  // This process stays in the host's network namespace; inside another one, ask kubectl there.
  const probe = netns === undefined
    ? async (): Promise<boolean> => {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, dispatcher });
      await res.arrayBuffer();
      return res.ok;
    }
    : async (): Promise<boolean> => {
      const [cmd, args] = inNetns(netns.name, netns.kubectl, ["--kubeconfig", netns.kubeconfig, "get", "--raw", "/readyz", "--request-timeout=2s"]);
      await run(cmd, args, { timeout: 5_000, env: netns.env });
      return true;
    };
  try {
    for (;;) {
      for (const p of procs) {
        if (p.child.exitCode !== null) throw new Error(`${p.name} exited with code ${p.child.exitCode} before the apiserver was ready`);
      }
      try {
        if (await probe()) return;
      } catch { /* not listening yet */ }
      if (Date.now() > end) throw new Error(`${url} not ready after ${deadlineMillis} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await dispatcher.close();
  }
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binDir = await controlPlaneBinaries({ withOldest: options.apiserver === "oldest" });
  const dir = await mkdtemp(join(tmpdir(), "linode-operator-cp-"));
  if (options.podReachableIp !== undefined && options.netns === undefined) throw new Error("podReachableIp needs a netns");
  await makeCertificates(dir, options.podReachableIp === undefined ? [] : [options.podReachableIp]);
  const caFile = join(dir, "ca.crt");
  const ca = await readFile(caFile, "utf8");
  const adminToken = randomBytes(32).toString("hex");
  await writeFile(join(dir, "tokens.csv"), `${adminToken},admin,admin-uid,"system:masters"\n`);
  // Inside a network namespace of its own the usual ports are free by construction.
  const port = async (inNetnsPort: number): Promise<number> => (options.netns !== undefined ? inNetnsPort : freePort());
  const [etcdPort, peerPort, apiPort] = [await port(NETNS_PORTS.etcd), await port(NETNS_PORTS.etcdPeer), await port(NETNS_PORTS.apiserver)];
  const server = `https://127.0.0.1:${apiPort}`;
  const adminKubeconfig = join(dir, "admin.kubeconfig");
  await writeFile(adminKubeconfig, kubeconfigYaml({ server, caData: ca, token: adminToken, user: "admin" }), { mode: 0o600 });

  const { netns } = options;
  // kubectl's discovery cache goes to our dir, not ~/.kube (the netns cluster leaves nothing).
  const inside = netns === undefined ? undefined
    : { name: netns, kubectl: join(binDir, "kubectl"), kubeconfig: adminKubeconfig, env: { ...process.env, KUBECACHEDIR: join(dir, "kube-cache") } };
  const started = Date.now();
  const etcd = startProcess(dir, binDir, "etcd", [
    `--data-dir=${join(dir, "etcd")}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    "--unsafe-no-fsync=true",
    "--log-level=warn",
  ], netns);
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    // All addresses only inside a network namespace, which has no other interface than lo and
    // the cluster's bridge.
    `--bind-address=${options.podReachableIp === undefined ? "127.0.0.1" : "0.0.0.0"}`, "--advertise-address=127.0.0.1", `--secure-port=${apiPort}`,
    "--tls-cert-file=apiserver.crt", "--tls-private-key-file=apiserver.key", "--client-ca-file=ca.crt",
    "--token-auth-file=tokens.csv", "--authorization-mode=RBAC",
    `--service-account-issuer=${server}`, "--service-account-key-file=sa.pub",
    "--service-account-signing-key-file=sa.key", "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    ...(options.serviceAccountAdmission === true ? [] : ["--disable-admission-plugins=ServiceAccount"]),
  ];
  const procs: Proc[] = [etcd];
  const apiserverBin = options.apiserver === "oldest" ? "kube-apiserver-oldest" : "kube-apiserver";
  let api = startProcess(dir, binDir, apiserverBin, apiArgs, netns);
  procs.push(api);
  const stopAll = async (): Promise<void> => {
    // The apiserver first: stopped after etcd it hangs for ~15 s retrying storage.
    for (const p of [...procs].reverse()) await stopProcess(p, 20_000);
  };
  try {
    await waitReady(`${server}/readyz`, ca, adminToken, 60_000, procs, inside);
  } catch (err) {
    await stopAll();
    const log = await readFile(join(dir, `${apiserverBin}.log`), "utf8").catch(() => "");
    if (options.keep !== true) await rm(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${log.slice(-3000)}`, { cause: err });
  }
  const startMillis = Date.now() - started;
  if (options.controllerManager !== false) {
    const kcmPort = await port(NETNS_PORTS.controllerManager);
    procs.push(startProcess(dir, binDir, "kube-controller-manager", [
      `--kubeconfig=${adminKubeconfig}`, `--authentication-kubeconfig=${adminKubeconfig}`,
      `--authorization-kubeconfig=${adminKubeconfig}`,
      // clusterrole-aggregation: a ClusterRole the chart labels for another controller's
      // aggregating one (servicebinding.io) takes effect as on a real cluster.
      `--controllers=${["garbage-collector-controller", "namespace-controller", "serviceaccount-controller",
        "serviceaccount-token-controller", "clusterrole-aggregation-controller", ...(options.extraControllers ?? [])].join(",")}`,
      "--service-account-private-key-file=sa.key", "--root-ca-file=ca.crt", "--leader-elect=false",
      "--bind-address=127.0.0.1", `--secure-port=${kcmPort}`,
    ], netns));
  }
  const stopApiServer = (): Promise<void> => stopProcess(api, 0);
  const startApiServer = async (): Promise<void> => {
    if (api.child.exitCode === null && api.child.signalCode === null) return;
    const i = procs.indexOf(api);
    api = startProcess(dir, binDir, apiserverBin, apiArgs, netns);
    procs[i] = api;
    await waitReady(`${server}/readyz`, ca, adminToken, 60_000, procs, inside);
  };
  const { stdout: versionJson } = await run(...inNetns(netns, join(binDir, "kubectl"), ["--kubeconfig", adminKubeconfig, "version", "-o", "json"]),
    inside === undefined ? {} : { env: inside.env });
  const version = (JSON.parse(versionJson) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion;

  return {
    server, dir, binDir, caFile, adminToken, adminKubeconfig, startMillis, version,
    pids: () => procs.map((p) => p.child.pid).filter((p): p is number => p !== undefined),
    async restartApiServer() {
      await stopApiServer();
      await startApiServer();
    },
    stopApiServer, startApiServer,
    async stop() {
      await stopAll();
      if (options.keep !== true) await rm(dir, { recursive: true, force: true });
    },
  };
}
