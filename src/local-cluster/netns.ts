// A network namespace with no route out: only `lo` is up, plus one /32 on lo that routes
// nowhere (the node's address, since the kubelet refuses loopback node IPs). Every cluster
// process, kubectl/helm call and the emulator run in it: this machine has a default route, and
// a pod using the in-cluster config would otherwise reach the `kubernetes` Service IP through it
// (no kube-proxy), out of the machine; in here it fails at once with ENETUNREACH.
import { existsSync } from "node:fs";
import { readFile, readdir, rmdir } from "node:fs/promises";
import { execCapture } from "./exec.ts";

export const NODE_IP = "198.18.0.1";

/**
 * Listening ports inside the namespace: Kubernetes' usual ones, fixed. Nothing else runs there,
 * and they lie below the ephemeral range (32768+), from which the kernel gives out the ports of
 * outgoing connections and of servers bound to port 0 (containerd's streaming server, the
 * emulator). A port found free on the host's loopback says nothing about the namespace's.
 */
export const NETNS_PORTS = {
  etcd: 2379, etcdPeer: 2380, apiserver: 6443, kubeletHealthz: 10248, kubelet: 10250,
  controllerManager: 10257, scheduler: 10259,
  // An OCI registry (distribution's) a test may start: containerd pulls from it over plain HTTP.
  registry: 5000,
} as const;

async function ip(args: string[]): Promise<void> {
  const r = await execCapture("ip", args);
  if (r.code !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr.trim()}`);
}

async function runNetnsMounted(): Promise<boolean> {
  const mounts = await readFile("/proc/mounts", "utf8");
  return mounts.split("\n").some((l) => l.split(" ")[1] === "/run/netns");
}

export interface Netns {
  name: string;
  /** `nsenter --net=…` path. */
  path: string;
  delete(): Promise<void>;
}

export async function createNetns(name: string): Promise<Netns> {
  // `ip netns add` bind-mounts /run/netns onto itself the first time; undo that if it was us.
  const hadMount = await runNetnsMounted();
  const hadDir = existsSync("/run/netns");
  await ip(["netns", "add", name]);
  try {
    await ip(["-n", name, "link", "set", "lo", "up"]);
    await ip(["-n", name, "addr", "add", `${NODE_IP}/32`, "dev", "lo"]);
    // Belt and braces: prove there is no route out before anything starts in it.
    const route = await execCapture("ip", ["-n", name, "route", "get", "10.0.0.1"]);
    if (route.code === 0) throw new Error(`netns ${name} has a route out: ${route.stdout}`);
  } catch (err) {
    await execCapture("ip", ["netns", "del", name]);
    throw err;
  }
  return {
    name,
    path: `/run/netns/${name}`,
    async delete() {
      await execCapture("ip", ["netns", "del", name]);
      if (!hadMount && (await runNetnsMounted())) {
        const left = await readdir("/run/netns").catch(() => []);
        if (left.length === 0) {
          await execCapture("umount", ["/run/netns"]);
          if (!hadDir) await rmdir("/run/netns").catch(() => undefined);
        }
      }
    },
  };
}
