// Scale benchmark: N ManagedDatabases (default 200) against the emulator, with the operator as
// a real `linode-operator run` process on a real API server. Prints the time until all are
// Ready, Linode calls per database during convergence and per database per hour in steady
// state, Kubernetes writes per hour in steady state, the operator's RSS (peak while converging,
// steady) and its open connections to the API server and to the Linode API (peak).
//   node test/bench/managed-database-scale.ts [N] [steadyMinutes] [readySeconds]
// readySeconds shortens the drift window (the ready poll, default 300 s) so that a few
// minutes hold many windows: steady reads are reported per window against the floor of
// ceil(N/500) list calls per engine per window.
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { openConnections } from "../harness/sockets.ts";
import { apiserverWrites, writesBetween } from "./apiserver-writes.ts";
import { startBench } from "./bench-setup.ts";
import { Peak, rssMiB, scrape, sum } from "./metrics.ts";
import { figureOf } from "./report/figure.ts";
import { saveResult, type Figure } from "./report/result.ts";

const n = Number(process.argv[2] ?? 200);
const steadyMinutes = Number(process.argv[3] ?? 6);
const readySeconds = Number(process.argv[4] ?? 300);
// BENCH_UNLIMITED=1 (the 10k mode: memory at scale, not the call budget): the emulator has no
// rate limit and the operator may spend all of it.
const unlimited = process.env.BENCH_UNLIMITED === "1";
const say = (s: string): void => { process.stdout.write(`${s}\n`); };

