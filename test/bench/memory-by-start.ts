// Memory however the operator is started: the same scale run (bench:mdb, 600 ManagedDatabases,
// 2 min of steady state, a 60 s drift window) with the operator started five ways — its bin
// (the #! line: glibc's MALLOC_ARENA_MAX=2, V8's --optimize-for-size --heap-growing-percent=10),
// `node dist/cli/main.js run` (no flag on the command line: the program starts again with the
// #! line's settings), that same plain start with the program told to leave V8's defaults
// (LINODE_OPERATOR_V8_DEFAULTS=1), the #! line with a 2 MiB young generation instead of
// --optimize-for-size (less CPU, more memory at scale), and the bin with glibc's default arenas.
// Prints and saves peak and steady RSS and the operator's CPU seconds per start.
//   node test/bench/memory-by-start.ts [N] [steadyMinutes]
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { saveResult, type Figure } from "./report/result.ts";

const n = process.argv[2] ?? "600";
const steady = process.argv[3] ?? "2";
const say = (s: string): void => { process.stdout.write(`${s}\n`); };
const scale = fileURLToPath(new URL("./managed-database-scale.ts", import.meta.url));

interface Start { name: string; env: Record<string, string> }
/** The small young generation alone (the #! line from 1954c2b to 0aa53a4): less CPU, but V8's own compaction keeps fragmented pages at scale. */
const YOUNG = "--max-semi-space-size=2 --heap-growing-percent=10";
const starts: Start[] = [
  { name: "the bin (#! line)", env: {} },
  { name: "node dist/cli/main.js run", env: { BENCH_LAUNCH: "plain" } },
  { name: "node dist/cli/main.js run, V8 defaults", env: { BENCH_LAUNCH: "plain", LINODE_OPERATOR_V8_DEFAULTS: "1" } },
  { name: `MALLOC_ARENA_MAX=2 node ${YOUNG} dist/cli/main.js run (a small young generation instead of --optimize-for-size)`, env: { BENCH_LAUNCH: "plain", LINODE_OPERATOR_V8_DEFAULTS: "1", BENCH_NODE_ARGS: YOUNG, MALLOC_ARENA_MAX: "2" } },
  // glibc's default: 8 arenas per core on 64-bit; V8's helper threads and libuv's pool fill theirs.
  { name: "the bin with glibc's default arenas", env: { MALLOC_ARENA_MAX: String(8 * availableParallelism()) } },
];

interface Measured { peakMiB: number; steadyMiB: number; cpuSeconds: number }

function run(start: Start): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [scale, n, steady, "60"], { env: { ...process.env, ...start.env, BENCH_NO_SAVE: "1" }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => { out += c; });
    child.once("exit", (code) => {
      // bench:mdb's own lines (managed-database-scale.ts); CPU "no data" stays NaN: shown as such, never 0.
      const m = /operator peak RSS: ([\d.]+) MiB; current RSS ([\d.]+) MiB/.exec(out);
      const cpu = /operator CPU: ([\d.]+) s/.exec(out);
      if (code !== 0 || m === null) { reject(new Error(`${start.name}: exit ${String(code)}\n${out}`)); return; }
      resolve({ peakMiB: Math.round(Number(m[1])), steadyMiB: Math.round(Number(m[2])), cpuSeconds: cpu === null ? Number.NaN : Number(cpu[1]) });
    });
  });
}

const rows: (string | number)[][] = [];
const figures: Figure[] = [];
const results: Record<string, Measured> = {};
for (const start of starts) {
  const r = await run(start);
  results[start.name] = r;
  rows.push([start.name, r.peakMiB, r.steadyMiB, r.cpuSeconds]);
  say(`${start.name}: peak RSS ${String(r.peakMiB)} MiB, steady RSS ${String(r.steadyMiB)} MiB, CPU ${String(r.cpuSeconds)} s`);
}
const bin = results[starts[0]?.name ?? ""];
const plain = results[starts[1]?.name ?? ""];
if (bin !== undefined && plain !== undefined) {
  const within = (a: number, b: number): boolean => a <= b * 1.1;
  figures.push(
    { label: "peak RSS, bin", value: bin.peakMiB, unit: "MiB" },
    { label: "peak RSS, node dist/cli/main.js", value: plain.peakMiB, unit: "MiB", target: "≤ 1.1× the bin's", met: within(plain.peakMiB, bin.peakMiB) },
    { label: "steady RSS, bin", value: bin.steadyMiB, unit: "MiB" },
    { label: "steady RSS, node dist/cli/main.js", value: plain.steadyMiB, unit: "MiB", target: "≤ 1.1× the bin's", met: within(plain.steadyMiB, bin.steadyMiB) },
  );
}
await saveResult({
  name: "memory-by-start",
  title: `Memory however it is started: ${n} ManagedDatabases`,
  command: "npm run bench:memory-by-start",
  figures,
  tables: [{ title: "RSS and CPU by start", columns: ["start", "peak RSS (MiB)", "steady RSS (MiB)", "CPU, converging and steady (s)"], rows }],
  notes: [
    `Each start runs bench:mdb (${n} ManagedDatabases, ${steady} min of steady state, 60 s drift window); peak is the process's VmHWM, steady its VmRSS at the end.`,
    "A plain start starts again as the same process with the #! line's settings it lacked (src/cli/main.ts relaunchFor: V8 sizes the young generation as it starts, and glibc reads MALLOC_ARENA_MAX only then). The third row turns the program's settings off to show what they save; the fourth is the #! line with a 2 MiB young generation instead of --optimize-for-size (the bin's from 1954c2b to 0aa53a4); the last lifts the #! line's cap of two malloc arenas.",
  ],
});
