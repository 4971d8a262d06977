// Chaos benchmark, leader failover: two `linode-operator run` replicas with leader election on
// (as deployed), each with its own Linode token so that the emulator's mutation log says which
// one acted. Per trial, a fresh leader and a fresh standby, then one of:
//   kill   SIGKILL of the leader; a ManagedDatabase created right after must get its cloud
//          create from the other replica: seconds from the kill to that first Linode write
//          (target ≤ 20 s: the 15 s lease must expire first);
//   term   SIGTERM of the leader (it releases the lease): the same, target ≤ 5 s;
//   stall  the leader's API server connection hangs (a stalling proxy: no error, no close)
//          while drift made directly in the emulator keeps both wanting to write: the
//          stalled leader must stop writing to Linode before the other starts (target: no
//          overlap in time between their mutations, never two actors).
// Prints each trial, then p50 and max per kind.
//   node test/bench/chaos-failover.ts [trials=5] [seed=1]
// The seed orders the kinds within each round and places each fault a random 0..2 s (one
// lease renew period) after the standby is up, so faults land at every phase of the renewals.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Random } from "../../src/emulator/random.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { startStallingProxy, type StallingProxy } from "../harness/stalling-proxy.ts";
import { startBench } from "./bench-setup.ts";
import { isReady, listAll, quantile, say, secs, sleep } from "./common.ts";
import { figureOf } from "./report/figure.ts";
import { saveResult, type Figure, type Table } from "./report/result.ts";

const trials = Number(process.argv[2] ?? 5);
const seed = Number(process.argv[3] ?? 1);
if (!Number.isInteger(trials) || trials < 1 || !Number.isInteger(seed)) throw new Error("usage: node test/bench/chaos-failover.ts [trials=5] [seed=1]");
type Kind = "kill" | "term" | "stall";
const KINDS: Kind[] = ["kill", "term", "stall"];
const TARGET_MS: Record<Kind, number> = { kill: 20_000, term: 5_000, stall: Number.POSITIVE_INFINITY };
const NS = "bench";
const LEASE = "linode-operator";
const BASE_DBS = ["fo-d0", "fo-d1", "fo-d2", "fo-d3"];
const started = Date.now();
const random = new Random(seed);

// Every replica ever started gets its own token, told apart in the mutation log by its first 4 characters.
const prefixOf = (i: number): string => `r${String(i).padStart(3, "0")}`;
const replicaTokens = Array.from({ length: trials * KINDS.length * 2 + 4 }, (_, i) => `${prefixOf(i + 1)}-token`);
const bench = await startBench({ provisionSeconds: 0.5, tokens: ["bench-token", "drift-token", ...replicaTokens] });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "chaos-failover" });

interface Replica { name: string; prefix: string; proc: OperatorProcess }
let seq = 0;
const live: Replica[] = [];

function startReplica(kubeconfig: string): Replica {
  seq++;
  const prefix = prefixOf(seq);
  if (seq > replicaTokens.length) throw new Error("out of replica tokens");
  const name = `replica-${prefix}`;
  const proc = bench.spawnOperator(["--poll-ready-seconds", "1", "--poll-pending-seconds", "0.5", "--cluster-id", "chaos-failover"], {
    KUBECONFIG: kubeconfig, LINODE_TOKEN: `${prefix}-token`, LEADER_ELECT: "true", POD_NAMESPACE: NS, POD_NAME: name, WATCH_NAMESPACES: NS,
  });
  const r = { name, prefix, proc };
  live.push(r);
  void proc.exited.then(() => { live.splice(live.indexOf(r), 1); });
  return r;
}

const holder = async (): Promise<string | undefined> => {
  try {
    return (await kube.getLease({ namespace: NS, name: LEASE })).spec?.holderIdentity ?? undefined;
  } catch {
    return undefined;
  }
};
const writesOf = (r: Replica): { receivedAt: number; answeredAt: number; route: string }[] =>
  emulator.mutations().filter((m) => m.token === `${r.prefix}…`);
/** Both caches synced and workers started: the leader acts from here on. */
const acting = (r: Replica): Promise<unknown> =>
  waitFor(`${r.name} acting`, () => (r.proc.logs.filter((l) => l.msg === "cache synced; starting workers").length >= 3 ? true : undefined), 30_000, 50);

async function stopAll(): Promise<void> {
  for (const r of [...live]) {
    r.proc.child.kill("SIGTERM");
    await r.proc.exited;
  }
}

/** A leader (through `kubeconfig`) acting, and a standby up and watching the lease. */
async function pair(kubeconfig: string): Promise<{ leader: Replica; standby: Replica }> {
  await stopAll();
  const leader = startReplica(kubeconfig);
  await waitFor(`${leader.name} leads`, async () => ((await holder()) === leader.name ? true : undefined), 30_000, 100);
  await acting(leader);
  const standby = startReplica(cp.adminKubeconfig);
  await standby.proc.waitForLog((l) => l.msg === "operator started");
  // At least one renewal seen by the standby, then the seeded phase.
  await sleep(2_500 + Math.floor(random.next() * 2_000));
  return { leader, standby };
}

