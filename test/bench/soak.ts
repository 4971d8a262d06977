// Soak benchmark: two hours of churn on the three kinds, with the operator as a real `linode-operator
// run` process on a real API server and the emulator (issue 32). After convergence, every
// `churnMinutes`: 10 % of the objects updated (a database's allow list, a NodeBalancer's node
// weights, a snapshot's labels), 5 % deleted and created again under the same name (a database
// with its snapshot), two team token Secrets rotated (the new token added to the emulator, the
// old one revoked a round later); the operator restarted once, at `restartAtMinute`, when each
// process would still live two hours (a six-hour run: at three hours). One hour of a process cannot
// resolve 5 MiB/h against the garbage collector's sawtooth and its first rounds of churn (issue 45),
// so a two-hour run keeps one process; a start's memory is what bench:memory-by-start measures.
//   node test/bench/soak.ts [M=1000] [B=200] [S=300] [minutes=120] [churnMinutes=10] [restartAtMinute=minutes/2 from 240 minutes, else 0: none]
// Memory trends count each process from when it has converged (the soak's start for the first,
// its re-observation of everything for a restarted one), nothing else excluded. Each run is
// saved under its own name (soak-<UTC start>, or BENCH_RESULT), passing or not.
// Every 10 s: RSS, heap, the event loop's lag p99, every linode_operator_cache_entries map and
// the Ready objects. At the end: the RSS trend, every map against its size before the churn,
// the lag, objects not Ready, and the emulator's accounts against the resources (duplicates,
// orphans).
import { fetch } from "undici";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { startBench } from "./bench-setup.ts";
import { kubectl, quantile, say, sleep } from "./common.ts";
import { budgetAt, workloadFloor } from "./floors.ts";
import { reconciles, type CallKind } from "./metrics.ts";
import { resultCollector, saveResult, type Chart } from "./report/result.ts";
import {
  auditCloud, BENCH_NS, CREDENTIALS_LABEL, deleteAndRecreate, listResources, lowestPerBucket, manifest, mapsNotBack, notReady, pick, random, slopePerHour,
  sampleOperator, soakObjects, TOKEN_SECRET, update, type Sample,
} from "./soak-parts.ts";

const [M, B, S, minutes, churnMinutes] = [1000, 200, 300, 120, 10].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number, number, number];
const restartAtMinute = Number(process.argv[7] ?? (minutes >= 4 * 60 ? minutes / 2 : 0));
const PROVISION_SECONDS = 5;
const SAMPLE_MILLIS = 10_000;
const TEAMS = ["soak-team-0", "soak-team-1", "soak-team-2", "soak-team-3"];
/**
 * A rotated-away token's client is released 5 minutes after its last use (and a sweep a minute
 * apart): no rotation this close to the end, so the end shows whether it was.
 */
const ROTATION_QUIET_MINUTES = 6;
const restarts = (at: number): string => (at > 0 && at < minutes ? `restart at ${String(at)} min` : "one process, no restart");
const kinds: CallKind[] = ["ManagedDatabase", "NodeBalancer", "DatabaseSnapshot"];
const { figures, tables, charts, notes, figure } = resultCollector(say);
const round2 = (x: number): number => Math.round(x * 100) / 100;

