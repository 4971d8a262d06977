// The failover phase of bench:scale: a leader and a warm standby (two `linode-operator run`
// replicas with leader election on, as the chart runs them with replicas: 2), then the leader is
// killed (SIGKILL: its lease must expire) and new ManagedDatabases are created at once. Measured:
// how long the standby took to fill its caches, the kill → the lease changing hands, the lease
// changing hands → the first Linode create for a new object (target ≤ 5 s: the new leader looks
// at new objects before re-observing the settled ones), and → every object re-observed, with
// the calls that took and any Ready condition that flapped.
import type { KubeClient } from "../../src/kube/client.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import type { startBench } from "./bench-setup.ts";
import { isReady, say, secs, sleep, watchKind } from "./common.ts";
import { callsByRoute, linodeCalls, reconciles, rssMiB, type CallKind } from "./metrics.ts";
import type { FigureFn, Table } from "./report/result.ts";

type Bench = Awaited<ReturnType<typeof startBench>>;

export interface FailoverInput {
  bench: Bench;
  kube: KubeClient;
  namespace: string;
  operatorArgs: string[];
  /** Each kind and the objects of it the new leader must re-observe. */
  kinds: { kind: CallKind; type: ResourceType; n: number }[];
  /** A ManagedDatabase spec for the i-th new object. */
  databaseSpec: (i: number) => Record<string, unknown>;
  figure: FigureFn;
  tables: Table[];
  notes: string[];
}

const NEW_OBJECTS = 5;
/** The product's target: the first action on a new object within 5 s of the lease changing hands. */
const FIRST_ACTION_TARGET_MILLIS = 5_000;
const LEASE = "linode-operator";

/** A log line's time, as the operator's logger writes it (epoch milliseconds or an ISO string). */
export function logTime(line: Record<string, unknown> | undefined): number {
  const t = line?.time;
  if (typeof t === "number") return t;
  return Date.parse(String(t));
}

/** The first create of a database the log shows arriving at or after `from`, if any. */
export function firstCreateAfter(mutations: readonly { receivedAt: number; method: string; route: string }[], from: number): { receivedAt: number; route: string } | undefined {
  return mutations.find((m) => m.receivedAt >= from && m.method === "POST" && /^POST \/databases\/[a-z]+\/instances$/.test(m.route));
}

const successes = (metricsUrl: string, kinds: FailoverInput["kinds"]): Promise<Record<string, number>> => reconciles(metricsUrl, "success", kinds.map((k) => k.kind));

