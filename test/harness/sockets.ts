// Open TCP connections of one process to one port, read from /proc (Linux): the process's
// socket inodes (its fd links) matched against the kernel's TCP tables. What `ss -tnp` shows,
// without needing ss or privileges over another user's process.
import { readFile, readdir, readlink } from "node:fs/promises";

const ESTABLISHED = "01";

async function socketInodes(pid: number | "self"): Promise<Set<string>> {
  const dir = `/proc/${String(pid)}/fd`;
  const inodes = new Set<string>();
  for (const fd of await readdir(dir).catch(() => [] as string[])) {
    const link = await readlink(`${dir}/${fd}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m?.[1] !== undefined) inodes.add(m[1]);
  }
  return inodes;
}

/** Established connections from `pid` to remote port `port` (IPv4 and IPv6). */
export async function openConnections(pid: number | "self", port: number): Promise<number> {
  const inodes = await socketInodes(pid);
  let n = 0;
  for (const table of [`/proc/${String(pid)}/net/tcp`, `/proc/${String(pid)}/net/tcp6`]) {
    const text = await readFile(table, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const remote = cols[2], state = cols[3], inode = cols[9];
      if (remote === undefined || inode === undefined) continue;
      if (state === ESTABLISHED && parseInt(remote.split(":")[1] ?? "", 16) === port && inodes.has(inode)) n++;
    }
  }
  return n;
}