const bench = await startBench({ provisionSeconds: PROVISION_SECONDS });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
const admin = `${new URL(emulator.url).origin}/_emulator/tokens`;
/** Adds a token to a team's account in the emulator, as the team would create one in Cloud Manager. */
const addToken = async (token: string, account: string): Promise<void> => {
  const res = await fetch(admin, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, account, scopes: "*" }) });
  if (!res.ok) throw new Error(`adding a token to ${account}: ${String(res.status)} ${await res.text()}`);
};
const revokeToken = async (token: string): Promise<void> => { await fetch(`${admin}/${encodeURIComponent(token)}`, { method: "DELETE" }); };
const tokenSecret = (namespace: string, token: string): Promise<unknown> => kube.applySecret({
  metadata: { name: TOKEN_SECRET, namespace, labels: { [CREDENTIALS_LABEL]: "true" } }, type: "Opaque", data: { token: Buffer.from(token).toString("base64") },
});
const apiShare = Number(process.env.BENCH_API_SHARE ?? "0.5");
// The chart's defaults (concurrency 4, half the API's limit), as in bench:scale.
const operatorArgs = ["--linode-api-share", String(apiShare), "--cluster-id", "soak"];
const resultName = process.env.BENCH_RESULT ?? `soak-${new Date().toISOString().slice(0, 16).replace(/[-:]/g, "").replace("T", "-")}`;
const namespaces = [BENCH_NS, ...TEAMS];
const tokens = new Map(TEAMS.map((team) => [team, `${team}-token-0`]));
const clients: LinodeClient[] = [];

