// Throughput of the Linode client against the emulator on loopback, and its overhead per
// call versus raw undici on the same route and the same kind of keep-alive pool.
// Run: node test/bench/client-bench.ts  (npm run bench:client). Bounded: CALLS per row.
import { Pool } from "undici";
import { Registry } from "prom-client";
import { startEmulator } from "../../src/emulator/index.ts";
import { LinodeClient } from "../../src/linode/index.ts";

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "1,8,32").split(",").map(Number);
const TOKEN = "bench-token";

interface Row {
  impl: string;
  concurrency: number;
  callsPerSec: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

async function run(impl: string, concurrency: number, call: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < 50; i++) await call(); // warm the pool and the JIT
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < CALLS) {
      const t0 = performance.now();
      await call();
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return {
    impl,
    concurrency,
    callsPerSec: Math.round(latencies.length / elapsed),
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
  };
}

// Server-side limits off: at loopback speed the 1840/min budget would end the run in a second.
const emu = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.01, rateLimits: false });
try {
  const url = new URL(emu.url);
  // Client-side pacing off too: it would (correctly) hold the client to the advertised
  // X-RateLimit-Limit, and this measures the client's own cost, not Linode's budget.
  const client = new LinodeClient({ token: TOKEN, baseUrl: emu.url, registry: new Registry(), rateLimit: false, connections: 32 });
  const nb = await client.nodeBalancers.create({ region: "us-east", label: "bench-nb" });
  const path = `${url.pathname.replace(/\/$/, "")}/nodebalancers/${nb.id}`;
  const pool = new Pool(url.origin, { connections: 32 });
  const raw = async (): Promise<unknown> => {
    const res = await pool.request({ path, method: "GET", headers: { authorization: `Bearer ${TOKEN}`, accept: "application/json" } });
    return res.body.json();
  };
  const viaClient = (): Promise<unknown> => client.nodeBalancers.get(nb.id);

  const rows: Row[] = [];
  for (const c of CONCURRENCY) {
    rows.push(await run("raw undici", c, raw));
    rows.push(await run("LinodeClient", c, viaClient));
  }
  console.log(`GET /v4/nodebalancers/{id} against the emulator on loopback, ${CALLS} calls per row (node ${process.version})`);
  console.log("impl           conc  calls/s   mean ms   p50 ms   p99 ms");
  for (const r of rows) {
    console.log(`${r.impl.padEnd(14)} ${String(r.concurrency).padStart(4)} ${String(r.callsPerSec).padStart(9)} ${r.meanMs.toFixed(3).padStart(9)} ${r.p50Ms.toFixed(3).padStart(8)} ${r.p99Ms.toFixed(3).padStart(8)}`);
  }
  for (const c of CONCURRENCY) {
    const rawRow = rows.find((r) => r.impl === "raw undici" && r.concurrency === c);
    const clientRow = rows.find((r) => r.impl === "LinodeClient" && r.concurrency === c);
    if (rawRow && clientRow) {
      // Client and emulator share the same cores, so lost throughput is the client's CPU per call.
      const perCallUs = 1e6 / clientRow.callsPerSec - 1e6 / rawRow.callsPerSec;
      console.log(`overhead at concurrency ${c}: +${(clientRow.meanMs - rawRow.meanMs).toFixed(3)} ms mean latency, +${perCallUs.toFixed(0)} µs per call (1/throughput)`);
    }
  }
  await client.close();
  await pool.close();
} finally {
  await emu.close();
}
