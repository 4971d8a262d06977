// Stopping the one-node real cluster so that nothing is left: pods through the API first (so
// CNI tears their network down), the kubelet, containerd's tasks and shims, the control plane
// (apiserver before etcd), then mounts, cgroups, the network namespace, CNI state and the
// kernel settings the kubelet changed. Only our own PIDs are ever signalled.
import { existsSync } from "node:fs";
import { readdir, readFile, readlink, rm, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ControlPlane } from "./control-plane.ts";
import { inNetns } from "./control-plane.ts";
import { execCapture } from "./exec.ts";
import { cgroupPids, kubepodsCgroups, mountPoints, processes, removeCgroups } from "./host-state.ts";
import type { Netns } from "./netns.ts";
import { containerdSocket, type NodeDirs } from "./node-config.ts";
import { running, sleep, stopProc, until, type Proc } from "./procs.ts";

// The kubelet sets these at start (it has no option not to); put them back.
const SYSCTLS = ["vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops"];
// Host paths containerd/kubelet/CNI/umount create outside our directory when they are missing
// (the kubelet's device-plugin socket dir is hard-coded under /var/lib/kubelet).
const HOST_DIRS = ["/run/containerd", "/var/log/containers", "/var/lib/cni", "/var/lib/cni/results", "/var/lib/kubelet", "/run/mount"];

export interface HostBefore { sysctls: Record<string, string>; existed: Record<string, boolean> }

export async function recordHostBefore(): Promise<HostBefore> {
  const sysctls: Record<string, string> = {};
  for (const s of SYSCTLS) sysctls[s] = (await readFile(`/proc/sys/${s}`, "utf8").catch(() => "")).trim();
  return { sysctls, existed: Object.fromEntries(HOST_DIRS.map((d) => [d, existsSync(d)])) };
}

interface TeardownArgs {
  dirs: NodeDirs; before: HostBefore; procs: Proc[]; emulators: { stop(): Promise<void> }[];
  cp: ControlPlane | undefined; netns: Netns | undefined; binDir: string; keep: boolean;
  kubeconfig: string | undefined; log: (l: string) => void;
}