try {
  // ---- Teams, their token Secrets, the operator ----
  const tls = generateCertificate({ commonName: "bench.example.com" });
  for (const ns of namespaces) {
    if (ns !== BENCH_NS) await kubectl(cp, ["create", "namespace", ns]);
    await kube.applySecret({ metadata: { name: "bench-tls", namespace: ns }, type: "kubernetes.io/tls", data: { "tls.crt": Buffer.from(tls.certPem).toString("base64"), "tls.key": Buffer.from(tls.keyPem).toString("base64") } });
  }
  for (const [team, token] of tokens) { await addToken(token, team); await tokenSecret(team, token); }
  let { proc: op, metricsUrl } = await bench.operator(operatorArgs);
  let processIndex = 0;

  // ---- Convergence (not part of the soak's clock) ----
  const objects = soakObjects(M, B, S, TEAMS);
  const total = objects.length;
  say(`== convergence: ${String(M)} ManagedDatabases + ${String(B)} NodeBalancers + ${String(S)} DatabaseSnapshots, a fifth in ${String(TEAMS.length)} team namespaces with their own token`);
  // Given up on at twice the time floor of the whole workload on one account (an upper bound:
  // the teams' objects spend their own accounts' budgets), 45 min at least.
  const floor = workloadFloor({
    databasesByEngine: [Math.ceil(M / 2), Math.floor(M / 2)], nodeBalancers: B, configsPerNodeBalancer: 2, snapshots: S,
    provisionSeconds: PROVISION_SECONDS, pendingPollSeconds: 5,
  }, budgetAt(apiShare));
  const giveUpMillis = Math.max(45 * 60_000, 2 * floor.seconds * 1000);
  const tc = Date.now();
  await Promise.all(kinds.map((k) => (async () => { for (const o of objects.filter((x) => x.kind === k)) await kube.createCustom(o.type, o.namespace, manifest(o)); })()));
  for (;;) {
    const waiting = notReady(await listResources(kube, namespaces));
    if (waiting.length === 0) break;
    if (Date.now() - tc > giveUpMillis) throw new Error(`not all Ready after ${String(Math.round(giveUpMillis / 60_000))} min: ${waiting.slice(0, 10).join(", ")}`);
    await sleep(5_000);
  }
  figure("all objects Ready after", Math.round((Date.now() - tc) / 1000), "s");

  // ---- The soak: samples every 10 s, churn rounds, one restart ----
  const t0 = Date.now();
  const elapsed = (): number => (Date.now() - t0) / 1000;
  const samples: Sample[] = [];
  const warnings = new Map<string, number>();
  let restarting = false;
  const sampleNow = async (): Promise<Sample | undefined> => {
    if (restarting) return undefined;
    try {
      const s = await sampleOperator(metricsUrl, op.child.pid ?? 0, Math.round(elapsed()), processIndex);
      samples.push(s);
      // What the operator warned about, counted; the lines themselves are not kept for an hour.
      for (const l of op.logs.splice(0)) if (Number(l.level) >= 40) warnings.set(String(l.msg), (warnings.get(String(l.msg)) ?? 0) + 1);
      return s;
    } catch {
      return undefined;
    }
  };
  let sampling = true;
  const sampler = (async () => { while (sampling) { await sampleNow(); await sleep(SAMPLE_MILLIS); } })();
  /** When each process had converged (seconds since the soak began): its memory trend counts from then. */
  const convergedAt = new Map<number, number>([[0, 0]]);
  const successes = (url: string): Promise<number> => reconciles(url, "success");

  const rand = random(32);
  type Step = { at: number; what: "churn"; round: number } | { at: number; what: "restart" };
  const steps: Step[] = [];
  for (let r = 1; r * churnMinutes < minutes; r++) steps.push({ at: r * churnMinutes * 60, what: "churn", round: r });
  if (restartAtMinute > 0 && restartAtMinute < minutes) steps.push({ at: restartAtMinute * 60, what: "restart" });
  steps.sort((a, b) => a.at - b.at || (a.what === "churn" ? -1 : 1));
  let steady: Sample | undefined;
  const rotatedAway: string[] = [];
  const tally = { updated: 0, recreated: 0, rotated: 0, slowDeletes: [] as string[] };
  const rounds: (string | number)[][] = [];
  for (const step of steps) {
    await sleep(Math.max(0, step.at * 1000 - (Date.now() - t0)));
    if (step.what === "restart") {
      say(`== ${String(Math.round(elapsed() / 60))} min: operator restart`);
      restarting = true;
      op.child.kill("SIGTERM");
      await op.exited;
      ({ proc: op, metricsUrl } = await bench.operator(operatorArgs));
      processIndex++;
      restarting = false;
      // Converged once it has looked at every object (a pass each); the churn goes on meanwhile.
      const [p, url] = [processIndex, metricsUrl];
      void (async () => {
        for (let i = 0; i < 120; i++) {
          if (await successes(url).catch(() => 0) >= total) { convergedAt.set(p, elapsed()); return; }
          await sleep(5_000);
        }
        notes.push(`The restarted process had not looked at every object 10 minutes after its start: its trend counts from then.`);
        convergedAt.set(p, elapsed());
      })();
      continue;
    }
    // The maps' steady sizes: everything Ready for a whole interval, just before the first churn.
    steady ??= await sampleNow();
    const started = Date.now();
    // Tokens rotated away a round ago are revoked, as a team would once the new one is in use.
    for (const t of rotatedAway.splice(0)) await revokeToken(t);
    const n = objects.length;
    const updated = pick(objects, Math.round(n * 0.1), rand);
    const rest = objects.filter((o) => !updated.includes(o));
    const doomed = new Set(pick(rest, Math.round(n * 0.05), rand));
    // A database goes with its snapshot: the backup it recorded is deleted with the database.
    for (const o of objects) if (o.database !== undefined && doomed.has(o.database)) doomed.add(o);
    await Promise.all(updated.map((o) => update(kube, o)));
    const slow = await deleteAndRecreate(kube, [...doomed], 5 * 60_000);
    tally.slowDeletes.push(...slow);
    let rotated: string[] = [];
    if (minutes - step.at / 60 >= ROTATION_QUIET_MINUTES) {
      rotated = [0, 1].map((i) => TEAMS[(2 * (step.round - 1) + i) % TEAMS.length] ?? BENCH_NS);
      for (const team of rotated) {
        const next = `${team}-token-${String(step.round)}`;
        await addToken(next, team);
        rotatedAway.push(tokens.get(team) ?? "");
        tokens.set(team, next);
        await tokenSecret(team, next);
      }
    }
    tally.updated += updated.length;
    tally.recreated += doomed.size - slow.length;
    tally.rotated += rotated.length;
    const took = Math.round((Date.now() - started) / 1000);
    rounds.push([step.round, Math.round(step.at / 60), updated.length, doomed.size, rotated.join(", ") || "—", took]);
    say(`== ${String(Math.round(step.at / 60))} min, round ${String(step.round)}: ${String(updated.length)} updated, ${String(doomed.size)} deleted and recreated${slow.length > 0 ? ` (${String(slow.length)} not gone within 5 min)` : ""}, rotated: ${rotated.join(", ") || "none"} (${String(took)} s)`);
  }
  await sleep(Math.max(0, minutes * 60_000 - (Date.now() - t0)));

  // ---- The end: every object Ready, every map back, the cloud as the resources say ----
  say(`== ${String(minutes)} min: settling`);
  const tEnd = Date.now();
  let waiting: string[] = [];
  for (;;) {
    waiting = notReady(await listResources(kube, namespaces));
    if (waiting.length === 0 || Date.now() - tEnd > 10 * 60_000) break;
    await sleep(5_000);
  }
  const readyAfter = Math.round((Date.now() - tEnd) / 1000);
  const base = steady ?? samples[0];
  if (base === undefined) throw new Error("no sample of the operator was taken");
  let last: Sample | undefined;
  for (;;) {
    last = await sampleNow() ?? last;
    const behind = last === undefined ? ["(no sample)"] : mapsNotBack(base.maps, last.maps);
    if (behind.length === 0 || Date.now() - tEnd > 3 * 60_000 + readyAfter * 1000) break;
    await sleep(SAMPLE_MILLIS);
  }
  sampling = false;
  await sampler;
  if (last === undefined) throw new Error("no sample of the operator at the end");
  const resources = await listResources(kube, namespaces);
  const accounts = ["bench-token", ...tokens.values()].map((token) => new LinodeClient({ token, baseUrl: emulator.url, rateLimit: false }));
  clients.push(...accounts);
  const audit = await auditCloud(accounts, resources);

  // ---- Figures ----
  // Each process from when it had converged; a process that never did counts not at all (its trend is then no data).
  const counted = samples.filter((s) => s.t >= (convergedAt.get(s.process) ?? Number.POSITIVE_INFINITY));
  const { slope, error } = slopePerHour(counted, 0);
  const heapTrend = slopePerHour(counted, 0, (s) => s.heapUsed);
  // What RSS holds besides V8's heap and Buffers: code, the allocator's arenas, native libraries.
  const nativeTrend = slopePerHour(counted, 0, (s) => s.rss - s.heapTotal - s.external);
  const reservedTrend = slopePerHour(counted, 0, (s) => s.heapTotal);
  const fileTrend = slopePerHour(counted, 0, (s) => s.rssFile);
  const processes = [...new Set(samples.map((s) => s.process))];
  const perProcess = processes.map((p) => slopePerHour(counted.filter((s) => s.process === p), 0).slope);
  const lowest = slopePerHour(lowestPerBucket(counted, 0, 5 * 60), 0);
  // The pooled slope's 95 % interval (normal: hundreds of samples), its upper end held to the target.
  const upper = slope + 1.96 * error;
  const lags = samples.map((s) => s.lagP99);
  // One sample without a lag may have been the worst: the figure is then no data.
  const lagP99 = lags.some(Number.isNaN) ? Number.NaN : quantile(lags, 0.99);
  const maps = [...new Set([...base.maps.keys(), ...last.maps.keys()])].sort();
  const peakOf = (m: string): number => Math.max(...samples.map((s) => s.maps.get(m) ?? 0));
  const notBack = mapsNotBack(base.maps, last.maps);
  const size = (s: Sample, m: string): number | string => s.maps.get(m) ?? "absent";
  say("== results");
  figure("RSS trend of every process from when it had converged (least squares, pooled)", round2(slope), "MiB/h", "≤ 5 MiB per hour", slope <= 5);
  figure("RSS trend's standard error (the sawtooth of garbage collection)", round2(error), "MiB/h");
  figure("RSS trend's 95 % interval, upper end", round2(upper), "MiB/h", "< 5 MiB per hour", upper < 5);
  processes.forEach((p, i) => {
    const x = perProcess[i] ?? Number.NaN;
    figure(`RSS trend of process ${String(p + 1)} alone, from ${String(Math.round((convergedAt.get(p) ?? Number.NaN) / 60))} min`, round2(x), "MiB/h", "≤ 5 MiB per hour", x <= 5);
  });
  figure("RSS trend of each 5 min's lowest RSS (what stays after garbage collection)", round2(lowest.slope), "MiB/h");
  figure("JS heap used trend of every process from when it had converged (least squares)", round2(heapTrend.slope), "MiB/h");
  figure("RSS trend by part: JS heap reserved / outside the JS heap and Buffers (code, allocator, native)", `${round2(reservedTrend.slope).toFixed(2)} / ${round2(nativeTrend.slope).toFixed(2)}`, "MiB/h");
  figure("RSS trend by part: pages of mapped files (the node binary's code as it first runs; the kernel can drop them) / the rest", `${round2(fileTrend.slope).toFixed(2)} / ${round2(slope - fileTrend.slope).toFixed(2)}`, "MiB/h");
  figure("RSS before the churn / at the end / peak", `${String(Math.round(base.rss))} / ${String(Math.round(last.rss))} / ${String(Math.round(Math.max(...samples.map((s) => s.rss))))}`, "MiB");
  figure("JS heap used before the churn / at the end", `${base.heapUsed.toFixed(1)} / ${last.heapUsed.toFixed(1)}`, "MiB");
  // No map before the churn: the gauge was not read, not a process without maps.
  figure("maps not back to their size before the churn", base.maps.size === 0 ? undefined : notBack.length, undefined, "0", notBack.length === 0);
  figure("event-loop lag p99 (each sample's p99 over 10 s; their 99th percentile)", round2(lagP99), "ms", "≤ 50 ms", lagP99 <= 50);
  figure("event-loop lag p99, worst 10 s", round2(Math.max(...lags)), "ms");
  figure(`objects not Ready at the end (after up to 10 min)`, waiting.length, undefined, "0", waiting.length === 0);
  figure("duplicate cloud objects", audit.duplicates.length, undefined, "0", audit.duplicates.length === 0);
  figure("orphaned cloud objects (no resource records them)", audit.orphans.length, undefined, "0", audit.orphans.length === 0);
  figure("recorded cloud objects missing", audit.missing.length, undefined, "0", audit.missing.length === 0);
  figure("churn: updates / deletes and re-creates / token rotations / restarts", `${String(tally.updated)} / ${String(tally.recreated)} / ${String(tally.rotated)} / ${String(steps.filter((s) => s.what === "restart").length)}`);
  if (waiting.length > 0) { notes.push(`Not Ready at the end: ${waiting.slice(0, 20).join(", ")}`); say(`  not Ready: ${waiting.slice(0, 20).join("; ")}`); }
  for (const [what, list] of [["Duplicates", audit.duplicates], ["Orphans", audit.orphans], ["Missing", audit.missing], ["Not gone within 5 min of their deletion", tally.slowDeletes]] as const) {
    if (list.length > 0) { notes.push(`${what}: ${list.slice(0, 20).join(", ")}`); say(`  ${what}: ${list.slice(0, 20).join(", ")}`); }
  }
  say(`  maps before the churn → at the end: ${maps.filter((m) => (base.maps.get(m) ?? 0) + (last.maps.get(m) ?? 0) > 0).map((m) => `${m} ${String(size(base, m))} → ${String(size(last, m))}`).join(", ")}`);
  if (notBack.length > 0) say(`  maps not back: ${notBack.map((m) => `${m} ${String(size(base, m))} → ${String(size(last, m))}`).join(", ")}`);
  const warned = [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (warned.length > 0) {
    notes.push(`The operator's warnings and errors, by message: ${warned.map(([k, v]) => `${k} ×${String(v)}`).join("; ")}`);
    say(`  the operator's warnings and errors: ${warned.map(([k, v]) => `${k} ×${String(v)}`).join("; ")}`);
  }
  tables.push({
    title: "Every per-object and per-token map (linode_operator_cache_entries): before the churn, its peak, at the end",
    columns: ["map", "before the churn", "peak", "at the end", "back"],
    rows: maps.map((m) => [m, size(base, m), peakOf(m), size(last, m), notBack.includes(m) ? "no" : "yes"]),
  });
  tables.push({ title: "Churn rounds", columns: ["round", "minute", "updated", "deleted and recreated", "tokens rotated", "seconds to apply"], rows: rounds });
  const min = (s: Sample): number => round2(s.t / 60);
  charts.push({ kind: "line", title: `Operator memory over ${String(minutes)} min of churn (${restarts(restartAtMinute)})`, xLabel: "minutes", yLabel: "MiB", series: [
    { name: "RSS", points: samples.map((s) => [min(s), Math.round(s.rss)]) }, { name: "JS heap used", points: samples.map((s) => [min(s), round2(s.heapUsed)]) },
    { name: "JS heap reserved", points: samples.map((s) => [min(s), round2(s.heapTotal)]) }, { name: "external (Buffers)", points: samples.map((s) => [min(s), round2(s.external)]) },
  ] });
  const byPeak = maps.filter((m) => peakOf(m) > 0).sort((a, b) => peakOf(b) - peakOf(a));
  const mapChart = (title: string, names: string[]): Chart => ({ kind: "line", title, xLabel: "minutes", yLabel: "entries", series: names.map((m) => ({ name: m, points: samples.flatMap((s): [number, number][] => { const v = s.maps.get(m); return v === undefined ? [] : [[min(s), v]]; }) })) });
  charts.push(mapChart("The largest maps over time (entries)", byPeak.slice(0, 8)));
  charts.push(mapChart("The next largest maps and the accounts' clients over time (entries)", ["linode.accounts", ...byPeak.slice(8).filter((m) => m !== "linode.accounts")].slice(0, 8)));
  charts.push({ kind: "line", title: "Ready objects over time", xLabel: "minutes", yLabel: "Ready", series: kinds.map((k) => ({ name: k, points: samples.map((s): [number, number] => [min(s), s.ready[k]]) })) });
  charts.push({ kind: "line", title: "Event-loop lag p99 per 10 s", xLabel: "minutes", yLabel: "ms", series: [{ name: "p99", points: samples.map((s): [number, number] => [min(s), round2(s.lagP99)]) }] });
  notes.push(`Objects: ${String(total)}; every fifth in one of ${String(TEAMS.length)} team namespaces, acting with the token in its Secret ${TOKEN_SECRET}, the rest with the operator's. Each round: 10 % updated (a database's allow list, a NodeBalancer's node weights, a snapshot's labels), 5 % deleted and created again under the same name (a database with its snapshot), two team tokens rotated (the new token added to the team's account in the emulator, the old one revoked a round later; none in the last ${String(ROTATION_QUIET_MINUTES)} min, so the end shows whether the old clients were released: 5 min after their last use). A map is back when within 2 % and 8 entries (the concurrency: passes in flight) of its size before the churn.`);
  if (!steps.some((s) => s.what === "restart")) notes.push("One process for the whole run: a restart is made only when each process would still live two hours (runs of 240 minutes or more), for one hour cannot resolve the trend.");
  notes.push(`Lag is Node's monitorEventLoopDelay at prom-client's 10 ms resolution: an idle process reads about 10 ms. Emulator: ${String(PROVISION_SECONDS)} s to provision a database or take a backup. Operator: the chart's defaults (concurrency 4, --linode-api-share ${String(apiShare)}, the 300 s drift window).`);
  await saveResult({
    name: resultName, title: `Soak: ${String(minutes)} min of churn on ${String(M)} ManagedDatabases, ${String(B)} NodeBalancers, ${String(S)} DatabaseSnapshots`,
    command: `npm run bench:soak${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    figures, tables, charts, notes,
  });
} finally {
  await Promise.all(clients.map((c) => c.close()));
  await bench.stop();
}
