// Chaos with shards (issue 46): R `linode-operator run` replicas with --shards share the
// objects of K namespaces; in each round every namespace gets the same operations (a database
// created, updated and deleted, a snapshot taken and one deleted, and the at-most-once actions
// restore, credentials reset and patch),
// and the membership changes in the middle of their steps:
//   death   a replica SIGKILLed (the one owning the most namespaces) and its replacement
//           started, as a Deployment would: its objects move once its Lease expires;
//   join    a replica added: what hashes to it is drained from its owner first;
//   leave   a replica SIGTERMed: it hands over once its passes have ended;
//   rolling every replica replaced in turn (a new one started, then the old one SIGTERMed);
//   forged  a replica added, and as soon as it runs the tenants of the namespaces that move to
//           it write its name into their objects' shard label themselves (drain label removed),
//           before their old shard has let go: a tenant's label is not the sharder's handover,
//           and the new shard may act while the old one's pass is in flight. What must hold is
//           what the API server's resourceVersion fences: no at-most-once action twice, no
//           duplicate, no false record. Two writers on those tenants' own databases are counted
//           apart (expected, not a target); anywhere else they are a violation. After the
//           round, the oldest replica is SIGTERMed, so the replicas at rest stay R.
// Each trial's trigger is placed a seeded fraction of its operation's fault-free step time T
// before the change; in a seeded third of the rounds the emulator holds every mutating request
// 1.5 s, so the change lands between requests and their answers. Then everything must converge
// (within 90 s, after the documented create grace where it applies) with no restore or patch
// performed twice, no false record, no duplicate, no orphan, no stuck finalizer, nothing for a
// human, and no two writers: the replicas share one token, as the chart's do, and each names
// itself in its User-Agent, so the emulator's log says which replica sent each write; two
// replicas' writes to one database in flight at once are counted.
//   node test/bench/chaos-shards.ts [rounds=15] [namespaces=8] [replicas=2] [seed=1]
import { KubeClient } from "../../src/kube/client.ts";
import { isNotFound } from "../../src/kube/errors.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { Random } from "../../src/emulator/random.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { DRAIN_LABEL, SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { databaseSnapshotType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType } from "../../src/resources/managed-database/index.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import { startBench } from "./bench-setup.ts";
import { ActionLedger, createMdb, createSnap, killPhases, titles, trigger, type OpName, type Trial } from "./chaos/operations.ts";
import { invariants, outcomeTable, summarize, textTable, type Violation } from "./chaos/report.ts";
import { faultMidStep, lookUntil, lateViolations, roundViolations, setDeadline, settleTrials, trialName } from "./chaos/rounds.ts";
import { CLUSTER_ID, look, namespaceOf, settled, statusId, tenantNamespace, type World } from "./chaos/world.ts";
import { kubectl, say, sleep } from "./common.ts";
import { resultCollector, saveResult } from "./report/result.ts";
import { TWO_WRITERS_MEANING, twoWriterPairs } from "./two-writers.ts";

const [ROUNDS, K, R, SEED] = [15, 8, 2, 1].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number, number];
if (![ROUNDS, K, R, SEED].every((n) => Number.isInteger(n) && n > 0)) throw new Error("usage: node test/bench/chaos-shards.ts [rounds=15] [namespaces=8] [replicas=2] [seed=1]");
const EVENTS = ["death", "join", "leave", "rolling", "forged"] as const;
type Event = (typeof EVENTS)[number];
const OPS: readonly OpName[] = ["create-mdb", "update-mdb", "delete-mdb", "snapshot", "delete-snapshot", "restore", "reset-credentials", "patch"];
const HELD_SHARE = 1 / 3;
const TIMEOUT_MS = 90_000;
const LEASE_NS = "bench";
const { figures, tables, notes, figure } = resultCollector(say);
const started = Date.now();

const bench = await startBench({ provisionSeconds: 0.5, rateLimits: false });
const { cp, emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "chaos-shards" });
const tenants = Array.from({ length: K }, (_, i) => i);
const nsName = tenantNamespace;

