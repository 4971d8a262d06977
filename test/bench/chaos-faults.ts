// Chaos benchmark, Linode API faults: N ManagedDatabases (default 100), N/10 NodeBalancers
// (2 configs × 3 nodes) and N/20 DatabaseSnapshots applied at once, with the operator as a
// real `linode-operator run` process on a real API server. First fault-free, then, in a fresh
// namespace with fresh objects and a fresh operator, with the emulator answering 10 % of all
// requests 429 (Retry-After 1 s, as the real API's), 5 % 500 and dropping the connection of
// 2 % after committing them. Prints the time until all are Ready in each run and its ratio
// (target ≤ 2×), the Linode calls and their outcomes (what the emulator injected, what the
// operator saw), and the duplicates: two cloud objects for one resource (target 0), found from
// the emulator's state by the resources' labels, plus orphans and missing objects, and the
// operator's warnings, the slowest resources and where its log went.
//   node test/bench/chaos-faults.ts [n=100] [seed=1]
// The seed drives the emulator's fault decisions: the same request order meets the same faults
// (the order itself depends on timing).
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startBench } from "./bench-setup.ts";
import { budgetWaits, describeWaits, isReady, kubectl, linodeCallsByStatus, listAll, say, secs, sleep, tallyFaults } from "./common.ts";
import { saveResult, type Figure, type Table } from "./report/result.ts";

const n = Number(process.argv[2] ?? 100);
const seed = Number(process.argv[3] ?? 1);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(seed)) throw new Error("usage: node test/bench/chaos-faults.ts [n=100] [seed=1]");
const nbCount = Math.max(1, Math.round(n / 10));
const snapCount = Math.max(1, Math.round(n / 20));
const CLUSTER_ID = "chaos-faults";
const PROVISION_SECONDS = 3;
// CHAOS_RATE429, CHAOS_ERROR_RATE, CHAOS_DROP_RATE, CHAOS_RETRY_AFTER change them (to tell their effects apart).
const envNumber = (name: string, fallback: number): number => (process.env[name] !== undefined && process.env[name] !== "" ? Number(process.env[name]) : fallback);
const FAULTS = {
  rate429: envNumber("CHAOS_RATE429", 0.1), errorRate: envNumber("CHAOS_ERROR_RATE", 0.05), errorStatus: 500,
  dropRate: envNumber("CHAOS_DROP_RATE", 0.02), retryAfterSeconds: envNumber("CHAOS_RETRY_AFTER", 1),
};
const TIMEOUT_MS = 20 * 60_000;
const started = Date.now();

// Each run's operator has a token of its own: the API's rate limit is per token and per minute,
// and the first run's calls must not spend the second's budget.
const bench = await startBench({ provisionSeconds: PROVISION_SECONDS, tokens: ["chaos-clean-token", "chaos-faulty-token"] });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "chaos-faults" });
const tally = tallyFaults(emulator);

interface Audit { resources: number; cloudObjects: number; duplicates: string[]; orphans: string[]; missing: string[] }
interface Run {
  name: string;
  applyMillis: number;
  readyMillis: number;
  readyByKind: Record<string, number>;
  emulatorCalls: number;
  operatorCalls: Map<string, number>;
  /** Waits for the operator's own budget by route class (describeWaits). */
  waits: string;
  injected: { status429: number; errors: number; drops: number };
  audit: Audit;
  exitCode: number | null;
  /** warn/error log lines until all Ready, by message (and error). */
  trouble: Map<string, number>;
  slowest: string[];
  logFile: string;
}

const specOf = {
  mdb: (i: number): Record<string, unknown> => ({ engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] }),
  nb: (i: number): Record<string, unknown> => ({
    region: "us-east",
    configs: [0, 1].map((c) => ({
      port: 8000 + c, protocol: "tcp", check: "connection", checkInterval: 2, checkTimeout: 1,
      nodes: [0, 1, 2].map((k) => ({ label: `node-${String(c)}-${String(k)}`, address: `192.168.${String(i % 250)}.${String(10 + c * 10 + k)}:80` })),
    })),
  }),
  snap: (i: number): Record<string, unknown> => ({ databaseRef: { name: `db-${String(i)}` } }),
};

