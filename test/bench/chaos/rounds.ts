// What the chaos benchmarks do once a fault has landed (a kill, a shard joining or dying): poll
// until every trial of the round has its verdict, then check what the round violated.
import type { RunningEmulator } from "../../../src/emulator/index.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import { actionViolation, secretOf, stuckDetail, verdict, type ActionLedger, type Trial } from "./operations.ts";
import type { Violation } from "./report.ts";
import { audit, look, type World } from "./world.ts";

const POLL_MS = 200;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until every trial has its verdict (or its deadline passed); `from(t)`: what its settle time counts from. */
export async function settleTrials(kube: KubeClient, emulator: RunningEmulator, ledger: ActionLedger, round: readonly Trial[], from: (t: Trial) => number): Promise<World> {
  for (;;) {
    ledger.scan(emulator.mutations());
    const w = await look(kube, emulator, round.flatMap((t) => secretOf(t) ?? []));
    const now = Date.now();
    for (const t of round) {
      if (t.outcome !== undefined) continue;
      const v = verdict(w, t);
      if (v !== undefined) {
        t.outcome = v.outcome;
        t.detail = v.detail;
        t.settledAfterMs = now - from(t);
      } else if (now > (t.deadline ?? Infinity)) {
        t.outcome = t.op.startsWith("delete-") ? "stuck finalizer" : "needs a human";
        t.detail = stuckDetail(w, t);
      }
    }
    if (round.every((t) => t.outcome !== undefined)) return w;
    await sleep(POLL_MS);
  }
}

/** How a trial is named in a violation: enough to find it in the logs. */
export const trialName = (t: Trial): string =>
  `${t.op} slot ${String(t.slot)} (${t.name}${t.db !== undefined && t.db !== t.name ? ` on ${t.db}` : ""}, ${t.killOffsetMs !== undefined ? `fault ${String(t.killOffsetMs)} ms after its trigger` : "no fault yet"}, ${t.atKill ?? "?"})`;

/**
 * What a settled round violated: trials stuck or left for a human, actions repeated or falsely
 * recorded, duplicate or orphaned cloud objects (each reported once over the run: `reported`),
 * and actions no trial asked for.
 */
export function roundViolations(r: number, round: readonly Trial[], w: World, names: Parameters<typeof audit>[1], ledger: ActionLedger, reported: Set<string>): Violation[] {
  const out: Violation[] = [];
  for (const t of round) {
    if (t.outcome === "needs a human" || t.outcome === "stuck finalizer") {
      out.push({ invariant: t.outcome === "needs a human" ? "needs a human" : "stuck finalizers", op: t.op, round: r, trial: trialName(t), detail: t.detail ?? "" });
    }
    const a = actionViolation(t);
    if (a !== undefined) out.push({ ...a, op: t.op, round: r, trial: trialName(t) });
  }
  for (const f of audit(w, names)) {
    if (reported.has(f.what)) continue;
    reported.add(f.what);
    const t = round.find((x) => x.name === f.name) ?? round.find((x) => x.db === f.name);
    out.push({ invariant: f.kind === "duplicate" ? "duplicates" : "orphans", op: t?.op, round: r, trial: t !== undefined ? trialName(t) : f.name ?? "?", detail: f.what });
  }
  for (const s of ledger.strays.splice(0)) {
    out.push({ invariant: "repeated actions", op: undefined, round: r, trial: "?", detail: `an action no trial asked for: ${s.method} ${s.path} (${String(s.status)})` });
  }
  return out;
}

/** Actions sent again after their round was checked (`known`: violations already reported). */
export function lateViolations(trials: readonly Trial[], known: readonly Violation[], ledger: ActionLedger, lastRound: number): Violation[] {
  const out: Violation[] = [];
  for (const t of trials) {
    const a = actionViolation(t);
    if (a !== undefined && !known.some((v) => v.invariant === a.invariant && v.trial === trialName(t))) {
      out.push({ ...a, op: t.op, round: t.round, trial: trialName(t), detail: `${a.detail} (seen after its round)` });
    }
  }
  for (const s of ledger.strays.splice(0)) out.push({ invariant: "repeated actions", op: undefined, round: lastRound, trial: "?", detail: `an action no trial asked for: ${s.method} ${s.path}` });
  return out;
}
