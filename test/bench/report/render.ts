// Renders the benchmark report: docs/benchmarks.md and one SVG per chart in docs/benchmarks/,
// from every docs/benchmarks/results/*.json. saveResult calls it after each run; by hand:
//   node test/bench/report/render.ts      (npm run bench:report)
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chartFile, renderMarkdown } from "./markdown.ts";
import type { BenchResult } from "./result.ts";
import { parseResult } from "./schema.ts";
import { renderChart } from "./svg.ts";

export const defaultDocsDir = fileURLToPath(new URL("../../../docs/", import.meta.url));

/** What a render wrote, relative to docsDir. */
export interface Rendered { markdown: string; charts: string[] }

/**
 * Reads every result in `resultsDir`, writes `<docsDir>/benchmarks.md` and the charts as
 * `<docsDir>/benchmarks/<name>-<index>.svg`, and deletes the charts of that pattern no result
 * draws any more (a run with fewer charts than the last must not leave a stale plot behind).
 */
export async function renderReport(resultsDir: string, docsDir: string): Promise<Rendered> {
  const results = await readResults(resultsDir);
  const chartsDir = join(docsDir, "benchmarks");
  await mkdir(chartsDir, { recursive: true });
  const written = new Set<string>();
  for (const r of results) {
    for (const [i, chart] of (r.charts ?? []).entries()) {
      const file = chartFile(r.name, i);
      await writeFile(join(chartsDir, file), renderChart(chart));
      written.add(file);
    }
  }
  for (const file of await readdir(chartsDir)) {
    if (/-\d+\.svg$/.test(file) && !written.has(file)) await rm(join(chartsDir, file));
  }
  await writeFile(join(docsDir, "benchmarks.md"), renderMarkdown(results));
  return { markdown: "benchmarks.md", charts: [...written].sort().map((f) => `benchmarks/${f}`) };
}

/** Every result in the directory, in file-name order; none when it does not exist yet. */
export async function readResults(resultsDir: string): Promise<BenchResult[]> {
  let files: string[];
  try {
    files = (await readdir(resultsDir)).filter((f) => f.endsWith(".json")).sort();
  } catch (err) {
    if (err instanceof Error && "code" in err && err.code === "ENOENT") return [];
    throw err;
  }
  const results: BenchResult[] = [];
  for (const file of files) {
    const result = parseResult(await readFile(join(resultsDir, file), "utf8"), file);
    // The name picks the SVG files: two results under one name would draw over each other.
    if (`${result.name}.json` !== file) throw new Error(`${file}: its name is "${result.name}"; it must be saved as ${result.name}.json`);
    results.push(result);
  }
  return results;
}

if (import.meta.main) {
  try {
    const { markdown, charts } = await renderReport(join(defaultDocsDir, "benchmarks", "results"), defaultDocsDir);
    process.stdout.write(`wrote docs/${markdown} and ${String(charts.length)} charts\n`);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
