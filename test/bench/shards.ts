// Shards benchmark (issue 46): R `linode-operator run` replicas with --shards on a real API
// server and the emulator (150 ms median latency by default), D ManagedDatabases spread over K
// namespaces. The replicas share one token, as the chart's do, and each names itself in its
// User-Agent, so the emulator's mutation log says which replica sent every write. Measured: time to converge and each
// replica's RSS and objects; a replica SIGKILLed: time until its objects are on the others and
// re-observed; a rolling restart of every replica (SIGTERM, a new one started): Ready flaps.
// Throughout: duplicates and orphans (cloud databases against resources), creates sent twice,
// and two-writer events (two-writers.ts: two replicas' writes to one database in flight at once).
// Convergence is held to the budget's time floor (floors.ts: the calls the workload needs at
// each account's share, from the counts before the run), target ≤ 1.1× (issue 46).
// R = 1 runs the default (one leader, no shards) for the side-by-side row.
// Namespaces are what is hashed: with few of them the shares can be uneven (12 over 3 replicas
// once gave one replica none), so the default spreads the databases over 60.
// With A > 1 accounts (the fourth argument), namespace i acts with account i mod A's token (its
// Secret named in spec.credentialsRef) and the replicas shard by account (--shard-by account):
// one account's objects on one replica, so its call budget is spent by one.
//   node test/bench/shards.ts [D=600] [K=60] [R=3] [A=1]
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { secretsType, type KubeObject, type ListOptions, type ResourceType } from "../../src/kube/types.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { tokenId } from "../../src/linode/token-id.ts";
import { OPERATOR_KEY } from "../../src/resources/shard-keys.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../src/runtime/connection-secrets.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { DEFAULT_POLL, Timings } from "../../src/runtime/timings.ts";
import { MAX_PAGE_SIZE } from "../../src/linode/pagination.ts";
import { DRAIN_LABEL, SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { TOOK_OVER } from "../../src/runtime/sharding/sharder.ts";
import type { OperatorProcess } from "../harness/operator-process.ts";
import { startBench } from "./bench-setup.ts";
import { budgetAt, workloadFloor } from "./floors.ts";
import { isReady, kubectl, say, secs, sleep, watchKind } from "./common.ts";
import { connectionSecretsCached, rssMiB, scrape, sum } from "./metrics.ts";
import { resultCollector, saveResult } from "./report/result.ts";
import { TWO_WRITERS_MEANING, twoWriters } from "./two-writers.ts";

const [D, K, R, A] = [600, 60, 3, 1].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number, number];
if (![D, K, R, A].every((n) => Number.isInteger(n) && n > 0) || A > K) throw new Error("usage: node test/bench/shards.ts [databases=600] [namespaces=60] [replicas=3] [accounts=1, at most the namespaces]");
const sharded = R > 1;
const byAccount = A > 1;
/** Account j's token, for namespace i: account i mod A (one account: the operator's own token). */
const accountToken = (j: number): string => `bench-account-${String(j)}`;
const namespaceToken = (i: number): string | undefined => (byAccount ? accountToken(i % A) : undefined);
const { figures, tables, notes, figure } = resultCollector(say);
const PROVISION_SECONDS = 5;
/** Each replica's --linode-api-share (the chart's default). */
const API_SHARE = 0.5;
/**
 * The floor convergence is held to (floors.ts), computed from the counts before the run: each
 * account's databases by engine (database i is in namespace i mod K, whose account is its index
 * mod A), each account's budget its own, so the accounts converge side by side and the largest
 * sets the time; the calls are every account's.
 */
