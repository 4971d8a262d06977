// Runs `linode-operator run` as a real child process (the CLI users run), collecting its
// JSON log lines so tests can wait for what it says.
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface OperatorProcess {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  stderr: string[];
  exited: Promise<number | null>;
  waitForLog(pred: (l: Record<string, unknown>) => boolean, timeoutMillis?: number): Promise<Record<string, unknown>>;
  /**
   * Reconcile passes of an object ("namespace/name") of a kind this process has completed, from
   * the line its controller logs as each pass ends (a successful one only at debug: start the
   * process with LOG_LEVEL=debug).
   */
  passes(kind: string, key: string): number;
  /** Resolves once `count` more passes of the object have completed: the operator looked, and did nothing. */
  afterPasses(kind: string, key: string, count: number, timeoutMillis?: number): Promise<void>;
}

/** The messages the controller logs as a reconcile pass ends, whatever its outcome (src/runtime/controller.ts). */
const PASS_ENDS = new Set(["reconciled", "reconcile failed; waiting for a change", "waiting", "conflict; retrying with a fresh copy", "reconcile failed; backing off"]);
const isPassEnd = (kind: string, key: string) => (l: Record<string, unknown>): boolean => l.kind === kind && l.key === key && PASS_ENDS.has(String(l.msg));

/** `cli`: another build of the command (e.g. the bundle in dist/cli/main.js); `nodeArgs` go before it. */
export function startOperator(args: string[], env: Record<string, string>, opts: { cli?: string; nodeArgs?: string[] } = {}): OperatorProcess {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.cli ?? cli, "run", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  const passes = (kind: string, key: string): number => logs.filter(isPassEnd(kind, key)).length;
  let buf = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let parsed: Record<string, unknown>;
      try { parsed = JSON.parse(line) as Record<string, unknown>; } catch { parsed = { msg: line, notJson: true }; }
      logs.push(parsed);
      for (const w of [...waiters]) if (w.pred(parsed)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(parsed); }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => stderr.push(c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => { resolve(code); }));
  return {
    child, logs, stderr, exited,
    waitForLog(pred, timeoutMillis = 30_000) {
      const found = logs.find(pred);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => { reject(new Error(`log line not seen in ${timeoutMillis} ms; stderr: ${stderr.join("")}; logs: ${JSON.stringify(logs.slice(-5))}`)); }, timeoutMillis);
        waiters.push({ pred, resolve: (l) => { clearTimeout(t); resolve(l); } });
      });
    },
    passes,
    afterPasses(kind, key, count, timeoutMillis = 30_000) {
      const target = passes(kind, key) + count;
      if (count <= 0) return Promise.resolve();
      const isPass = isPassEnd(kind, key);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => { reject(new Error(`${kind} ${key}: ${String(passes(kind, key))} of ${String(target)} passes within ${String(timeoutMillis)} ms; stderr: ${stderr.join("")}`)); }, timeoutMillis);
        // Lines are pushed before the waiters see them: the count includes the line at hand.
        waiters.push({ pred: (l) => isPass(l) && passes(kind, key) >= target, resolve: () => { clearTimeout(t); resolve(); } });
      });
    },
  };
}

/**
 * The environment and node options a script's `#!/usr/bin/env -S VAR=value node --option`
 * line gives it, so a test can start it with process.execPath exactly as its bin/ link would.
 */
export async function launcherOf(script: string): Promise<{ env: Record<string, string>; nodeArgs: string[] }> {
  const first = (await readFile(script, "utf8")).split("\n", 1)[0] ?? "";
  const words = first.replace(/^#!\s*\S+\s+(-S\s+)?/, "").split(/\s+/).filter((w) => w !== "");
  const node = words.indexOf("node");
  const env = Object.fromEntries(words.slice(0, Math.max(0, node)).map((w) => w.split("=", 2) as [string, string]));
  return { env, nodeArgs: node < 0 ? [] : words.slice(node + 1) };
}
