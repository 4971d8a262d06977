// Scale benchmark for the three kinds together: M ManagedDatabases, B NodeBalancers (4 configs ×
// 5 nodes, one https from a TLS Secret) and S DatabaseSnapshots (one each of the first S
// databases), applied at once, with the operator as a real `linode-operator run` process on a
// real API server and the emulator provisioning a database or taking a backup in 5 s.
//   node test/bench/scale.ts [M=1000] [B=200] [S=300] [steadyMinutes=60] [readySeconds=300]
// The operator runs with the chart's defaults (concurrency 4, half the API's limit, a 300 s drift
// window); readySeconds shortens the drift window for the chart's shortest-window row. The steady
// phase lasts an hour so hourly costs (NodeBalancer statistics) fall in it; daily ones (each
// database's backups list) are added at their share of a window. Convergence is held to a floor
// computed from the counts before the run (floors.ts), in calls and in time.
// Phases, each printed and saved to docs/benchmarks/results/scale-three-kinds.json:
// convergence, steady state, a new object while the rest exist, drift put back, restart, failover
// to a warm standby (failover-phase.ts).
import { writeFile } from "node:fs/promises";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { openConnections } from "../harness/sockets.ts";
import { apiserverWrites, writesBetween } from "./apiserver-writes.ts";
import { startBench } from "./bench-setup.ts";
import { isReady, kubectl, listAll, quantile, say, secs, sleep, watchKind } from "./common.ts";
import { callsByRoute, callsOf, linodeCalls, minus, Peak, reconciles as reconcilesOf, rssMiB, scrape, sum, type CallKind } from "./metrics.ts";
import { resultCollector, saveResult } from "./report/result.ts";
import { benchLatency, latencyFlag } from "./bench-latency.ts";
import { driftTimeline } from "./drift-timeline.ts";
import { failoverPhase } from "./failover-phase.ts";
import { budgetAt, workloadFloor } from "./floors.ts";

const [M, B, S, steadyMinutes, readySeconds] = [1000, 200, 300, 60, 300].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number, number, number];
const PROVISION_SECONDS = 5;
const NS = "bench";
const kinds: { kind: CallKind; type: ResourceType; n: number }[] = [
  { kind: "ManagedDatabase", type: mdbType, n: M }, { kind: "NodeBalancer", type: nbType, n: B }, { kind: "DatabaseSnapshot", type: snapType, n: S },
];
const total = M + B + S;
const { figures, tables, charts, notes, figure } = resultCollector(say);

// BENCH_UNLIMITED=1 (the 10k mode: memory and steady calls at scale): the emulator has no rate
// limit and the operator spends all of its own budget (1,840 calls a minute); BENCH_RESULT names
// the saved result (bench:scale:10k saves scale-10k-three-kinds).
const unlimited = process.env.BENCH_UNLIMITED === "1";
const resultName = process.env.BENCH_RESULT ?? "scale-three-kinds";
const bench = await startBench({ provisionSeconds: PROVISION_SECONDS, ...(unlimited ? { rateLimits: false as const } : {}) });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
const linode = new LinodeClient({ token: "bench-token", baseUrl: emulator.url, rateLimit: false });
// Convergence runs with the product's defaults (the chart's: concurrency 4, half the API's
// limit, a 300 s drift window): a shortened window would spend the call budget on re-reading
// the objects already Ready while the rest wait for it. The later phases run a restarted
// operator with the window asked for.
// BENCH_API_SHARE shrinks the operator's share of the API's limit, so a smaller run meets the
// same budget pressure as a larger one (200 + 40 + 60 at 0.1 ≈ 1,000 + 200 + 300 at 0.5).
const apiShare = unlimited ? 1 : Number(process.env.BENCH_API_SHARE ?? "0.5");
const DEFAULT_READY_SECONDS = 300;
const convergeArgs = ["--linode-api-share", String(apiShare)];
const operatorArgs = readySeconds === DEFAULT_READY_SECONDS ? convergeArgs : [...convergeArgs, "--poll-ready-seconds", String(readySeconds)];
const PENDING_POLL_SECONDS = 5;
/** Each database's backups are listed once a day (--backups-refresh-hours 24), the engine catalogue (engines, plans, two engines' parameters) too. */
const DAILY = { backupsPerDatabase: 1, catalogue: 4 };
const windowsPerDay = 86_400 / readySeconds;
/** Why two kinds stay above the issue's steady floor, and the plan (docs/benchmarks.md carries it). */
const STEADY_GAP = "Steady state above the issue's floor (ceil(N/500) lists per kind, nothing per object) for two kinds, explained: the Linode API has no account-wide list of NodeBalancer configs (whose nodes_status is the backend health Ready reports) nor of database backups (a snapshot's existence), so the least that keeps them truthful is one configs list per NodeBalancer per drift window (the API's floor, which NodeBalancers are held to: ≤ 1.2×) and one backup read per snapshot per refresh. NodeBalancers trust `updated` from the shared list: a config's nodes are read again only when it, its health counts or `updated` moved, firewalls only after a change or while spec.firewallId names one (the assumption that the real API moves `updated` on a config or node change is stated in src/resources/node-balancer/configs.ts; --nodebalancer-reread-seconds adds a periodic full read, off by default); statistics are read hourly (--nodebalancer-stats-seconds), first reads spread over 5 minutes; --poll-health-seconds reads the health counts less often than the drift window. An Available snapshot is read every 6 polls.";

