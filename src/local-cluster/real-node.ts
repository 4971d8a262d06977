// A one-node real Kubernetes cluster for tests: the control plane of control-plane.ts, plus
// kube-scheduler, containerd (+ runc, bridge CNI) and a kubelet, all inside a network
// namespace of its own with no route out (netns.ts says why). Nothing is
// pulled: the pause image is built locally; tests import the images they need.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { controlPlaneBinaries, inNetns, startControlPlane, type ControlPlane } from "./control-plane.ts";
import { execCapture, type ExecResult } from "./exec.ts";
import { ensureHostPackages } from "./host-packages.ts";
import { hostSnapshot, type HostSnapshot } from "./host-state.ts";
import { acquireMachineLock } from "./machine-lock.ts";
import { createNetns, NETNS_PORTS, NODE_IP, type Netns } from "./netns.ts";
import { cniConflist, containerdSocket, containerdToml, kubeletConfigYaml, registryHostsToml, type NodeDirs } from "./node-config.ts";
import { PAUSE_IMAGE, pauseArchive } from "./oci-archive.ts";
import { startLogged, stopProc, until, type Proc } from "./procs.ts";
import { teardownNode, type HostBefore, recordHostBefore } from "./teardown.ts";

export const NODE_NAME = "localhost";

export interface RealClusterOptions {
  /** Keep the cluster directory (logs) after stop. */
  keep?: boolean;
  log?: (line: string) => void;
}

export interface NetnsEmulator { url: string; pid: number; stop(): Promise<void> }

/** An OCI registry inside the network namespace, on loopback: containerd pulls from it over plain HTTP. */
export interface NetnsRegistry { host: string; pid: number; stop(): Promise<void> }

export interface RealCluster {
  kubeconfig: string;
  /** https://127.0.0.1:PORT, reachable only inside the network namespace. */
  server: string;
  /** The node's address: pods on the pod network reach the apiserver (and an emulator bound to it) here. */
  nodeIp: string;
  apiPort: number;
  netns: string;
  /** The namespace's inode ("net:[N]"), to find any process still in it. */
  netnsId: string;
  dir: string;
  binDir: string;
  nodeName: string;
  /** Network name of the CNI config (libcni cache files carry it). */
  cniNetwork: string;
  bridge: string;
  timings: { controlPlaneMillis: number; nodeReadyMillis: number; totalMillis: number };
  /** Host state taken before anything started (under the machine lock). */
  hostBefore: HostSnapshot;
  /** Host state taken at the end of stop(), before the machine lock is released. */
  hostAfter: HostSnapshot | undefined;
  /** PIDs of the processes started (control plane, scheduler, containerd, kubelet, emulators). */
  pids(): number[];
  /** Runs a command inside the network namespace; never throws on a non-zero exit. */
  exec(cmd: string, args: string[], opts?: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<ExecResult>;
  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number; onStdout?: (chunk: string) => void }): Promise<ExecResult>;
  helm(args: string[], opts?: { timeoutMs?: number }): Promise<ExecResult>;
  /** The node's containerd socket (`ctr --address`; a file, so reachable from outside the network namespace too). */
  containerdAddress: string;
  /** `ctr images import` of a docker-archive tarball into the CRI namespace. */
  importImage(tarPath: string): Promise<void>;
  /** `linode-operator emulator` inside the namespace; resolves once it prints its URL. */
  startEmulator(args?: string[]): Promise<NetnsEmulator>;
  /** distribution's `registry` inside the namespace (127.0.0.1:5000, storage in the cluster's directory); resolves once it answers. */
  startRegistry(): Promise<NetnsRegistry>;
  stop(): Promise<void>;
}

const cliMain = [new URL("../cli/main.ts", import.meta.url), new URL("../cli/main.js", import.meta.url)]
  .map((u) => fileURLToPath(u)).find((p) => existsSync(p));

async function which(cmd: string, fallback: string): Promise<string> {
  const r = await execCapture("sh", ["-c", `command -v ${cmd}`]);
  return r.code === 0 && r.stdout.trim() !== "" ? r.stdout.trim() : fallback;
}