const accountFloors = Array.from({ length: A }, (_, j) => {
  const byEngine = [0, 0];
  for (let i = 0; i < D; i++) if ((i % K) % A === j) byEngine[i % 2] = (byEngine[i % 2] ?? 0) + 1;
  return workloadFloor({ databasesByEngine: byEngine, nodeBalancers: 0, configsPerNodeBalancer: 0, snapshots: 0, provisionSeconds: PROVISION_SECONDS, pendingPollSeconds: DEFAULT_POLL.pendingMillis / 1000 }, budgetAt(API_SHARE));
});
const floorSeconds = Math.max(...accountFloors.map((f) => f.seconds));
const floorCalls = accountFloors.reduce((n, f) => n + f.calls, 0);
const bench = await startBench({ provisionSeconds: PROVISION_SECONDS, ...(byAccount ? { accountTokens: Object.fromEntries(Array.from({ length: A }, (_, j) => [`account-${String(j)}`, [accountToken(j)]])) } : {}) });
const { cp, emulator } = bench;
/** Every request the emulator has answered (the operator's, until the audit at the end). */
const linodeCalls = (): number => Object.values(emulator.requestCounts()).reduce((a, b) => a + b, 0);
const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
const namespaces = Array.from({ length: K }, (_, i) => `tenant-${String(i)}`);
const LEASE_NS = "bench";

interface Replica { name: string; proc: OperatorProcess; metricsUrl?: string }
let seq = 0;
const live: Replica[] = [];
/** Replicas this bench stops on purpose: any other exit is reported. */
const expectedExits = new Set<string>();
async function startReplica(): Promise<Replica> {
  seq++;
  const name = `replica-${String(seq)}`;
  const proc = bench.spawnOperator(["--linode-api-share", String(API_SHARE)], {
    // Every namespace watched (the chart's default: one watch per type); a list of sixty makes a
    // watch per namespace and type, which with three replicas overloaded the API server here.
    LEADER_ELECT: "true", SHARDS: String(sharded), POD_NAMESPACE: LEASE_NS, POD_NAME: name, ...(byAccount && sharded ? { SHARD_BY: "account" } : {}),
  });
  const r: Replica = { name, proc };
  live.push(r);
  void proc.exited.then((code) => {
    live.splice(live.indexOf(r), 1);
    if (!expectedExits.has(name)) {
      const last = proc.logs.filter((l) => ["warn", "error", "fatal"].includes(String(l.level))).slice(-3).map((l) => `${String(l.msg)}${l.err !== undefined ? ` (${JSON.stringify(l.err).slice(0, 300)})` : ""}`);
      const line = `${name} exited unexpectedly (code ${String(code)}): ${last.join(" | ")}`;
      say(`  !! ${line}`);
      notes.push(line);
    }
  });
  const started = await proc.waitForLog((l) => l.msg === "operator started", 120_000);
  r.metricsUrl = `http://127.0.0.1:${String(started.metricsPort)}/metrics`;
  return r;
}
/** Every object of a type, in pages of 500 (`opts`: a selector, metadata only). */
const listEvery = async <T extends KubeObject>(t: ResourceType, opts: ListOptions = {}): Promise<T[]> => {
  const out: T[] = [];
  let token: string | undefined;
  do {
    const page = await kube.list<T>(t, { ...opts, limit: 500, ...(token !== undefined ? { continueToken: token } : {}) });
    out.push(...page.items);
    token = page.continueToken;
  } while (token !== undefined);
  return out;
};
const everything = (): Promise<ManagedObject[]> => listEvery<ManagedObject>(mdbType);
const liveNames = (): Set<string> => new Set(live.map((r) => r.name));
/** What the sharder hashes for a namespace's objects: the namespace, or its token's account. */
const shardKeyOf = (ns: string): string => {
  const token = namespaceToken(namespaces.indexOf(ns));
  return !byAccount ? ns : token === undefined ? OPERATOR_KEY : tokenId(token);
};
/** Every object Ready and (with shards) on the live replica its key hashes to, none draining. */
const allSettled = (all: ManagedObject[]): boolean => {
  const ring = new HashRing(liveNames());
  return all.length === D && all.every((o) => isReady(o)
    && (!sharded || (o.metadata.labels?.[SHARD_LABEL] === ring.owner(shardKeyOf(o.metadata.namespace ?? "")) && o.metadata.labels?.[DRAIN_LABEL] === undefined)));
};
/**
 * The bench's own watch of every ManagedDatabase. A wait looks here and confirms with one list
 * only when this says settled: listing 10,000 objects every two seconds loaded the API server
 * the replicas share, and it timed a takeover no finer than a list's length.
 */