/** Runs the phase; returns the new leader (the process the bench goes on with). */
export async function failoverPhase(input: FailoverInput): Promise<{ proc: OperatorProcess; metricsUrl: string }> {
  const { bench, kube, namespace, figure } = input;
  say("== failover: a leader and a warm standby; the leader killed, new objects created at once");
  const replica = (name: string): OperatorProcess => bench.spawnOperator(input.operatorArgs, { LEADER_ELECT: "true", POD_NAMESPACE: namespace, POD_NAME: name });
  const metricsOf = async (p: OperatorProcess): Promise<string> => {
    const started = await p.waitForLog((l) => l.msg === "operator started", 120_000);
    return `http://127.0.0.1:${String(started.metricsPort)}/metrics`;
  };
  const everyone = (k: FailoverInput["kinds"][number]): number => (k.kind === "ManagedDatabase" ? k.n + NEW_OBJECTS : k.n);
  const leader = replica("scale-leader");
  const leaderMetrics = await metricsOf(leader);
  await leader.waitForLog((l) => l.msg === "became leader", 120_000);
  // The leader has looked at everything once before the standby joins.
  const t0 = Date.now();
  for (;;) {
    const done = await successes(leaderMetrics, input.kinds);
    if (input.kinds.every((k) => (done[k.kind] ?? 0) >= k.n)) break;
    if (Date.now() - t0 > 20 * 60_000) throw new Error("the leader did not re-observe everything within 20 min");
    await sleep(500);
  }
  const standbyStarted = Date.now();
  const standby = replica("scale-standby");
  const standbyMetrics = await metricsOf(standby);
  const warm = await standby.waitForLog((l) => l.msg === "standby caches warm", 20 * 60_000);
  const warmMillis = logTime(warm) - standbyStarted;
  const standbyRss = await rssMiB(standby.child.pid ?? 0);
  // The standby sends nothing to Linode while it waits.
  await sleep(5_000);
  const standbyCallsBefore = (await linodeCalls(standbyMetrics)).total;

  const flaps: string[] = [];
  const watches = await Promise.all(input.kinds.map((k) => watchKind(kube, k.type, namespace, (type, o) => {
    if (type === "MODIFIED" && !isReady(o) && !o.metadata.name.startsWith("failover-")) flaps.push(`${k.kind} ${o.metadata.name}`);
  })));
  const killedAt = Date.now();
  leader.child.kill("SIGKILL");
  await leader.exited;
  for (let i = 0; i < NEW_OBJECTS; i++) {
    await kube.createCustom(mdbType, namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `failover-${String(i)}` }, spec: input.databaseSpec(i) });
  }
  const led = await standby.waitForLog((l) => l.msg === "became leader", 120_000);
  const ledAt = logTime(led);
  const first = await (async () => {
    for (;;) {
      const m = firstCreateAfter(bench.emulator.mutations(), killedAt);
      if (m !== undefined) return m;
      if (Date.now() - ledAt > 5 * 60_000) return undefined;
      await sleep(50);
    }
  })();
  for (;;) {
    const done = await successes(standbyMetrics, input.kinds);
    if (input.kinds.every((k) => (done[k.kind] ?? 0) >= everyone(k))) break;
    if (Date.now() - ledAt > 20 * 60_000) throw new Error("the new leader did not re-observe everything within 20 min");
    await sleep(250);
  }
  const reobservedMillis = Date.now() - ledAt;
  const calls = await linodeCalls(standbyMetrics);
  const routes = await callsByRoute(standbyMetrics);
  await sleep(10_000);
  for (const w of watches) w.stop();

  figure("failover: the standby's caches warm after its start", secs(warmMillis), "s");
  figure("failover: the standby's RSS once warm", Math.round(standbyRss.rss), "MiB");
  figure("failover: Linode calls by the standby before it led", standbyCallsBefore, undefined, "0", standbyCallsBefore === 0);
  figure("failover: SIGKILL of the leader → the lease changes hands", secs(ledAt - killedAt), "s", "the lease (15 s) + a retry (2 s)");
  const act = first === undefined ? undefined : first.receivedAt - ledAt;
  figure("failover: lease changes hands → first Linode create for a new object", act === undefined ? undefined : secs(act), "s",
    `≤ ${String(FIRST_ACTION_TARGET_MILLIS / 1000)} s`, (v) => v * 1000 <= FIRST_ACTION_TARGET_MILLIS);
  figure("failover: lease changes hands → every object re-observed", secs(reobservedMillis), "s");
  figure("failover: Linode calls to re-observe everything", calls.total);
  figure("failover: Ready conditions that flapped", flaps.length, undefined, "0", flaps.length === 0);
  if (flaps.length > 0) input.notes.push(`Ready flaps in the failover: ${flaps.slice(0, 10).join(", ")}`);
  input.tables.push({ title: "Failover: Linode calls by the new leader to re-observe everything, by route", columns: ["call", "calls"], rows: [...routes].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v]) });
  input.notes.push(`Failover: two replicas with leader election on (lease ${LEASE}, 15 s), the same token, the chart's defaults; the standby fills its caches (watches, acts on nothing) once the leader has looked at everything; the leader is SIGKILLed and ${String(NEW_OBJECTS)} ManagedDatabases are created at once. The first action is the first database create the emulator's mutation log shows after the kill, timed from the "became leader" line of the new leader.`);
  return { proc: standby, metricsUrl: standbyMetrics };
}