const bench = await startBench({ provisionSeconds: 5, ...(unlimited ? { rateLimits: false as const } : {}) });
const { cp, emulator } = bench;
try {
  const { proc: op, metricsUrl } = await bench.operator(["--concurrency", "8", "--poll-ready-seconds", String(readySeconds), ...(unlimited ? ["--linode-api-share", "1"] : [])]);
  const opMetric = async (name: string, match?: (labels: Map<string, string>) => boolean): Promise<number> => sum(await scrape(metricsUrl), name, match);
  const mutation = (l: Map<string, string>): boolean => l.get("method") !== "GET";
  /**
   * Linode calls so far by class: engine lists, backups lists, catalog reads (the engines, plans
   * and parameters every database shares, read once a day), single reads of one database, writes; and 429s.
   */
  const byClass = async (): Promise<{ lists: number; backups: number; catalog: number; reads: number; readsByRoute: Map<string, number>; writes: number; total: number; refused: number }> => {
    const c = { lists: 0, backups: 0, catalog: 0, reads: 0, readsByRoute: new Map<string, number>(), writes: 0, total: 0, refused: 0 };
    for (const { name, labels, value: v } of await scrape(metricsUrl)) {
      if (name !== "linode_api_requests_total") continue;
      c.total += v;
      const route = labels.get("route") ?? "";
      if (labels.get("status") === "429") c.refused += v;
      if (labels.get("method") !== "GET") c.writes += v;
      else if (route.endsWith("/instances")) c.lists += v;
      else if (route.endsWith("/backups")) c.backups += v;
      else if (/^\/databases\/(engines|types)\b|\/config$|^\/profile$|^\/regions\b/.test(route)) c.catalog += v;
      else {
        c.reads += v;
        // An answer other than 200 named with its status: a read repeated after a failure is not an extra look.
        const status = labels.get("status") ?? "";
        const key = status === "200" ? route : `${route} (${status})`;
        c.readsByRoute.set(key, (c.readsByRoute.get(key) ?? 0) + v);
      }
    }
    return c;
  };
  // Writes to what the operator manages; the apiserver's own lease renewals are left out.
  const managed = ["manageddatabases", "secrets", "events"];

  const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
  const pid = op.child.pid ?? 0;
  const peak = { rss: new Peak(), apiserver: new Peak(), linode: new Peak() };
  const mib = async (name: string): Promise<string> => (await opMetric(name) / 1_048_576).toFixed(1);
  // By space too: what a space reserves beyond what it uses is fragmentation V8 has not compacted away.
  const spaces = async (): Promise<string> => {
    const m = await scrape(metricsUrl);
    const of = (name: string, space: string): string => (sum(m, name, (l) => l.get("space") === space) / 1_048_576).toFixed(1);
    return ["old", "code", "new", "large_object"].map((s) => `${s} ${of("nodejs_heap_space_size_used_bytes", s)}/${of("nodejs_heap_space_size_total_bytes", s)}`).join(", ");
  };
  const heap = async (): Promise<string> => `JS heap ${await mib("nodejs_heap_size_used_bytes")} MiB used of ${await mib("nodejs_heap_size_total_bytes")} MiB (used/reserved MiB by space: ${await spaces()}), external ${await mib("nodejs_external_memory_bytes")} MiB`;
  say(`operator at rest before any object: RSS ${String(Math.round((await rssMiB(pid)).rss))} MiB; ${await heap()}`);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rss } = await rssMiB(pid);
      peak.rss.see(Number.isNaN(rss) ? undefined : rss);
      peak.apiserver.see(await openConnections(pid, Number(new URL(cp.server).port)));
      peak.linode.see(await openConnections(pid, emulator.port));
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    await kube.createCustom(mdb, "bench", {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `db-${String(i)}` },
      spec: { engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] },
    });
  }
  const createdMillis = Date.now() - t0;
  let ready = 0;
  while (ready < n) {
    await new Promise((r) => setTimeout(r, 1_000));
    let token: string | undefined;
    ready = 0;
    do {
      const page = await kube.list<ManagedObject>(mdb, { namespace: "bench", ...(token !== undefined ? { continueToken: token } : {}) });
      ready += page.items.filter((o) => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length;
      token = page.continueToken;
    } while (token !== undefined);
    if (Date.now() - t0 > 30 * 60_000) throw new Error(`only ${String(ready)}/${String(n)} Ready after 30 min`);
  }
  const convergeMillis = Date.now() - t0;
  sampling = false;
  await sampler;
  const convergeCalls = await opMetric("linode_api_requests_total");
  const refused429 = await opMetric("linode_api_requests_total", (l) => l.get("status") === "429");
  const emulatorDbs = emulator.dump().databases.length;
  say(`${String(n)} ManagedDatabases: created in ${String(createdMillis)} ms, all Ready ${String(convergeMillis)} ms after the first create (emulator provisioning 5 s)`);
  say(`convergence: ${String(convergeCalls)} Linode calls, ${(convergeCalls / n).toFixed(2)} per database, ${String(refused429)} × 429; emulator holds ${String(emulatorDbs)} databases`);
  const conv = await byClass();
  say(`single reads by route: ${[...conv.readsByRoute].map(([r, v]) => `${r} ${String(v)}`).join(", ")}`);
  const results = (await scrape(metricsUrl)).filter((m) => m.name === "linode_operator_reconcile_total" && m.labels.get("kind") === "ManagedDatabase" && m.value > 0);
  // A pass the call budget held back ("deferred") after one call of a pair was sent reads that call again next time.
  say(`reconcile passes by result: ${results.map((m) => `${m.labels.get("result") ?? ""} ${String(m.value)}`).join(", ")}`);
  const retried = (await scrape(metricsUrl)).filter((m) => m.name === "linode_api_retries_total" && m.value > 0);
  say(`retried attempts: ${retried.length === 0 ? "none" : retried.map((m) => `${m.labels.get("method") ?? ""} ${m.labels.get("route") ?? ""} (${m.labels.get("reason") ?? ""}) ${String(m.value)}`).join(", ")}`);
  say(`convergence by class: ${String(conv.writes)} writes, ${String(conv.reads)} single reads, ${String(conv.lists)} engine lists, ${String(conv.backups)} backups lists, ${String(conv.catalog)} catalog reads (${((conv.writes + conv.reads) / n).toFixed(2)} writes + single reads per database)`);
  const known = (v: number | undefined): string => (v === undefined ? "no data" : String(Math.round(v)));
  say(`while converging: peak RSS ${known(peak.rss.value)} MiB; peak open connections: ${known(peak.apiserver.value)} to the API server, ${known(peak.linode.value)} to the Linode API (sampled every 0.5 s)`);

  const cpuNow = async (): Promise<number | undefined> => {
    const c = (await scrape(metricsUrl)).filter((x) => x.name === "process_cpu_seconds_total");
    return c.length === 0 ? undefined : sum(c, "process_cpu_seconds_total");
  };
  const convergeCpu = await cpuNow();
  // Let in-flight follow-ups settle, then measure a steady window.
  await new Promise((r) => setTimeout(r, 10_000));
  const cpu0 = await cpuNow();
  const calls0 = await opMetric("linode_api_requests_total");
  const class0 = await byClass();
  const mutations0 = await opMetric("linode_api_requests_total", mutation);
  const writes0 = await apiserverWrites(cp, managed);
  const w0 = Date.now();
  await new Promise((r) => setTimeout(r, steadyMinutes * 60_000));
  const hours = (Date.now() - w0) / 3_600_000;
  const cpu1 = await cpuNow();
  // CPU seconds per 1,000 objects per steady hour: what the steady state costs a node, by scale.
  const steadyCpu = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / hours / (n / 1000);
  const calls = await opMetric("linode_api_requests_total") - calls0;
  const mutations = await opMetric("linode_api_requests_total", mutation) - mutations0;
  const writes = writesBetween(writes0, await apiserverWrites(cp, managed))?.total;
  const class1 = await byClass();
  const windows = (steadyMinutes * 60) / readySeconds;
  const floor = Math.ceil(Math.ceil(n / 2) / 500) + Math.ceil(Math.floor(n / 2) / 500);
  const listsPerWindow = (class1.lists - class0.lists) / windows;
  say(`steady state, ${windows.toFixed(1)} drift windows of ${String(readySeconds)} s: ${listsPerWindow.toFixed(2)} engine lists per window (floor ${String(floor)}: ${(listsPerWindow / floor).toFixed(2)}x), ${String(class1.reads - class0.reads)} single reads, ${String(class1.backups - class0.backups)} backups lists (daily per database by default), ${String(class1.writes - class0.writes)} writes`);
  say(`steady state over ${String(steadyMinutes)} min: ${String(calls)} Linode calls (${(calls / n / hours).toFixed(2)} per database per hour, ${String(mutations)} mutations), ${writes === undefined ? "no data on" : String(writes)} Kubernetes writes${writes === undefined ? "" : ` (${(writes / hours).toFixed(1)} per hour)`}`);
  const { rss: steadyRss, peak: peakRss } = await rssMiB(pid);
  say(`operator peak RSS: ${peakRss.toFixed(1)} MiB; current RSS ${steadyRss.toFixed(1)} MiB`);
  // Its whole life's CPU (converging and the steady window): what bench:memory-by-start compares between starts.
  const cpu = await cpuNow();
  say(`operator CPU: ${cpu === undefined ? "no data" : `${cpu.toFixed(1)} s`} in all; ${convergeCpu === undefined ? "no data" : `${convergeCpu.toFixed(1)} s`} until all were Ready; steady ${steadyCpu === undefined ? "no data" : `${steadyCpu.toFixed(1)} s per 1,000 objects per hour`}`);
  const heapNow = await heap();
  say(`operator memory now: ${heapNow} (RSS beyond these: the node binary and V8 code, malloc arenas, thread stacks)`);
  const memTarget = n > 1000 ? 256 : 160;
  const figures: Figure[] = [
    { label: "all Ready after", value: Math.round(convergeMillis / 100) / 10, unit: "s" },
    { label: "Linode calls per database to converge", value: Math.round((convergeCalls / n) * 100) / 100, target: "≤ 3 (create, credentials, CA) + shared lists and catalog reads", met: conv.writes + conv.reads <= 3 * n },
    { label: "writes / single reads / catalog reads to converge", value: `${String(conv.writes)} / ${String(conv.reads)} / ${String(conv.catalog)}` },
    { label: "429 answers", value: refused429, target: "0", met: refused429 === 0 },
    figureOf("peak connections to the API server", peak.apiserver.value, undefined, "≤ 20", (v) => v <= 20),
    { label: "peak RSS (VmHWM)", value: Math.round(peakRss), unit: "MiB", ...(n <= 1000 ? { target: "≤ 250 MiB", met: peakRss <= 250 } : {}) },
    { label: "steady RSS", value: Math.round(steadyRss), unit: "MiB", target: `≤ ${String(memTarget)} MiB`, met: steadyRss <= memTarget },
    { label: "engine lists per drift window (floor)", value: `${listsPerWindow.toFixed(2)} (${String(floor)})`, target: "≤ 1.5× floor", met: listsPerWindow <= 1.5 * floor },
    { label: "single reads / writes in steady state", value: `${String(class1.reads - class0.reads)} / ${String(class1.writes - class0.writes)}`, target: "0 / 0", met: class1.reads === class0.reads && class1.writes === class0.writes },
    figureOf("Kubernetes writes in steady state", writes, undefined, "0", (v) => v === 0),
    figureOf("CPU until all were Ready", convergeCpu === undefined ? undefined : Math.round(convergeCpu * 10) / 10, "s"),
    figureOf("CPU in steady state, per 1,000 objects per hour", steadyCpu === undefined ? undefined : Math.round(steadyCpu * 10) / 10, "s"),
  ];
  await saveResult({
    name: n > 1000 ? "scale-10k" : "managed-database-scale",
    title: `${String(n)} ManagedDatabases: convergence, steady state, memory`,
    command: `npm run bench:mdb${n > 1000 ? ":10k" : ` -- ${String(n)} ${String(steadyMinutes)} ${String(readySeconds)}`}`,
    figures,
    notes: [`Memory at the end: ${heapNow}.`, `Emulator provisioning 5 s; operator --concurrency 8, --poll-ready-seconds ${String(readySeconds)} (the drift window); steady state measured over ${String(steadyMinutes)} min${unlimited ? "; no rate limit (memory at scale, not the call budget)" : ""}.`],
  });
} finally {
  await bench.stop();
}
