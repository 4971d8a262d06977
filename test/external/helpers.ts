// Plumbing for the external-client tests: run a child process without blocking the event
// loop (the emulator under test lives in this process), and find tools on PATH.
import { spawn, spawnSync } from "node:child_process";

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString("utf8"); });
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString("utf8"); });
    const timer = opts.timeoutMs === undefined ? null : setTimeout(() => { child.kill("SIGKILL"); }, opts.timeoutMs);
    child.on("error", (err) => {
      if (timer !== null) clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      if (timer !== null) clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** True when `cmd args` runs and exits 0 (e.g. `go version`). */
export function available(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: "ignore", timeout: 30_000 });
  return r.error === undefined && r.status === 0;
}

/** Says loudly, on stderr and in the test report, that a test could not run. */
export function warnSkipped(what: string, why: string): void {
  process.stderr.write(`\n*** SKIPPED ${what}: ${why} ***\n\n`);
}