interface Replica { name: string; proc: OperatorProcess }
let seq = 0;
const live: Replica[] = [];
/** Every replica started, exited ones too: a violation's object is looked up in their logs. */
const everyReplica: Replica[] = [];
const expectedExits = new Set<string>();
const unexpected: string[] = [];
async function startReplica(): Promise<Replica> {
  seq++;
  const r: Replica = { name: `replica-${String(seq)}`, proc: bench.spawnOperator(["--poll-pending-seconds", "0.5", "--poll-ready-seconds", "5", "--cluster-id", CLUSTER_ID], {
    LEADER_ELECT: "true", SHARDS: "true", POD_NAMESPACE: LEASE_NS, POD_NAME: `replica-${String(seq)}`,
  }) };
  live.push(r);
  everyReplica.push(r);
  void r.proc.exited.then((code) => {
    live.splice(live.indexOf(r), 1);
    if (!expectedExits.has(r.name)) unexpected.push(`${r.name} exited unexpectedly (code ${String(code)})`);
  });
  await r.proc.waitForLog((l) => l.msg === "operator started", 120_000);
  return r;
}
async function stopReplica(r: Replica, signal: "SIGKILL" | "SIGTERM"): Promise<void> {
  expectedExits.add(r.name);
  r.proc.child.kill(signal);
  await r.proc.exited;
}
const ring = (): HashRing => new HashRing(live.map((r) => r.name));

/** Every object on the shard the live replicas' ring gives its namespace, none draining. */
const onLiveRing = (w: World): boolean => {
  const now = ring();
  return [...w.mdbs.values(), ...w.snaps.values()].every((o: ManagedObject) =>
    o.metadata.labels?.[SHARD_LABEL] === now.owner(o.metadata.namespace ?? "") && o.metadata.labels?.[DRAIN_LABEL] === undefined);
};
const until = (what: string, done: (w: World) => boolean, timeoutMs?: number): Promise<World> => lookUntil(kube, emulator, what, done, timeoutMs);

/**
 * A tenant's own edit: every ManagedDatabase and DatabaseSnapshot in `namespaces` labelled to
 * `shard`, its drain label removed (a merge patch with no precondition, as `kubectl label
 * --overwrite` writes it). Answers how many it relabelled.
 */
async function forgeShardLabels(namespaces: ReadonlySet<string>, shard: string): Promise<number> {
  let n = 0;
  await Promise.all([managedDatabaseType, databaseSnapshotType].flatMap((t) => [...namespaces].map(async (namespace) => {
    const page = await kube.list<ManagedObject>(t, { namespace });
    await Promise.all(page.items.map(async (o) => {
      try {
        await kube.mergePatchCustom(t, { namespace, name: o.metadata.name }, { metadata: { labels: { [SHARD_LABEL]: shard, [DRAIN_LABEL]: null } } });
        n++;
      } catch (err) {
        // Deleted meanwhile: nothing to forge. Anything else is the bench's failure, not a smaller count.
        if (!isNotFound(err)) throw err;
      }
    }));
  })));
  return n;
}

/**
 * The membership change; returns the namespaces whose owner died with it (their steps were cut
 * off) and those whose tenants forged their shard labels.
 */
async function change(event: Event): Promise<{ killed: Set<string>; forged: Set<string>; forgedObjects: number; detail: string }> {
  const before = ring();
  switch (event) {
    case "death": {
      const owned = (r: Replica): number => tenants.filter((i) => before.owner(nsName(i)) === r.name).length;
      const victim = [...live].sort((a, b) => owned(b) - owned(a))[0];
      if (victim === undefined) throw new Error("no replica");
      await stopReplica(victim, "SIGKILL");
      const replacement = await startReplica();
      return { killed: new Set(tenants.map(nsName).filter((ns) => before.owner(ns) === victim.name)), forged: new Set(), forgedObjects: 0, detail: `${victim.name} (${String(owned(victim))} namespaces) SIGKILLed, ${replacement.name} started` };
    }
    case "join": return { killed: new Set(), forged: new Set(), forgedObjects: 0, detail: `${(await startReplica()).name} joined` };
    case "forged": {
      const joined = await startReplica();
      const after = ring();
      const moving = new Set(tenants.map(nsName).filter((ns) => after.owner(ns) === joined.name));
      const n = await forgeShardLabels(moving, joined.name);
      return { killed: new Set(), forged: moving, forgedObjects: n, detail: `${joined.name} joined; the tenants of its ${String(moving.size)} namespaces labelled their ${String(n)} objects to it themselves` };
    }
    case "leave": {
      const leaving = live[0];
      if (leaving === undefined) throw new Error("no replica");
      await stopReplica(leaving, "SIGTERM");
      return { killed: new Set(), forged: new Set(), forgedObjects: 0, detail: `${leaving.name} SIGTERMed` };
    }
    case "rolling": {
      const old = [...live];
      for (const r of old) { await startReplica(); await stopReplica(r, "SIGTERM"); }
      return { killed: new Set(), forged: new Set(), forgedObjects: 0, detail: `${old.map((r) => r.name).join(", ")} replaced one by one` };
    }
  }
}

