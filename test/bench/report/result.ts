// What every benchmark leaves behind: its figures as JSON in docs/benchmarks/results/, from
// which the report (docs/benchmarks.md and its SVG plots) is generated.
import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
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

export interface BenchResult {
  /** File-name safe, e.g. "scale-three-kinds". */
  name: string;
  title: string;
  /** The exact command that reproduces it, e.g. "npm run bench:scale". */
  command: string;
  ranAt: string;
  machine: string;
  figures: Figure[];
  tables?: Table[];
  charts?: Chart[];
  notes?: string[];
}

export const resultsDir = fileURLToPath(new URL("../../../docs/benchmarks/results/", import.meta.url));

export function machine(): string {
  return `${String(cpus().length)} cores, Node ${process.version}`;
}

/**
 * Writes the result's JSON and regenerates the report from all results (BENCH_NO_SAVE=1 skips
 * both, e.g. for a trial run with other parameters).
 */
export async function saveResult(result: Omit<BenchResult, "ranAt" | "machine">): Promise<void> {
  if (process.env.BENCH_NO_SAVE === "1") return;
  const full: BenchResult = { ...result, ranAt: new Date().toISOString(), machine: machine() };
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

/** What a benchmark gathers as it runs: `figure` records one and prints it with its target. */
export function resultCollector(say: (line: string) => void): { figures: Figure[]; tables: Table[]; charts: Chart[]; notes: string[]; figure: (label: string, value: number | string, unit?: string, target?: string, met?: boolean) => void } {
  const figures: Figure[] = [];
  const figure = (label: string, value: number | string, unit?: string, target?: string, met?: boolean): void => {
    figures.push({ label, value, ...(unit !== undefined ? { unit } : {}), ...(target !== undefined ? { target } : {}), ...(met !== undefined ? { met } : {}) });
    say(`  ${label}: ${String(value)}${unit !== undefined ? ` ${unit}` : ""}${target !== undefined ? ` (target ${target}${met === undefined ? "" : met ? ", met" : ", NOT met"})` : ""}`);
  };
  return { figures, tables: [], charts: [], notes: [], figure };
}
