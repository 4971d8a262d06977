// One phase of the noisy-neighbour benchmark (test/bench/noisy-neighbour.ts): a fresh API server,
// emulator and operator process; one namespace per Linode account, each with its token Secret
// and N ManagedDatabases naming it in spec.credentialsRef, applied at once; the time until each
// account's databases are all Ready, what the noisy account's objects show, and every call the
// emulator received, by token (counted where it arrives, so the operator cannot miscount them).
import type { FaultConfig, FaultPlan } from "../../src/emulator/faults.ts";
import type { RateDecision } from "../../src/emulator/rate-limit.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startBench } from "./bench-setup.ts";
import { isReady, kubectl, say, secs, sleep, watchKind } from "./common.ts";
import { scrape } from "./metrics.ts";

export const PROVISION_SECONDS = 5;
const CREDENTIALS_LABEL = "linode.operator.dev/credentials";

export interface AccountPlan {
  /** The account's name: its namespace and its emulator account. */
  name: string;
  token: string;
  n: number;
  /** Its API misbehaves (the faults apply to its token only). */
  noisy: boolean;
}

export interface AccountOutcome {
  name: string;
  noisy: boolean;
  n: number;
  /** Since the first create, in ms: all applied, and all Ready (undefined: not within the phase). */
  appliedMs: number;
  readyMs: number | undefined;
  /** Ready at the end of the phase. */
  readyAtEnd: number;
  /** [seconds since the first create, Ready] at each change. */
  readyOverTime: [number, number][];
  /** Objects whose Ready or Synced condition showed RateLimited at some point. */
  showedRateLimited: number;
  /** When the quiet accounts were all Ready: this account's objects by their Synced condition ("False/RateLimited"). */
  syncedWhenQuietDone: Map<string, number>;
  /** Requests the emulator received with this account's token, and when (ms since the first create). */
  calls: number[];
  /**
   * The most of them in one of the emulator's rate-limit windows for the token (as the API
   * counts them against its limit). This and the 429s are undefined when no request with the
   * token arrived: an account whose calls were never seen has no count, not a count of 0.
   */
  mostInAWindow: number | undefined;
  /** Of them, answered 429: by the injected faults, by the emulator's own rate limit. */
  faulted429: number | undefined;
  limited429: number | undefined;
}

/** What the emulator counted for one token as requests arrived. */
export interface TokenTally { calls: number[]; byWindow: Map<number, number>; faulted429: number; limited429: number }

/** An account's counts from its token's tally; none (undefined) when no request of its arrived, or it was never tallied. */
export function accountTally(t: TokenTally | undefined): Pick<AccountOutcome, "calls" | "mostInAWindow" | "faulted429" | "limited429"> {
  if (t === undefined || t.calls.length === 0) return { calls: [], mostInAWindow: undefined, faulted429: undefined, limited429: undefined };
  return { calls: t.calls, mostInAWindow: Math.max(...t.byWindow.values()), faulted429: t.faulted429, limited429: t.limited429 };
}

export interface PhaseOutcome {
  accounts: AccountOutcome[];
  /** The operator's retried attempts by reason (linode_api_retries_total), all accounts. */
  retries: Map<string, number>;
  /** The operator's reconcile passes by result (linode_operator_reconcile_total). */
  passes: Map<string, number>;
  /** Seconds from the first create until the quiet accounts were all Ready. */
  quietDoneMs: number;
}

const mdbSpec = (i: number, secret: string): Record<string, unknown> => ({
  engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1",
  allowList: ["203.0.113.0/24"], credentialsRef: { name: secret },
});

async function sumBy(metricsUrl: string, name: string, label: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of await scrape(metricsUrl)) {
    if (s.name !== name) continue;
    const k = s.labels.get(label) ?? "?";
    out.set(k, (out.get(k) ?? 0) + s.value);
  }
  return out;
}

/**
 * Runs one phase. `faults`: what the noisy accounts' API does (scoped to their tokens).
 * `noisyMillis`: how long the phase goes on after the quiet accounts are all Ready while a
 * noisy one is not (measured from the first create).
 */
