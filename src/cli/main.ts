#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --optimize-for-size --heap-growing-percent=10
// The `linode-operator` command. Each subcommand lives in its own module and is loaded only
// when asked for, so `linode-operator emulator` never pays for the Kubernetes client.
// The #! line (which the image's entrypoint also goes through) keeps the operator small and
// steady at little CPU (converging 600 databases, `npm run bench:memory-by-start`):
// - a 2 MiB young generation and the old generation grown 10 % between full collections: peak
//   ~147 MiB where V8's defaults peak at ~330. --optimize-for-size held as little but about
//   tripled the CPU of reading a page of answers (`npm run bench:answer-parse`).
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates its own arena (8 per core); V8's
//   helper threads filled theirs over a soak's first hour (a restarted process's thread arenas
//   climbed 22→27 MiB). Two held 12–29 MiB less steady than glibc's default in two runs.
// A user's own MALLOC_ARENA_MAX is overridden here. `run` started without the #! line
// (`node dist/cli/main.js run`) starts again with what it lacked (relaunchFor); where it cannot,
// it gets what V8 still honours after start from applyMemorySettings.
import { setFlagsFromString } from "node:v8";
import { readFile } from "node:fs/promises";
import { invokedDirectly, MIN_NODE, nodeAtLeast } from "./entry.ts";

export { MIN_NODE, nodeAtLeast };

export interface Command {
  summary: string;
  /** Runs the command; resolves to the process exit code. */
  load: () => Promise<{ main: (argv: string[]) => Promise<number> }>;
}

export const commands: Record<string, Command> = {
  run: { summary: "run the operator (in a cluster, or against KUBECONFIG)", load: () => import("./run.ts") },
  emulator: { summary: "run the Linode API emulator (managed databases, NodeBalancers) on loopback", load: () => import("../emulator/cli.ts") },
  install: { summary: "install onto the cluster your kubeconfig names: image, token Secret, Helm chart", load: () => import("./install.ts") },
  uninstall: { summary: "uninstall what install installed (keeps the CRDs, resources and cloud objects)", load: () => import("./uninstall.ts") },
  doctor: { summary: "check the Linode token and its scopes, the CRDs, RBAC and Nodes; OK / WARN / FAIL with the fix", load: () => import("./doctor.ts") },
  demo: { summary: "see it work: emulator + local Kubernetes + operator + examples, offline", load: () => import("./demo.ts") },
  status: { summary: "what the operator sees of an object, or every object not Ready (also `kubectl linode status`)", load: () => import("./status.ts") },
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length), 4);
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "linode-operator — run Linode managed databases and NodeBalancers from Kubernetes",
    "",
    "Usage: linode-operator <command> [options]",
    "",
    "Commands:",
    ...lines,
    `  ${"help".padEnd(width)}  show this help, or \`help <command>\` for a command's options`,
    "",
    "Environment: LINODE_TOKEN (API token), LINODE_API_URL (default https://api.linode.com/v4),",
    "KUBECONFIG (out of a cluster).",
  ].join("\n");
}

/**
 * The #! line's settings: what a start that bypassed it gets by starting again (relaunchFor).
 * --optimize-for-size, not only a small young generation: V8's own compaction heuristics leave
 * the old generation's pages fragmented once lists of hundreds of answers pass through it, and
 * keep freed pages pooled, so RSS grows with scale and over hours (at 10,000 databases 295 MiB
 * steady with --max-semi-space-size=2, 220 MiB with this). It costs a quarter to a third more
 * CPU while converging (docs/benchmarks.md#memory-by-start: 11.8 s against 9.5 s at 600).
 */
export const MEMORY_FLAGS = ["--optimize-for-size", "--heap-growing-percent=10"] as const;
const MALLOC_ARENAS = "2";
/** Set on the process started again, so that it never starts again itself. */
const RELAUNCHED = "LINODE_OPERATOR_RELAUNCHED";

const givenFlags = (execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] =>
  [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].map((a) => a.replace(/_/g, "-").split("=")[0] ?? "");

/**
 * The MEMORY_FLAGS a start lacks. A user who sized the young generation chose how V8 trades
 * memory for CPU: --optimize-for-size is not added then.
 */
function missingMemoryFlags(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const given = givenFlags(execArgv, env);
  const youngSized = given.includes("--max-semi-space-size") || given.includes("--optimize-for-size");
  return MEMORY_FLAGS.filter((f) => !(f === "--optimize-for-size" ? youngSized : given.includes(f.split("=")[0] ?? "")));
}

