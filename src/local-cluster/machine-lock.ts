// One real cluster per machine at a time: they share host paths the kubelet hard-codes
// (/var/lib/kubelet/device-plugins), the kubepods cgroups and /run/containerd, and the tests
// compare host state before and after. A lock directory holding the owner's PID; a lock whose
// owner is gone is taken over.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { sleep } from "./procs.ts";

const LOCK = "/run/linode-operator-real-cluster.lock";

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

export async function acquireMachineLock(timeoutMs: number, log: (l: string) => void): Promise<() => Promise<void>> {
  const end = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      await mkdir(LOCK);
      await writeFile(`${LOCK}/pid`, String(process.pid));
      return async () => { await rm(LOCK, { recursive: true, force: true }); };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = Number((await readFile(`${LOCK}/pid`, "utf8").catch(() => "")).trim());
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      await rm(LOCK, { recursive: true, force: true });
      continue;
    }
    if (!told) { log(`waiting for another real cluster on this machine (pid ${owner || "?"}) to stop`); told = true; }
    if (Date.now() > end) throw new Error(`another real cluster (pid ${owner}) holds ${LOCK}`);
    await sleep(500);
  }
}
