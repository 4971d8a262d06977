// Noisy neighbour: one account whose Linode API misbehaves must not slow the others.
//   node test/bench/noisy-neighbour.ts [perAccount=300] [concurrency=4] [noisyMinutes=6]
// Phase A: two quiet accounts alone, `perAccount` ManagedDatabases each (a namespace per account,
// each with its token Secret and spec.credentialsRef), applied at once: the time until each
// account's databases are all Ready. Phase B, on a fresh API server, emulator and operator: the
// same two plus a third account of as many databases whose token gets 50 % 429 (Retry-After 1 s)
// and 1 s of latency on every other answer. Targets (issue 32): each quiet account Ready within
// 1.1× its time alone; the noisy account's objects show RateLimited; the calls it receives stay
// within its budget (the operator's --linode-api-share of the API's per-token limit) with
// bounded retries. The phase goes on `noisyMinutes` from the first create (or until the noisy
// account is Ready too) to measure its calls a minute. The operator runs with --concurrency.
// Saved to docs/benchmarks/results/noisy-neighbour.json.
import { rateLimitConfigSchema } from "../../src/emulator/rate-limit.ts";
import { defaultRetryPolicy } from "../../src/linode/index.ts";
import { say, secs } from "./common.ts";
import { peakIn, perMinuteOverTime, PROVISION_SECONDS, runPhase, type AccountOutcome, type AccountPlan } from "./noisy-neighbour-phase.ts";
import { resultCollector, saveResult } from "./report/result.ts";

const [N, concurrency, noisyMinutes] = [300, 4, 6].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number];
// BENCH_API_SHARE shrinks the operator's share of each token's limit, so a small trial run meets
// the budget pressure of a larger one (100 databases at 0.17 ≈ 300 at 0.5).
const API_SHARE = Number(process.env.BENCH_API_SHARE ?? "0.5");
const FAULTS = { rate429: 0.5, retryAfterSeconds: 1, latencyMs: 1_000 };
const QUIET: AccountPlan[] = [
  { name: "team-a", token: "team-a-token", n: N, noisy: false },
  { name: "team-b", token: "team-b-token", n: N, noisy: false },
];
const NOISY: AccountPlan = { name: "team-noisy", token: "team-noisy-token", n: N, noisy: true };
const operatorArgs = ["--concurrency", String(concurrency), "--linode-api-share", String(API_SHARE)];
// The emulator's limit per token (the real API's 1,600 a minute for most routes, 200 for paginated
// GETs, are of the same order); the operator spends at most its share of it per token.
const apiLimit = rateLimitConfigSchema.parse({}).default;
const budgetPerWindow = Math.floor(apiLimit.limit * API_SHARE);

const { figures, tables, charts, notes, figure } = resultCollector(say);
const answered429 = (o: AccountOutcome): number | undefined => (o.faulted429 === undefined || o.limited429 === undefined ? undefined : o.faulted429 + o.limited429);
const get = (as: AccountOutcome[], name: string): AccountOutcome => {
  const a = as.find((x) => x.name === name);
  if (a === undefined) throw new Error(`no outcome for ${name}`);
  return a;
};

const alone = await runPhase({ title: `phase A: ${QUIET.map((a) => a.name).join(" and ")} alone, ${String(N)} databases each`, accounts: QUIET, operatorArgs, noisyMillis: 0 });
const beside = await runPhase({
  title: `phase B: the same beside ${NOISY.name} (${String(N)} databases; its API answers ${String(FAULTS.rate429 * 100)} % 429 and ${String(FAULTS.latencyMs / 1000)} s latency)`,
  accounts: [...QUIET, NOISY], operatorArgs, faults: FAULTS, noisyMillis: noisyMinutes * 60_000,
});

say("== figures");
const ratios: number[] = [];
for (const q of QUIET) {
  const a = get(alone.accounts, q.name);
  const b = get(beside.accounts, q.name);
  if (a.readyMs === undefined || b.readyMs === undefined) throw new Error(`${q.name} was not Ready in both phases`);
  const ratio = Math.round((b.readyMs / a.readyMs) * 100) / 100;
  ratios.push(ratio);
  figure(`${q.name}: all ${String(N)} Ready, alone → beside the noisy account`, `${String(secs(a.readyMs))} → ${String(secs(b.readyMs))}`, "s");
  figure(`${q.name}: time beside the noisy account / alone`, ratio, "×", "≤ 1.1", ratio <= 1.1);
}
const noisy = get(beside.accounts, NOISY.name);
const phaseMs = Math.max(noisy.readyMs ?? 0, ...noisy.calls.slice(-1));
const peak = peakIn(noisy.calls, 60_000);
const mean = noisy.calls.length / Math.max(1, phaseMs / 60_000);
figure(`${NOISY.name}: objects that showed RateLimited`, noisy.showedRateLimited, undefined, "> 0 (RateLimited shown)", noisy.showedRateLimited > 0);
const whenQuietDone = [...noisy.syncedWhenQuietDone].sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${String(v)}`).join(", ");
figure(`${NOISY.name}: Synced when the quiet accounts were all Ready (${String(secs(beside.quietDoneMs))} s)`, whenQuietDone === "" ? "no status yet" : whenQuietDone);
figure(`${NOISY.name}: calls it received, most in one of the API's ${String(apiLimit.windowSeconds)} s rate-limit windows`, noisy.mostInAWindow, "calls", `≤ its budget, ${String(budgetPerWindow)} (--linode-api-share ${String(API_SHARE)} of ${String(apiLimit.limit)})`, (v) => v <= budgetPerWindow);
// A token bucket refills as it spends, so a sliding minute straddling two of the API's windows may hold up to twice the budget.
figure(`${NOISY.name}: calls it received, most in any 60 s`, peak, "calls");
figure(`${NOISY.name}: calls a minute on average over ${String(secs(phaseMs))} s`, Math.round(mean));
figure(`${NOISY.name}: answered 429 (injected / the emulator's own limit)`, noisy.faulted429 === undefined || noisy.limited429 === undefined ? undefined : `${String(noisy.faulted429)} / ${String(noisy.limited429)}`);
const retried = [...beside.retries.values()].reduce((x, y) => x + y, 0);
const firstAttempts = noisy.calls.length - retried;
figure("retried attempts (the operator's, all accounts; the quiet accounts had no fault)", retried);
// No call seen from the noisy account: no attempts to count, not 0 attempts per request.
figure(`${NOISY.name}: attempts per request`, noisy.calls.length === 0 ? undefined : Math.round((noisy.calls.length / Math.max(1, firstAttempts)) * 100) / 100, undefined, `≤ ${String(defaultRetryPolicy.maxAttempts)} (bounded retries)`, noisy.calls.length <= defaultRetryPolicy.maxAttempts * firstAttempts);
figure(`${NOISY.name}: Ready at the end (${String(secs(phaseMs))} s after the first create)`, `${String(noisy.readyAtEnd)}/${String(N)}`);
for (const q of QUIET) {
  const b = get(beside.accounts, q.name);
  figure(`${q.name}: 429s received beside the noisy account`, answered429(b), undefined, "0", (v) => v === 0);
}