const mirror = new Map<string, ManagedObject>();
let mirrorWatch: { stop(): void } | undefined;
const settled = async (): Promise<boolean> => allSettled([...mirror.values()]) && allSettled(await everything());
/** A limit for a wait sized at 600 databases, grown with D: at 10k a replica's share takes minutes to re-observe at the API's budget. */
const scaled = (millis: number): number => Math.round(millis * Math.max(1, D / 600));
async function until(what: string, fn: () => Promise<boolean>, limitMillis: number): Promise<number> {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > limitMillis) throw new Error(`${what}: not within ${String(limitMillis / 1000)} s`);
    await sleep(500);
  }
  return Date.now() - t0;
}
/** Objects another replica had worked on, passed by `r` since they came into its care. */
const takeovers = async (r: Replica): Promise<number> => sum(await scrape(r.metricsUrl ?? ""), "linode_operator_takeover_seconds_count", (l) => l.get("kind") === "ManagedDatabase");
const objectsOf = async (r: Replica): Promise<number> => sum(await scrape(r.metricsUrl ?? ""), "linode_operator_resources", (l) => l.get("kind") === "ManagedDatabase");
/** The connection Secrets a replica's cache holds (each shard's: its own objects' alone). */
const secretsCachedBy = async (r: Replica): Promise<number> => connectionSecretsCached(await scrape(r.metricsUrl ?? ""));

/** Database creates in the mutation log by replica (its User-Agent), and pairs of replicas writing one database. */
function writeAudit(since: number): { creates: Map<string, number>; twoWriters: string[] } {
  const creates = new Map<string, number>();
  const log = emulator.mutations();
  for (const m of log) {
    if (m.receivedAt >= since && m.method === "POST" && /\/databases\/[a-z]+\/instances$/.test(m.path)) creates.set(m.userAgent, (creates.get(m.userAgent) ?? 0) + 1);
  }
  return { creates, twoWriters: twoWriters(log, since) };
}