/** Who owns which cloud object, from the emulator's state: objects made in this run (ids above `before`), matched by label. */
function audit(ns: string, before: { database: number; nodebalancer: number; backup: number }, objs: { mdbs: ManagedObject[]; nbs: ManagedObject[]; snaps: ManagedObject[] }): Audit {
  const state = emulator.dump();
  const label = (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: ns, name });
  const snapLabel = (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: ns, name }, { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" });
  const result: Audit = { resources: 0, cloudObjects: 0, duplicates: [], orphans: [], missing: [] };
  const check = (kind: string, resources: ManagedObject[], cloud: { id: number; label: string; where?: string }[], labelOf: (name: string) => string, idOf: (o: ManagedObject) => number): void => {
    result.resources += resources.length;
    result.cloudObjects += cloud.length;
    const claimed = new Set<number>();
    for (const o of resources) {
      const mine = cloud.filter((c) => c.label === labelOf(o.metadata.name));
      for (const c of mine) claimed.add(c.id);
      if (mine.length > 1) result.duplicates.push(`${kind} ${o.metadata.name}: ${mine.map((c) => `${String(c.id)}${c.where ?? ""}`).join(", ")}`);
      if (mine.length === 0) result.missing.push(`${kind} ${o.metadata.name}: no cloud object`);
      else if (!mine.some((c) => c.id === idOf(o))) result.missing.push(`${kind} ${o.metadata.name}: status names ${String(idOf(o))}, the cloud has ${mine.map((c) => String(c.id)).join(", ")}`);
    }
    for (const c of cloud) if (!claimed.has(c.id)) result.orphans.push(`${kind} ${String(c.id)} "${c.label}"`);
  };
  check("ManagedDatabase", objs.mdbs, state.databases.filter((d) => d.id > before.database), label, (o) => Number(o.status?.id));
  const nbs = state.nodebalancers.filter((b) => b.id > before.nodebalancer);
  check("NodeBalancer", objs.nbs, nbs, label, (o) => Number(o.status?.id));
  // One config per port and one node per address (the API refuses a second port; a second node is possible).
  for (const b of nbs) {
    for (const cfg of Object.values(b.configs)) {
      const addresses = Object.values(cfg.nodes).map((x) => x.address);
      const extra = addresses.length - new Set(addresses).size;
      if (extra > 0) result.duplicates.push(`NodeBalancer ${String(b.id)} port ${String(cfg.port)}: ${String(extra)} duplicate node(s)`);
    }
  }
  const backups = state.databases.flatMap((d) => d.backups.filter((k) => k.type === "snapshot" && k.id > before.backup).map((k) => ({ id: k.id, label: k.label, where: ` (database ${String(d.id)})` })));
  check("DatabaseSnapshot", objs.snaps, backups, snapLabel, (o) => Number(o.status?.backupId));
  return result;
}