const row = (phase: string, o: AccountOutcome): (string | number)[] => [phase, o.name, o.n, secs(o.appliedMs), o.readyMs === undefined ? "—" : secs(o.readyMs), o.calls.length, answered429(o) ?? "no data", o.showedRateLimited];
tables.push({
  title: "Per account",
  columns: ["phase", "account", "databases", "applied (s)", "all Ready (s)", "calls received", "answered 429", "showed RateLimited"],
  rows: [...alone.accounts.map((o) => row("A: alone", o)), ...beside.accounts.map((o) => row("B: beside the noisy account", o))],
});
tables.push({
  title: "The operator's reconcile passes by result",
  columns: ["result", "phase A", "phase B"],
  rows: [...new Set([...alone.passes.keys(), ...beside.passes.keys()])].sort().map((k) => [k, alone.passes.get(k) ?? 0, beside.passes.get(k) ?? 0]),
});
charts.push({
  kind: "line", title: `Ready databases per account (${String(N)} each)`, xLabel: "seconds since the first create", yLabel: "Ready",
  series: [...alone.accounts.map((o) => ({ name: `${o.name} alone`, points: o.readyOverTime })), ...beside.accounts.map((o) => ({ name: `${o.name} beside the noisy one`, points: o.readyOverTime }))],
});
const endMs = Math.max(...beside.accounts.flatMap((o) => o.calls.slice(-1)));
charts.push({
  kind: "line", title: "Calls each account received in the last 60 s (phase B)", xLabel: "seconds since the first create", yLabel: "calls a minute",
  series: [...beside.accounts.map((o) => ({ name: o.name, points: perMinuteOverTime(o.calls, endMs) })), { name: "the budget", points: [[0, budgetPerWindow], [secs(endMs), budgetPerWindow]] }],
});
notes.push(`Each phase runs on a fresh API server, emulator and operator (--concurrency ${String(concurrency)}, --linode-api-share ${String(API_SHARE)}); the emulator provisions a database in ${String(PROVISION_SECONDS)} s and allows each token ${String(apiLimit.limit)} requests a ${String(apiLimit.windowSeconds)} s window. Each account is a namespace with its token Secret (labelled linode.operator.dev/credentials) and its own emulator account; its databases name the Secret in spec.credentialsRef and are created by one writer per account, all at once.`);
notes.push(`The noisy account's token gets the emulator's faults scoped to it (tokens in the fault config): ${String(FAULTS.rate429 * 100)} % of its requests answered 429 with Retry-After ${String(FAULTS.retryAfterSeconds)} s, the others answered after ${String(FAULTS.latencyMs)} ms. Calls are counted by the emulator as they arrive, by token. A 429 whose own headers show budget left does not stop the operator's bucket for the token (src/linode/rate-limiter.ts): that request alone waits its Retry-After, at most ${String(defaultRetryPolicy.maxAttempts)} attempts in all, then its object is requeued with RateLimited.`);
notes.push(`The noisy account's own pace is set by its answers (1 s each, a Retry-After on half) and the workers it may hold: an even share of the ${String(concurrency)} while the quiet accounts have work (kept for two pending polls after their last pass), all of them after; so it converges slowly (${String(noisy.readyAtEnd)}/${String(N)} Ready after ${String(secs(phaseMs))} s), well under its call budget, and its objects say RateLimited meanwhile.`);
await saveResult({
  name: "noisy-neighbour", title: `Noisy neighbour: two quiet accounts beside one whose API answers 50 % 429 and 1 s latency (${String(N)} databases each)`,
  command: `${API_SHARE !== 0.5 ? `BENCH_API_SHARE=${String(API_SHARE)} ` : ""}npm run bench:noisy-neighbour${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
  figures, tables, charts, notes,
});
