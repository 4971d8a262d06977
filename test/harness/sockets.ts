// Open TCP connections of one process to one port, read from /proc (Linux): the process's
// socket inodes (its fd links) matched against the kernel's TCP tables. What `ss -tnp` shows,
// without needing ss or privileges over another user's process.
import { readFile, readdir, readlink } from "node:fs/promises";

const ESTABLISHED = "01";

/** Undefined when the process's fd directory cannot be read (gone, or another user's). */
async function socketInodes(pid: number | "self"): Promise<Set<string> | undefined> {
  const dir = `/proc/${String(pid)}/fd`;
  const fds = await readdir(dir).catch(() => undefined);
  if (fds === undefined) return undefined;
  const inodes = new Set<string>();
  for (const fd of fds) {
    // An fd closed between the listing and this look held no connection worth counting.
    const link = await readlink(`${dir}/${fd}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m?.[1] !== undefined) inodes.add(m[1]);
  }
  return inodes;
}

/**
 * Established connections from `pid` to remote port `port` (IPv4 and IPv6). Undefined when the
 * process's /proc entries cannot be read (it exited, or belongs to another user): a count that
 * was never taken is not 0 connections. This process's own entries are always readable.
 */
export async function openConnections(pid: "self", port: number): Promise<number>;
export async function openConnections(pid: number, port: number): Promise<number | undefined>;
export async function openConnections(pid: number | "self", port: number): Promise<number | undefined> {
  const n = await countConnections(pid, port);
  if (n === undefined && pid === "self") throw new Error("/proc/self cannot be read: not Linux?");
  return n;
}

async function countConnections(pid: number | "self", port: number): Promise<number | undefined> {
  const inodes = await socketInodes(pid);
  if (inodes === undefined) return undefined;
  const table = (name: string): Promise<string | undefined> => readFile(`/proc/${String(pid)}/net/${name}`, "utf8").catch(() => undefined);
  const v4 = await table("tcp");
  if (v4 === undefined) return undefined;
  // tcp6 is missing for every process in a kernel without IPv6 (no IPv6 connections, then);
  // missing for this one alone, the process is gone.
  const v6 = await table("tcp6") ?? (await readFile("/proc/self/net/tcp6").then(() => undefined, () => ""));
  if (v6 === undefined) return undefined;
  let n = 0;
  for (const text of [v4, v6]) {
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const remote = cols[2], state = cols[3], inode = cols[9];
      if (remote === undefined || inode === undefined) continue;
      if (state === ESTABLISHED && parseInt(remote.split(":")[1] ?? "", 16) === port && inodes.has(inode)) n++;
    }
  }
  return n;
}
