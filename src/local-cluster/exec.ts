// Runs a command and collects its output; never throws on a non-zero exit.
import { execFile } from "node:child_process";

export interface ExecResult { stdout: string; stderr: string; code: number }

export function execCapture(cmd: string, args: string[], opts: {
  input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string;
  /** Sees stderr as it arrives (e.g. progress of a long build), besides collecting it. */
  onStderr?: (chunk: string) => void;
  /** Sees stdout as it arrives (e.g. a followed log), besides collecting it. */
  onStdout?: (chunk: string) => void;
} = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { maxBuffer: 64 * 1024 * 1024, env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 120_000, ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}) }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 1;
      resolve({ stdout, stderr, code });
    });
    if (opts.onStderr !== undefined) child.stderr?.setEncoding("utf8").on("data", opts.onStderr);
    if (opts.onStdout !== undefined) child.stdout?.setEncoding("utf8").on("data", opts.onStdout);
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}
