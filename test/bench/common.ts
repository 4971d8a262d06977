// What the benchmarks share: printing, waiting, listing the three kinds, Ready, quantiles, the
// operator's Linode calls by outcome and the emulator's injected faults.
import type { FaultPlan } from "../../src/emulator/faults.ts";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { collectionPath, type ResourceType, type WatchHandle } from "../../src/kube/types.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { execCapture } from "../harness/cluster.ts";
import type { ControlPlane } from "../harness/control-plane.ts";
import { scrape } from "./metrics.ts";

export const say = (s: string): void => { process.stdout.write(`${s}\n`); };
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const secs = (ms: number): number => Math.round(ms / 100) / 10;

export function isReady(o: ManagedObject | undefined): boolean {
  return o?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

export async function listAll(kube: KubeClient, t: ResourceType, namespace: string): Promise<ManagedObject[]> {
  const out: ManagedObject[] = [];
  let token: string | undefined;
  do {
    const page = await kube.list<ManagedObject>(t, { namespace, ...(token !== undefined ? { continueToken: token } : {}) });
    out.push(...page.items);
    token = page.continueToken;
  } while (token !== undefined);
  return out;
}

/**
 * Every event on a kind in a namespace until stopped: the current objects first (ADDED), then
 * each change. A plain watch ends after 30 quiet seconds (client-node's inactivity timeout) or
 * when the API server closes it, and a quiet spell is exactly what an idle window is, so this
 * one waits for bookmarks and reopens from the last resourceVersion it saw.
 */
export async function watchKind(kube: KubeClient, t: ResourceType, namespace: string | undefined, onEvent: (type: string, o: ManagedObject) => void): Promise<{ stop(): void }> {
  let resourceVersion = "0";
  let stopped = false;
  let handle: WatchHandle | undefined;
  const open = async (): Promise<void> => {
    handle = await kube.watch(collectionPath(t, namespace), { watch: true, allowWatchBookmarks: true, resourceVersion }, (type, obj) => {
      const o = obj as ManagedObject;
      resourceVersion = o.metadata.resourceVersion ?? resourceVersion;
      if (type !== "BOOKMARK") onEvent(type, o);
    }, (err: unknown) => {
      // 410 Gone: the version is too old to resume from; start over from the current state.
      if ((err as { statusCode?: number } | null)?.statusCode === 410) resourceVersion = "0";
      if (!stopped) setTimeout(() => { void open(); }, 500);
    }, { inactivityMillis: 10 * 60_000 });
  };
  await open();
  return { stop: () => { stopped = true; handle?.abort(); } };
}

/** The q-quantile (0..1) of the values, nearest rank; NaN for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export async function kubectl(cp: ControlPlane, args: string[]): Promise<string> {
  const r = await execCapture(`${cp.binDir}/kubectl`, ["--kubeconfig", cp.adminKubeconfig, ...args]);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** The operator's Linode requests by status (HTTP code, or the transport error's code), from its /metrics. */
export async function linodeCallsByStatus(metricsUrl: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of await scrape(metricsUrl)) {
    if (m.name !== "linode_api_requests_total") continue;
    const status = m.labels.get("status") ?? "?";
    out.set(status, (out.get(status) ?? 0) + m.value);
  }
  return out;
}

/** Attempts of a route class, seconds they waited in all for the operator's own budget, and how many waited 5 s or more. */
export interface BudgetWaits { attempts: number; seconds: number; over5s: number }

/** The operator's waits for its own budget, by route class (linode_api_ratelimit_wait_seconds). */
export async function budgetWaits(metricsUrl: string): Promise<Map<string, BudgetWaits>> {
  const out = new Map<string, BudgetWaits>();
  const of = (group: string): BudgetWaits => {
    let w = out.get(group);
    if (w === undefined) { w = { attempts: 0, seconds: 0, over5s: 0 }; out.set(group, w); }
    return w;
  };
  const within5s = new Map<string, number>();
  for (const m of await scrape(metricsUrl)) {
    const group = m.labels.get("group") ?? "?";
    if (m.name === "linode_api_ratelimit_wait_seconds_count") of(group).attempts = m.value;
    else if (m.name === "linode_api_ratelimit_wait_seconds_sum") of(group).seconds = m.value;
    else if (m.name === "linode_api_ratelimit_wait_seconds_bucket" && m.labels.get("le") === "5") within5s.set(group, m.value);
  }
  for (const [group, w] of out) w.over5s = w.attempts - (within5s.get(group) ?? 0);
  return out;
}

export const describeWaits = (waits: Map<string, BudgetWaits>): string =>
  [...waits].sort(([a], [b]) => a.localeCompare(b)).map(([g, w]) => `${g} ${String(w.attempts)} attempts, ${w.seconds.toFixed(1)} s in all, ${String(w.over5s)} ≥ 5 s`).join("; ");

export interface FaultTally { status429: number; errors: number; drops: number; delayed: number }

/** Counts what the emulator's fault plan decides from now on (429s, 5xx, drops after commit). */
export function tallyFaults(emulator: RunningEmulator): FaultTally {
  const tally: FaultTally = { status429: 0, errors: 0, drops: 0, delayed: 0 };
  const faults = emulator.context.faults;
  const plan = faults.plan.bind(faults);
  faults.plan = (routeKey: string, token?: string): FaultPlan | null => {
    const p = plan(routeKey, token);
    if (p?.status429 === true) tally.status429++;
    else if (p?.errorStatus != null) tally.errors++;
    else if (p?.drop === true) tally.drops++;
    if ((p?.delayMs ?? 0) > 0) tally.delayed++;
    return p;
  };
  return tally;
}