export async function runPhase(opts: { title: string; accounts: AccountPlan[]; operatorArgs: string[]; faults?: Partial<FaultConfig>; noisyMillis: number }): Promise<PhaseOutcome> {
  say(`== ${opts.title}`);
  const bench = await startBench({ provisionSeconds: PROVISION_SECONDS, accountTokens: Object.fromEntries(opts.accounts.map((a) => [a.name, [a.token]])) });
  const kube = new KubeClient(loadKubeConfigFromFile(bench.cp.adminKubeconfig), { fieldManager: "bench" });
  const watches: { stop(): void }[] = [];
  try {
    const { emulator } = bench;
    const noisyTokens = opts.accounts.filter((a) => a.noisy).map((a) => a.token);
    if (opts.faults !== undefined && noisyTokens.length > 0) emulator.setFaults({ ...opts.faults, tokens: noisyTokens });
    let t0 = Number.POSITIVE_INFINITY;
    // Every authenticated request passes the emulator's rate limit first, then its fault plan.
    const byToken = new Map(opts.accounts.map((a): [string, TokenTally] => [a.token, { calls: [], byWindow: new Map(), faulted429: 0, limited429: 0 }]));
    const limiter = emulator.context.rateLimiter;
    const check = limiter.check.bind(limiter);
    limiter.check = (token: string, routeKey: string): RateDecision => {
      const d = check(token, routeKey);
      const t = byToken.get(token);
      if (t !== undefined) {
        t.calls.push(Date.now() - t0);
        // A window is known by when it resets: what the token's limit counted in it.
        t.byWindow.set(d.reset, (t.byWindow.get(d.reset) ?? 0) + 1);
        if (!d.allowed) t.limited429++;
      }
      return d;
    };
    const faults = emulator.context.faults;
    const plan = faults.plan.bind(faults);
    faults.plan = (routeKey: string, token?: string): FaultPlan | null => {
      const p = plan(routeKey, token);
      const t = token === undefined ? undefined : byToken.get(token);
      if (t !== undefined && p?.status429 === true) t.faulted429++;
      return p;
    };

    for (const a of opts.accounts) {
      await kubectl(bench.cp, ["create", "namespace", a.name]);
      await kube.applySecret({ metadata: { name: "linode", namespace: a.name, labels: { [CREDENTIALS_LABEL]: "true" } }, type: "Opaque", data: { token: Buffer.from(a.token).toString("base64") } });
    }
    const { metricsUrl } = await bench.operator(opts.operatorArgs);

    const state = new Map(opts.accounts.map((a) => [a.name, {
      ready: new Set<string>(), rateLimited: new Set<string>(), synced: new Map<string, string>(),
      readyOverTime: [] as [number, number][], readyMs: undefined as number | undefined, appliedMs: 0,
    }]));
    for (const a of opts.accounts) {
      const s = state.get(a.name);
      if (s === undefined) continue;
      watches.push(await watchKind(kube, mdbType, a.name, (type, o: ManagedObject) => {
        const name = o.metadata.name;
        const conds = o.status?.conditions ?? [];
        if (conds.some((c) => c.reason === "RateLimited")) s.rateLimited.add(name);
        const synced = conds.find((c) => c.type === "Synced");
        if (synced !== undefined) s.synced.set(name, `${synced.status}/${synced.reason}`);
        const before = s.ready.size;
        if (type !== "DELETED" && isReady(o)) s.ready.add(name); else s.ready.delete(name);
        if (s.ready.size === before) return;
        const at = Date.now() - t0;
        s.readyOverTime.push([secs(at), s.ready.size]);
        if (s.ready.size >= a.n && s.readyMs === undefined) {
          s.readyMs = at;
          say(`  ${a.name}: all ${String(a.n)} Ready after ${String(secs(at))} s`);
        }
      }));
    }

    // Applied at once: one writer per account, as each team's `kubectl apply -f dir/` would.
    t0 = Date.now();
    await Promise.all(opts.accounts.map(async (a) => {
      for (let i = 0; i < a.n; i++) {
        await kube.createCustom(mdbType, a.name, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `db-${String(i)}` }, spec: mdbSpec(i, "linode") });
      }
      const s = state.get(a.name);
      if (s !== undefined) s.appliedMs = Date.now() - t0;
    }));

    const quiet = opts.accounts.filter((a) => !a.noisy);
    const allReady = (as: AccountPlan[]): boolean => as.every((a) => state.get(a.name)?.readyMs !== undefined);
    let lastPrint = 0;
    const progress = (): void => {
      if (Date.now() - lastPrint < 15_000) return;
      lastPrint = Date.now();
      say(`  ${String(secs(Date.now() - t0))} s: ${opts.accounts.map((a) => `${a.name} ${String(state.get(a.name)?.ready.size ?? 0)}/${String(a.n)}`).join(", ")}`);
    };
    while (!allReady(quiet)) {
      if (Date.now() - t0 > 30 * 60_000) throw new Error(`the quiet accounts were not all Ready within 30 min: ${quiet.map((a) => `${a.name} ${String(state.get(a.name)?.ready.size ?? 0)}`).join(", ")}`);
      progress();
      await sleep(250);
    }
    const quietDoneMs = Date.now() - t0;
    const syncedWhenQuietDone = new Map(opts.accounts.map((a) => {
      const tally = new Map<string, number>();
      for (const v of state.get(a.name)?.synced.values() ?? []) tally.set(v, (tally.get(v) ?? 0) + 1);
      return [a.name, tally];
    }));
    while (!allReady(opts.accounts) && Date.now() - t0 < opts.noisyMillis) {
      progress();
      await sleep(500);
    }
    const retries = await sumBy(metricsUrl, "linode_api_retries_total", "reason");
    const passes = await sumBy(metricsUrl, "linode_operator_reconcile_total", "result");
    return {
      quietDoneMs, retries, passes,
      accounts: opts.accounts.map((a) => {
        const s = state.get(a.name);
        return {
          name: a.name, noisy: a.noisy, n: a.n, appliedMs: s?.appliedMs ?? 0, readyMs: s?.readyMs, readyAtEnd: s?.ready.size ?? 0,
          readyOverTime: s?.readyOverTime ?? [], showedRateLimited: s?.rateLimited.size ?? 0,
          syncedWhenQuietDone: syncedWhenQuietDone.get(a.name) ?? new Map<string, number>(),
          ...accountTally(byToken.get(a.token)),
        };
      }),
    };
  } finally {
    for (const w of watches) w.stop();
    await bench.stop();
  }
}

/** The most calls in any `windowMs` (sorted times in ms). */
export function peakIn(times: number[], windowMs: number): number {
  let best = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while ((times[i] ?? 0) - (times[from] ?? 0) >= windowMs) from++;
    best = Math.max(best, i - from + 1);
  }
  return best;
}

/** Calls in the 60 s before each `stepMs` up to `endMs`: [seconds, calls a minute]. */
export function perMinuteOverTime(times: number[], endMs: number, stepMs = 5_000): [number, number][] {
  const out: [number, number][] = [];
  for (let t = stepMs; t <= endMs + stepMs; t += stepMs) out.push([t / 1000, times.filter((x) => x <= t && x > t - 60_000).length]);
  return out;
}