try {
  mirrorWatch = await watchKind(kube, mdbType, undefined, (type, o) => {
    const key = `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    if (type === "DELETED") mirror.delete(key);
    else mirror.set(key, o);
  });
  for (const [i, ns] of namespaces.entries()) {
    await kubectl(cp, ["create", "namespace", ns]);
    const token = namespaceToken(i);
    if (token !== undefined) await kube.applySecret({ metadata: { namespace: ns, name: "linode-token", labels: { "linode.operator.dev/credentials": "true" } }, data: { token: Buffer.from(token).toString("base64") } });
  }
  const t0 = Date.now();
  for (let r = 0; r < R; r++) await startReplica();
  say(`== convergence: ${String(D)} ManagedDatabases over ${String(K)} namespaces${byAccount ? ` and ${String(A)} accounts` : ""}, ${String(R)} replica(s)${sharded ? ` with --shards${byAccount ? " --shard-by account" : ""}` : " (the default: one leader)"}`);
  const callsBefore = linodeCalls();
  const tApply = Date.now();
  for (let i = 0; i < D; i++) {
    const ns = namespaces[i % K] ?? "";
    const credentials = namespaceToken(i % K) !== undefined ? { credentialsRef: { name: "linode-token" } } : {};
    await kube.createCustom(mdbType, ns, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `db-${String(i)}` }, spec: { engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"], ...credentials } });
  }
  await until("all Ready", settled, 60 * 60_000);
  figure("all Ready after the first apply", secs(Date.now() - tApply), "s");
  figure("replicas started to all Ready", secs(Date.now() - t0), "s");
  const convergedSeconds = (Date.now() - tApply) / 1000;
  const calls = linodeCalls() - callsBefore;
  const floorFormula = accountFloors[0]?.formula.split("; time floor: ") ?? [];
  figure(`converging: the budget's time floor (${A > 1 ? `the largest of ${String(A)} accounts' own; ` : ""}${floorFormula[1] ?? ""})`, floorSeconds, "s");
  figure("converging: time against the budget's time floor", Math.round((convergedSeconds / floorSeconds) * 100) / 100, "×", "≤ 1.1", convergedSeconds <= 1.1 * floorSeconds);
  figure(`converging: Linode calls (${floorFormula[0] ?? ""}: ${String(floorCalls)})`, calls);
  figure("converging: Linode calls against that floor", Math.round((calls / floorCalls) * 100) / 100, "×");
  await sleep(10_000);
  const rows: (string | number)[][] = [];
  for (const r of live) {
    const mem = await rssMiB(r.proc.child.pid ?? 0);
    rows.push([r.name, Math.round(mem.rss), Math.round(mem.peak), await objectsOf(r), await secretsCachedBy(r)]);
  }
  tables.push({ title: "Each replica once converged", columns: ["replica", "RSS (MiB)", "peak RSS (MiB)", "objects it works on", "connection Secrets it caches"], rows });
  for (const row of rows) say(`    ${row.map(String).join("  ")}`);
  figure("largest replica RSS once converged", Math.max(...rows.map((r) => Number(r[1]))), "MiB");
  // Each replica caches its own objects' connection Secrets alone: together, each Secret once.
  const cachedSecrets = rows.reduce((n, r) => n + Number(r[4]), 0);
  if (sharded) figure("connection Secrets cached, summed over the replicas", cachedSecrets, undefined, `${String(D)} (each by one replica)`, cachedSecrets === D);
  const converging = writeAudit(tApply);
  const createsSent = [...converging.creates.values()].reduce((a, b) => a + b, 0);
  figure("database creates sent while converging", createsSent, undefined, `${String(D)} (one each)`, createsSent === D);

  if (sharded) {
    // ---- One replica SIGKILLed ----
    // The replica with the most objects.
    const before = await everything();
    const count = (r: Replica): number => before.filter((o) => o.metadata.labels?.[SHARD_LABEL] === r.name).length;
    const victim = [...live].sort((a, b) => count(b) - count(a))[0];
    if (victim === undefined) throw new Error("no replica");
    const itsObjects = count(victim);
    const killedAt = Date.now();
    expectedExits.add(victim.name);
    victim.proc.child.kill("SIGKILL");
    await victim.proc.exited;
    const takeoversBefore = new Map(await Promise.all(live.map(async (r): Promise<[string, number]> => [r.name, await takeovers(r)])));
    await until("its objects on the others", settled, scaled(120_000));
    const movedMillis = Date.now() - killedAt;
    // Re-observed: each of its objects passed once by its new shard (linode_operator_takeover_seconds).
    await until("re-observed", async () => {
      let grown = 0;
      for (const r of live) grown += (await takeovers(r)) - (takeoversBefore.get(r.name) ?? 0);
      return grown >= itsObjects;
    }, scaled(120_000));
    figure(`a SIGKILLed replica's ${String(itsObjects)} objects on the others after`, secs(movedMillis), "s", "≤ 30 s", movedMillis <= 30_000);
    figure("… and each passed once by its new shard after (linode_operator_takeover_seconds)", secs(Date.now() - killedAt), "s");
    // What the API's budget allows for that: a survivor judges a dead shard's objects only from a
    // list of the account's databases begun after it saw that shard dead (one begun before may
    // predate the dead shard's last action), and each survivor lists for itself with its part of
    // the paginated class.
    const pages = [0, 1].reduce((n, engine) => n + Math.ceil(Math.ceil((D - engine) / 2) / MAX_PAGE_SIZE), 0);
    const perSurvivor = budgetAt(API_SHARE).listsPerWindow / live.length;
    const reobserveFloor = Timings.leaseDurationMillis / 1000 + (pages * 60) / perSurvivor;
    figure(`… the floor for that: the Lease's ${String(Timings.leaseDurationMillis / 1000)} s, then one list of the account's databases by each survivor (${String(pages)} pages at its ${String(perSurvivor)} a minute of the paginated class)`, Math.round(reobserveFloor * 10) / 10, "s");
    // Where the time went, from the survivors' logs: its Lease seen expired, then the sharder's sweep.
    const logged = (msg: string): Record<string, unknown>[] => live.flatMap((r) => r.proc.logs)
      .filter((l) => l.msg === msg && Date.parse(String(l.time)) >= killedAt)
      .sort((a, b) => Date.parse(String(a.time)) - Date.parse(String(b.time)));
    const seen = logged("shards changed").find((l) => Array.isArray(l.shards) && !(l.shards as unknown[]).includes(victim.name));
    const swept = logged("shards assigned").find((l) => seen !== undefined && Date.parse(String(l.time)) >= Date.parse(String(seen.time)));
    // A part not in the logs is no data, not left out.
    const seenAt = seen !== undefined ? Date.parse(String(seen.time)) : Number.NaN;
    const sweptAt = swept !== undefined ? Date.parse(String(swept.time)) : Number.NaN;
    figure("… of which: its Lease seen expired by the others", Number.isNaN(seenAt) ? undefined : secs(seenAt - killedAt), "s");
    const took = logged(TOOK_OVER).find((l) => Array.isArray(l.shards) && (l.shards as unknown[]).includes(victim.name));
    figure(`… the sharder's takeover after that: its ${typeof took?.assigned === "number" ? String(took.assigned) : "?"} objects listed by their label, each assigned after its connection Secret`, typeof took?.millis === "number" ? secs(took.millis) : undefined, "s");
    figure(`… the sharder's whole sweep after the Lease was seen expired (the takeover, then every object decided again: ${typeof swept?.assign === "number" ? String(swept.assign) : "?"} assigned)`, Number.isNaN(sweptAt - seenAt) ? undefined : secs(sweptAt - seenAt), "s");

    // ---- Rolling restart: each replica in turn SIGTERMed and replaced ----
    const flaps: string[] = [];
    const watch = await watchKind(kube, mdbType, undefined, (type, o) => { if (type === "MODIFIED" && !isReady(o)) flaps.push(`${o.metadata.namespace ?? ""}/${o.metadata.name}`); });
    const tRoll = Date.now();
    await startReplica();
    for (const old of live.filter((r) => r.name !== `replica-${String(seq)}`)) {
      expectedExits.add(old.name);
      old.proc.child.kill("SIGTERM");
      await old.proc.exited;
      await startReplica();
      await until("settled after a replacement", settled, scaled(180_000));
    }
    await sleep(10_000);
    watch.stop();
    figure("rolling restart of every replica: took", secs(Date.now() - tRoll), "s");
    figure("rolling restart: Ready conditions that flapped", flaps.length, undefined, "0", flaps.length === 0);
    if (flaps.length > 0) notes.push(`Flaps in the rolling restart: ${flaps.slice(0, 10).join(", ")}`);
  }

  // ---- The cloud against the resources, and the mutation log ----
  const resources = await everything();
  if (sharded) {
    // Whatever moved, each connection Secret is labelled to its database's shard (so in that shard's cache alone).
    const shardOf = new Map(resources.map((o) => [o.metadata.uid ?? "", o.metadata.labels?.[SHARD_LABEL]]));
    let secrets = 0;
    let astray = 0;
    for (const sec of await listEvery<KubeObject>(secretsType, { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`, metadataOnly: true })) {
      // Connection Secrets only: the operator's own ownership-key Secret carries the label too.
      const controller = sec.metadata.ownerReferences?.find((r) => r.controller === true);
      if (controller?.kind !== mdbType.kind) continue;
      secrets++;
      if (sec.metadata.labels?.[SHARD_LABEL] === undefined || sec.metadata.labels[SHARD_LABEL] !== shardOf.get(controller.uid)) astray++;
    }
    figure("connection Secrets at the end", secrets, undefined, String(D), secrets === D);
    figure("… labelled to another shard than their database's (after the kill and the rolling restart)", astray, undefined, "0", astray === 0);
  }
  const ids = new Set(resources.map((o) => o.status?.id).filter((id) => id !== undefined).map(String));
  // Every account's databases (each token sees its own account's).
  const inCloud: { id: number }[] = [];
  for (const token of byAccount ? Array.from({ length: A }, (_, j) => accountToken(j)) : ["bench-token"]) {
    const linode = new LinodeClient({ token, baseUrl: emulator.url, rateLimit: false });
    inCloud.push(...await linode.databases.mysql.listAll(), ...await linode.databases.postgresql.listAll());
    await linode.close();
  }
  const orphans = inCloud.filter((db) => !ids.has(String(db.id))).length;
  const all = writeAudit(tApply);
  const totalCreates = [...all.creates.values()].reduce((a, b) => a + b, 0);
  figure("database creates sent in all", totalCreates, undefined, `${String(D)} (one each, whatever moved)`, totalCreates === D);
  figure("resources with a database id", ids.size, undefined, String(D), ids.size === D);
  figure("databases in the account no resource records (duplicates, orphans)", orphans, undefined, "0", orphans === 0);
  // The two-writer check can only fail if the log tells the replicas apart (each names itself in its User-Agent).
  const writers = new Set(emulator.mutations().filter((m) => m.receivedAt >= tApply).map((m) => m.userAgent)).size;
  if (sharded) figure("replicas told apart in the emulator's log (distinct User-Agents among the writes)", writers, undefined, "≥ 2", writers >= 2);
  figure(`two-writer events (${TWO_WRITERS_MEANING})`, all.twoWriters.length, undefined, "0", all.twoWriters.length === 0);
  if (all.twoWriters.length > 0) notes.push(`Two writers: ${all.twoWriters.slice(0, 10).join("; ")}`);
  notes.push(`Each replica runs the chart's defaults (concurrency 4) with the chart's --linode-api-share 0.5 and ${byAccount ? "each account's token" : "the one token"} (each stops where the API's X-RateLimit-Remaining says half the limit is spent, by any of them: one token, one budget), naming itself in its User-Agent, so the emulator's mutation log says which replica sent each write. The emulator provisions a database in 5 s.`);
  if (byAccount) notes.push(`Namespace i acts with account i mod ${String(A)}'s token (a Secret its databases name in spec.credentialsRef)${sharded ? "; the replicas shard by account (--shard-by account), so each account's calls come from one replica" : ""}.`);
  const accounts = byAccount ? `, ${String(A)} accounts` : "";
  await saveResult({
    // The 600-database rows keep their names (docs link them); other sizes are saved beside them.
    name: process.env.BENCH_RESULT ?? `shards-${D === 600 ? "" : `${String(D)}-`}${String(R)}${byAccount ? `-accounts-${String(A)}` : ""}`, title: `Shards: ${String(D)} ManagedDatabases over ${String(K)} namespaces${accounts}, ${String(R)} replica(s)`,
    command: `npm run bench:shards -- ${String(D)} ${String(K)} ${String(R)}${byAccount ? ` ${String(A)}` : ""}`, figures, tables, charts: [], notes,
  });
} finally {
  mirrorWatch?.stop();
  for (const r of live) expectedExits.add(r.name);
  await bench.stop();
}