let exitCode = 0;
try {
  for (const i of tenants) await kubectl(cp, ["create", "namespace", nsName(i)]);
  for (let i = 0; i < R; i++) await startReplica();
  const slot = (i: number, what: string): string => `t${String(i)}-${what}`;
  const per = (what: string): string[] => tenants.map((i) => slot(i, what));
  const pools = { updDb: per("upd-db"), snapDb: per("snap-db"), restoreDb: per("rst-db"), restoreSnap: per("rst-snap"), resetDb: per("reset-db"), patchDb: per("patch-db") };
  /** What the next round deletes: what the round before created. */
  let toDelete = { mdb: per("cdb-init"), snap: per("snap-init") };
  const poolDbs = [...pools.updDb, ...pools.snapDb, ...pools.restoreDb, ...pools.resetDb, ...pools.patchDb];
  const names = { mdb: new Set([...poolDbs, ...toDelete.mdb]), nb: new Set<string>(), snap: new Set([...pools.restoreSnap, ...toDelete.snap]) };
  const t0 = Date.now();
  await Promise.all([...names.mdb].map((n) => createMdb(kube, n)));
  await until("the pools Ready and on their shards", (w) => [...names.mdb].every((n) => settled(w.mdbs.get(n))) && onLiveRing(w));
  await Promise.all(pools.restoreSnap.map((n, i) => createSnap(kube, n, pools.restoreDb[i] ?? "")));
  await Promise.all(toDelete.snap.map((n, i) => createSnap(kube, n, pools.snapDb[i] ?? "")));
  await until("the snapshots Available", (w) => [...names.snap].every((n) => w.snaps.get(n)?.status?.phase === "Available"));
  say(`seed ${String(SEED)}: ${String(names.mdb.size)} ManagedDatabases and ${String(names.snap.size)} DatabaseSnapshots over ${String(K)} namespaces on ${String(R)} replicas ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const ledger = new ActionLedger();
  const rng = new Random(SEED);
  const trials: Trial[] = [];
  const violations: Violation[] = [];
  const heldRounds = new Set<number>();
  const reported = new Set<string>();
  const twoWriterEvents: string[] = [];
  /** Two writers on a database whose tenant forged its objects' shard labels: counted apart. */
  const forgedTwoWriters: string[] = [];
  let forgedObjects = 0;
  const byEvent = new Map<Event, { rounds: number; trials: Trial[]; moved: Trial[]; violations: number; twoWriters: number; forgedTwoWriters: number }>(EVENTS.map((e) => [e, { rounds: 0, trials: [], moved: [], violations: 0, twoWriters: 0, forgedTwoWriters: 0 }]));
  let seqNo = 0;
  const plan = (round: number, tag: string, w: World, fraction: () => number, stepMs: (op: OpName) => number): Trial[] => {
    seqNo += 1;
    const created = { mdb: per(`cdb-${tag}`), snap: per(`snap-${tag}`) };
    const out: Trial[] = [];
    for (const i of tenants) {
      for (const op of OPS) {
        const f = fraction();
        const base = { op, round, slot: i, fraction: f, delayMs: Math.round(f * stepMs(op)), triggerAt: 0, sent: 0, accepted: 0 };
        const at = (list: string[]): string => list[i] ?? "";
        const onDb = (db: string): Trial => ({ ...base, name: db, db, dbId: statusId(w.mdbs.get(db)) ?? -1, token: `${tag}-${String(i)}` });
        switch (op) {
          case "create-mdb": out.push({ ...base, name: at(created.mdb) }); break;
          case "update-mdb": out.push({ ...base, name: at(pools.updDb), allowList: [`198.51.100.${String((seqNo % 250) + 1)}`, "203.0.113.0/24"] }); break;
          case "delete-mdb": out.push({ ...base, name: at(toDelete.mdb) }); break;
          case "delete-snapshot": out.push({ ...base, name: at(toDelete.snap) }); break;
          case "snapshot": out.push({ ...base, name: at(created.snap), db: at(pools.snapDb), dbId: statusId(w.mdbs.get(at(pools.snapDb))) ?? -1 }); break;
          case "restore": out.push({ ...onDb(at(pools.restoreDb)), snapshot: at(pools.restoreSnap) }); break;
          case "reset-credentials": out.push(onDb(at(pools.resetDb))); break;
          case "patch": out.push(onDb(at(pools.patchDb))); break;
          default: throw new Error(`not an operation of this bench: ${op}`);
        }
      }
    }
    for (const n of created.mdb) names.mdb.add(n);
    for (const n of created.snap) names.snap.add(n);
    toDelete = created;
    for (const t of out) ledger.track(t);
    return out;
  };
  const record = (v: Violation): void => {
    violations.push(v);
    say(`  VIOLATION ${v.invariant}: ${v.op !== undefined ? titles[v.op] : "(no trial)"}, round ${String(v.round)}, ${v.trial}: ${v.detail}`);
    // What each replica logged about the object: enough to tell what happened without a rerun.
    const object = /\((t\d+-[a-z0-9-]+)/.exec(v.trial)?.[1];
    if (object === undefined) return;
    const lines = everyReplica.flatMap((r) => r.proc.logs.filter((l) => JSON.stringify(l).includes(`"${object}"`)).map((l) => ({ r: r.name, l })))
      .sort((a, b) => Date.parse(String(a.l.time)) - Date.parse(String(b.l.time)));
    for (const { r, l } of lines.slice(-40)) say(`    ${r}: ${JSON.stringify(l)}`);
  };

  // Calibration: each operation's step time T with the replicas steady (all triggered at once).
  const calibration = plan(-1, "c0", await look(kube, emulator), () => 0, () => 0);
  await Promise.all(calibration.map(async (t) => { t.triggerAt = Date.now(); t.deadline = t.triggerAt + 60_000; await trigger(kube, t); }));
  await settleTrials(kube, emulator, ledger, calibration, (t) => t.triggerAt);
  const bad = calibration.find((t) => t.outcome !== "converged");
  if (bad !== undefined) throw new Error(`calibration: ${bad.op} ${bad.name} did not converge with the replicas steady: ${bad.detail ?? ""}`);
  const stepMs = Object.fromEntries(OPS.map((op) => [op, Math.max(200, ...calibration.filter((t) => t.op === op).map((t) => t.settledAfterMs ?? 0))])) as Record<OpName, number>;
  say(`step time T with the replicas steady (max over ${String(K)} namespaces): ${OPS.map((op) => `${op} ${String(stepMs[op])} ms`).join(", ")}`);
  await until("the shards settled", onLiveRing);

  for (let r = 0; r < ROUNDS; r++) {
    const roundStart = Date.now();
    const event = EVENTS[r % EVENTS.length] ?? "death";
    const held = rng.next() < HELD_SHARE;
    if (held) heldRounds.add(r);
    const ownersBefore = ring();
    const beforeRound = await look(kube, emulator);
    const round = plan(r, `r${String(r)}`, beforeRound, () => rng.next(), (op) => stepMs[op]);
    const { outcome: { killed, forged, forgedObjects: relabelled, detail }, atFault, horizon } = await faultMidStep(kube, emulator, ledger, round, held, () => change(event));
    const changedAtEnd = Date.now();
    for (const t of round) {
      // Only a process that died cannot have seen its request's answer, nor announced a create it never sent; a drained or SIGTERMed one finishes its pass.
      const died = killed.has(namespaceOf(t.name));
      t.intentAtKill &&= died;
      if (died) setDeadline(t, atFault, changedAtEnd, TIMEOUT_MS);
      else t.deadline = changedAtEnd + TIMEOUT_MS;
    }
    const w = await settleTrials(kube, emulator, ledger, round, () => changedAtEnd);
    await until("the shards settled", onLiveRing, TIMEOUT_MS);
    const before = violations.length;
    for (const v of roundViolations(r, round, w, names, ledger, reported)) record(v);
    // The databases of the namespaces whose tenants forged their labels, as they were before the round and after it.
    const forgedDbs = new Set([...beforeRound.mdbs.values(), ...w.mdbs.values()].filter((o) => forged.has(o.metadata.namespace ?? "")).map((o) => statusId(o)));
    const pairs = twoWriterPairs(emulator.mutations(), roundStart);
    const writers = pairs.filter((p) => !forgedDbs.has(p.db)).map((p) => p.said);
    const onForged = pairs.filter((p) => forgedDbs.has(p.db)).map((p) => p.said);
    for (const x of writers) say(`  TWO WRITERS round ${String(r)}: ${x}`);
    for (const x of onForged) say(`  two writers on a database whose tenant forged its shard label, round ${String(r)}: ${x}`);
    twoWriterEvents.push(...writers);
    forgedTwoWriters.push(...onForged);
    forgedObjects += relabelled;
    const after = ring();
    const moved = round.filter((t) => ownersBefore.owner(namespaceOf(t.name)) !== after.owner(namespaceOf(t.name)));
    const tally = byEvent.get(event);
    if (tally !== undefined) {
      tally.rounds += 1;
      tally.trials.push(...round);
      tally.moved.push(...moved);
      tally.violations += violations.length - before;
      tally.twoWriters += writers.length;
      tally.forgedTwoWriters += onForged.length;
    }
    trials.push(...round);
    const count = (o: string): number => round.filter((t) => t.outcome === o).length;
    say(`round ${String(r + 1)}/${String(ROUNDS)} ${event}${held ? " (held)" : ""}: ${detail}, ${String(horizon)} ms after the first trigger; ${String(moved.length)}/${String(round.length)} trials on a namespace that changed shard; ${String(count("converged"))} converged, ${String(count("reported unknown"))} reported unknown, ${String(violations.length - before)} violations, ${String(writers.length)} two-writer; round ${((Date.now() - roundStart) / 1000).toFixed(1)} s`);
    if (process.env.CHAOS_VERBOSE === "1") for (const t of round) say(`    ${trialName(t)} → ${t.outcome ?? "?"}: ${t.detail ?? ""}`);
    if (event === "forged" && live.length > R) {
      // Back to R replicas at rest, once nothing is in flight: the oldest hands over and leaves.
      const oldest = live[0];
      if (oldest !== undefined) await stopReplica(oldest, "SIGTERM");
      await until("the shards settled", onLiveRing, TIMEOUT_MS);
    }
  }

  await sleep(3_000);
  ledger.scan(emulator.mutations());
  for (const v of lateViolations(trials, violations, ledger, ROUNDS - 1)) record(v);
  for (const u of unexpected) say(`  !! ${u}`);

  const total = (i: (typeof invariants)[number]): number => violations.filter((v) => v.invariant === i).length;
  const moved = [...byEvent.values()].reduce((n, e) => n + e.moved.length, 0);
  figure(`rounds (${EVENTS.join(" / ")})`, EVENTS.map((e) => byEvent.get(e)?.rounds ?? 0).join(" / "));
  figure("trials", trials.length);
  figure("trials whose namespace changed shard mid-step", moved, undefined, "> 0", moved > 0);
  for (const i of invariants) figure(i, total(i), undefined, "0", total(i) === 0);
  figure(`two-writer events (${TWO_WRITERS_MEANING}), but for the databases whose tenants forged their shard labels`, twoWriterEvents.length, undefined, "0", twoWriterEvents.length === 0);
  const forgedRounds = byEvent.get("forged")?.rounds ?? 0;
  figure("objects whose tenants labelled them to the joining shard themselves, before their old shard let go", forgedObjects, undefined, forgedRounds > 0 ? "> 0" : undefined, forgedRounds > 0 ? forgedObjects > 0 : undefined);
  figure("two-writer events on those tenants' own databases (what a forged label can do: the resourceVersion fences the rest)", forgedTwoWriters.length);
  // The two-writer check can only fail if the log tells the replicas apart (each names itself in its User-Agent).
  const writers = new Set(emulator.mutations().map((m) => m.userAgent)).size;
  figure("replicas told apart in the emulator's log (distinct User-Agents among the writes)", writers, undefined, "≥ 2", writers >= 2);
  figure("replicas that exited unbidden", unexpected.length, undefined, "0", unexpected.length === 0);
  figure("reported unknown (RequestOutcomeUnknown, the documented outcome of a step whose process died)", trials.filter((t) => t.outcome === "reported unknown").length);
  figure("elapsed", Math.round((Date.now() - started) / 6_000) / 10, "min");
  tables.push({
    title: "By membership change",
    columns: ["change", "rounds", "trials", "on a namespace that changed shard", "converged", "reported unknown", "violations", "two-writer events", "two-writer events on forged databases"],
    rows: EVENTS.map((e) => {
      const x = byEvent.get(e) ?? { rounds: 0, trials: [], moved: [], violations: 0, twoWriters: 0, forgedTwoWriters: 0 };
      return [e, x.rounds, x.trials.length, x.moved.length, x.trials.filter((t) => t.outcome === "converged").length, x.trials.filter((t) => t.outcome === "reported unknown").length, x.violations, x.twoWriters, x.forgedTwoWriters];
    }),
  });
  tables.push({
    title: "Where the moved objects' steps were when the membership changed",
    columns: ["change", ...killPhases.map((p) => `${p} (trials)`)],
    rows: EVENTS.map((e) => [e, ...killPhases.map((p) => (byEvent.get(e)?.moved ?? []).filter((t) => t.atKill === p).length)]),
  });
  const ends = outcomeTable(summarize(trials, violations, stepMs, heldRounds, OPS));
  tables.push({ title: "Outcomes and invariant violations per operation (targets: 0)", ...ends });
  say("");
  say(textTable(ends.columns, ends.rows));
  notes.push(
    `Seed ${String(SEED)}; ${String(K)} namespaces, ${String(R)} replicas at rest (--shards, leader election, the chart's Lease timings), sharing one token, each named in its User-Agent; emulator provisioning 0.5 s, no rate limit; operator --poll-pending-seconds 0.5 --poll-ready-seconds 5.`,
    "Rounds cycle death (the replica owning the most namespaces SIGKILLed, a replacement started), join (a replica added), leave (one SIGTERMed), rolling (each replica replaced: a new one started, then the old one SIGTERMed) and forged (a replica added, and the tenants of the namespaces that move to it label their objects to it themselves before their old shard lets go; after the round the oldest replica is SIGTERMed); each round's triggers are placed a seeded fraction of their operation's step time before the change, and in a third of the rounds (seeded) every mutating request is held 1.5 s.",
    "A forged shard label is a tenant's own edit of their own objects: the new shard may act while the old one's pass is in flight, so two writers on those databases are counted apart, without a target; what must still hold there is what the API server's resourceVersion fences (each at-most-once action's intent, each create's pending record): no action twice, no duplicate, no orphan.",
    "A false record is checked only where the owner died (a SIGTERMed or drained replica finishes its passes and may record what it saw); repeated actions come from the emulator's log of accepted restore and patch requests; two writers from its log of which replica (its User-Agent) sent each write.",
  );
  if (violations.length > 0 || twoWriterEvents.length > 0 || unexpected.length > 0 || writers < 2) {
    exitCode = 1;
    say(`FAILED: seed ${String(SEED)}`);
  }
  await saveResult({
    name: "chaos-shards",
    title: "Shards joining, dying, leaving and rolling mid-step, and tenants forging the shard label: duplicates, orphans, repeated actions, two writers",
    command: `npm run bench:chaos:shards${ROUNDS !== 15 || K !== 8 || R !== 2 || SEED !== 1 ? ` -- ${String(ROUNDS)} ${String(K)} ${String(R)} ${String(SEED)}` : ""}`,
    figures, tables, charts: [], notes,
  });
} finally {
  for (const r of live) expectedExits.add(r.name);
  await bench.stop();
}
process.exitCode = exitCode;