/** Calls by route since a baseline. */
function since(now: Map<string, number>, base: Map<string, number>): Map<string, number> {
  return new Map([...now].map(([k, v]): [string, number] => [k, v - (base.get(k) ?? 0)]).filter(([, v]) => v > 0));
}

/** Reconciles per kind by result, as the operator counts them. */
const reconciles = (url: string, result: string): Promise<Record<string, number>> => reconcilesOf(url, result, kinds.map((k) => k.kind));

/**
 * Until each kind has as many completed passes as objects since a (re)start. A pass held back by
 * the call budget ("deferred") has not looked at anything, so only "success" counts.
 */
async function reobservedAll(url: string, expected: (k: (typeof kinds)[number]) => number, since: number): Promise<void> {
  for (;;) {
    const done = await reconciles(url, "success");
    if (kinds.every((k) => (done[k.kind] ?? 0) >= expected(k))) return;
    if (Date.now() - since > 10 * 60_000) throw new Error("not all re-observed within 10 min of the restart");
    await sleep(250);
  }
}

/** Until a whole drift window passes with no pass deferred by the call budget (at most 10 min). */
async function quietForAWindow(url: string): Promise<void> {
  const t0 = Date.now();
  let last = await reconciles(url, "deferred");
  let since = Date.now();
  while (Date.now() - since < readySeconds * 1000) {
    await sleep(2_000);
    const now = await reconciles(url, "deferred");
    if (kinds.some((k) => now[k.kind] !== last[k.kind])) { last = now; since = Date.now(); }
    if (Date.now() - t0 > 10 * 60_000) { notes.push("Passes were still being deferred by the call budget 10 minutes after the restart; the idle window started anyway."); return; }
  }
}

/**
 * Watches the three kinds and tallies what each status write changes: a condition's
 * status/reason moving ("NodeBalancer Synced True/Synced → False/RateLimited") or another
 * status field ("NodeBalancer status.transfer"), so idle writes say what caused them.
 */