export async function teardownNode(a: TeardownArgs): Promise<void> {
  const errors: string[] = [];
  const slow: string[] = [];
  const step = async (what: string, fn: () => Promise<void>): Promise<void> => {
    const s = Date.now();
    try { await fn(); } catch (err) { errors.push(`${what}: ${(err as Error).message}`); }
    if (Date.now() - s >= 1_000) slow.push(`${what} ${Date.now() - s} ms`);
  };
  const sock = containerdSocket(a.dirs);
  const ctr = (args: string[]): ReturnType<typeof execCapture> => execCapture("ctr", ["-a", sock, "-n", "k8s.io", ...args], { timeoutMs: 30_000 });
  const byName = (n: string): Proc | undefined => a.procs.find((p) => p.name === n);
  const kubelet = byName("kubelet");
  const containerd = byName("containerd");
  const t0 = Date.now();

  await step("scheduler", async () => { const s = byName("kube-scheduler"); if (s) await stopProc(s, 10_000); });
  // Pods through the API while the kubelet runs, so sandboxes and their netns are torn down by CNI.
  if (a.kubeconfig !== undefined && a.netns !== undefined && kubelet !== undefined && running(kubelet)) {
    const kubectl = (args: string[]): ReturnType<typeof execCapture> =>
      execCapture(...inNetns(a.netns?.name, join(a.binDir, "kubectl"), ["--kubeconfig", a.kubeconfig ?? "", ...args]), { timeoutMs: 90_000 });
    await step("delete workloads", async () => {
      await kubectl(["delete", "deployments,replicasets,statefulsets,daemonsets,jobs", "--all", "-A", "--wait=false"]);
      const r = await kubectl(["delete", "pods", "--all", "-A", "--grace-period=1", "--wait", "--timeout=60s"]);
      if (r.code !== 0) throw new Error(r.stderr.trim());
    });
    await step("sandboxes gone", async () => {
      await until("containerd tasks to stop", 30_000, async () => {
        const r = await ctr(["tasks", "ls", "-q"]);
        return r.code !== 0 || r.stdout.trim() === "" ? true : undefined;
      }, 300);
    });
  }
  // Pod network namespaces containerd made (bind mounts under /run/netns), in case some remain.
  const podNetns = new Set<string>();
  if (containerd !== undefined && running(containerd)) {
    await step("list containers", async () => {
      const ids = (await ctr(["containers", "ls", "-q"])).stdout.split("\n").filter(Boolean);
      for (const id of ids) {
        const info = JSON.parse((await ctr(["containers", "info", id])).stdout || "{}") as { Spec?: { linux?: { namespaces?: { type: string; path?: string }[] } } };
        for (const n of info.Spec?.linux?.namespaces ?? []) if (n.type === "network" && n.path?.startsWith("/var/run/netns/cni-") === true) podNetns.add(n.path.replace("/var/run", "/run"));
      }
    });
  }
  await step("kubelet", async () => { if (kubelet) await stopProc(kubelet, 15_000); });
  if (containerd !== undefined && running(containerd)) {
    await step("containers", async () => {
      for (const id of (await ctr(["tasks", "ls", "-q"])).stdout.split("\n").filter(Boolean)) {
        await ctr(["tasks", "kill", "-s", "SIGKILL", id]);
        await ctr(["tasks", "rm", "-f", id]);
      }
      for (const id of (await ctr(["containers", "ls", "-q"])).stdout.split("\n").filter(Boolean)) await ctr(["containers", "rm", id]);
    });
    await step("containerd", () => stopProc(containerd, 15_000));
  }
  // Shims re-parent to init; ours are the ones given our socket address.
  await step("shims", async () => {
    for (const p of await processes()) {
      if (p.cmdline.includes("containerd-shim") && p.cmdline.includes(sock)) { try { process.kill(p.pid, "SIGKILL"); } catch { /* gone */ } }
    }
  });
  for (const e of a.emulators) await step("emulator", () => e.stop());
  await step("control plane", async () => { await a.cp?.stop(); });
  await step("other processes", async () => { for (const p of a.procs) await stopProc(p, 10_000); });

  // Container processes still in a kubepods cgroup were started by our containerd (the only one).
  await step("cgroups", async () => {
    for (let i = 0; ; i++) {
      const dirs = await kubepodsCgroups();
      for (const d of dirs) for (const pid of await cgroupPids(d)) { try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } }
      const left = await removeCgroups(dirs);
      if (left.length === 0) return;
      if (i >= 20) throw new Error(`cannot remove ${left.join(", ")}`);
      await sleep(250);
    }
  });
  await step("mounts", async () => {
    const ours = (mp: string): boolean => mp.startsWith(`${a.dirs.dir}/`) || podNetns.has(mp);
    const mps = (await mountPoints()).filter(ours).sort((x, y) => y.length - x.length);
    for (const mp of mps) {
      if ((await execCapture("umount", [mp])).code !== 0) await execCapture("umount", ["-l", mp]);
    }
    for (const p of podNetns) await rm(p, { force: true });
    const still = (await mountPoints()).filter(ours);
    if (still.length > 0) throw new Error(`still mounted: ${still.join(", ")}`);
  });
  await step("netns", async () => { await a.netns?.delete(); });
  await step("CNI state", async () => {
    // libcni caches results as <network>-<container>-<ifname> in /var/lib/cni/results.
    const results = "/var/lib/cni/results";
    for (const f of await readdir(results).catch(() => [])) if (f.startsWith(`${a.dirs.network}-`)) await rm(join(results, f), { force: true });
    for (const d of ["/var/lib/cni/results", "/var/lib/cni"]) {
      if (a.before.existed[d] === false) await rmdir(d).catch(() => undefined);
    }
  });
  await step("container log links", async () => {
    const d = "/var/log/containers";
    for (const f of await readdir(d).catch(() => [])) {
      const target = await readlink(join(d, f)).catch(() => "");
      if (target.startsWith(`${a.dirs.dir}/`)) await rm(join(d, f), { force: true });
    }
    if (a.before.existed[d] === false) await rmdir(d).catch(() => undefined);
  });
  await step("/run/containerd", async () => {
    // Shim sockets live under /run/containerd/s whatever the config says; nothing else uses it here.
    if (a.before.existed["/run/containerd"] === false) await rm("/run/containerd", { recursive: true, force: true });
  });
  await step("/var/lib/kubelet, /run/mount", async () => {
    for (const d of ["/var/lib/kubelet", "/run/mount"]) if (a.before.existed[d] === false) await rm(d, { recursive: true, force: true });
  });
  await step("sysctls", async () => {
    for (const [k, v] of Object.entries(a.before.sysctls)) if (v !== "") await writeFile(`/proc/sys/${k}`, v);
  });
  if (!a.keep) await step("dir", () => rm(a.dirs.dir, { recursive: true, force: true }));
  a.log(`teardown in ${Date.now() - t0} ms${slow.length > 0 ? ` (${slow.join(", ")})` : ""}${errors.length > 0 ? ` with errors: ${errors.join("; ")}` : ""}`);
  if (errors.length > 0) throw new Error(`teardown incomplete: ${errors.join("; ")}`);
}
