// Emulator benchmark: starts `linode-operator emulator` as a child process on loopback,
// seeds 10,000 databases through the admin endpoint, then measures requests/second and
// latency percentiles for GET one database and for list pages of 500, with bounded request
// counts and a small fixed concurrency, and saves the figures to the benchmark report
// (docs/benchmarks/results/emulator.json; BENCH_NO_SAVE=1 skips that).
// Usage: node test/bench/emulator-bench.ts (npm run bench:emulator)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Pool } from "undici";
import { saveResult, type Figure } from "./report/result.ts";

const OBJECTS = 10_000;
const CONCURRENCY = 8;
const TOKEN = "bench-token";
const PAGE_SIZE = 500;
const PAGES = OBJECTS / PAGE_SIZE;
/** Issue 32: a 500-item page among 10,000 databases at this many requests a second or more. */
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

/** `before`: a request sent before each measured one, by the same worker (its time counts in req/s, not in the latencies). */
async function measure(pool: Pool, name: string, total: number, path: (i: number) => string, before?: () => Promise<void>): Promise<Measured> {
  const latencies: number[] = [];
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      if (before !== undefined) await before();
      const t = performance.now();
      const res = await pool.request({ method: "GET", path: path(i), headers: { authorization: `Bearer ${TOKEN}` } });
      const body = await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode}`);
      bytes += body.byteLength;
      latencies.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const m: Measured = { name, total, rps: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), kib: bytes / total / 1024 };
  const fmt = (n: number) => n.toFixed(2).padStart(7);
  process.stdout.write(
    `${name.padEnd(34)} ${String(total).padStart(5)} req  ${m.rps.toFixed(0).padStart(6)} req/s  ` +
    `p50 ${fmt(m.p50)} ms  p99 ${fmt(m.p99)} ms  ` +
    `avg body ${m.kib.toFixed(1)} KiB\n`,
  );
  return m;
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
    // The first pass over the pages renders every record once (the emulator keeps the JSON of
    // each record, and of each page, until a field it shows changes): measured apart, as the
    // cost of a first look; the passes after it are the steady state of a client re-listing.
    const engineList = (i: number) => `/v4/databases/mysql/instances?page=${(i % PAGES) + 1}&page_size=${PAGE_SIZE}`;
    const allList = (i: number) => `/v4/databases/instances?page=${(i % PAGES) + 1}&page_size=${PAGE_SIZE}`;
    const firstPass = await measure(pool, "first pass, both lists (renders)", 2 * PAGES, (i) => (i < PAGES ? engineList(i) : allList(i)));
    const list = await measure(pool, "GET list page_size=500 (20 pages)", 2000, engineList);
    const all = await measure(pool, "GET /databases/instances 500/page", 1000, allList);
    // Pages made again after a change, as between an operator's writes: any change (here an
    // admin call that changes nothing of the databases) makes the emulator check each item's
    // kept text against its record instead of sending the page it made last time.
    const changed = await measure(pool, "GET list 500/page, after a change", 1000, engineList, async () => {
      const res = await pool.request({ method: "POST", path: "/_emulator/requests/reset" });
      await res.body.dump();
    });
    await save({ startMs, seedMs, one, firstPass, list, all, changed });
  } finally {
    await pool.close();
    await emu.stop();
  }
}

async function save(r: { startMs: number; seedMs: number; one: Measured; firstPass: Measured; list: Measured; all: Measured; changed: Measured }): Promise<void> {
  const rps = (label: string, m: Measured, target: boolean): Figure => ({
    label, value: Math.round(m.rps), unit: "req/s", ...(target ? { target: "≥ 1,000 req/s", met: m.rps >= TARGET_RPS } : {}),
  });
  const ms = (label: string, v: number): Figure => ({ label, value: Number(v.toFixed(2)), unit: "ms" });
  /** A run's rate with its p50 and p99 latency. */
  const measured = (label: string, m: Measured, target: boolean): Figure[] => [rps(label, m, target), ms("… p50 latency", m.p50), ms("… p99 latency", m.p99)];
  await saveResult({
    name: "emulator",
    title: `Emulator: a ${String(PAGE_SIZE)}-item page among ${OBJECTS.toLocaleString("en-US")} databases`,
    command: "npm run bench:emulator",
    figures: [
      ...measured("One engine's list, a 500-item page (GET /databases/mysql/instances)", r.list, true),
      ...measured("All engines' list, a 500-item page (GET /databases/instances)", r.all, true),
      ...measured("One engine's list after a change each time (kept texts checked per record)", r.changed, false),
      ...measured("GET one database", r.one, false),
    ],
    tables: [{
      title: "Requests",
      columns: ["request", "requests", "req/s", "p50 (ms)", "p99 (ms)", "body (KiB)"],
      rows: [r.one, r.firstPass, r.list, r.all, r.changed].map((m) => [m.name, m.total, Math.round(m.rps), Number(m.p50.toFixed(2)), Number(m.p99.toFixed(2)), Number(m.kib.toFixed(1))]),
    }],
    notes: [
      `The emulator (linode-operator emulator, a child process) holds ${OBJECTS.toLocaleString("en-US")} active MySQL databases seeded through its admin endpoint; the client (undici, keep-alive) sends ${String(CONCURRENCY)} requests at a time over 127.0.0.1 on the same machine, so both share its cores.`,
      `Started in ${r.startMs.toFixed(0)} ms (spawn to listening), seeded in ${r.seedMs.toFixed(0)} ms.`,
      "A list settles only the databases with a transition due (it knows when the next one is) and reads its page from the account's per-engine order; each record's JSON, and each page's, is kept until a field it shows changes. The first pass renders them (its row above); the list figures are the passes after it.",
      "After a change (any request or admin call that may change state), a page is not sent as made last time before each item's kept text is checked against its record: the 'after a change' row sends an admin call (POST /_emulator/requests/reset) before each page; its req/s counts that call's time too.",
    ],
  });
}

await main();
