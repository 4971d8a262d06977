// Chaos benchmark: the operator (a real `linode-operator run` process) is killed with SIGKILL
// in the middle of its steps, over and over, and every restart must converge with no
// duplicate cloud object, no orphan, no stuck finalizer, no restore or patch performed twice,
// no request token recorded as completed that no process saw complete, and nothing left for a
// human.
//   node test/bench/chaos-kill.ts [trialsPerOperation=100] [seed=1]
// Operations: create (ManagedDatabase, NodeBalancer), update (allowList; NodeBalancer throttle
// and config), delete (ManagedDatabase, NodeBalancer, DatabaseSnapshot), snapshot, restore,
// and the request tokens resetCredentials and patch. A round acts on CHAOS_PER_ROUND objects of
// each operation (default 1: 11 objects per kill): each trial's trigger is placed so that the
// round's one kill lands a seeded fraction of that operation's step time T after it (T:
// measured fault-free first, trigger to converged). In a seeded third of the rounds the
// emulator also holds every mutating request for 1.5 s, so that kills land after a request was
// sent and before its answer was recorded. Then the operator is restarted, everything must
// converge within 60 s (a create announced but never sent waits the documented 60 s grace
// first), and the invariants are checked. One API server and one emulator serve the whole run;
// the seed drives every choice (which rounds are held, each trial's kill fraction, the values
// written), and a violation prints the seed, round and trial; outcomes also depend on timing.
// For development: CHAOS_VERBOSE=1 prints every trial, CHAOS_HELD_SHARE (0..1) the share of
// held rounds, CHAOS_TIMEOUT_SECONDS the convergence timeout, CHAOS_LOG_LEVEL the operator's;
// a round with a violation leaves the operator's logs in $TMPDIR/chaos-kill-seed<seed>/.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Random } from "../../src/emulator/random.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { Timings } from "../../src/runtime/timings.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import { startBench } from "./bench-setup.ts";
import {
  ActionLedger, createMdb, createNb, createSnap, killPhases, operations, outcomes, shortNames, titles, trigger, type OpName, type Trial,
} from "./chaos/operations.ts";
import { invariants, killTable, outcomeTable, summarize, textTable, type Violation } from "./chaos/report.ts";
import { faultMidStep, lookUntil, HOLD_MS, lateViolations, roundViolations, setDeadline, settleTrials, trialName } from "./chaos/rounds.ts";
import { CLUSTER_ID, look, settled, statusId, type World } from "./chaos/world.ts";
import { saveResult, type Figure } from "./report/result.ts";

const trialsPerOp = Number(process.argv[2] ?? 100);
const seed = Number(process.argv[3] ?? 1);
const perRound = Number(process.env.CHAOS_PER_ROUND ?? 1);
if (!Number.isInteger(trialsPerOp) || trialsPerOp < 1 || !Number.isInteger(seed) || !Number.isInteger(perRound) || perRound < 1) {
  throw new Error("usage: node test/bench/chaos-kill.ts [trialsPerOperation=100] [seed=1] (env CHAOS_PER_ROUND, default 1)");
}
const rounds = Math.ceil(trialsPerOp / perRound);
const HELD_SHARE = Number(process.env.CHAOS_HELD_SHARE ?? 1 / 3);
const TIMEOUT_MS = Number(process.env.CHAOS_TIMEOUT_SECONDS ?? 60) * 1000;
const CALIBRATION_ROUNDS = 2;

const say = (s: string): void => { process.stdout.write(`${s}\n`); };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const seconds = (ms: number): string => (ms / 1000).toFixed(1);

const logDir = join(tmpdir(), `chaos-kill-seed${String(seed)}`);
// A private temporary directory for the operator's bundle and the control plane: on a shared
// machine, another run cleaning the temporary directory cannot pull them away mid-run.
const scratch = await mkdtemp(join(tmpdir(), "chaos-kill-run-"));
process.env.TMPDIR = scratch;
const bench = await startBench({ provisionSeconds: 0.5, rateLimits: false });
const { emulator } = bench;
const kube = new KubeClient(loadKubeConfigFromFile(bench.cp.adminKubeconfig), { fieldManager: "chaos-bench" });
let exitCode = 0;

const startOperator = async (): Promise<OperatorProcess> =>
  (await bench.operator(["--poll-pending-seconds", "0.5", "--poll-ready-seconds", "5", "--cluster-id", CLUSTER_ID], { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "info" })).proc;

const until = (what: string, done: (w: World) => boolean, timeoutMs?: number): Promise<World> => lookUntil(kube, emulator, what, done, timeoutMs);