async function runOnce(name: string, ns: string, faulty: boolean): Promise<Run> {
  say(`\n== ${name}: ${String(n)} ManagedDatabases, ${String(nbCount)} NodeBalancers (2 configs × 3 nodes), ${String(snapCount)} DatabaseSnapshots in namespace ${ns}${faulty ? `; faults: ${JSON.stringify(FAULTS)}, seed ${String(seed)}` : ""}`);
  await kubectl(cp, ["create", "namespace", ns]);
  emulator.setFaults(faulty ? { ...FAULTS, seed } : {});
  // CHAOS_LOG_LEVEL=debug keeps every Linode call in the operator's log (written out below).
  const { proc, metricsUrl } = await bench.operator(["--namespaces", ns, "--cluster-id", CLUSTER_ID, "--poll-pending-seconds", "1", "--poll-ready-seconds", "60"],
    { LINODE_TOKEN: `${ns}-token`, ...(process.env.CHAOS_LOG_LEVEL !== undefined ? { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL } : {}) });
  const counters = emulator.dump().counters;
  const before = { database: counters.database, nodebalancer: counters.nodebalancer, backup: counters.backup };
  const total = (): number => Object.values(emulator.requestCounts()).reduce((s, v) => s + v, 0);
  const calls0 = total();
  const injected0 = { ...tally };
  const t0 = Date.now();
  const create = (t: ResourceType, kind: string, name: string, spec: Record<string, unknown>): Promise<unknown> =>
    kube.createCustom(t, ns, { apiVersion: "linode.operator.dev/v1alpha1", kind, metadata: { name }, spec });
  for (let i = 0; i < n; i++) {
    await create(mdbType, "ManagedDatabase", `db-${String(i)}`, specOf.mdb(i));
    if (i < snapCount) await create(snapType, "DatabaseSnapshot", `snap-${String(i)}`, specOf.snap(i));
    if (i < nbCount) await create(nbType, "NodeBalancer", `lb-${String(i)}`, specOf.nb(i));
  }
  const applyMillis = Date.now() - t0;
  const kinds = { ManagedDatabase: mdbType, NodeBalancer: nbType, DatabaseSnapshot: snapType };
  const expected: Record<string, number> = { ManagedDatabase: n, NodeBalancer: nbCount, DatabaseSnapshot: snapCount };
  const readyByKind: Record<string, number> = {};
  const readyAt = new Map<string, number>();
  let lastPrint = 0;
  const look = async (): Promise<{ mdbs: ManagedObject[]; nbs: ManagedObject[]; snaps: ManagedObject[] }> => {
    const [mdbs, nbs, snaps] = await Promise.all([listAll(kube, kinds.ManagedDatabase, ns), listAll(kube, kinds.NodeBalancer, ns), listAll(kube, kinds.DatabaseSnapshot, ns)]);
    return { mdbs, nbs, snaps };
  };
  for (;;) {
    const { mdbs, nbs, snaps } = await look();
    const ready = { ManagedDatabase: mdbs.filter(isReady).length, NodeBalancer: nbs.filter(isReady).length, DatabaseSnapshot: snaps.filter(isReady).length };
    for (const o of [...mdbs, ...nbs, ...snaps]) if (isReady(o) && !readyAt.has(`${o.kind ?? ""}/${o.metadata.name}`)) readyAt.set(`${o.kind ?? ""}/${o.metadata.name}`, Date.now() - t0);
    for (const [k, v] of Object.entries(ready)) if (v === expected[k] && readyByKind[k] === undefined) readyByKind[k] = Date.now() - t0;
    if (Object.keys(readyByKind).length === 3) break;
    if (Date.now() - lastPrint > 10_000) {
      lastPrint = Date.now();
      say(`  ${String(secs(Date.now() - t0)).padStart(6)} s  Ready: ${Object.entries(ready).map(([k, v]) => `${k} ${String(v)}/${String(expected[k])}`).join(", ")}`);
    }
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`${name}: not all Ready after ${String(TIMEOUT_MS / 60_000)} min: ${JSON.stringify(ready)}`);
    await sleep(500);
  }
  const readyMillis = Date.now() - t0;
  const trouble = new Map<string, number>();
  // The slowest resources, with what went wrong for them.
  const slowest = [...readyAt].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([key, ms]) => {
    const name = key.split("/")[1] ?? "";
    const errs = proc.logs.filter((l) => l.key === `${ns}/${name}` && ["warn", "error", "fatal"].includes(String(l.level))).map((l) => (typeof l.err === "string" ? l.err : String(l.msg)));
    return `${key} Ready after ${String(secs(ms))} s${errs.length > 0 ? `; ${errs.join("; ")}` : ""}`;
  });
  for (const l of proc.logs) {
    if (Number(l.level) < 40) continue;
    const err = typeof l.err === "string" ? `: ${l.err.replace(/\d+/g, "N").slice(0, 120)}` : "";
    const k = `${typeof l.kind === "string" ? `${l.kind} ` : ""}${String(l.msg)}${err}`;
    trouble.set(k, (trouble.get(k) ?? 0) + 1);
  }
  const emulatorCalls = total() - calls0;
  const operatorCalls = await linodeCallsByStatus(metricsUrl);
  const waits = describeWaits(await budgetWaits(metricsUrl));
  const injected = { status429: tally.status429 - injected0.status429, errors: tally.errors - injected0.errors, drops: tally.drops - injected0.drops };
  // A little longer: a duplicate made by a late retry would show now.
  await sleep(5_000);
  const result = audit(ns, before, await look());
  emulator.setFaults({});
  proc.child.kill("SIGTERM");
  const exitCode = await proc.exited;
  const logFile = join(tmpdir(), `chaos-faults-${ns}-seed${String(seed)}.log`);
  await writeFile(logFile, proc.logs.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const run: Run = { name, applyMillis, readyMillis, readyByKind, emulatorCalls, operatorCalls, waits, injected, audit: result, exitCode, trouble, slowest, logFile };
  printRun(run);
  return run;
}