async function watchStatusChanges(): Promise<{ stop(): Map<string, number> }> {
  const tally = new Map<string, number>();
  const last = new Map<string, ManagedObject>();
  let baseline = true;
  const watches = await Promise.all(kinds.map((k) => watchKind(kube, k.type, NS, (type, o) => {
    const before = last.get(`${k.kind}/${o.metadata.name}`);
    last.set(`${k.kind}/${o.metadata.name}`, o);
    if (baseline || type !== "MODIFIED" || before === undefined) return;
    const count = (what: string): void => { tally.set(`${k.kind} ${what}`, (tally.get(`${k.kind} ${what}`) ?? 0) + 1); };
    const conds = (x: ManagedObject): Map<string, string> => new Map((x.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
    const [a, b] = [conds(before), conds(o)];
    for (const [t, v] of b) if (a.get(t) !== v) count(`${t} ${a.get(t) ?? "none"} → ${v}`);
    const fields = new Set([...Object.keys(before.status ?? {}), ...Object.keys(o.status ?? {})]);
    for (const f of fields) {
      if (f === "conditions") continue;
      const [x, y] = [before.status?.[f], o.status?.[f]];
      if (JSON.stringify(x) !== JSON.stringify(y)) count(`status.${f}`);
    }
    if (JSON.stringify(before.status) === JSON.stringify(o.status)) count("no status change");
  })));
  // The initial ADDED events replay the current state; what follows is a change.
  await sleep(5_000);
  baseline = false;
  return { stop: () => { for (const w of watches) w.stop(); return tally; } };
}

/** Events (events.k8s.io) created or repeated since `since`, by reason. */
async function eventsSince(since: number): Promise<Map<string, number>> {
  const list = JSON.parse(await kubectl(bench.cp, ["get", "events.events.k8s.io", "-n", NS, "-o", "json"])) as { items: { reason?: string; eventTime?: string; series?: { lastObservedTime?: string } }[] };
  const out = new Map<string, number>();
  for (const e of list.items) {
    const at = Date.parse(e.series?.lastObservedTime ?? e.eventTime ?? "");
    if (at >= since) out.set(e.reason ?? "?", (out.get(e.reason ?? "?") ?? 0) + 1);
  }
  return out;
}

// The API's general limit (the emulator's, as recorded) and its paginated class, at the operator's share.
const budget = budgetAt(apiShare);
const floor = workloadFloor({
  databasesByEngine: [Math.ceil(M / 2), Math.floor(M / 2)], nodeBalancers: B, configsPerNodeBalancer: 4, snapshots: S,
  provisionSeconds: PROVISION_SECONDS, pendingPollSeconds: PENDING_POLL_SECONDS,
}, budget);
say(`workload-only floor: ${String(floor.calls)} calls, ${String(floor.seconds)} s (${floor.parts.map(([k, v]) => `${k} ${String(v)}`).join("; ")})`);

try {
  let { proc: op, metricsUrl } = await bench.operator(convergeArgs);
  const pidOf = (): number => op.child.pid ?? 0;
  const heapMiB = async (): Promise<{ used: number; total: number }> => {
    const s = await scrape(metricsUrl);
    return { used: sum(s, "nodejs_heap_size_used_bytes") / 1_048_576, total: sum(s, "nodejs_heap_size_total_bytes") / 1_048_576 };
  };
  const atRest = { ...(await rssMiB(pidOf())), heap: await heapMiB() };

  // ---- Convergence ----
  say(`== convergence: ${String(M)} ManagedDatabases + ${String(B)} NodeBalancers (4 configs × 5 nodes) + ${String(S)} DatabaseSnapshots, applied at once`);
  const tls = generateCertificate({ commonName: "bench.example.com" });
  await kube.applySecret({ metadata: { name: "bench-tls", namespace: NS }, type: "kubernetes.io/tls", data: { "tls.crt": Buffer.from(tls.certPem).toString("base64"), "tls.key": Buffer.from(tls.keyPem).toString("base64") } });
  const mdbSpec = (i: number): Record<string, unknown> => ({ engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] });
  const nbSpec = (b: number): Record<string, unknown> => ({
    region: "us-east",
    configs: [0, 1, 2, 3].map((c) => ({
      ...(c === 0 ? { port: 443, protocol: "https", tlsSecretRef: { name: "bench-tls" } } : { port: 8000 + c, protocol: "tcp" }),
      check: "connection", checkInterval: 2, checkTimeout: 1,
      nodes: [0, 1, 2, 3, 4].map((n) => ({ label: `n${String(c)}-${String(n)}`, address: `192.168.${String(b % 250)}.${String(10 + c * 5 + n)}:80`, weight: 50 })),
    })),
  });
  const c0 = await linodeCalls(metricsUrl);
  const routes0 = await callsByRoute(metricsUrl);
  const peak = { apiserver: new Peak(), linode: new Peak() };
  const readyOverTime: Record<CallKind, [number, number][]> = { ManagedDatabase: [], NodeBalancer: [], DatabaseSnapshot: [] };
  const rssOverTime: [number, number][] = [];
  let sampling = true;
  const t0 = Date.now();
  const sampler = (async () => {
    while (sampling) {
      // A process gone (the bench giving up and stopping it) ends the sampling; the reason is the bench's to tell.
      const rss = await rssMiB(pidOf()).catch(() => undefined);
      if (rss === undefined) break;
      rssOverTime.push([secs(Date.now() - t0), Math.round(rss.rss)]);
      peak.apiserver.see(await openConnections(pidOf(), Number(new URL(cp.server).port)));
      peak.linode.see(await openConnections(pidOf(), emulator.port));
      await sleep(1_000);
    }
  })();
  // Three writers at once, one per kind, as `kubectl apply -f dir/` of a large repository would.
  const apply = (t: ResourceType, kind: string, n: number, spec: (i: number) => Record<string, unknown>, name: (i: number) => string) => (async () => {
    for (let i = 0; i < n; i++) await kube.createCustom(t, NS, { apiVersion: "linode.operator.dev/v1alpha1", kind, metadata: { name: name(i) }, spec: spec(i) });
  })();
  await Promise.all([
    apply(mdbType, "ManagedDatabase", M, mdbSpec, (i) => `db-${String(i)}`),
    apply(nbType, "NodeBalancer", B, nbSpec, (i) => `lb-${String(i)}`),
    apply(snapType, "DatabaseSnapshot", S, (i) => ({ databaseRef: { name: `db-${String(i)}` } }), (i) => `snap-${String(i)}`),
  ]);
  const appliedMillis = Date.now() - t0;
  const readyAt: Partial<Record<CallKind, number>> = {};
  const giveUpMillis = Math.max(45 * 60_000, 2 * floor.seconds * 1000);
  for (;;) {
    let all = true;
    for (const k of kinds) {
      if (readyAt[k.kind] !== undefined) continue;
      const ready = (await listAll(kube, k.type, NS)).filter(isReady).length;
      readyOverTime[k.kind].push([secs(Date.now() - t0), ready]);
      if (ready >= k.n) readyAt[k.kind] = Date.now() - t0; else all = false;
    }
    if (all) break;
    // Given up on at twice the time floor (45 min at least): at 10k the floor alone is 39 min.
    if (Date.now() - t0 > giveUpMillis) { sampling = false; throw new Error(`not all Ready after ${String(Math.round(giveUpMillis / 60_000))} min: ${JSON.stringify(readyOverTime)}`); }
    await sleep(2_000);
  }
  const convergeMillis = Date.now() - t0;
  sampling = false;
  await sampler;
  const conv = minus(await linodeCalls(metricsUrl), c0);
  const peakRss = (await rssMiB(pidOf())).peak;
  say(`applied in ${String(appliedMillis)} ms; all ${String(total)} Ready ${String(convergeMillis)} ms after the first apply (provisioning and backups take ${String(PROVISION_SECONDS)} s each)`);
  figure("all objects Ready after", secs(convergeMillis), "s");
  for (const k of kinds) { const at = readyAt[k.kind]; figure(`${k.kind}s all Ready after`, at === undefined ? undefined : secs(at), "s"); }
  for (const k of kinds) if (k.n > 0) figure(`${k.kind}: Linode calls per object to converge`, Math.round((callsOf(conv, k.kind) / k.n) * 100) / 100);
  figure("429 answers while converging", conv.refused429, undefined, "0", conv.refused429 === 0);
  figure("calls while converging", conv.total);
  // Issue 20's target is for about a thousand objects; at 10k the steady RSS has its own (below).
  if (total <= 1_500) figure("peak RSS while converging", Math.round(peakRss), "MiB", "≤ 250 MiB (issue 20, at 1k)", peakRss <= 250);
  else figure("peak RSS while converging", Math.round(peakRss), "MiB");
  figure("peak connections to the API server", peak.apiserver.value, undefined, "≤ 20", (v) => v <= 20);
  figure("peak connections to the Linode API", peak.linode.value);
  const budgetPerMinute = budget.perWindow;
  const timeFloor = floor.seconds;
  figure(`converging: the workload-only floor of calls (${floor.formula.split("; time floor")[0]})`, floor.calls);
  figure("converging: Linode calls against the workload-only floor", Math.round((conv.total / floor.calls) * 100) / 100, "×", "≤ 1.05", conv.total <= 1.05 * floor.calls);
  figure(`converging: the time floor of those calls (${floor.formula.split("; time floor: ")[1] ?? ""})`, timeFloor, "s");
  figure("converging: time against the time floor", Math.round((convergeMillis / 1000 / timeFloor) * 100) / 100, "×", "≤ 1.1", convergeMillis / 1000 <= 1.1 * timeFloor);
  tables.push({ title: "Converging: the workload-only floor, by part", columns: ["part", "calls"], rows: [...floor.parts, ["total", floor.calls]] });
  const convRoutes = since(await callsByRoute(metricsUrl), routes0);
  tables.push({ title: "Linode calls to converge, by route", columns: ["call", "calls"], rows: [...convRoutes].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v]) });
  tables.push({
    title: "Linode calls to converge, by kind and class",
    columns: ["kind", "objects", "lists", "single reads", "writes", "per object"],
    rows: kinds.map((k) => [k.kind, k.n, conv.byKind[k.kind].lists, conv.byKind[k.kind].reads, conv.byKind[k.kind].writes, k.n > 0 ? (callsOf(conv, k.kind) / k.n).toFixed(2) : "—"]),
  });
  charts.push({ kind: "line", title: `Ready objects after applying ${String(total)} at once`, xLabel: "seconds since the first apply", yLabel: "Ready", series: kinds.map((k) => ({ name: k.kind, points: readyOverTime[k.kind] })) });
  charts.push({ kind: "line", title: "Operator RSS while converging", xLabel: "seconds since the first apply", yLabel: "MiB", series: [{ name: "RSS", points: rssOverTime }] });

  // ---- Steady state ----
  for (const [call, calls] of tables.find((t) => t.title.includes("converge, by route"))?.rows ?? []) say(`    ${String(calls).padStart(6)}  ${String(call)}`);
  // BENCH_REQUESTS_FILE: the emulator's request log (its last 20,000) as it stood once all was Ready, to see when each call went.
  if (process.env.BENCH_REQUESTS_FILE !== undefined) await writeFile(process.env.BENCH_REQUESTS_FILE, JSON.stringify(emulator.requests()));
  // steadyMinutes 0: convergence only (a quick look at what converging spends).
  if (steadyMinutes === 0) throw new Error("convergence only (steadyMinutes 0): nothing saved");
  say(`== steady state: ${String(steadyMinutes)} min at a ${String(readySeconds)} s drift window (operator restarted with it)`);
  op.child.kill("SIGTERM");
  await op.exited;
  ({ proc: op, metricsUrl } = await bench.operator(operatorArgs));
  // Idle means after the new process has re-observed everything (what a restart writes is not
  // idle: a database whose `updated` moved after its Secret was written, e.g. by a backup, has
  // its credentials read again and its Secret re-applied), has no re-check left waiting for the
  // call budget (a deferred first look is still a restart's write), and one whole window passed.
  await reobservedAll(metricsUrl, (k) => k.n, Date.now());
  await quietForAWindow(metricsUrl);
  const s0 = await linodeCalls(metricsUrl);
  const r0 = await callsByRoute(metricsUrl);
  /** Writes to what the operator manages; the API server's own lease renewals are left out. */
  const managed = ["manageddatabases", "nodebalancers", "databasesnapshots", "secrets", "events"];
  const w0 = await apiserverWrites(cp, managed);
  // The emulator's NodeBalancers carry traffic: their monthly transfer counts up meanwhile.
  const transferMB = async (): Promise<number> => (await linode.nodeBalancers.listAll()).reduce((a, nb) => a + (nb.transfer.total ?? 0), 0);
  const transfer0 = await transferMB();
  const cpuSeconds = async (): Promise<number> => sum(await scrape(metricsUrl), "process_cpu_seconds_total");
  const cpu0 = await cpuSeconds();
  const tSteady = Date.now();
  const idleChanges = await watchStatusChanges();
  await sleep(steadyMinutes * 60_000);
  const steady = minus(await linodeCalls(metricsUrl), s0);
  const steadyCpu = (await cpuSeconds()) - cpu0;
  const steadyHours = (Date.now() - tSteady) / 3_600_000;
  const routes = [...await callsByRoute(metricsUrl)].map(([k, v]): [string, number] => [k, v - (r0.get(k) ?? 0)]).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const w1 = await apiserverWrites(cp, managed);
  const changed = idleChanges.stop();
  if (changed.size > 0) {
    const top = [...changed].sort((a, b) => b[1] - a[1]).slice(0, 12);
    say(`  what the idle status writes changed: ${top.map(([k, v]) => `${k} ×${String(v)}`).join("; ")}`);
    notes.push(`Idle status writes changed: ${top.map(([k, v]) => `${k} ×${String(v)}`).join("; ")}`);
  }
  const idleEvents = await eventsSince(tSteady);
  if (idleEvents.size > 0) say(`  Events recorded while idle, by reason: ${[...idleEvents].map(([k, v]) => `${k} ${String(v)}`).join(", ")}`);
  const kubeWrites = writesBetween(w0, w1);
  const writesBy = kubeWrites?.byKey ?? [];
  if (writesBy.length > 0) say(`  Kubernetes writes while idle, by kind: ${writesBy.map(([k, v]) => `${k} ${String(v)}`).join(", ")}`);
  const windows = (Date.now() - tSteady) / 1000 / readySeconds;
  // The issue's floor: ceil(N/500) lists per kind per window and nothing per object. The API's
  // own floor is higher for two kinds: it has no account-wide list of NodeBalancer configs (whose
  // nodes_status is the health Ready reports) nor of database backups (a snapshot's existence),
  // so one read per NodeBalancer and one per snapshotted database per window is the least that
  // keeps those truthful within the window.
  const floorOf: Record<CallKind, number> = {
    ManagedDatabase: Math.ceil(Math.ceil(M / 2) / 500) + Math.ceil(Math.floor(M / 2) / 500),
    NodeBalancer: Math.ceil(B / 500),
    DatabaseSnapshot: 0,
  };
  // Daily calls fall outside an hour: each database's backups list (status.backups) and the
  // engine catalogue, added at their share of a window. status.backups needs one backups list per
  // database a day (the API has no account-wide one), so the API's floor counts it too.
  const dailyOf: Record<CallKind, number> = { ManagedDatabase: (DAILY.backupsPerDatabase * M + DAILY.catalogue) / windowsPerDay, NodeBalancer: 0, DatabaseSnapshot: 0 };
  const apiFloorOf: Record<CallKind, number> = { ManagedDatabase: floorOf.ManagedDatabase + DAILY.backupsPerDatabase * M / windowsPerDay, NodeBalancer: Math.ceil(B / 500) + B, DatabaseSnapshot: S };
  const round2 = (v: number): number => Math.round(v * 100) / 100;
  for (const k of kinds) {
    const perWindow = callsOf(steady, k.kind) / windows + dailyOf[k.kind];
    // Every kind ≤ 1.2× the API's floor (issue 45), at whatever window the run used. Snapshots
    // read a backup each every 6 windows, well under it.
    const cap = 1.2 * apiFloorOf[k.kind];
    figure(`${k.kind}: Linode calls per drift window, daily costs included (${String(k.n)} objects; the issue's floor ${String(floorOf[k.kind])}, the API's ${String(round2(apiFloorOf[k.kind]))})`, round2(perWindow), undefined, `≤ ${String(round2(cap))} (1.2× the API's floor)`, perWindow <= cap);
  }
  // How often each NodeBalancer's health (its configs list, a paginated GET) was read, against
  // the window asked and the window the paginated class leaves at the operator's share once the
  // shared lists have their pages: at the chart's shortest window (10 s) the budget, not the
  // window, sets the pace, and that is what a user of it gets.
  if (B > 0) {
    const configsReads = routes.find(([k]) => k === "GET /nodebalancers/{nodeBalancerId}/configs")?.[1];
    const steadySeconds = windows * readySeconds;
    const interval = configsReads === undefined ? undefined : round2(steadySeconds / (configsReads / B));
    const listPagesPerMinute = (floorOf.ManagedDatabase + floorOf.NodeBalancer) * 60 / readySeconds;
    const left = budget.listsPerWindow - listPagesPerMinute;
    const allowed = left > 0 ? round2(B / (left / 60)) : undefined;
    const pace = Math.max(readySeconds, allowed ?? Number.POSITIVE_INFINITY);
    if (allowed === undefined || allowed > readySeconds) notes.push(`At a ${String(readySeconds)} s window the API's floor for NodeBalancers (${String(B + floorOf.NodeBalancer)} paginated GETs a window) is more than the operator's share of the API's paginated class allows (${String(round2(left * readySeconds / 60))} a window once the shared lists have theirs): the calls per window are the budget's, and each NodeBalancer's health is read as often as the budget allows, which the seconds between its reads show.`);
    figure(`NodeBalancer: seconds between reads of one NodeBalancer's health (asked every ${String(readySeconds)} s; the paginated class at the operator's share allows every ${String(allowed ?? "never")} s for ${String(B)})`,
      interval, "s", `≤ ${String(round2(1.2 * pace))} s (1.2× the slower of the two)`, (v) => v <= 1.2 * pace);
  }
  tables.push({
    title: "Steady state: Linode calls per drift window, by route",
    columns: ["call", "per window"],
    rows: routes.map(([k, v]) => [k, (v / windows).toFixed(2)]),
  });
  const perObjectHour = (k: CallKind): string => { const n = kinds.find((x) => x.kind === k)?.n ?? 1; const h = windows * readySeconds / 3600; return (callsOf(steady, k) / Math.max(1, n) / h).toFixed(3); };
  tables.push({
    title: `Steady state over ${String(steadyMinutes)} min (${windows.toFixed(1)} drift windows of ${String(readySeconds)} s)`,
    columns: ["kind", "lists", "single reads", "writes", "calls per window measured", "daily calls per window", "issue's floor", "API's floor", "per object per hour measured"],
    rows: kinds.map((k) => [k.kind, steady.byKind[k.kind].lists, steady.byKind[k.kind].reads, steady.byKind[k.kind].writes, (callsOf(steady, k.kind) / windows).toFixed(2), dailyOf[k.kind].toFixed(2), floorOf[k.kind], apiFloorOf[k.kind].toFixed(2), perObjectHour(k.kind)]),
  });
  figure("Operator CPU in steady state, per 1,000 objects per hour", Math.round((steadyCpu / (total / 1000) / steadyHours) * 10) / 10, "s");
  figure("Operator CPU in steady state, in all", `${steadyCpu.toFixed(1)} s in ${(steadyHours * 60).toFixed(1)} min`);
  const transferMoved = Math.round((await transferMB()) - transfer0);
  figure(`NodeBalancer transfer counted meanwhile by the API (${String(B)} NodeBalancers)`, transferMoved, "MB");
  figure("Kubernetes writes while idle (counters moving included)", kubeWrites?.total, undefined, "0", (v) => v === 0);
  const steadyMem = { ...(await rssMiB(pidOf())), heap: await heapMiB() };
  // Issue 32: ≤ 256 MiB at 10,000 objects of the three kinds; ≤ 160 MiB at 1,500.
  const rssCap = total >= 5_000 ? 256 : 160;
  figure(`steady RSS at ${String(total)} objects`, Math.round(steadyMem.rss), "MiB", `≤ ${String(rssCap)} MiB`, steadyMem.rss <= rssCap);
  figure("RSS at rest before any object", Math.round(atRest.rss), "MiB");
  figure("JS heap used per object (steady − at rest)", Math.round(((steadyMem.heap.used - atRest.heap.used) * 1_048_576) / total), "bytes");
  figure("JS heap used / total at steady state", `${steadyMem.heap.used.toFixed(1)} / ${steadyMem.heap.total.toFixed(1)}`, "MiB");

  // ---- A new object while the rest exist ----
  say("== 20 new ManagedDatabases, one a second, while the rest exist");
  const firstStatus = new Map<string, number>();
  const readyNew = new Map<string, number>();
  const createdAt = new Map<string, number>();
  const watch = await watchKind(kube, mdbType, NS, (type, o) => {
    const name = o.metadata.name;
    const at = createdAt.get(name);
    if (at === undefined || type === "DELETED") return;
    if (!firstStatus.has(name) && (o.status?.conditions?.length ?? 0) > 0) firstStatus.set(name, Date.now() - at);
    if (!readyNew.has(name) && isReady(o)) readyNew.set(name, Date.now() - at);
  });
  for (let i = 0; i < 20; i++) {
    const name = `new-${String(i)}`;
    createdAt.set(name, Date.now());
    await kube.createCustom(mdbType, NS, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec: mdbSpec(i) });
    await sleep(1_000);
  }
  const tNew = Date.now();
  while (readyNew.size < 20 && Date.now() - tNew < 10 * 60_000) await sleep(500);
  watch.stop();
  const fs = [...firstStatus.values()];
  const rs = [...readyNew.values()];
  figure("new object: first status write, p50 / p99", `${String(secs(quantile(fs, 0.5)))} / ${String(secs(quantile(fs, 0.99)))}`, "s");
  figure("new object: Ready, p50 / p99", `${String(secs(quantile(rs, 0.5)))} / ${String(secs(quantile(rs, 0.99)))}`, "s", `provisioning ${String(PROVISION_SECONDS)} s + a few s`);
  figure("new objects Ready", `${String(rs.length)}/20`);

  // ---- Drift made behind the operator's back ----
  say("== drift: changes made directly in the Linode API");
  // The allow list is drifted on three databases a third of a window apart: where a change
  // falls in the sweep's cycle sets its wait, so one sample says little; the slowest is the figure.
  const dbIds = await Promise.all(["db-0", "db-2", "db-4"].map(async (name) => Number((await kube.getCustom<ManagedObject>(mdbType, { namespace: NS, name })).status?.id)));
  const lb0 = await kube.getCustom<ManagedObject>(nbType, { namespace: NS, name: "lb-0" });
  const nbId = Number(lb0.status?.id);
  const cfgs = await linode.nodeBalancers.listAllConfigs(nbId);
  const https = cfgs.find((c) => c.port === 443);
  const tcp = cfgs.find((c) => c.port === 8001);
  if (https === undefined || tcp === undefined) throw new Error("lb-0 lacks its configs");
  const node = (await linode.nodeBalancers.listAllNodes(nbId, tcp.id))[0];
  if (node === undefined) throw new Error("lb-0 config 8001 has no nodes");
  const other = generateCertificate({ commonName: "intruder.example.com" });
  const ALLOW_LIST = "ManagedDatabase allow list";
  const drifts: { what: string; afterMillis: number; make: () => Promise<unknown>; fixed: () => Promise<boolean> }[] = [
    ...dbIds.map((dbId, i) => ({
      what: `${ALLOW_LIST} (database ${String(dbId)}, made ${String(Math.round((i * readySeconds) / 3))} s in)`, afterMillis: (i * readySeconds * 1000) / 3,
      make: () => linode.databases.mysql.update(dbId, { allowList: ["198.51.100.0/24"] }), fixed: async () => (await linode.databases.mysql.get(dbId)).allowList.includes("203.0.113.0/24"),
    })),
    { what: "NodeBalancer node weight", afterMillis: 0, make: () => linode.nodeBalancers.updateNode(nbId, tcp.id, node.id, { weight: 7 }), fixed: async () => (await linode.nodeBalancers.getNode(nbId, tcp.id, node.id)).weight !== 7 },
    { what: "NodeBalancer TLS certificate", afterMillis: 0, make: () => linode.nodeBalancers.updateConfig(nbId, https.id, { sslCert: other.certPem, sslKey: other.keyPem }), fixed: async () => (await linode.nodeBalancers.getConfig(nbId, https.id)).sslFingerprint === https.sslFingerprint },
  ];
  // Made together, so a long window is waited out once, not thrice. One not put back within
  // three windows (at least five minutes: at the shortest window the call budget, not the
  // window, sets the pace) is a failed figure, not the end of the run and its saved result.
  const putBackWithin = Math.max(3 * readySeconds, 300) * 1000;
  const driftAt = Date.now();
  const tooks = await Promise.all(drifts.map(async (d) => {
    await sleep(d.afterMillis);
    await d.make();
    const t = Date.now();
    while (!(await d.fixed())) {
      if (Date.now() - t > putBackWithin) { say(`  ${d.what}: not put back in ${String(putBackWithin / 1000)} s`); return Number.NaN; }
      await sleep(250);
    }
    return secs(Date.now() - t);
  }));
  // Where each put-back's time went: the operator's calls on the drifted objects and the lists
  // that could find them, from a window before the drift, as the emulator answered them.
  const timeline = driftTimeline(emulator.requests(), driftAt - readySeconds * 1000, [
    ...dbIds.map((id) => ({ what: `database ${String(id)}`, paths: [`/databases/mysql/instances/${String(id)}`] })),
    { what: "mysql databases", paths: ["/databases/mysql/instances?"] },
    { what: `NodeBalancer ${String(nbId)}`, paths: [`/nodebalancers/${String(nbId)}`] },
    { what: "NodeBalancers", paths: ["/nodebalancers?"] },
  ], driftAt);
  tables.push({ title: "Drift: the operator's calls on the drifted objects and the lists that find them (seconds after the first drift was made)", columns: ["s", "call", "status", "took (ms)", "for"], rows: timeline });
  for (const [at, call, status, took] of timeline) say(`    ${String(at).padStart(7)} s  ${String(call)} ${String(status)} (${String(took)} ms)`);
  const driftRows: (string | number)[][] = [];
  const within = (took: number): boolean => took <= readySeconds * 1.2;
  drifts.forEach((d, i) => {
    const took = tooks[i] ?? Number.NaN;
    driftRows.push([d.what, took, readySeconds, within(took) ? "yes" : "no"]);
    if (!d.what.startsWith(ALLOW_LIST)) figure(`drift put back: ${d.what}`, took, "s", `≤ drift window ${String(readySeconds)} s (+ jitter)`, within(took));
  });
  // A sample with no figure (NaN: not put back) is the slowest.
  const allowListTooks = tooks.slice(0, dbIds.length);
  const slowest = allowListTooks.some((t) => Number.isNaN(t)) ? Number.NaN : Math.max(...allowListTooks);
  figure(`drift put back: ${ALLOW_LIST}, the slowest of ${String(dbIds.length)} made a third of a window apart (each: ${allowListTooks.map(String).join(" / ")} s)`, slowest, "s", `≤ drift window ${String(readySeconds)} s (+ jitter)`, within(slowest));
  tables.push({ title: "Drift made directly in the Linode API, put back", columns: ["change", "seconds", "drift window (s)", "within the window"], rows: driftRows });

  // ---- Restart with everything Ready ----
  say("== restart with everything Ready");
  await sleep(5_000);
  const n = M + 20;
  const flaps: string[] = [];
  const watches = await Promise.all(kinds.map((k) => watchKind(kube, k.type, NS, (type, o) => {
    if (type === "MODIFIED" && !isReady(o)) flaps.push(`${k.kind} ${o.metadata.name}`);
  })));
  op.child.kill("SIGTERM");
  await op.exited;
  const tRestart = Date.now();
  ({ proc: op, metricsUrl } = await bench.operator(operatorArgs));
  await reobservedAll(metricsUrl, (k) => (k.kind === "ManagedDatabase" ? n : k.n), tRestart);
  const reobservedMillis = Date.now() - tRestart;
  const restartCalls = await linodeCalls(metricsUrl);
  const restartRoutes = await callsByRoute(metricsUrl);
  const restartDeferred = Object.values(await reconciles(metricsUrl, "deferred")).reduce((a, b) => a + b, 0);
  await sleep(Math.max(10_000, readySeconds * 1000));
  for (const w of watches) w.stop();
  figure("restart: every object re-observed after", secs(reobservedMillis), "s");
  // Its floor: one list per kind and account (per engine for databases, in pages of 500), one
  // configs list per NodeBalancer, one backups read per snapshotted database.
  const restartFloor = Math.ceil(Math.ceil(n / 2) / 500) + Math.ceil(Math.floor(n / 2) / 500) + Math.ceil(B / 500) + B + S;
  figure(`restart: Linode calls to re-observe everything (floor ${String(restartFloor)})`, restartCalls.total);
  figure("restart: calls against its floor", Math.round((restartCalls.total / restartFloor) * 100) / 100, "×", "≤ 1.5", restartCalls.total <= 1.5 * restartFloor);
  tables.push({ title: "Restart: Linode calls to re-observe everything, by route", columns: ["call", "calls"], rows: [...restartRoutes].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v]) });
  for (const [call, calls] of tables.at(-1)?.rows ?? []) say(`    ${String(calls).padStart(6)}  ${String(call)}`);
  figure("restart: passes that waited for the call budget meanwhile", restartDeferred);
  figure("restart: Ready conditions that flapped", flaps.length, undefined, "0", flaps.length === 0);
  if (flaps.length > 0) notes.push(`Ready flaps after the restart: ${flaps.slice(0, 10).join(", ")}`);
  const restartMem = await rssMiB(pidOf());
  figure(`RSS after a restart with ${String(total + 20)} Ready objects`, Math.round(restartMem.rss), "MiB");

  // ---- Failover to a warm standby ----
  op.child.kill("SIGTERM");
  await op.exited;
  ({ proc: op, metricsUrl } = await failoverPhase({
    bench, kube, namespace: NS, operatorArgs, kinds: kinds.map((k) => (k.kind === "ManagedDatabase" ? { ...k, n } : k)), databaseSpec: mdbSpec, figure, tables, notes,
  }));

  if (unlimited) notes.push("BENCH_UNLIMITED (bench:scale:10k): the emulator has no rate limit and the operator spends all of its own budget (--linode-api-share 1: 1,840 calls a minute); steady RSS and steady calls at 10,000 objects are what this run is for. Convergence here spans several drift windows (300 s), so objects Ready early are looked at again meanwhile (every second window while the budget is nearly spent: the objects not Ready yet go first), which the workload-only floor does not count.");
  notes.push(STEADY_GAP);
  notes.push(`A restart re-reads what the new process has not cached: each NodeBalancer's configs list (its nodes and firewalls as status recorded them stand while the NodeBalancer's \`updated\` is the one status recorded), each snapshot's backup, the shared lists; ${String(restartCalls.total)} calls at the operator's ${String(budgetPerMinute)} a minute need ${String(Math.round((restartCalls.total / budgetPerMinute) * 60))} s of budget (less what it starts with), so re-observing is bounded by the budget; passes that wait for it keep their conditions (no flap).`);
  notes.push(`Emulator: ${String(PROVISION_SECONDS)} s to provision a database or take a backup; NodeBalancer backends are health-checked every 2 s. Operator: the chart's defaults (concurrency 4, --linode-api-share ${String(apiShare)}, statistics hourly, backups daily); convergence with the default drift window (300 s), the later phases with a ${String(readySeconds)} s window. The API answers after ${latencyFlag(benchLatency())} ms (median,p99; BENCH_LATENCY_MS).`);
  await saveResult({
    name: resultName, title: `Scale: ${String(M)} ManagedDatabases, ${String(B)} NodeBalancers, ${String(S)} DatabaseSnapshots`,
    // The npm script that ran it (bench:scale:10k sets the unlimited mode itself), with any arguments it did not set.
    command: process.env.npm_lifecycle_event === "bench:scale:10k" ? "npm run bench:scale:10k"
      : `${unlimited ? "BENCH_UNLIMITED=1 " : ""}npm run bench:scale${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    figures, tables, charts, notes,
  });
} finally {
  await linode.close();
  await bench.stop();
}