interface Trial {
  kind: Kind;
  n: number;
  /** Fault to the other replica holding the lease. */
  leaseMillis: number;
  /** Fault to the other replica's first Linode write. */
  actMillis: number;
  firstRoute: string;
  /** First write of the new leader minus the last answer to the old one (negative: they overlapped). */
  gapMillis: number;
  oldExit: string;
  /** stall: when the stalled leader stopped leading, by its log. */
  lostMillis?: number;
  writes: string;
}

async function trial(kind: Kind, n: number): Promise<Trial> {
  let proxy: StallingProxy | undefined;
  let kubeconfig = cp.adminKubeconfig;
  if (kind === "stall") {
    proxy = await startStallingProxy({ target: cp.server, ca: await readFile(cp.caFile, "utf8"), cert: await readFile(join(cp.dir, "apiserver.crt"), "utf8"), key: await readFile(join(cp.dir, "apiserver.key"), "utf8") });
    kubeconfig = join(cp.dir, `via-proxy-${String(n)}.kubeconfig`);
    const apiPort = new URL(cp.server).port;
    await writeFile(kubeconfig, (await readFile(cp.adminKubeconfig, "utf8")).replaceAll(`127.0.0.1:${apiPort}`, `127.0.0.1:${String(proxy.port)}`), { mode: 0o600 });
  }
  const { leader, standby } = await pair(kubeconfig);
  let drifting = false;
  let drift: Promise<void> = Promise.resolve();
  const linode = new LinodeClient({ token: "drift-token", baseUrl: emulator.url, rateLimit: false, retry: { maxAttempts: 1 } });
  try {
    let faultAt: number;
    if (kind === "stall") {
      // Drift made in the cloud, round robin over the base databases: whoever leads puts the labels back.
      const ids = (await listAll(kube, mdbType, NS)).filter((o) => BASE_DBS.includes(o.metadata.name)).map((o) => Number(o.status?.id));
      drifting = true;
      let k = 0;
      drift = (async () => {
        while (drifting) {
          k++;
          await linode.databases.mysql.update(ids[k % ids.length] ?? 0, { label: `drift-${String(n)}-${String(k)}` }).catch(() => undefined);
          await sleep(150);
        }
      })();
      await waitFor(`${leader.name} correcting drift`, () => (writesOf(leader).length >= 3 ? true : undefined), 30_000, 50);
      faultAt = Date.now();
      proxy?.stall();
    } else {
      faultAt = Date.now();
      leader.proc.child.kill(kind === "kill" ? "SIGKILL" : "SIGTERM");
      await leader.proc.exited;
      await kube.createCustom(mdbType, NS, {
        apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `new-${kind}-${String(n)}` },
        spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" },
      });
    }
    const leaseAt = await waitFor("the other replica leads", async () => ((await holder()) === standby.name ? Date.now() : undefined), 60_000, 50);
    const firstWrite = await waitFor("the other replica's first Linode write", () => {
      const w = writesOf(standby);
      return kind === "stall" ? (w.length >= 3 ? w[0] : undefined) : w[0];
    }, 60_000, 50);
    drifting = false;
    await drift;
    const exit = await Promise.race([leader.proc.exited.then((c) => String(c)), sleep(5_000).then(() => "still running")]);
    if (exit === "still running") leader.proc.child.kill("SIGKILL");
    const old = writesOf(leader);
    const lastOld = Math.max(...old.map((m) => m.answeredAt));
    const lost = leader.proc.logs.find((l) => typeof l.msg === "string" && l.msg.startsWith("lost the leader lease"));
    const lostAt = lost !== undefined ? Date.parse(String(lost.time)) : Number.NaN;
    return {
      kind, n,
      leaseMillis: leaseAt - faultAt,
      actMillis: firstWrite.receivedAt - faultAt,
      firstRoute: firstWrite.route,
      gapMillis: old.length === 0 ? Number.POSITIVE_INFINITY : firstWrite.receivedAt - lastOld,
      oldExit: kind === "kill" ? "SIGKILL" : exit,
      ...(kind === "stall" ? { lostMillis: lostAt - faultAt } : {}),
      writes: `${String(old.length)} + ${String(writesOf(standby).length)}`,
    };
  } finally {
    drifting = false;
    await drift;
    await linode.close();
    await proxy?.close();
  }
}

