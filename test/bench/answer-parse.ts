// What reading one page of the Linode API's answers costs the operator's event loop: a page of
// 500 databases (each the recorded real answer in test/fixtures/recorded/TestDatabase_List.json, with its own id and label)
// parsed from JSON, validated with the client's schema and converted to camelCase, as the
// client does it (src/linode/http.ts). Nothing else runs on the loop meanwhile, so each figure
// is how long the loop is blocked by one page: the part of the soak's event-loop lag a list
// sweep can cause. Saved to docs/benchmarks/results/answer-parse.json (BENCH_NO_SAVE=1 skips).
// Usage: node test/bench/answer-parse.ts [pages=300]  (npm run bench:answer-parse)
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { launcherOf } from "../harness/operator-process.ts";
import { camelize } from "../../src/linode/case.ts";
import { databaseListSchema } from "../../src/linode/schemas/databases.ts";
import { quantile, say } from "./common.ts";
import { resultCollector, saveResult } from "./report/result.ts";

// The operator's V8 settings and malloc arenas (its garbage collector's pauses are part of a
// page's cost): the bin's #! line, so this runs again under them.
if (process.env.ANSWER_PARSE_UNDER_BIN !== "1") {
  const bin = await launcherOf(fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url)));
  const child = spawnSync(process.execPath, [...bin.nodeArgs, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, ...bin.env, ANSWER_PARSE_UNDER_BIN: "1" } });
  process.exit(child.status ?? 1);
}
const v8Flags = process.execArgv;
const PAGES = Number(process.argv[2] ?? 300);
if (!Number.isInteger(PAGES) || PAGES < 100) throw new Error("usage: node test/bench/answer-parse.ts [pages, at least 100]");
const ITEMS = 500;
/** A page must leave the event loop free well within the soak's lag target (50 ms at p99). */
const TARGET_P99_MS = 10;

const recorded = JSON.parse(await readFile(new URL("../fixtures/recorded/TestDatabase_List.json", import.meta.url), "utf8")) as { method: string; responseBody: { data?: Record<string, unknown>[] } }[];
const one = recorded.find((r) => r.method === "GET")?.responseBody.data?.[0];
if (one === undefined) throw new Error("TestDatabase_List.json: no GET answer with a database in it");
const page = { data: Array.from({ length: ITEMS }, (_, i) => ({ ...one, id: 100_000 + i, label: `db-${String(i)}` })), page: 1, pages: 20, results: ITEMS * 20 };
// Each page its own text (a page read afresh, as a sweep reads it): no string the engine has seen.
// Made just before it is read, so one page's text is alive at a time, as in the operator: all of
// them made first held 300 × 369 KiB in the heap, whose collections then timed the bench's own
// memory, not a page's.
const textOf = (p: number): string => JSON.stringify({ ...page, page: p + 1 });
const pageSize = textOf(0).length;

const read = (text: string): unknown => {
  const result = databaseListSchema.safeParse(JSON.parse(text));
  if (!result.success) throw new Error(`the page does not validate: ${result.error.message}`);
  return camelize(result.data);
};
const timed = (fn: () => unknown): number => { const t = performance.now(); fn(); return performance.now() - t; };
const round2 = (n: number): number => Math.round(n * 100) / 100;

const { figures, tables, notes, figure } = resultCollector(say);
say(`== reading ${String(PAGES)} pages of ${String(ITEMS)} databases (${String(Math.round(pageSize / 1024))} KiB each)`);
/** Each page's time, and the CPU of reading them (making each page's text not counted). */
const readAll = (fn: (text: string) => unknown, from: number): { times: number[]; cpuMillis: number } => {
  const times: number[] = [];
  let cpuMillis = 0;
  for (let p = from; p < PAGES; p++) {
    const text = textOf(p);
    const cpu0 = process.cpuUsage();
    times.push(timed(() => fn(text)));
    const cpu = process.cpuUsage(cpu0);
    cpuMillis += (cpu.user + cpu.system) / 1000;
  }
  return { times, cpuMillis };
};
const firstRead = readAll(read, PAGES - 1);
const first = firstRead.times[0] ?? Number.NaN;
const { times: warm, cpuMillis } = readAll(read, 1);
const cpu = { total: firstRead.cpuMillis + cpuMillis };
// The same pages, JSON.parse alone: the floor no client can go below.
const parseOnly = readAll((t) => JSON.parse(t), 1).times;
figure("first page, the code not yet optimized", round2(first), "ms");
figure("a page once warm: p50", round2(quantile(warm, 0.5)), "ms");
figure("a page once warm: p99 (the event loop blocked this long)", round2(quantile(warm, 0.99)), "ms", `≤ ${String(TARGET_P99_MS)} ms`, (v) => v <= TARGET_P99_MS);
figure("a page once warm: worst", round2(Math.max(...warm)), "ms");
figure("JSON.parse alone: p50 / p99", `${String(round2(quantile(parseOnly, 0.5)))} / ${String(round2(quantile(parseOnly, 0.99)))}`, "ms");
figure("CPU per page (user + system)", round2(cpu.total / PAGES), "ms");
notes.push(`Each page is the recorded real answer of GET /databases/instances (test/fixtures/recorded/TestDatabase_List.json) with ${String(ITEMS)} databases, serialized afresh per page; the client's pipeline is JSON.parse, its zod schema (databaseListSchema), then camelize. It runs under the bin's #! line (node ${v8Flags.join(" ")}, MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? "unset"}), so its garbage collections are the operator's.`);
await saveResult({ name: "answer-parse", title: `Reading a page of ${String(ITEMS)} databases: parse, validate, camelCase`, command: "npm run bench:answer-parse", figures, tables, charts: [], notes });
