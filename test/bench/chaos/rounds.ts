// What the chaos benchmarks do once a fault has landed (a kill, a shard joining or dying): poll
// until every trial of the round has its verdict, then check what the round violated.
import type { RunningEmulator } from "../../../src/emulator/index.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import { Timings } from "../../../src/runtime/timings.ts";
import { actionViolation, phaseAtKill, secretOf, stuckDetail, trigger, verdict, type ActionLedger, type Trial } from "./operations.ts";
import type { Violation } from "./report.ts";
import { audit, look, recorded, type World } from "./world.ts";

const POLL_MS = 200;
/** In a held round every mutating request waits this long in the emulator: the fault lands between requests and their answers. */
export const HOLD_MS = 1_500;
const HELD_ROUTES = ["POST /", "PUT /", "DELETE /"];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sends each trial's trigger so that `fault` lands its planned delay after it (in a held round,
 * with every mutating request held HOLD_MS), lets what was sent before the fault land, and looks
 * where each step was then (t.atKill; t.intentAtKill: its intent recorded, its completion not).
 * Answers what `fault` returned, that look, and the latest trigger's lead over the fault.
 */
export async function faultMidStep<T>(kube: KubeClient, emulator: RunningEmulator, ledger: ActionLedger, round: readonly Trial[], held: boolean,
  fault: () => Promise<T>): Promise<{ outcome: T; atFault: World; horizon: number }> {
  const horizon = Math.max(...round.map((t) => t.delayMs));
  const zero = Date.now() + 20;
  if (held) emulator.setFaults({ latencyMs: HOLD_MS, routes: HELD_ROUTES });
  const triggered = round.map(async (t) => {
    await sleep(zero + horizon - t.delayMs - Date.now());
    t.triggerAt = Date.now();
    await trigger(kube, t);
  });
  await sleep(zero + horizon - Date.now());
  const faultAt = Date.now();
  const outcome = await fault();
  await Promise.all(triggered);
  for (const t of round) t.killOffsetMs = faultAt - t.triggerAt;
  if (held) {
    emulator.setFaults({ latencyMs: 0, routes: [] });
    // What was sent before the fault lands now, as a slow API would apply it.
    await sleep(HOLD_MS + 300);
  }
  ledger.scan(emulator.mutations());
  const atFault = await look(kube, emulator);
  for (const t of round) {
    const p = phaseAtKill(atFault, t);
    t.atKill = p.phase;
    t.atKillDetail = p.detail;
    t.intentAtKill = p.intent === true;
    t.acceptedAtKill = t.accepted;
  }
  return { outcome, atFault, horizon };
}

/** A trial's deadline: `timeoutMs` from `from`, after the documented grace first for a create announced and not sent when its process died (it is not sent again before). */
export function setDeadline(t: Trial, atFault: World, from: number, timeoutMs: number): void {
  t.deadline = from + timeoutMs;
  const o = (t.op === "create-mdb" ? atFault.mdbs : t.op === "create-nb" ? atFault.nbs : t.op === "snapshot" ? atFault.snaps : undefined)?.get(t.name);
  const pending = Date.parse(recorded(o, "createPending") ?? "");
  if (Number.isFinite(pending) && recorded(o, "externalId") === undefined && t.atKill === "before send") {
    t.graceWait = true;
    t.deadline = Math.max(t.deadline, pending + Timings.createGraceMillis + timeoutMs);
  }
}

/** Looks until `done` holds for the world, or throws after `timeoutMs`. */
export async function lookUntil(kube: KubeClient, emulator: RunningEmulator, what: string, done: (w: World) => boolean, timeoutMs = 120_000): Promise<World> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const w = await look(kube, emulator);
    if (done(w)) return w;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

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
