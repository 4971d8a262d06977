// What every benchmark leaves behind: its figures as JSON in docs/benchmarks/results/, from
// which the report (docs/benchmarks.md and its SVG plots) is generated. A result says what it
// ran on (the commit, the flags, the machine) so a figure can be traced to what produced it.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { figureOf } from "./figure.ts";
import { defaultDocsDir, renderReport } from "./render.ts";

export interface Figure {
  label: string;
  value: number | string;
  unit?: string;
  /** The target as the issue states it, e.g. "≤ 160 MiB". */
  target?: string;
  met?: boolean;
}
export interface Table { title: string; columns: string[]; rows: (string | number)[][] }
export type Chart =
  | { kind: "line"; title: string; xLabel: string; yLabel: string; series: { name: string; points: [number, number][] }[] }
  | { kind: "bar"; title: string; yLabel: string; categories: string[]; series: { name: string; values: number[] }[] };

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
}

/** What the benchmark was started with: its arguments after the script, and the BENCH_* variables (and OPERATOR_NODE_OPTIONS) as set. */
export interface Flags {
  argv: string[];
  env: Record<string, string>;
}

export interface BenchResult {
  /** File-name safe, e.g. "scale-three-kinds". */
  name: string;
  title: string;
  /** The exact command that reproduces it, e.g. "npm run bench:scale". */
  command: string;
  ranAt: string;
  /** A string in results saved before machines were recorded as data ("2 cores, Node v24.21.0"). */
  machine: Machine | string;
  /** `git rev-parse HEAD`, "+dirty" with uncommitted changes, "unknown" outside a checkout; absent in older results. */
  commit?: string;
  /** Absent in older results. */
  flags?: Flags;
  figures: Figure[];
  tables?: Table[];
  charts?: Chart[];
  notes?: string[];
}

/** What a benchmark hands to saveResult; the rest is recorded here. */
export type ResultInput = Omit<BenchResult, "ranAt" | "machine" | "commit" | "flags">;

export const resultsDir = fileURLToPath(new URL("../../../docs/benchmarks/results/", import.meta.url));
const repoDir = fileURLToPath(new URL("../../../", import.meta.url));

export function machine(): Machine {
  const cpu = cpus();
  return { cores: cpu.length, cpuModel: cpu[0]?.model.trim() ?? "unknown", memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10, node: process.version };
}

let emulatorLatency: string | undefined;

/**
 * The API latency the bench's emulator answers with ("MEDIAN,P99" ms, "0" for none): recorded in
 * its flags as BENCH_LATENCY_MS even when it is the default, since it shapes every figure.
 */
export function noteEmulatorLatency(flag: string): void {
  emulatorLatency = flag;
}

/** The variables that change what a benchmark does: every BENCH_*, and the operator's NODE_OPTIONS (managed-database-scale). */
export function flags(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env, latency = emulatorLatency): Flags {
  const withLatency = latency === undefined ? env : { ...env, BENCH_LATENCY_MS: latency };
  const set = Object.entries(withLatency).filter((e): e is [string, string] => e[1] !== undefined && (e[0].startsWith("BENCH_") || e[0] === "OPERATOR_NODE_OPTIONS"));
  return { argv: argv.slice(2), env: Object.fromEntries(set.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

/** The checkout's HEAD, "+dirty" when `git status --porcelain` lists anything; "unknown" when git cannot tell (no checkout, no git). */
export async function commit(dir: string = repoDir): Promise<string> {
  const git = async (...args: string[]): Promise<string> => (await promisify(execFile)("git", ["-C", dir, ...args], { encoding: "utf8" })).stdout.trim();
  try {
    const head = await git("rev-parse", "HEAD");
    return (await git("status", "--porcelain")) === "" ? head : `${head}+dirty`;
  } catch {
    return "unknown";
  }
}

/**
 * The commit the run's code came from: read when the bench starts, since the checkout may move
 * on (a commit, an edit) during a run of an hour. Rejections are caught by commit() itself.
 */
const commitAtStart = commit();

/** A figure another benchmark built as a literal, passed through figureOf on its way to disk. */
const settled = (f: Figure): Figure => figureOf(f.label, f.value, f.unit, f.target, f.met);

/**
 * Writes the result's JSON with the commit, flags and machine it ran with, and regenerates the
 * report from all results (BENCH_NO_SAVE=1 skips both, e.g. for a trial run with other parameters).
 */
export async function saveResult(result: ResultInput): Promise<void> {
  if (process.env.BENCH_NO_SAVE === "1") return;
  const full: BenchResult = {
    ...result, figures: result.figures.map(settled),
    ranAt: new Date().toISOString(), commit: await commitAtStart, flags: flags(), machine: machine(),
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(`${resultsDir}${result.name}.json`, `${JSON.stringify(full, null, 2)}\n`);
  // The result is saved whatever happens here: a report that cannot be drawn (another result
  // hand-edited wrong) must not fail a run that took minutes; `npm run bench:report` retries.
  try {
    await renderReport(resultsDir, defaultDocsDir);
  } catch (err) {
    process.stderr.write(`benchmark report not regenerated: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

export type FigureFn = (label: string, value: number | string | undefined, unit?: string, target?: string, met?: boolean | ((value: number) => boolean)) => void;

/** What a benchmark gathers as it runs: `figure` records one (through figureOf) and prints it with its target. */
export function resultCollector(say: (line: string) => void): { figures: Figure[]; tables: Table[]; charts: Chart[]; notes: string[]; figure: FigureFn } {
  const figures: Figure[] = [];
  const figure: FigureFn = (...args) => {
    const f = figureOf(...args);
    figures.push(f);
    say(`  ${f.label}: ${String(f.value)}${f.unit !== undefined ? ` ${f.unit}` : ""}${f.target !== undefined ? ` (target ${f.target}${f.met === undefined ? "" : f.met ? ", met" : ", NOT met"})` : ""}`);
  };
  return { figures, tables: [], charts: [], notes: [], figure };
}