function printRun(r: Run): void {
  const statuses = [...r.operatorCalls].sort(([a], [b]) => a.localeCompare(b)).map(([s, v]) => `${s}: ${String(v)}`).join(", ");
  say(`${r.name}: applied in ${String(secs(r.applyMillis))} s; all Ready ${String(secs(r.readyMillis))} s after the first apply (ManagedDatabases ${String(secs(r.readyByKind.ManagedDatabase ?? 0))} s, NodeBalancers ${String(secs(r.readyByKind.NodeBalancer ?? 0))} s, DatabaseSnapshots ${String(secs(r.readyByKind.DatabaseSnapshot ?? 0))} s)`);
  say(`  Linode calls until all Ready: ${String(r.emulatorCalls)} received by the emulator; the operator's by outcome: ${statuses}`);
  say(`  waits for the operator's own call budget, by route class: ${r.waits}`);
  say(`  injected by the emulator: ${String(r.injected.status429)} × 429, ${String(r.injected.errors)} × 5xx, ${String(r.injected.drops)} dropped after commit`);
  say(`  ${String(r.audit.resources)} resources, ${String(r.audit.cloudObjects)} cloud objects made: ${String(r.audit.duplicates.length)} duplicates, ${String(r.audit.orphans.length)} orphans, ${String(r.audit.missing.length)} missing; operator exit code on SIGTERM ${String(r.exitCode)}`);
  for (const d of [...r.audit.duplicates, ...r.audit.orphans, ...r.audit.missing]) say(`    ${d}`);
  const trouble = [...r.trouble].sort((a, b) => b[1] - a[1]);
  say(`  operator warnings and errors until all Ready: ${String(trouble.reduce((a, [, v]) => a + v, 0))}${trouble.length > 0 ? ", by message:" : ""}`);
  for (const [k, v] of trouble.slice(0, 8)) say(`    ${String(v).padStart(5)}  ${k}`);
  say("  slowest to be Ready:");
  for (const x of r.slowest) say(`    ${x}`);
  say(`  operator log: ${r.logFile}`);
}

/** The first writes of each kind to a fresh API server are slow (caches, admission); not the fault-free run's to pay. */
async function warmUp(): Promise<void> {
  await kubectl(cp, ["create", "namespace", "chaos-warmup"]);
  const objects: [ResourceType, string, Record<string, unknown>][] = [[mdbType, "ManagedDatabase", specOf.mdb(0)], [nbType, "NodeBalancer", specOf.nb(0)], [snapType, "DatabaseSnapshot", specOf.snap(0)]];
  for (const [t, kind, spec] of objects) {
    await kube.createCustom(t, "chaos-warmup", { apiVersion: "linode.operator.dev/v1alpha1", kind, metadata: { name: "warm-up" }, spec });
    await kube.deleteCustom(t, { namespace: "chaos-warmup", name: "warm-up" });
  }
}

