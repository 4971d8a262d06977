// What the benchmarks share: a real API server with our CRDs and a `bench` namespace, the
// emulator, and the operator as a real `linode-operator run` process with its metrics URL.
// The operator runs as users run it: the bundle `npm run build` makes, started the way its
// bin/ line starts it (BENCH_FROM_SOURCE=1 runs src/ instead, without those options).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { execCapture } from "../harness/cluster.ts";
import { startControlPlane, type ControlPlane } from "../harness/control-plane.ts";
import { crdFiles } from "../harness/crds.ts";
import { launcherOf, startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { benchLatency, latencyFlag } from "./bench-latency.ts";
import { noteEmulatorLatency } from "./report/result.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface BenchSetup {
  cp: ControlPlane;
  emulator: RunningEmulator;
  /** Starts the operator against both; stopped by `stop()`. */
  operator(args: string[], env?: Record<string, string>): Promise<{ proc: OperatorProcess; metricsUrl: string }>;
  /** Spawns it the same way without waiting for it to start (it may never: e.g. with the API server down); stopped by `stop()`. */
  spawnOperator(args: string[], env?: Record<string, string>): OperatorProcess;
  stop(): Promise<void>;
}

/**
 * `tokens`: the emulator's tokens (default ["bench-token"], the operator's unless its env says
 * LINODE_TOKEN); `accountTokens`: more tokens, each in an account of its own name (objects and
 * rate limits apart), for resources that name them in spec.credentialsRef.
 */
export async function startBench(opts: { provisionSeconds: number; rateLimits?: false; tokens?: string[]; accountTokens?: Record<string, string[]> }): Promise<BenchSetup> {
  // Parsed first: a bad BENCH_LATENCY_MS fails before anything starts.
  const latency = benchLatency();
  noteEmulatorLatency(latencyFlag(latency));
  const cp = await startControlPlane({ controllerManager: false });
  const emulator = await startEmulator({
    port: 0, tokens: opts.tokens ?? ["bench-token"], provisionSeconds: opts.provisionSeconds, latency,
    ...(opts.rateLimits === false ? { rateLimits: false } : {}), ...(opts.accountTokens !== undefined ? { accountTokens: opts.accountTokens } : {}),
  });
  const procs: OperatorProcess[] = [];
  // However this process ends (an uncaught error, a rejection nothing awaited, Ctrl-C) before
  // stop() has run, what it started goes with it: an etcd or API server left behind holds its
  // memory and ports until someone finds it.
  const orphans = (): void => {
    const running = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => p.child.pid);
    for (const pid of [...running, ...cp.pids()]) {
      if (pid === undefined) continue;
      try { process.kill(pid, "SIGKILL"); } catch { /* gone already */ }
    }
  };
  process.once("exit", orphans);
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => { process.exit(128 + (sig === "SIGINT" ? 2 : 15)); });
  const dist = await mkdtemp(join(tmpdir(), "linode-operator-bench-dist-"));
  const stop = async (): Promise<void> => {
    for (const p of procs) { p.child.kill("SIGTERM"); await p.exited; }
    await emulator.close();
    await cp.stop();
    process.removeListener("exit", orphans);
    await rm(dist, { recursive: true, force: true });
  };
  let launch: { cli?: string; nodeArgs?: string[]; env: Record<string, string> } = { env: {} };
  try {
    if (process.env.BENCH_FROM_SOURCE !== "1") {
      const built = await execCapture(process.execPath, [join(root, "scripts/build.ts"), dist]);
      if (built.code !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
      const cli = join(dist, "cli/main.js");
      // BENCH_LAUNCH=plain: `node dist/cli/main.js`, bypassing the #! line's flags (how memory depends on the start),
      // with BENCH_NODE_ARGS before the script: V8 flags node refuses in NODE_OPTIONS (--heap-growing-percent).
      const plainArgs = (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "");
      // A plain start has neither the #! line's node flags nor its environment (MALLOC_ARENA_MAX).
      launch = { cli, ...(process.env.BENCH_LAUNCH === "plain" ? { env: {}, nodeArgs: plainArgs } : await launcherOf(cli)) };
    }
    const kubectl = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cp.binDir, "kubectl"), ["--kubeconfig", cp.adminKubeconfig, ...args]);
    const files = await crdFiles();
    await kubectl(["apply", "--server-side", ...files.flatMap((f) => ["-f", f])]);
    await kubectl(["wait", "--for=condition=Established", ...files.flatMap((f) => ["-f", f])]);
    await kubectl(["create", "namespace", "bench"]);
  } catch (err) {
    await stop();
    throw err;
  }
  const spawnOperator = (args: string[], env: Record<string, string> = {}): OperatorProcess => {
    const proc = startOperator(args, {
      KUBECONFIG: cp.adminKubeconfig, LINODE_TOKEN: "bench-token", LINODE_API_URL: emulator.url,
      LEADER_ELECT: "false", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", LOG_LEVEL: "info",
      // glibc malloc tuning to compare (e.g. MALLOC_ARENA_MAX=2) reaches the operator as set.
      ...launch.env, ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MALLOC_") || k === "LINODE_OPERATOR_V8_DEFAULTS")),
      // Node options for the operator alone, not the bench's own node: e.g. --max-old-space-size=128
      // (how small a heap suffices) or --heapsnapshot-signal=SIGUSR2 (what a heap holds). Saved in the result's flags.
      ...(process.env.OPERATOR_NODE_OPTIONS !== undefined ? { NODE_OPTIONS: process.env.OPERATOR_NODE_OPTIONS } : {}), ...env,
    }, { ...(launch.cli !== undefined ? { cli: launch.cli } : {}), ...(launch.nodeArgs !== undefined ? { nodeArgs: launch.nodeArgs } : {}) });
    procs.push(proc);
    // An operator that exits without the bench having signalled it is a finding: say how, with
    // what it last said, before the bench's next look at it fails for want of a process.
    proc.child.once("exit", (code, signal) => {
      if (proc.child.killed) return;
      const tail = proc.logs.slice(-30).map((l) => JSON.stringify(l)).join("\n");
      process.stderr.write(`operator pid ${String(proc.child.pid)} exited unbidden (code ${String(code)}, signal ${String(signal)}); stderr:\n${proc.stderr.join("").slice(-8_000)}\nits last log lines:\n${tail}\n`);
    });
    return proc;
  };
  return {
    cp, emulator, stop, spawnOperator,
    async operator(args, env = {}) {
      const proc = spawnOperator(args, env);
      const started = await proc.waitForLog((l) => l.msg === "operator started");
      return { proc, metricsUrl: `http://127.0.0.1:${String(started.metricsPort)}/metrics` };
    },
  };
}
