// Long-running processes of the real cluster: spawned (inside the network namespace), logged
// to a file, stopped by their own PID only.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { inNetns } from "./control-plane.ts";

export interface Proc { name: string; child: ChildProcess; exited: Promise<void>; pid: number }

export function startLogged(dir: string, name: string, cmd: string, args: string[], netns: string, env?: NodeJS.ProcessEnv): Proc {
  const log = createWriteStream(join(dir, `${name}.log`));
  const [c, a] = inNetns(netns, cmd, args);
  const child = spawn(c, a, { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: env ?? process.env });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const exited = new Promise<void>((resolve) => child.once("exit", () => { resolve(); }));
  return { name, child, exited, pid: child.pid };
}

export const running = (p: Proc): boolean => p.child.exitCode === null && p.child.signalCode === null;

export async function stopProc(p: Proc, graceMillis: number): Promise<void> {
  if (!running(p)) return;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMillis);
  await p.exited;
  clearTimeout(timer);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
