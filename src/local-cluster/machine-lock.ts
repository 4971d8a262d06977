// Locks between processes on this machine: a lock directory holding the owner's PID; a lock
// whose owner is gone is taken over.
// - The real cluster: one per machine at a time. They share host paths the kubelet hard-codes
//   (/var/lib/kubelet/device-plugins), the kubepods cgroups and /run/containerd, and the tests
//   compare host state before and after.
// - A cached build (an image, an archive): test suites run at once on an empty cache would
//   each build it and write over each other; the second waits and finds it built.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cacheDir } from "./paths.ts";
import { sleep } from "./procs.ts";

const LOCK = "/run/linode-operator-real-cluster.lock";

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

/** Takes the lock directory `lock`, waiting up to `timeoutMs`; resolves to its release. */
export async function acquireLock(lock: string, what: string, timeoutMs: number, log: (l: string) => void): Promise<() => Promise<void>> {
  const end = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(`${lock}/pid`, String(process.pid));
      return async () => { await rm(lock, { recursive: true, force: true }); };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = Number((await readFile(`${lock}/pid`, "utf8").catch(() => "")).trim());
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) { log(`waiting for ${what} (pid ${owner || "?"})`); told = true; }
    if (Date.now() > end) throw new Error(`${what} (pid ${owner}) holds ${lock}`);
    await sleep(500);
  }
}

export async function acquireMachineLock(timeoutMs: number, log: (l: string) => void): Promise<() => Promise<void>> {
  return acquireLock(LOCK, "another real cluster on this machine to stop", timeoutMs, log);
}

/**
 * Runs `build` holding the cache's lock named `name` (one builder of that artifact at a time,
 * across processes); `build` checks for a finished artifact itself, so a waiter finds it built.
 */
export async function withCacheLock<T>(name: string, build: () => Promise<T>, log: (l: string) => void = (l) => { process.stderr.write(`[cache] ${l}\n`); }): Promise<T> {
  const dir = join(cacheDir(), "locks");
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, name), `another process building ${name}`, 30 * 60_000, log);
  try {
    return await build();
  } finally {
    await release();
  }
}
