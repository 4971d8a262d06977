// What reading one page of the Linode API's answers costs the operator's event loop: a page of
// 500 databases (each the recorded real answer in test/fixtures/recorded/TestDatabase_List.json, with its own id and label)
// parsed from JSON, validated with the client's schema and converted to camelCase by the
// client's own reader (src/linode/answer.ts readAnswer, which yields the loop between slices of
// items). Nothing else runs on the loop but a ticker that takes a turn whenever the reader
// yields: the longest gap between its turns is how long the loop was blocked by that page,
// the part of the soak's event-loop lag a list sweep can cause. Saved to docs/benchmarks/results/answer-parse.json (BENCH_NO_SAVE=1 skips).
// Usage: node test/bench/answer-parse.ts [pages=300]  (npm run bench:answer-parse)
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { launcherOf } from "../harness/operator-process.ts";
import { ITEMS_PER_SLICE, readAnswer, SLICE_MILLIS } from "../../src/linode/answer.ts";
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

const read = (text: string): Promise<unknown> => readAnswer(databaseListSchema, text, { status: 200, method: "GET", route: "/databases/instances" });
// The garbage collector's pauses, to tell how much of a block was V8's (a compacting collection,
// under the #! line's --optimize-for-size) and how much the reader's own work between two yields.
const collections: { start: number; end: number }[] = [];
const gcObserver = new PerformanceObserver((list) => { for (const e of list.getEntries()) collections.push({ start: e.startTime, end: e.startTime + e.duration }); });
gcObserver.observe({ entryTypes: ["gc"] });
/** Milliseconds of collections within [from, to]. */
const collectedWithin = (from: number, to: number): number =>
  collections.reduce((sum, c) => sum + Math.max(0, Math.min(to, c.end) - Math.max(from, c.start)), 0);
/** How long `fn` took, and the longest the event loop went without a turn meanwhile (a ticker's longest gap), and when that gap began. */
const timed = async (fn: () => unknown): Promise<{ total: number; blocked: number; blockedFrom: number }> => {
  const t0 = performance.now();
  let last = t0;
  let blocked = 0;
  let blockedFrom = t0;
  let running = true;
  const gap = (now: number): void => {
    if (now - last > blocked) { blocked = now - last; blockedFrom = last; }
    last = now;
  };
  const tick = (): void => {
    gap(performance.now());
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await fn();
  running = false;
  const end = performance.now();
  gap(end);
  return { total: end - t0, blocked, blockedFrom };
};
const round2 = (n: number): number => Math.round(n * 100) / 100;

const { figures, tables, notes, figure } = resultCollector(say);
say(`== reading ${String(PAGES)} pages of ${String(ITEMS)} databases (${String(Math.round(pageSize / 1024))} KiB each)`);
/** Each page's time and longest block, and the CPU of reading them (making each page's text not counted). */
const readAll = async (fn: (text: string) => unknown, from: number): Promise<{ totals: number[]; blocks: number[]; spans: { from: number; to: number }[]; cpuMillis: number }> => {
  const totals: number[] = [];
  const blocks: number[] = [];
  const spans: { from: number; to: number }[] = [];
  let cpuMillis = 0;
  for (let p = from; p < PAGES; p++) {
    const text = textOf(p);
    const cpu0 = process.cpuUsage();
    const { total, blocked, blockedFrom } = await timed(() => fn(text));
    const cpu = process.cpuUsage(cpu0);
    totals.push(total);
    blocks.push(blocked);
    spans.push({ from: blockedFrom, to: blockedFrom + blocked });
    cpuMillis += (cpu.user + cpu.system) / 1000;
  }
  return { totals, blocks, spans, cpuMillis };
};
const firstRead = await readAll(read, PAGES - 1);
const { totals: warm, blocks: warmBlocks, spans: warmSpans, cpuMillis } = await readAll(read, 1);
const cpu = { total: firstRead.cpuMillis + cpuMillis };
// The same pages, JSON.parse alone: the floor no client can go below, and one block it cannot split.
const parseOnly = (await readAll((t) => JSON.parse(t), 1)).blocks;
// Observers report after the fact: a turn for the last collections to arrive.
await new Promise((r) => setTimeout(r, 50));
gcObserver.disconnect();
const collectedInBlock = warmSpans.map((b) => collectedWithin(b.from, b.to));
const ownBlocks = warmBlocks.map((b, i) => b - (collectedInBlock[i] ?? 0));
figure("first page, the code not yet optimized: read / the loop blocked", `${String(round2(firstRead.totals[0] ?? Number.NaN))} / ${String(round2(firstRead.blocks[0] ?? Number.NaN))}`, "ms");
figure("a page once warm, read (the loop free between slices): p50 / p99", `${String(round2(quantile(warm, 0.5)))} / ${String(round2(quantile(warm, 0.99)))}`, "ms");
figure("a page once warm: p50 of the event loop blocked", round2(quantile(warmBlocks, 0.5)), "ms");
figure("a page once warm: p99 of the event loop blocked (its longest block)", round2(quantile(warmBlocks, 0.99)), "ms", `≤ ${String(TARGET_P99_MS)} ms`, (v) => v <= TARGET_P99_MS);
figure("a page once warm: worst block", round2(Math.max(...warmBlocks)), "ms");
figure("of a page's longest block, the garbage collector's pauses: p50 / p99", `${String(round2(quantile(collectedInBlock, 0.5)))} / ${String(round2(quantile(collectedInBlock, 0.99)))}`, "ms");
figure("a page's longest block less the collections in it (the reader's own work between two yields): p99", round2(quantile(ownBlocks, 0.99)), "ms");
figure("JSON.parse alone: p50 / p99", `${String(round2(quantile(parseOnly, 0.5)))} / ${String(round2(quantile(parseOnly, 0.99)))}`, "ms");
figure("CPU per page (user + system)", round2(cpu.total / PAGES), "ms");
notes.push(`Each page is the recorded real answer of GET /databases/instances (test/fixtures/recorded/TestDatabase_List.json) with ${String(ITEMS)} databases, serialized afresh per page; the client's reader (readAnswer: JSON.parse, then the envelope and the items through its zod schema, databaseListSchema, and camelize, at most ${String(ITEMS_PER_SLICE)} items or ${String(SLICE_MILLIS)} ms at a time, yielding the loop between slices) reads it while a ticker takes a turn at every yield; a page's block is the longest gap between the ticker's turns, and the collections within it are V8's own (PerformanceObserver "gc" entries): a collection lands wherever the program allocates and no reader can split it. It runs under the bin's #! line (node ${v8Flags.join(" ")}, MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? "unset"}), so its garbage collections are the operator's.`);
await saveResult({ name: "answer-parse", title: `Reading a page of ${String(ITEMS)} databases: parse, validate, camelCase`, command: "npm run bench:answer-parse", figures, tables, charts: [], notes });
