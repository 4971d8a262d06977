// The saved results are read back from disk, possibly written by an older benchmark or edited
// by hand: check them against the shape result.ts writes before rendering anything.
import { z } from "zod";
import type { BenchResult } from "./result.ts";

/** JSON has no NaN: JSON.stringify saves a NaN (e.g. a percentile of nothing) as null. */
const num = z.number().or(z.null()).transform((v) => v ?? Number.NaN);

const figure = z.object({
  label: z.string(),
  value: z.union([z.string(), num]),
  unit: z.string().optional(),
  target: z.string().optional(),
  met: z.boolean().optional(),
});

const table = z.object({
  title: z.string(),
  columns: z.array(z.string()),
  rows: z.array(z.array(z.union([z.string(), num]))),
});

const lineChart = z.object({
  kind: z.literal("line"),
  title: z.string(),
  xLabel: z.string(),
  yLabel: z.string(),
  series: z.array(z.object({ name: z.string(), points: z.array(z.tuple([num, num])) })),
});

const barChart = z.object({
  kind: z.literal("bar"),
  title: z.string(),
  yLabel: z.string(),
  categories: z.array(z.string()),
  series: z.array(z.object({ name: z.string(), values: z.array(num) })),
}).refine((c) => c.series.every((s) => s.values.length === c.categories.length), {
  message: "every bar series needs one value per category",
});

export const benchResultSchema: z.ZodType<BenchResult> = z.object({
  // It names the SVG files and the section anchor.
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' and '-' only"),
  title: z.string(),
  command: z.string(),
  ranAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), "not a date"),
  // Older results saved the machine as one string ("2 cores, Node v24.21.0") and no commit or flags.
  machine: z.union([z.string(), z.object({ cores: z.number(), cpuModel: z.string(), memoryGiB: z.number(), node: z.string() })]),
  commit: z.string().optional(),
  flags: z.object({ argv: z.array(z.string()), env: z.record(z.string(), z.string()) }).optional(),
  figures: z.array(figure),
  tables: z.array(table).optional(),
  charts: z.array(z.discriminatedUnion("kind", [lineChart, barChart])).optional(),
  notes: z.array(z.string()).optional(),
});

/** Parses one saved result; `file` only names it in the error. */
export function parseResult(json: string, file: string): BenchResult {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    throw new Error(`${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const parsed = benchResultSchema.safeParse(data);
  if (!parsed.success) throw new Error(`${file}: not a benchmark result:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