export async function startRealCluster(opts: RealClusterOptions = {}): Promise<RealCluster> {
  const log = opts.log ?? ((l: string) => { process.stderr.write(`[real-cluster] ${l}\n`); });
  const pre = await ensureHostPackages({ cluster: true });
  if (!pre.ok) throw new Error(`cannot start a real cluster: ${pre.reason}`);
  const binDir = await controlPlaneBinaries({ withKubelet: true });
  const pause = await pauseArchive();
  const unlock = await acquireMachineLock(15 * 60_000, log);
  const hostBefore = await hostSnapshot();
  const id = randomBytes(3).toString("hex");
  const dirs: NodeDirs = { dir: await mkdtemp(join(tmpdir(), "linode-operator-node-")), bridge: `lo-op${id}`, network: `linode-op-${id}`, nodeIp: NODE_IP };
  const { dir } = dirs;
  const before: HostBefore = await recordHostBefore();
  const procs: Proc[] = [];
  const emulators: NetnsEmulator[] = [];
  let netns: Netns | undefined;
  let cp: ControlPlane | undefined;
  // A crashed run must not leave daemons behind (mounts etc. need stop()).
  const killAll = (): void => { for (const p of [...procs].reverse()) { try { process.kill(p.pid, "SIGKILL"); } catch { /* gone */ } } };
  process.once("exit", killAll);

  let hostAfter: HostSnapshot | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      process.off("exit", killAll);
      try {
        await teardownNode({
          dirs, before, procs, emulators, cp, netns, binDir, keep: opts.keep === true,
          kubeconfig: cp?.adminKubeconfig, log,
        });
      } finally {
        hostAfter = await hostSnapshot().catch(() => undefined);
        await unlock();
      }
    })();
    return stopped;
  };

  const started = Date.now();
  try {
    netns = await createNetns(`linode-op-${id}`);
    const ns = netns.name;
    const netnsId = `net:[${(await stat(netns.path)).ino}]`;
    cp = await startControlPlane({
      netns: ns, serviceAccountAdmission: true, keep: opts.keep === true, podReachableIp: NODE_IP,
      // Token volumes need the kube-root-ca.crt ConfigMap; Deployments need their controllers;
      // the node lifecycle controller lifts the node's not-ready taint so pods schedule.
      extraControllers: ["root-ca-certificate-publisher-controller", "node-lifecycle-controller", "deployment-controller", "replicaset-controller"],
    });
    const controlPlaneMillis = Date.now() - started;
    const kubeconfig = cp.adminKubeconfig;
    const apiPort = Number(new URL(cp.server).port);
    log(`control plane ready in ${controlPlaneMillis} ms (${cp.server} inside netns ${ns})`);

    const schedPort = NETNS_PORTS.scheduler;
    procs.push(startLogged(dir, "kube-scheduler", join(binDir, "kube-scheduler"), [
      `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
      "--leader-elect=false", "--bind-address=127.0.0.1", `--secure-port=${schedPort}`,
    ], ns));

    await mkdir(join(dir, "cni", "net.d"), { recursive: true });
    await mkdir(join(dir, "containerd"), { recursive: true });
    await writeFile(join(dir, "cni", "net.d", "10-linode-op.conflist"), cniConflist(dirs));
    await writeFile(join(dir, "containerd", "config.toml"), containerdToml(dirs, {
      runc: await which("runc", "/usr/sbin/runc"), cniBin: "/usr/lib/cni", sandboxImage: PAUSE_IMAGE,
    }));
    const containerd = startLogged(dir, "containerd", await which("containerd", "/usr/bin/containerd"), ["--config", join(dir, "containerd", "config.toml")], ns);
    procs.push(containerd);
    const sock = containerdSocket(dirs);
    await until("containerd", 30_000, async () => {
      if (containerd.child.exitCode !== null) throw new Error(`containerd exited: ${await readFile(join(dir, "containerd.log"), "utf8").catch(() => "")}`);
      return (await execCapture("ctr", ["-a", sock, "version"], { timeoutMs: 5_000 })).code === 0 ? true : undefined;
    });
    const importImage = async (tar: string): Promise<void> => {
      const r = await execCapture("ctr", ["-a", sock, "-n", "k8s.io", "images", "import", tar], { timeoutMs: 300_000 });
      if (r.code !== 0) throw new Error(`ctr images import ${tar}: ${r.stderr}`);
    };
    await importImage(pause);

    const [kubeletPort, healthzPort] = [NETNS_PORTS.kubelet, NETNS_PORTS.kubeletHealthz];
    await writeFile(join(dir, "kubelet.yaml"), kubeletConfigYaml(dirs, { port: kubeletPort, healthzPort }));
    const kubelet = startLogged(dir, "kubelet", join(binDir, "kubelet"), [
      `--config=${join(dir, "kubelet.yaml")}`, `--kubeconfig=${kubeconfig}`, `--root-dir=${join(dir, "kubelet")}`,
      `--cert-dir=${join(dir, "kubelet", "pki")}`,
      // localhost: the apiserver reaches the kubelet on loopback for logs/exec; the node IP is
      // the /32 on lo (loopback node IPs are refused, and without one logs/exec find no address).
      `--hostname-override=${NODE_NAME}`, `--node-ip=${NODE_IP}`,
    ], ns);
    procs.push(kubelet);

    // Discovery and HTTP caches in our directory, not in ~/.kube.
    const toolEnv = { ...process.env, KUBECACHEDIR: join(dir, "kube-cache") };
    const kubectl = (args: string[], o: { input?: string; timeoutMs?: number; onStdout?: (chunk: string) => void } = {}): Promise<ExecResult> =>
      execCapture(...inNetns(ns, join(binDir, "kubectl"), ["--kubeconfig", kubeconfig, ...args]), { ...o, env: toolEnv });
    await until("node Ready", 120_000, async () => {
      if (kubelet.child.exitCode !== null) throw new Error(`kubelet exited: ${(await readFile(join(dir, "kubelet.log"), "utf8").catch(() => "")).slice(-3000)}`);
      const r = await kubectl(["get", "node", NODE_NAME, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}|{.spec.taints}"]);
      return r.code === 0 && r.stdout.startsWith("True|") && !r.stdout.includes("not-ready") ? true : undefined;
    }, 300);
    const nodeReadyMillis = Date.now() - started;
    log(`node Ready in ${nodeReadyMillis} ms`);
    const cpRef = cp;

    return {
      kubeconfig, server: cp.server, nodeIp: NODE_IP, apiPort, netns: ns, netnsId, dir, binDir, nodeName: NODE_NAME,
      cniNetwork: dirs.network, bridge: dirs.bridge,
      timings: { controlPlaneMillis, nodeReadyMillis, totalMillis: nodeReadyMillis },
      hostBefore,
      get hostAfter() { return hostAfter; },
      pids: () => [...cpRef.pids(), ...procs.map((p) => p.pid), ...emulators.map((e) => e.pid)],
      exec: (cmd, args, o = {}) => execCapture(...inNetns(ns, cmd, args), o),
      kubectl,
      helm: (args, o = {}) => execCapture(...inNetns(ns, join(binDir, "helm"), ["--kubeconfig", kubeconfig, ...args]), {
        ...o,
        env: { ...toolEnv, HELM_CACHE_HOME: join(dir, "helm", "cache"), HELM_CONFIG_HOME: join(dir, "helm", "config"), HELM_DATA_HOME: join(dir, "helm", "data") },
      }),
      containerdAddress: sock,
      importImage,
      startEmulator: async (args = []) => {
        const e = await startNetnsEmulator(ns, args);
        emulators.push(e);
        return e;
      },
      startRegistry: async () => {
        const host = `127.0.0.1:${String(NETNS_PORTS.registry)}`;
        const conf = join(dir, "registry.yml");
        await writeFile(conf, `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, "registry")}\n  delete:\n    enabled: true\nhttp:\n  addr: ${host}\n`);
        // containerd reads certs.d/<host>/hosts.toml at each pull: plain HTTP for this one.
        await mkdir(join(dir, "containerd", "certs.d", host), { recursive: true });
        await writeFile(join(dir, "containerd", "certs.d", host, "hosts.toml"), registryHostsToml(host));
        const proc = startLogged(dir, "registry", join(binDir, "registry"), ["serve", conf], ns);
        procs.push(proc);
        await until("registry", 30_000, async () => {
          if (proc.child.exitCode !== null) throw new Error(`registry exited: ${await readFile(join(dir, "registry.log"), "utf8").catch(() => "")}`);
          const r = await execCapture(...inNetns(ns, process.execPath, ["-e", `fetch("http://${host}/v2/").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`]), { timeoutMs: 5_000 });
          return r.code === 0 ? true : undefined;
        });
        return { host, pid: proc.pid, stop: () => stopProc(proc, 5_000) };
      },
      stop,
    };
  } catch (err) {
    log(`start failed, tearing down: ${(err as Error).message}`);
    await stop().catch((e: unknown) => { log(`teardown after failed start: ${(e as Error).message}`); });
    throw err;
  }
}

/** `linode-operator emulator` inside the network namespace, so the addresses it invents stay unreachable. */
export async function startNetnsEmulator(netns: string, args: string[]): Promise<NetnsEmulator> {
  if (cliMain === undefined) throw new Error("cannot find the linode-operator CLI (src/cli/main.ts or dist/cli/main.js)");
  const [cmd, argv] = inNetns(netns, process.execPath, [cliMain, "emulator", "--port", "0", ...args]);
  const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => { resolve(); }));
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => { stderr += c.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => { reject(new Error(`emulator printed no URL in 30 s: ${stderr}`)); }, 30_000);
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) { clearTimeout(timer); resolve(m[1]); }
    });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`emulator exited (${code}): ${stderr}`)); });
  });
  child.stdout.resume();
  const pid = child.pid ?? 0;
  return {
    url, pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await stopProc({ name: "emulator", child, exited, pid }, 10_000);
    },
  };
}