/**
 * How `linode-operator run` started without the #! line's settings (`node dist/cli/main.js run`,
 * an image's own `CMD ["node", ...]`) starts again with them, as one process (execve keeps the
 * pid): the settings V8 takes only as it starts, and glibc's arenas, which only the environment
 * sets. Without this such a start held ~14 MiB more steady (docs/benchmarks.md#memory-by-start).
 * Only the settings the start lacks are added; a user's own MALLOC_ARENA_MAX and flags stand.
 * Undefined when nothing is missing, when asked for V8's defaults, in the process started again,
 * and under an inspector (--inspect*: the debugger stays attached to the process it started).
 */
export function relaunchFor(execArgv: readonly string[], env: NodeJS.ProcessEnv): { nodeArgs: string[]; env: NodeJS.ProcessEnv } | undefined {
  if (env.LINODE_OPERATOR_V8_DEFAULTS === "1" || env[RELAUNCHED] === "1") return undefined;
  if (givenFlags(execArgv, env).some((f) => f.startsWith("--inspect"))) return undefined;
  const flags = missingMemoryFlags(execArgv, env);
  const arenas = env.MALLOC_ARENA_MAX === undefined || env.MALLOC_ARENA_MAX === "";
  if (flags.length === 0 && !arenas) return undefined;
  return { nodeArgs: [...flags, ...execArgv], env: { ...env, ...(arenas ? { MALLOC_ARENA_MAX: MALLOC_ARENAS } : {}), [RELAUNCHED]: "1" } };
}

/**
 * The V8 settings that keep the operator small and steady, applied by the program itself when
 * the process was started without them (`node dist/cli/main.js`, NODE_OPTIONS unset). V8 sizes
 * the young generation as the isolate starts, so --max-semi-space-size set later does nothing (a
 * plain start peaked at 276 MiB with it); --optimize-for-size it does honour after start (it
 * shrinks the young generation as it goes: peak 141–155 MiB). This applies where the process
 * cannot start again (relaunchFor) with them. glibc's arenas are the shell's.
 * LINODE_OPERATOR_V8_DEFAULTS=1 leaves V8 as started, to compare.
 * Answers the flags it set.
 * - --heap-growing-percent=10: how far the old generation may grow past what survived the last
 *   full collection before the next one. V8 chooses that itself (up to 30 % under
 *   --optimize-for-size, more without); at 1,500 objects, with ~40 MiB surviving, the reserved
 *   heap swung by ~11 MiB over minutes, enough to hide or fake a trend of a few MiB an hour
 *   (`npm run bench:soak`, docs/benchmarks.md). Full collections of a heap this size are mostly
 *   concurrent, and the operator mostly waits on the network.
 */
export function applyMemorySettings(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.LINODE_OPERATOR_V8_DEFAULTS === "1") return [];
  const wanted = missingMemoryFlags(execArgv, env);
  for (const f of wanted) setFlagsFromString(f);
  return wanted;
}

export async function main(argv: string[]): Promise<number> {
  // On an older Node the subcommands' dependencies fail deep inside with a TypeError: say so
  // in one line instead, before loading any of them (npm only warns about engines).
  if (!nodeAtLeast(process.version)) {
    process.stderr.write(`linode-operator: needs Node.js ${MIN_NODE} or newer; this is ${process.version}\n`);
    return 2;
  }
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic !== undefined && topic in commands) return runCommand(topic, ["--help"]);
    process.stdout.write(usage() + "\n");
    return 0;
  }
  if (name === "--version" || name === "version") {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  if (!(name in commands)) {
    process.stderr.write(`linode-operator: unknown command '${name}'\n\n${usage()}\n`);
    return 2;
  }
  return runCommand(name, rest);
}

async function runCommand(name: string, argv: string[]): Promise<number> {
  const command = commands[name];
  if (command === undefined) return 2;
  const mod = await command.load();
  return mod.main(argv);
}

if (invokedDirectly(import.meta.url)) {
  // First, before the subcommand allocates anything: the long-running command starts again with
  // the #! line's settings if it was started without them; otherwise, or where execve cannot,
  // what V8 still honours after start.
  const again = process.argv[2] === "run" ? relaunchFor(process.execArgv, process.env) : undefined;
  if (again !== undefined && typeof process.execve === "function") {
    try {
      process.execve(process.execPath, [process.execPath, ...again.nodeArgs, ...process.argv.slice(1)], again.env);
    } catch {
      // execve is not offered everywhere (Windows, worker threads): run on as started.
    }
  }
  applyMemorySettings();
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (err: unknown) => {
      process.stderr.write(`linode-operator: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
