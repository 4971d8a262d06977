// Chaos benchmark, Kubernetes API server outage: with a few ManagedDatabases and a NodeBalancer
// Ready, the kube-apiserver is stopped (SIGKILL; etcd keeps running) for N minutes (default 5),
// then started again on the same port and data. The operator runs as deployed (leader election
// on, one replica) under a supervisor that does what the kubelet does with the chart's pod: a
// liveness probe on /healthz (after 5 s, every 10 s, 1 s timeout, killed after 3 failures) and
// restarts on exit (restartPolicy Always: back-off 10 s doubling to 5 min, reset after 10 min
// up; the same pod name). Prints its exits and restarts (target 0 exits; an exit by design is said to
// be one), the lines it logs per minute during the outage and what they say, its Linode calls
// meanwhile, and after the API server is back, the seconds until a new ManagedDatabase and a
// change to an existing one are handled (target ≤ 30 s).
//   node test/bench/chaos-apiserver-outage.ts [minutes=5]
// OUTAGE_LEADER_ELECT=false runs the operator without leader election instead.
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { freePort } from "../harness/control-plane.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { startBench } from "./bench-setup.ts";
import { isReady, listAll, say, secs, sleep } from "./common.ts";
import { saveResult, type Figure, type Table } from "./report/result.ts";

const minutes = Number(process.argv[2] ?? 5);
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error("usage: node test/bench/chaos-apiserver-outage.ts [minutes=5]");
const leaderElect = process.env.OUTAGE_LEADER_ELECT !== "false";
const NS = "bench";
const DBS = ["db-0", "db-1", "db-2", "db-3"];
const TARGET_MS = 30_000;
const started = Date.now();

const bench = await startBench({ provisionSeconds: 1 });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "chaos-outage" });

interface Exit { at: number; code: number | null; signal: string | null; killedByProbe: boolean; lastLines: string[]; stderr: string }

/** Probes the operator's liveness and restarts it whenever it exits, with the kubelet's timings (CrashLoopBackOff). */
class Supervisor {
  readonly procs: OperatorProcess[] = [];
  readonly exits: Exit[] = [];
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private backoffMillis = 10_000;
  private readonly healthPort: number;

  constructor(healthPort: number) { this.healthPort = healthPort; }

  get current(): OperatorProcess | undefined { return this.procs.at(-1); }