try {
  let operator = await startOperator();
  const slots = (prefix: string): string[] => Array.from({ length: perRound }, (_, j) => `${prefix}-${String(j)}`);
  const pools = {
    updDb: slots("upd-db"), updNb: slots("upd-nb"), snapDb: slots("snap-db"), restoreDb: slots("rst-db"), restoreSnap: slots("rst-snap"),
    resetDb: slots("reset-db"), patchDb: slots("patch-db"),
  };
  /** What the next round deletes: what the round before created. */
  let toDelete = { mdb: slots("cdb-init"), nb: slots("cnb-init"), snap: slots("snap-init") };
  const poolDbs = [...pools.updDb, ...pools.snapDb, ...pools.restoreDb, ...pools.resetDb, ...pools.patchDb];
  const names = { mdb: new Set([...poolDbs, ...toDelete.mdb]), nb: new Set([...pools.updNb, ...toDelete.nb]), snap: new Set([...pools.restoreSnap, ...toDelete.snap]) };

  // The pools every round acts on, and the first round's objects to delete.
  const t0 = Date.now();
  await Promise.all([...names.mdb].map((n) => createMdb(kube, n)));
  await Promise.all([...names.nb].map((n) => createNb(kube, n)));
  await until("the pools Ready", (w) => [...names.mdb].every((n) => settled(w.mdbs.get(n))) && [...names.nb].every((n) => settled(w.nbs.get(n))));
  await Promise.all(pools.restoreSnap.map((n, j) => createSnap(kube, n, pools.restoreDb[j] ?? "")));
  await Promise.all(toDelete.snap.map((n, j) => createSnap(kube, n, pools.snapDb[j] ?? "")));
  await until("the snapshots Available", (w) => [...names.snap].every((n) => w.snaps.get(n)?.status?.phase === "Available"));
  say(`seed ${String(seed)}: ${String(names.mdb.size)} ManagedDatabases, ${String(names.nb.size)} NodeBalancers, ${String(names.snap.size)} DatabaseSnapshots ready in ${seconds(Date.now() - t0)} s; ${String(rounds)} rounds of ${String(perRound)} trial(s) per operation`);

  const ledger = new ActionLedger();
  const trials: Trial[] = [];
  const violations: Violation[] = [];
  const heldRounds = new Set<number>();
  const reportedFindings = new Set<string>();
  const rng = new Random(seed);
  let seq = 0;

  /** The round's trials (kill points still to place): every operation on its slots. */
  const plan = (round: number, tag: string, w: World, fraction: () => number, stepMs: (op: OpName) => number): Trial[] => {
    seq += 1;
    const out: Trial[] = [];
    const created = { mdb: slots(`cdb-${tag}`), nb: slots(`cnb-${tag}`), snap: slots(`snap-${tag}`) };
    for (const op of operations) {
      for (let slot = 0; slot < perRound; slot++) {
        const f = fraction();
        const base = { op, round, slot, fraction: f, delayMs: Math.round(f * stepMs(op)), triggerAt: 0, sent: 0, accepted: 0 };
        const at = (list: string[]): string => list[slot] ?? "";
        const onDb = (db: string): Trial => ({ ...base, name: db, db, dbId: statusId(w.mdbs.get(db)) ?? -1, token: tag });
        switch (op) {
          case "create-mdb": out.push({ ...base, name: at(created.mdb) }); break;
          case "create-nb": out.push({ ...base, name: at(created.nb) }); break;
          case "update-mdb": out.push({ ...base, name: at(pools.updDb), allowList: [`198.51.100.${String((seq % 250) + 1)}`, "203.0.113.0/24"] }); break;
          case "update-nb": out.push({ ...base, name: at(pools.updNb), nb: { throttle: (seq % 20) + 1, algorithm: ["roundrobin", "leastconn", "source"][seq % 3] ?? "source", weight: (seq % 250) + 2 } }); break;
          case "delete-mdb": out.push({ ...base, name: at(toDelete.mdb) }); break;
          case "delete-nb": out.push({ ...base, name: at(toDelete.nb) }); break;
          case "delete-snapshot": out.push({ ...base, name: at(toDelete.snap) }); break;
          case "snapshot": out.push({ ...base, name: at(created.snap), db: at(pools.snapDb), dbId: statusId(w.mdbs.get(at(pools.snapDb))) ?? -1 }); break;
          case "restore": out.push({ ...onDb(at(pools.restoreDb)), snapshot: at(pools.restoreSnap) }); break;
          case "reset-credentials": out.push(onDb(at(pools.resetDb))); break;
          case "patch": out.push(onDb(at(pools.patchDb))); break;
        }
      }
    }
    for (const n of created.mdb) names.mdb.add(n);
    for (const n of created.nb) names.nb.add(n);
    for (const n of created.snap) names.snap.add(n);
    toDelete = created;
    for (const t of out) ledger.track(t);
    return out;
  };

  const settle = (round: Trial[], from: (t: Trial) => number): Promise<World> => settleTrials(kube, emulator, ledger, round, from);

  // Calibration: each operation's step time T, fault-free, under the same load (all triggered at once).
  const measured = new Map<OpName, number[]>();
  for (let c = 0; c < CALIBRATION_ROUNDS; c++) {
    const w = await look(kube, emulator);
    const round = plan(-1 - c, `c${String(c)}`, w, () => 0, () => 0);
    await Promise.all(round.map(async (t) => { t.triggerAt = Date.now(); t.deadline = t.triggerAt + 60_000; await trigger(kube, t); }));
    await settle(round, (t) => t.triggerAt);
    for (const t of round) {
      if (t.outcome !== "converged") throw new Error(`calibration: ${t.op} ${t.name} did not converge fault-free: ${t.detail ?? ""}`);
      measured.set(t.op, [...(measured.get(t.op) ?? []), t.settledAfterMs ?? 0]);
    }
  }
  const stepMs = Object.fromEntries(operations.map((op) => [op, Math.max(200, ...(measured.get(op) ?? []))])) as Record<OpName, number>;
  say(`fault-free step time T (trigger → converged, max of ${String(CALIBRATION_ROUNDS * perRound)}): ${operations.map((op) => `${op} ${String(stepMs[op])} ms`).join(", ")}`);

  const record = (v: Violation): void => {
    violations.push(v);
    say(`  VIOLATION ${v.invariant}: ${v.op !== undefined ? titles[v.op] : "(no trial)"}, round ${String(v.round)}, ${v.trial}: ${v.detail}`);
    say(`    reproduce: node test/bench/chaos-kill.ts ${String(trialsPerOp)} ${String(seed)} (CHAOS_PER_ROUND=${String(perRound)}; seed ${String(seed)}, round ${String(v.round)}, ${v.trial})`);
  };

  for (let r = 0; r < rounds; r++) {
    const roundStart = Date.now();
    const held = rng.next() < HELD_SHARE;
    if (held) heldRounds.add(r);
    const round = plan(r, `r${String(r)}`, await look(kube, emulator), () => rng.next(), (op) => stepMs[op]);
    trials.push(...round);
    const { atFault: atKill, horizon } = await faultMidStep(kube, emulator, ledger, round, held, async () => {
      operator.child.kill("SIGKILL");
      await operator.exited;
    });
    const killed = operator;

    const restartAt = Date.now();
    operator = await startOperator();
    for (const t of round) setDeadline(t, atKill, restartAt, TIMEOUT_MS);
    const w = await settle(round, () => restartAt);

    const before = violations.length;
    for (const v of roundViolations(r, round, w, names, ledger, reportedFindings)) record(v);
    if (violations.length > before) {
      await mkdir(logDir, { recursive: true });
      await writeFile(join(logDir, `round-${String(r)}-killed.jsonl`), killed.logs.map((l) => JSON.stringify(l)).join("\n"));
      await writeFile(join(logDir, `round-${String(r)}-restarted.jsonl`), operator.logs.map((l) => JSON.stringify(l)).join("\n"));
      say(`    operator logs: ${logDir}/round-${String(r)}-{killed,restarted}.jsonl`);
    }
    killed.logs.length = 0;
    if (process.env.CHAOS_VERBOSE === "1") {
      for (const t of round) say(`    ${trialName(t)} [${t.atKillDetail ?? ""}] → ${t.outcome ?? "?"} after ${String(t.settledAfterMs)} ms: ${t.detail ?? ""}; ${String(t.sent)} sent, ${String(t.accepted)} accepted ${(t.requests ?? []).join(", ")}`);
    }
    const count = (o: string): number => round.filter((t) => t.outcome === o).length;
    const slowest = Math.max(...round.map((t) => t.settledAfterMs ?? 0));
    const grace = round.filter((t) => t.graceWait === true).map((t) => t.name);
    say(`round ${String(r + 1)}/${String(rounds)}${held ? " (held)" : ""}: kill ${String(horizon)} ms in; ${String(count("converged"))} converged, ${String(count("reported unknown"))} reported unknown, ${String(violations.length - before)} violations; all settled ${seconds(slowest)} s after the restart${grace.length > 0 ? ` (${grace.join(", ")}: create announced, not sent: waited the ${String(Timings.createGraceMillis / 1000)} s grace)` : ""}; round ${seconds(Date.now() - roundStart)} s`);
  }

  // Late repeats: an action sent again after its round was checked.
  await sleep(3_000);
  ledger.scan(emulator.mutations());
  for (const v of lateViolations(trials, violations, ledger, rounds - 1)) record(v);

  const elapsedMs = Date.now() - started;
  const summary = summarize(trials, violations, stepMs, heldRounds);
  const kills = killTable(summary);
  const ends = outcomeTable(summary);
  say("");
  say(`Kill points (seed ${String(seed)}, ${String(trials.length)} trials, ${String(rounds)} kills):`);
  say(textTable(kills.columns, kills.rows));
  say("");
  say("Outcomes and invariants (targets: all 0):");
  say(textTable(ends.columns, ends.rows));
  const unattributed = violations.filter((v) => v.op === undefined).length;
  if (unattributed > 0) say(`violations no trial explains: ${String(unattributed)}`);
  const total = (i: (typeof invariants)[number]): number => violations.filter((v) => v.invariant === i).length;
  const unknown = trials.filter((t) => t.outcome === "reported unknown").length;
  say("");
  say(`${String(trials.length)} trials, ${String(violations.length)} violations, ${String(unknown)} reported unknown (RequestOutcomeUnknown, documented); elapsed ${seconds(elapsedMs)} s (${(elapsedMs / 60_000).toFixed(1)} min)`);
  if (violations.length > 0) {
    exitCode = 1;
    say(`FAILED: seed ${String(seed)}; first: round ${String(violations[0]?.round)}, ${violations[0]?.trial ?? ""}`);
  }

  const minTrials = Math.min(...summary.map((s) => s.trials));
  const figures: Figure[] = [
    { label: "trials per operation", value: minTrials, target: "≥ 100", met: minTrials >= 100 },
    { label: "operations × trials (kills)", value: `${String(operations.length)} × ${String(minTrials)} (${String(rounds)} kills)` },
    ...invariants.map((i): Figure => ({ label: i, value: total(i), target: "0", met: total(i) === 0 })),
    { label: "reported unknown (RequestOutcomeUnknown, the documented outcome)", value: unknown },
    { label: "credentials resets sent twice (killed between the reset and its record; at least once is the contract)", value: trials.filter((t) => t.op === "reset-credentials" && t.accepted > 1).length },
    { label: `creates killed after their announcement, before the request (waited the ${String(Timings.createGraceMillis / 1000)} s grace)`, value: trials.filter((t) => t.graceWait === true).length },
    { label: "elapsed", value: Math.round(elapsedMs / 6_000) / 10, unit: "min" },
  ];
  await saveResult({
    name: "chaos-kill",
    title: "The operator killed (SIGKILL) mid-step: duplicates, orphans, stuck finalizers, repeated actions, false records",
    command: `npm run bench:chaos:kill${trialsPerOp !== 100 || seed !== 1 ? ` -- ${String(trialsPerOp)} ${String(seed)}` : ""}`,
    figures,
    tables: [
      { title: "Where the kills landed, per operation", columns: kills.columns, rows: kills.rows },
      { title: "Outcomes and invariant violations per operation (targets: 0)", columns: ends.columns, rows: ends.rows },
    ],
    charts: [{
      kind: "bar", title: "Outcomes per operation after a SIGKILL", yLabel: "trials", categories: summary.map((s) => shortNames[s.op]),
      series: outcomes.map((o) => ({ name: o, values: summary.map((s) => s.outcomes[o]) })),
    }, {
      kind: "bar", title: "Where each operation's step was when the kill landed", yLabel: "trials", categories: summary.map((s) => shortNames[s.op]),
      series: killPhases.map((p) => ({ name: p, values: summary.map((s) => s.phases[p]) })),
    }],
    notes: [
      `Seed ${String(seed)}; ${String(perRound)} trial(s) per operation per round, ${String(rounds)} rounds (one SIGKILL each); emulator provisioning 0.5 s; operator --poll-pending-seconds 0.5 --poll-ready-seconds 5.`,
      `Each trial's trigger is placed so the kill lands a seeded fraction of its operation's fault-free step time T after it; in ${String(heldRounds.size)} rounds the emulator held every mutating request ${String(HOLD_MS)} ms, so kills landed between a request and its answer.`,
      `After the restart every trial must reach Ready (or, for a restore or patch whose request may have been sent, Synced=False RequestOutcomeUnknown) within ${String(TIMEOUT_MS / 1000)} s; a create announced but not sent first waits the documented ${String(Timings.createGraceMillis / 1000)} s grace.`,
      "repeated actions: a restore or patch token the API accepted more than once (the emulator's mutation log); false records: a token recorded in status.lastRequests as completed that the API never accepted, or whose process died between the request and the answer (documented: RequestOutcomeUnknown); duplicates/orphans: from the emulator's state after each restart converged.",
    ],
  });
} finally {
  await bench.stop();
  await rm(scratch, { recursive: true, force: true });
}
process.exitCode = exitCode;
