// Emulator benchmark: starts `linode-operator emulator` as a child process on loopback,
// seeds 10,000 databases through the admin endpoint, then measures requests/second and
// latency percentiles for GET one database and for list pages of 500 (cold, unchanged, and
// made afresh: a database on the page changed through the API before each read), with bounded
// request counts and a small fixed concurrency, and saves the figures to the benchmark report
// (docs/benchmarks/results/emulator.json; BENCH_NO_SAVE=1 skips that).
// Usage: node test/bench/emulator-bench.ts (npm run bench:emulator)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Pool } from "undici";
import { figureOf } from "./report/figure.ts";
import { saveResult, type Figure } from "./report/result.ts";

const OBJECTS = 10_000;
const CONCURRENCY = 8;
const TOKEN = "bench-token";
const PAGE_SIZE = 500;
const PAGES = OBJECTS / PAGE_SIZE;
/** Issues 32 and 45: a 500-item page among 10,000 databases, made afresh, at this many requests a second or more. */
const TARGET_RPS = 1000;

interface Measured {
  name: string;
  total: number;
  rps: number;
  p50: number;
  p99: number;
  kib: number;
}

async function startChild(): Promise<{ url: string; stop: () => Promise<void> }> {
  const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;
  const child = spawn(process.execPath, [main, "emulator", "--port", "0", "--token", TOKEN, "--rate-limit", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => { reject(new Error(`emulator exited with ${String(code)}`)); });
  });
  const url = /listening on (\S+)$/.exec(line)?.[1];
  if (url === undefined) throw new Error(`unexpected output: ${line}`);
  return {
    url,
    stop: () => new Promise((resolve) => { child.once("exit", () => { resolve(); }); child.kill("SIGTERM"); }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function measure(pool: Pool, name: string, total: number, path: (i: number) => string): Promise<Measured> {
  const latencies: number[] = [];
  let bytes = 0;
  const started = performance.now();
  await inParallel(total, async (i) => {
    const t = performance.now();
    const res = await pool.request({ method: "GET", path: path(i), headers: { authorization: `Bearer ${TOKEN}` } });
    const body = await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${String(res.statusCode)}`);
    bytes += body.byteLength;
    latencies.push(performance.now() - t);
  });
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const m: Measured = { name, total, rps: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), kib: bytes / total / 1024 };
  print(m);
  return m;
}

function print(m: Measured, extra = ""): void {
  const fmt = (n: number) => n.toFixed(2).padStart(7);
  process.stdout.write(
    `${m.name.padEnd(34)} ${String(m.total).padStart(5)} req  ${m.rps.toFixed(0).padStart(6)} req/s  ` +
    `p50 ${fmt(m.p50)} ms  p99 ${fmt(m.p99)} ms  avg body ${m.kib.toFixed(1)} KiB${extra}\n`,
  );
}

/** Labels given by the fresh-page phases, each new (the API refuses a label another database of the engine has). */
let labelSeq = 0;

/**
 * List pages each made afresh, `rounds` times over every page: a round first gives one database on
 * each page a new label through the API (PUT, as an operator's update; CONCURRENCY at a time), so no
 * page can be sent as made before, then reads every page (CONCURRENCY at a time), and each answer
 * must show its page's new label. The rate is list requests over the time lists were in flight
 * (from a round's first GET sent to its last answer read; no write is in flight then);
 * `withWrites` is over the whole phase, the writes' time included.
 */
async function measureFresh(pool: Pool, name: string, rounds: number, first: number, listPath: (page: number) => string): Promise<Measured & { withWrites: number }> {
  const latencies: number[] = [];
  let bytes = 0;
  let listMs = 0;
  const started = performance.now();
  for (let r = 0; r < rounds; r++) {
    const labels = Array.from({ length: PAGES }, () => `fresh-${String(++labelSeq)}`);
    await inParallel(PAGES, async (page) => {
      // A different database of the page each round (ids are seeded in order, PAGE_SIZE a page).
      const id = first + page * PAGE_SIZE + ((r * 37 + page * 101) % PAGE_SIZE);
      const res = await pool.request({
        method: "PUT", path: `/v4/databases/mysql/instances/${String(id)}`,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ label: labels[page] }),
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${name}: PUT ${String(id)}: HTTP ${String(res.statusCode)}`);
    });
    const bodies: Buffer[] = [];
    const t0 = performance.now();
    await inParallel(PAGES, async (page) => {
      const t = performance.now();
      const res = await pool.request({ method: "GET", path: listPath(page), headers: { authorization: `Bearer ${TOKEN}` } });
      bodies[page] = Buffer.from(await res.body.arrayBuffer());
      latencies.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${String(res.statusCode)}`);
    });
    listMs += performance.now() - t0;
    // Checked once the round's lists are timed: the search is the bench's, not a client's.
    bodies.forEach((body, page) => {
      if (!body.includes(`"label":"${labels[page] ?? ""}"`)) throw new Error(`${name}: page ${String(page + 1)} does not show the label written just before it`);
      bytes += body.byteLength;
    });
  }
  const total = rounds * PAGES;
  const withWrites = total / ((performance.now() - started) / 1000);
  latencies.sort((a, b) => a - b);
  const m = { name, total, rps: total / (listMs / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), kib: bytes / total / 1024, withWrites };
  print(m, `  (${withWrites.toFixed(0)} req/s with the writes' time)`);
  return m;
}

/** Runs task(0 … n-1), CONCURRENCY at a time. */
async function inParallel(n: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, worker));
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const emu = await startChild();
  const startMs = performance.now() - t0;
  const origin = new URL(emu.url).origin;
  const pool = new Pool(origin, { connections: CONCURRENCY });
  try {
    const s0 = performance.now();
    const seeded = await pool.request({
      method: "POST", path: "/_emulator/seed", headers: { "content-type": "application/json" },
      body: JSON.stringify({ databases: { count: OBJECTS } }),
    });
    const seed = (await seeded.body.json()) as { databases: { first_id: number } };
    const seedMs = performance.now() - s0;
    const first = seed.databases.first_id;
    process.stdout.write(`emulator start ${startMs.toFixed(0)} ms (process spawn to listening line); seeded ${OBJECTS} databases in ${seedMs.toFixed(0)} ms; concurrency ${CONCURRENCY}, keep-alive, 127.0.0.1\n`);
    // Warm-up so JIT compilation is not measured.
    await measure(pool, "warm-up", 300, (i) => `/v4/databases/mysql/instances/${first + (i % OBJECTS)}`);
    const one = await measure(pool, "GET /databases/mysql/instances/{id}", 5000, (i) => `/v4/databases/mysql/instances/${first + ((i * 7919) % OBJECTS)}`);
    const engineList = (page: number) => `/v4/databases/mysql/instances?page=${(page % PAGES) + 1}&page_size=${PAGE_SIZE}`;
    const allList = (page: number) => `/v4/databases/instances?page=${(page % PAGES) + 1}&page_size=${PAGE_SIZE}`;
    // The first pass over the pages renders every record (nothing of them is kept yet): a first look.
    const cold = await measure(pool, "cold: first pass, both lists", 2 * PAGES, (i) => (i < PAGES ? engineList(i) : allList(i)));
    // Nothing changes between these: the pages made last time are sent again.
    const list = await measure(pool, "unchanged: GET one engine's list", 2000, engineList);
    const all = await measure(pool, "unchanged: GET all engines' list", 1000, allList);
    // A record on each page changes before it is read: every page is made afresh.
    const fresh = await measureFresh(pool, "fresh: GET one engine's list", 100, first, engineList);
    const freshAll = await measureFresh(pool, "fresh: GET all engines' list", 50, first, allList);
    await save({ startMs, seedMs, one, cold, list, all, fresh, freshAll });
  } finally {
    await pool.close();
    await emu.stop();
  }
}

async function save(r: { startMs: number; seedMs: number; one: Measured; cold: Measured; list: Measured; all: Measured; fresh: Measured & { withWrites: number }; freshAll: Measured & { withWrites: number } }): Promise<void> {
  const rps = (label: string, value: number, target: boolean): Figure =>
    figureOf(label, Math.round(value), "req/s", target ? "≥ 1,000 req/s" : undefined, target ? (v) => v >= TARGET_RPS : undefined);
  const ms = (label: string, v: number): Figure => figureOf(label, Number(v.toFixed(2)), "ms");
  /** A run's rate with its p50 and p99 latency. */
  const measured = (label: string, m: Measured, target: boolean): Figure[] => [rps(label, m.rps, target), ms("… p50 latency", m.p50), ms("… p99 latency", m.p99)];
  await saveResult({
    name: "emulator",
    title: `Emulator: a ${String(PAGE_SIZE)}-item page among ${OBJECTS.toLocaleString("en-US")} databases`,
    command: "npm run bench:emulator",
    figures: [
      ...measured("One engine's list, a 500-item page made afresh (a database on it changed before each request)", r.fresh, true),
      rps("… the same, the writes' time counted too (list requests over the whole phase)", r.fresh.withWrites, false),
      ...measured("All engines' list, a 500-item page made afresh (GET /databases/instances)", r.freshAll, true),
      ...measured("Cold: each page's first render, both lists (nothing kept)", r.cold, false),
      ...measured("Unchanged: one engine's list, the same 20 pages again (no change between)", r.list, false),
      ...measured("Unchanged: all engines' list, the same 20 pages again", r.all, false),
      ...measured("GET one database", r.one, false),
    ],
    tables: [{
      title: "Requests",
      columns: ["request", "requests", "req/s", "p50 (ms)", "p99 (ms)", "body (KiB)"],
      rows: [r.one, r.cold, r.list, r.all, r.fresh, r.freshAll].map((m) => [m.name, m.total, Math.round(m.rps), Number(m.p50.toFixed(2)), Number(m.p99.toFixed(2)), Number(m.kib.toFixed(1))]),
    }],
    notes: [
      `The emulator (linode-operator emulator, a child process, no added latency, no rate limit) holds ${OBJECTS.toLocaleString("en-US")} active MySQL databases (legacy platform) seeded through its admin endpoint; the client (undici, keep-alive) sends ${String(CONCURRENCY)} requests at a time over 127.0.0.1 on the same machine, so both share its cores.`,
      `Started in ${r.startMs.toFixed(0)} ms (spawn to listening), seeded in ${r.seedMs.toFixed(0)} ms.`,
      `Made afresh (the target's rows): in rounds, each round first changes one database on each of the ${String(PAGES)} pages through the API (PUT /v4/databases/mysql/instances/{id} with a new label, ${String(CONCURRENCY)} at a time), then reads the ${String(PAGES)} pages (${String(CONCURRENCY)} at a time), each answer checked (after the round, outside the timed span) to show its page's new label. req/s is list requests over the time lists were in flight (each round's first GET sent to its last answer read; no write in flight then), so the writes' time is excluded; the row after it counts the writes' time too (list requests over the whole phase). Latencies are the list requests'. ${String(r.fresh.total)} and ${String(r.freshAll.total)} requests.`,
      "Cold: the first pass over both lists' pages, when nothing of any record is kept yet. Unchanged: the same pages again with no change between, sent as made last time.",
    ],
  });
}

await main();