  start(): OperatorProcess {
    const proc = bench.spawnOperator(["--poll-ready-seconds", "10", "--poll-pending-seconds", "1"], {
      LEADER_ELECT: String(leaderElect), POD_NAMESPACE: NS, POD_NAME: "linode-operator-0", HEALTH_PORT: String(this.healthPort),
    });
    this.procs.push(proc);
    const since = Date.now();
    const life = { exited: false, killedByProbe: false };
    void (async () => {
      await sleep(5_000);
      let failures = 0;
      while (!life.exited && !this.stopped) {
        const ok = await fetch(`http://127.0.0.1:${String(this.healthPort)}/healthz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false);
        failures = ok ? 0 : failures + 1;
        if (failures >= 3) {
          life.killedByProbe = true;
          say("  liveness probe failed 3 times: killing the operator");
          proc.child.kill("SIGKILL");
          return;
        }
        await sleep(10_000);
      }
    })();
    void proc.exited.then((code) => {
      life.exited = true;
      if (this.stopped) return;
      this.exits.push({
        at: Date.now(), code, signal: proc.child.signalCode, killedByProbe: life.killedByProbe,
        lastLines: proc.logs.slice(-3).map((l) => `${String(l.msg)}${typeof l.err === "string" ? `: ${l.err}` : ""}`),
        stderr: proc.stderr.join("").trim().split("\n").slice(-2).join(" | "),
      });
      if (Date.now() - since > 10 * 60_000) this.backoffMillis = 10_000;
      const delay = this.backoffMillis;
      this.backoffMillis = Math.min(300_000, this.backoffMillis * 2);
      say(`  operator exited (code ${String(code)}) ${String(secs(Date.now() - since))} s after it started; restarting in ${String(delay / 1000)} s`);
      this.timer = setTimeout(() => { this.start(); }, delay);
    });
    return proc;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

const allLogs = (sup: Supervisor): Record<string, unknown>[] => sup.procs.flatMap((p) => p.logs);
const mdbSpec = (allowList: string[]): Record<string, unknown> => ({ engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList });

let exitCode = 0;
const sup = new Supervisor(await freePort());
try {
  const first = sup.start();
  await first.waitForLog((l) => l.msg === "operator started");
  for (const name of DBS) {
    await kube.createCustom(mdbType, NS, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec: mdbSpec(["203.0.113.0/24"]) });
  }
  await kube.createCustom(nbType, NS, {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "lb" },
    spec: { region: "us-east", configs: [{ port: 80, protocol: "tcp", check: "connection", checkInterval: 2, checkTimeout: 1, nodes: [{ label: "web-1", address: "192.168.1.10:80" }] }] },
  });
  await waitFor("everything Ready", async () => {
    const ready = [...await listAll(kube, mdbType, NS), ...await listAll(kube, nbType, NS)].filter(isReady).length;
    return ready === DBS.length + 1 ? true : undefined;
  }, 120_000, 250);
  const linodeCalls = (): number => Object.values(emulator.requestCounts()).reduce((s, v) => s + v, 0);
  say(`${String(DBS.length)} ManagedDatabases and 1 NodeBalancer Ready; operator leader election ${leaderElect ? "on" : "off"}; stopping the kube-apiserver for ${String(minutes)} min`);
  await sleep(3_000);

  const logsBefore = allLogs(sup).length;
  const calls0 = linodeCalls();
  const stopAt = Date.now();
  await cp.stopApiServer();
  const perMinute: number[] = [];
  const outageMillis = minutes * 60_000;
  let lastCount = logsBefore;
  for (let m = 0; m < Math.ceil(minutes); m++) {
    await sleep(Math.min(60_000, outageMillis - m * 60_000));
    const now = allLogs(sup).length;
    perMinute.push(now - lastCount);
    lastCount = now;
    say(`  minute ${String(m + 1)}: ${String(perMinute.at(-1))} log lines; ${String(sup.exits.length)} exits so far; operator ${sup.current?.child.exitCode === null && sup.current.child.signalCode === null ? "running" : "not running"}`);
  }
  const outageLogs = allLogs(sup).slice(logsBefore);
  const outageCalls = linodeCalls() - calls0;
  const exitsDuring = sup.exits.length;

  await cp.startApiServer();
  const backAt = Date.now();
  say(`kube-apiserver back after ${String(secs(backAt - stopAt))} s of outage (${String(secs(backAt - stopAt - outageMillis))} s of it to start); creating db-new and changing db-0's allowList`);
  const newDb = kube.createCustom(mdbType, NS, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "db-new" }, spec: mdbSpec(["203.0.113.0/24"]) });
  const changed = kube.mergePatchCustom(mdbType, { namespace: NS, name: "db-0" }, { spec: { allowList: ["203.0.113.0/24", "198.51.100.7/32"] } });
  await Promise.all([newDb, changed]);
  const appliedAt = Date.now();
  const db0Id = Number((await kube.getCustom<ManagedObject>(mdbType, { namespace: NS, name: "db-0" })).status?.id);

  const handled = { created: 0, createdReady: 0, changed: 0, changedSynced: 0 };
  await waitFor("both handled", async () => {
    const now = Date.now() - backAt;
    const state = emulator.dump();
    const newOne = await kube.getCustom<ManagedObject>(mdbType, { namespace: NS, name: "db-new" });
    const db0 = await kube.getCustom<ManagedObject>(mdbType, { namespace: NS, name: "db-0" });
    if (handled.created === 0 && state.databases.some((d) => d.label.startsWith("bench-db-new"))) handled.created = now;
    if (handled.createdReady === 0 && isReady(newOne)) handled.createdReady = now;
    if (handled.changed === 0 && state.databases.find((d) => d.id === db0Id)?.allow_list.includes("198.51.100.7/32") === true) handled.changed = now;
    if (handled.changedSynced === 0 && db0.status?.observedGeneration === db0.metadata.generation && isReady(db0)) handled.changedSynced = now;
    return Object.values(handled).every((v) => v > 0) ? true : undefined;
  }, 15 * 60_000, 200);
  const bothMillis = Math.max(handled.created, handled.changed);
  await sleep(2_000);
  sup.stop();

  // What it said during the outage, by message.
  const byMsg = new Map<string, number>();
  for (const l of outageLogs) {
    const key = `${String(l.level)} ${String(l.msg)}${typeof l.informer === "string" ? ` (${l.informer})` : ""}`;
    byMsg.set(key, (byMsg.get(key) ?? 0) + 1);
  }
  const levelName = (k: string): string => k.replace(/^(\d+) /, (_m, lv: string) => `${({ 30: "info", 40: "warn", 50: "error", 60: "fatal" } as Record<string, string>)[lv] ?? lv} `);
  say(`\nduring the ${String(minutes)} min outage: ${String(outageLogs.length)} log lines (${perMinute.map(String).join(", ")} per minute), ${String(outageCalls)} Linode calls`);
  for (const [k, v] of [...byMsg].sort((a, b) => b[1] - a[1]).slice(0, 12)) say(`  ${String(v).padStart(5)}  ${levelName(k)}`);
  say(`operator exits: ${String(sup.exits.length)} (${String(exitsDuring)} during the outage), restarts ${String(sup.procs.length - 1)}`);
  for (const e of sup.exits) say(`  at +${String(secs(e.at - stopAt))} s: code ${String(e.code)}${e.signal !== null ? ` signal ${e.signal}` : ""}${e.killedByProbe ? " (killed by the liveness probe)" : ""}; last lines: ${e.lastLines.join(" / ")}${e.stderr !== "" ? `; stderr: ${e.stderr}` : ""}`);
  say(`after the API server was back (${String(secs(appliedAt - backAt))} s to apply): db-new created in Linode after ${String(secs(handled.created))} s, Ready after ${String(secs(handled.createdReady))} s; `
    + `db-0's allowList changed in Linode after ${String(secs(handled.changed))} s, status current after ${String(secs(handled.changedSynced))} s (target ≤ 30 s for both)`);
  say(`benchmark took ${String(secs(Date.now() - started))} s`);

  const byDesign = sup.exits.filter((e) => e.lastLines.some((l) => l.startsWith("leadership lost"))).length;
  const figures: Figure[] = [
    { label: "operator exits during the outage", value: exitsDuring, target: "0 (or by design)", met: exitsDuring === 0 || exitsDuring === byDesign },
    { label: "of which by design (lost leader lease → exit, restarted)", value: byDesign },
    { label: "log lines per minute during the outage (max)", value: Math.max(...perMinute) },
    { label: "new object created in Linode after the API server is back", value: secs(handled.created), unit: "s", target: "≤ 30 s", met: handled.created <= TARGET_MS },
    { label: "changed object updated in Linode after the API server is back", value: secs(handled.changed), unit: "s", target: "≤ 30 s", met: handled.changed <= TARGET_MS },
    { label: "both Ready / status current", value: secs(Math.max(handled.createdReady, handled.changedSynced)), unit: "s" },
  ];
  const tables: Table[] = [
    { title: "Log lines during the outage, by message", columns: ["lines", "level and message"], rows: [...byMsg].sort((a, b) => b[1] - a[1]).map(([k, v]) => [v, levelName(k)]) },
    { title: "Operator exits", columns: ["at (s after the stop)", "code or signal", "killed by the liveness probe", "last lines", "stderr"], rows: sup.exits.map((e) => [secs(e.at - stopAt), e.signal ?? String(e.code), e.killedByProbe ? "yes" : "no", e.lastLines.join(" / "), e.stderr]) },
  ];
  await saveResult({
    name: "chaos-apiserver-outage",
    title: `Kubernetes API server outage of ${String(minutes)} min`,
    command: `npm run bench:chaos:apiserver -- ${String(minutes)}`,
    figures, tables,
    notes: [
      `The kube-apiserver is killed (etcd keeps running) with ${String(DBS.length)} ManagedDatabases and a NodeBalancer Ready, and started again after ${String(minutes)} min on the same port and data; then a new ManagedDatabase is created and another's allowList changed.`,
      `The operator runs with leader election ${leaderElect ? "on (as deployed)" : "off"}, restarted on exit like the kubelet restarts a container (10 s back-off doubling to 5 min, same pod name).`,
    ],
  });
  if (bothMillis > TARGET_MS || exitsDuring !== byDesign) exitCode = 1;
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  exitCode = 1;
} finally {
  sup.stop();
  await cp.startApiServer().catch(() => undefined);
  await bench.stop();
}
process.exit(exitCode);
