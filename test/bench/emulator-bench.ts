// Emulator benchmark: starts `linode-operator emulator` as a child process on loopback,
// seeds 10,000 databases through the admin endpoint, then measures requests/second and
// latency percentiles for GET one database and for list pages of 500, with bounded request
// counts and a small fixed concurrency. Usage: node test/bench/emulator-bench.ts
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Pool } from "undici";

const OBJECTS = 10_000;
const CONCURRENCY = 8;
const TOKEN = "bench-token";

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

async function measure(pool: Pool, name: string, total: number, path: (i: number) => string): Promise<void> {
  const latencies: number[] = [];
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
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
  const fmt = (n: number) => n.toFixed(2).padStart(7);
  process.stdout.write(
    `${name.padEnd(34)} ${String(total).padStart(5)} req  ${(total / seconds).toFixed(0).padStart(6)} req/s  ` +
    `p50 ${fmt(percentile(latencies, 50))} ms  p99 ${fmt(percentile(latencies, 99))} ms  ` +
    `avg body ${(bytes / total / 1024).toFixed(1)} KiB\n`,
  );
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
    await measure(pool, "GET /databases/mysql/instances/{id}", 5000, (i) => `/v4/databases/mysql/instances/${first + ((i * 7919) % OBJECTS)}`);
    await measure(pool, "GET list page_size=500 (20 pages)", 400, (i) => `/v4/databases/mysql/instances?page=${(i % 20) + 1}&page_size=500`);
    await measure(pool, "GET /databases/instances 500/page", 200, (i) => `/v4/databases/instances?page=${(i % 20) + 1}&page_size=500`);
  } finally {
    await pool.close();
    await emu.stop();
  }
}

await main();