let exitCode = 0;
try {
  await warmUp();
  const clean = await runOnce("fault-free", "chaos-clean", false);
  const faulty = await runOnce("with faults", "chaos-faulty", true);
  const ratio = faulty.readyMillis / clean.readyMillis;
  const dupes = clean.audit.duplicates.length + faulty.audit.duplicates.length;
  const orphans = clean.audit.orphans.length + faulty.audit.orphans.length;
  const missing = clean.audit.missing.length + faulty.audit.missing.length;
  const seen = (r: Run, s: string): number => r.operatorCalls.get(s) ?? 0;
  const transport = (r: Run): number => [...r.operatorCalls].filter(([s]) => !/^\d+$/.test(s)).reduce((a, [, v]) => a + v, 0);
  say(`\ntime to all Ready: ${String(secs(clean.readyMillis))} s fault-free, ${String(secs(faulty.readyMillis))} s with faults: ${ratio.toFixed(2)}× (target ≤ 2×), ${String(secs(faulty.readyMillis - clean.readyMillis))} s added`);
  say(`duplicates: ${String(dupes)} (target 0); orphans ${String(orphans)}, missing ${String(missing)}`);
  say(`benchmark took ${String(secs(Date.now() - started))} s`);
  const figures: Figure[] = [
    { label: "all Ready, fault-free", value: secs(clean.readyMillis), unit: "s" },
    { label: "all Ready, with faults", value: secs(faulty.readyMillis), unit: "s" },
    { label: "slowdown under faults", value: Math.round(ratio * 100) / 100, unit: "×", target: "≤ 2×", met: ratio <= 2 },
    { label: "time the faults added", value: secs(faulty.readyMillis - clean.readyMillis), unit: "s" },
    { label: "duplicate cloud objects", value: dupes, target: "0", met: dupes === 0 },
    { label: "orphaned / missing cloud objects", value: `${String(orphans)} / ${String(missing)}`, target: "0 / 0", met: orphans === 0 && missing === 0 },
    { label: "faults injected (429 / 5xx / dropped)", value: `${String(faulty.injected.status429)} / ${String(faulty.injected.errors)} / ${String(faulty.injected.drops)}` },
  ];
  const tables: Table[] = [{
    title: "Runs",
    columns: ["run", "all Ready (s)", "ManagedDatabases (s)", "NodeBalancers (s)", "DatabaseSnapshots (s)", "calls received", "429 seen", "5xx seen", "lost answers", "429 / 5xx / drops injected", "duplicates"],
    rows: [clean, faulty].map((r) => [
      r.name, secs(r.readyMillis), secs(r.readyByKind.ManagedDatabase ?? 0), secs(r.readyByKind.NodeBalancer ?? 0), secs(r.readyByKind.DatabaseSnapshot ?? 0),
      r.emulatorCalls, seen(r, "429"), [...r.operatorCalls].filter(([s]) => s.startsWith("5")).reduce((a, [, v]) => a + v, 0), transport(r),
      `${String(r.injected.status429)} / ${String(r.injected.errors)} / ${String(r.injected.drops)}`, r.audit.duplicates.length,
    ]),
  }];
  await saveResult({
    name: "chaos-faults",
    title: `Linode API faults: ${String(n)} ManagedDatabases, ${String(nbCount)} NodeBalancers, ${String(snapCount)} DatabaseSnapshots`,
    command: `${["CHAOS_RATE429", "CHAOS_ERROR_RATE", "CHAOS_DROP_RATE", "CHAOS_RETRY_AFTER"].filter((k) => (process.env[k] ?? "") !== "").map((k) => `${k}=${process.env[k] ?? ""} `).join("")}npm run bench:chaos:faults -- ${String(n)} ${String(seed)}`,
    figures, tables,
    notes: [
      `All applied at once, fault-free first, then in a fresh namespace with fresh objects and a fresh operator with ${String(FAULTS.rate429 * 100)} % 429 (Retry-After ${String(FAULTS.retryAfterSeconds)} s), ${String(FAULTS.errorRate * 100)} % 500 and ${String(FAULTS.dropRate * 100)} % of requests committed and then their connection dropped, on every route; seed ${String(seed)}.`,
      `Emulator provisioning ${String(PROVISION_SECONDS)} s (the ratio shrinks as provisioning grows: the faults add seconds, not a factor); operator defaults but --poll-pending-seconds 1 and --poll-ready-seconds 60, and a Linode token per run (the rate limit is per token and minute); NodeBalancers of 2 tcp configs × 3 nodes with a 2 s connection check.`,
      "A duplicate is two cloud objects whose label is one resource's (every resource here has its derived label); an orphan is an object made during the run that no resource's label names.",
    ],
  });
  if (dupes > 0 || orphans > 0 || missing > 0) exitCode = 1;
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  exitCode = 1;
} finally {
  await bench.stop();
}
process.exit(exitCode);
