// What the real cluster may leave on the host, looked at from outside: used by teardown to
// clean up and by the tests to prove nothing is left (compare a snapshot before and after).
import { readdir, readFile, readlink, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { execCapture } from "./exec.ts";
import { buildahRoot } from "./paths.ts";

/** Mount points from /proc/mounts (octal escapes decoded). */
export async function mountPoints(): Promise<string[]> {
  const text = await readFile("/proc/mounts", "utf8");
  return text.split("\n").filter(Boolean).map((l) => (l.split(" ")[1] ?? "").replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** Every `kubepods` cgroup directory (and its subtree), deepest first, across all hierarchies. */
export async function kubepodsCgroups(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await walk(join(d, e.name));
    out.push(d);
  };
  // Every hierarchy's root has inode 1: tell them apart by device too.
  const seen = new Set<string>();
  for (const h of await readdir("/sys/fs/cgroup").catch(() => [])) {
    const root = join("/sys/fs/cgroup", h);
    const st = await stat(root).catch(() => undefined);
    if (st === undefined || !st.isDirectory() || seen.has(`${st.dev}:${st.ino}`)) continue;
    seen.add(`${st.dev}:${st.ino}`);
    for (const top of ["kubepods", "kubepods.slice"]) {
      if ((await stat(join(root, top)).catch(() => undefined)) !== undefined) await walk(join(root, top));
    }
  }
  return out;
}

/** PIDs in a cgroup directory (v1 cgroup.procs). */
export async function cgroupPids(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "");
  return text.split("\n").filter(Boolean).map(Number);
}

export async function removeCgroups(dirs: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const d of dirs) {
    try { await rmdir(d); } catch (err) { if ((err as NodeJS.ErrnoException).code !== "ENOENT") left.push(d); }
  }
  return left;
}

export interface ProcInfo { pid: number; cmdline: string; netns: string }

export async function processes(): Promise<ProcInfo[]> {
  const out: ProcInfo[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = (await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "")).replace(/\0/g, " ").trim();
    const netns = await readlink(`/proc/${name}/ns/net`).catch(() => "");
    if (cmdline === "" && netns === "") continue;   // kernel thread or already gone
    out.push({ pid: Number(name), cmdline, netns });
  }
  return out;
}

export interface HostSnapshot {
  netns: string[];
  links: string[];
  mounts: string[];
  iptables: string;
  kubepods: string[];
}

export async function hostSnapshot(): Promise<HostSnapshot> {
  const netns = (await execCapture("ip", ["netns", "list"])).stdout.split("\n").filter(Boolean).map((l) => l.split(" ")[0] ?? "").sort();
  const links = (await execCapture("ip", ["-o", "link", "show"])).stdout.split("\n").filter(Boolean)
    .map((l) => l.split(":")[1]?.trim().split("@")[0] ?? "").sort();
  const ipt = await execCapture("iptables-save", []);
  // Counters and the generation comment change on their own; compare the rules only.
  const iptables = ipt.code === 0 ? ipt.stdout.split("\n").filter((l) => !l.startsWith("#")).map((l) => l.replace(/\[\d+:\d+\]/g, "")).join("\n") : "(no iptables-save)";
  // Image builds may run beside the cluster: the mounts of their store are theirs, not the cluster's.
  const builds = `${buildahRoot()}/`;
  const mounts = (await mountPoints()).filter((m) => m !== buildahRoot() && !m.startsWith(builds)).sort();
  return { netns, links, mounts, iptables, kubepods: await kubepodsCgroups() };
}