let exitCode = 0;
try {
  // The base databases, made by a first leader.
  const first = startReplica(cp.adminKubeconfig);
  for (const name of BASE_DBS) {
    await kube.createCustom(mdbType, NS, {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", label: name },
    });
  }
  await waitFor("base databases Ready", async () => ((await listAll(kube, mdbType, NS)).filter(isReady).length === BASE_DBS.length ? true : undefined), 60_000, 200);
  say(`${String(BASE_DBS.length)} ManagedDatabases Ready under ${first.name}; ${String(trials)} trials of ${KINDS.join(", ")}, seed ${String(seed)}`);

  const results: Trial[] = [];
  for (let n = 1; n <= trials; n++) {
    const order = [...KINDS];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random.next() * (i + 1));
      [order[i], order[j]] = [order[j] as Kind, order[i] as Kind];
    }
    for (const kind of order) {
      const t = await trial(kind, n);
      results.push(t);
      const gap = Number.isFinite(t.gapMillis) ? `${String(secs(t.gapMillis))} s` : "no writes by the old leader";
      say(`trial ${String(n)} ${kind.padEnd(5)}: lease taken ${String(secs(t.leaseMillis))} s, first Linode write by the other replica ${String(secs(t.actMillis))} s after the fault (${t.firstRoute}); `
        + `gap after the old leader's last write ${gap}${t.lostMillis !== undefined ? `; stalled leader stopped leading after ${String(secs(t.lostMillis))} s` : ""}; old leader exit ${t.oldExit}; writes old + new ${t.writes}`);
    }
  }
  await stopAll();

  // Never two cloud objects for one resource.
  const mdbs = await listAll(kube, mdbType, NS);
  const dbs = emulator.dump().databases;
  const duplicates = dbs.length - mdbs.length;

  const summary = KINDS.map((kind) => {
    const ts = results.filter((t) => t.kind === kind);
    const act = ts.map((t) => t.actMillis);
    const lease = ts.map((t) => t.leaseMillis);
    const overlaps = ts.filter((t) => t.gapMillis <= 0).length;
    return { kind, act, lease, overlaps, p50: quantile(act, 0.5), max: Math.max(...act), leaseP50: quantile(lease, 0.5), leaseMax: Math.max(...lease), minGap: Math.min(...ts.map((t) => t.gapMillis)) };
  });
  say("");
  for (const s of summary) {
    say(`${s.kind.padEnd(5)}: first write by the other replica p50 ${String(secs(s.p50))} s, max ${String(secs(s.max))} s${Number.isFinite(TARGET_MS[s.kind]) ? ` (target ≤ ${String(TARGET_MS[s.kind] / 1000)} s)` : ""}; lease taken p50 ${String(secs(s.leaseP50))} s, max ${String(secs(s.leaseMax))} s; `
      + `overlapping writes in ${String(s.overlaps)}/${String(s.act.length)} trials (smallest gap ${Number.isFinite(s.minGap) ? `${String(secs(s.minGap))} s` : "-"})`);
  }
  say(`${String(mdbs.length)} ManagedDatabases, ${String(dbs.length)} cloud databases: ${String(duplicates)} duplicates`);
  say(`benchmark took ${String(secs(Date.now() - started))} s`);

  // A fault with no trial has no time to the other's first act (not another fault's, not 0).
  const acts = (label: string, k: Kind, target?: string): Figure => {
    const s = summary.find((x) => x.kind === k && x.act.length > 0);
    return figureOf(label, s === undefined ? undefined : `${String(secs(s.p50))} / ${String(secs(s.max))}`, "s", target, target === undefined ? undefined : s !== undefined && s.max <= TARGET_MS[k]);
  };
  const overlaps = summary.reduce((a, s) => a + s.overlaps, 0);
  const figures: Figure[] = [
    acts("SIGKILL of the leader → the other acts (p50 / max)", "kill", "≤ 20 s"),
    acts("SIGTERM of the leader → the other acts (p50 / max)", "term", "≤ 5 s"),
    acts("stalled leader → the other acts (p50 / max)", "stall"),
    { label: "trials with two actors (overlapping Linode writes)", value: overlaps, target: "0", met: overlaps === 0 },
    { label: "duplicate cloud databases", value: duplicates, target: "0", met: duplicates === 0 },
  ];
  const tables: Table[] = [{
    title: "Trials",
    columns: ["trial", "fault", "lease taken (s)", "first write by the other (s)", "its route", "gap after the old leader's last write (s)", "stalled leader stopped (s)", "old leader exit", "writes old + new"],
    rows: results.map((t) => [t.n, t.kind, secs(t.leaseMillis), secs(t.actMillis), t.firstRoute, Number.isFinite(t.gapMillis) ? secs(t.gapMillis) : "-", t.lostMillis !== undefined ? secs(t.lostMillis) : "-", t.oldExit, t.writes]),
  }];
  await saveResult({
    name: "chaos-failover",
    title: `Leader failover: ${String(trials)} trials each of SIGKILL, SIGTERM and a stalled API server connection`,
    command: `npm run bench:chaos:failover -- ${String(trials)} ${String(seed)}`,
    figures, tables,
    notes: [
      "Two replicas with leader election (15 s lease, 10 s renew deadline, 2 s retry), each with its own Linode token; the emulator's mutation log (receive and answer times per request, token) tells who wrote when.",
      "kill/term: a ManagedDatabase created right after the old leader is gone; \"acts\" is the other replica's first Linode write (its cloud create). stall: the leader reaches the API server through a proxy that stops answering while keeping connections open; drift made in the emulator every 150 ms keeps both wanting to write; \"gap\" is the new leader's first write minus the last answer to the old one (negative = two actors).",
      `Seed ${String(seed)}: the order of the kinds in each round and when (0..2 s) after the standby is up the fault lands.`,
    ],
  });
  if (overlaps > 0 || duplicates !== 0) exitCode = 1;
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  exitCode = 1;
} finally {
  await bench.stop();
}
process.exit(exitCode);
