// The chaos benchmark's tally: per operation, the kill points, where the step was when the
// kill landed, how the trials ended, and each invariant's violations (targets: all 0).
import { killPhases, operations, outcomes, titles, type KillPhase, type OpName, type Outcome, type Trial } from "./operations.ts";

export const invariants = ["duplicates", "orphans", "stuck finalizers", "repeated actions", "false records", "needs a human"] as const;
export type Invariant = (typeof invariants)[number];

export interface Violation {
  invariant: Invariant;
  /** Undefined: no trial of the round explains it. */
  op: OpName | undefined;
  round: number;
  /** e.g. "patch slot 1 (patch-db-1)". */
  trial: string;
  detail: string;
}

export interface OpSummary {
  op: OpName;
  trials: number;
  held: number;
  stepMs: number;
  kill: { min: number; median: number; max: number };
  phases: Record<KillPhase, number>;
  outcomes: Record<Outcome, number>;
  violations: Record<Invariant, number>;
}

const zero = <K extends string>(keys: readonly K[]): Record<K, number> => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

function quantiles(xs: number[]): { min: number; median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0] ?? 0, median: s[Math.floor((s.length - 1) / 2)] ?? 0, max: s[s.length - 1] ?? 0 };
}

export function summarize(trials: readonly Trial[], violations: readonly Violation[], stepMs: Partial<Record<OpName, number>>, heldRounds: ReadonlySet<number>,
  ops: readonly OpName[] = operations): OpSummary[] {
  return ops.map((op) => {
    const mine = trials.filter((t) => t.op === op);
    const phases = zero(killPhases);
    const ends = zero(outcomes);
    for (const t of mine) {
      if (t.atKill !== undefined) phases[t.atKill] += 1;
      if (t.outcome !== undefined) ends[t.outcome] += 1;
    }
    const counts = zero(invariants);
    for (const v of violations) if (v.op === op) counts[v.invariant] += 1;
    return {
      op, trials: mine.length, held: mine.filter((t) => heldRounds.has(t.round)).length, stepMs: stepMs[op] ?? 0,
      kill: quantiles(mine.map((t) => t.killOffsetMs ?? 0)), phases, outcomes: ends, violations: counts,
    };
  });
}

/** Where the kills landed, per operation. */
export function killTable(s: readonly OpSummary[]): { columns: string[]; rows: (string | number)[][] } {
  return {
    columns: ["operation", "trials", "step T (ms)", "kill after trigger min/median/max (ms)", "in held rounds", ...killPhases.map((p) => `killed: ${p}`)],
    rows: s.map((x) => [titles[x.op], x.trials, x.stepMs, `${String(x.kill.min)} / ${String(x.kill.median)} / ${String(x.kill.max)}`, x.held, ...killPhases.map((p) => x.phases[p])]),
  };
}

/** How the trials ended and what was violated (targets: 0), per operation. */
export function outcomeTable(s: readonly OpSummary[]): { columns: string[]; rows: (string | number)[][] } {
  return {
    // The other two outcomes (needs a human, stuck finalizer) are invariants, counted with them.
    columns: ["operation", "trials", "converged", "reported unknown", ...invariants],
    rows: s.map((x) => [titles[x.op], x.trials, x.outcomes.converged, x.outcomes["reported unknown"], ...invariants.map((i) => x.violations[i])]),
  };
}

/** A plain-text table, columns padded. */
export function textTable(columns: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [columns.map(String), ...rows.map((r) => r.map(String))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: readonly string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  return [line(cells[0] ?? []), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}
