// What the soak benchmark (test/bench/soak.ts) is made of: the objects it keeps (three kinds,
// some in team namespaces acting with their own token Secret), what one churn round does to
// them, a sample of the operator's memory, lag and maps, the RSS trend, and the audit of the
// emulator's accounts against the resources at the end.
import type { KubeClient } from "../../src/kube/client.ts";
import { secretsType, type KubeObject, type ResourceType, type SecretObject } from "../../src/kube/types.ts";
import type { LinodeClient } from "../../src/linode/index.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import { ownedSecretSelectors } from "../../src/runtime/connection-secrets.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { isReady, sleep } from "./common.ts";
import { rssMiB, scrape, sum, type CallKind } from "./metrics.ts";

export const BENCH_NS = "bench";
/** The token Secret every team namespace holds (spec.credentialsRef of its objects). */
export const TOKEN_SECRET = "linode-token";
export const CREDENTIALS_LABEL = "linode.operator.dev/credentials";

/** One resource the benchmark keeps: deleted and recreated under the same name, its spec moved by `rev`. */
export interface SoakObject {
  kind: CallKind;
  type: ResourceType;
  namespace: string;
  name: string;
  /** Bumped by each update: what the spec says now. */
  rev: number;
  spec(rev: number): Record<string, unknown>;
  /** The database a snapshot is of (deleted and recreated with it). */
  database?: SoakObject;
}

export const typeOf: Record<CallKind, ResourceType> = { ManagedDatabase: mdbType, NodeBalancer: nbType, DatabaseSnapshot: snapType };

/** Seeded, so two runs churn the same objects in the same order (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` distinct items of `from`, picked with `rand`. */
export function pick<T>(from: readonly T[], n: number, rand: () => number): T[] {
  const pool = [...from];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(...pool.splice(Math.floor(rand() * pool.length), 1));
  return out;
}

/**
 * M databases, B NodeBalancers and S snapshots (of the first S databases); every fifth object
 * lives in one of the team namespaces and acts with its token Secret, the rest in `bench` with
 * the operator's own token.
 */
export function soakObjects(M: number, B: number, S: number, teams: readonly string[]): SoakObject[] {
  const nsOf = (i: number): string => (i % 5 === 0 && teams.length > 0 ? teams[(i / 5) % teams.length] ?? BENCH_NS : BENCH_NS);
  const ref = (ns: string): Record<string, unknown> => (ns === BENCH_NS ? {} : { credentialsRef: { name: TOKEN_SECRET } });
  const dbs: SoakObject[] = Array.from({ length: M }, (_, i) => ({
    kind: "ManagedDatabase", type: mdbType, namespace: nsOf(i), name: `db-${String(i)}`, rev: 0,
    // An update adds (or moves) one address on the allow list: a PUT of the database.
    spec: (rev) => ({
      engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1",
      allowList: ["203.0.113.0/24", ...(rev > 0 ? [`198.51.100.${String(rev % 250)}/32`] : [])], ...ref(nsOf(i)),
    }),
  }));
  const nbs: SoakObject[] = Array.from({ length: B }, (_, b) => ({
    kind: "NodeBalancer", type: nbType, namespace: nsOf(b), name: `lb-${String(b)}`, rev: 0,
    // An update moves the tcp config's node weights: a PUT of each of its nodes.
    spec: (rev) => ({
      region: "us-east", ...ref(nsOf(b)),
      configs: [0, 1].map((c) => ({
        ...(c === 0 ? { port: 443, protocol: "https", tlsSecretRef: { name: "bench-tls" } } : { port: 8001, protocol: "tcp" }),
        check: "connection", checkInterval: 2, checkTimeout: 1,
        nodes: [0, 1, 2].map((n) => ({ label: `n${String(c)}-${String(n)}`, address: `192.168.${String(b % 250)}.${String(10 + c * 5 + n)}:80`, weight: c === 1 ? 50 + (rev % 10) : 50 })),
      })),
    }),
  }));
  const snaps: SoakObject[] = dbs.slice(0, S).map((db, i) => ({
    kind: "DatabaseSnapshot", type: snapType, namespace: db.namespace, name: `snap-${String(i)}`, rev: 0, database: db,
    spec: () => ({ databaseRef: { name: db.name } }),
  }));
  return [...dbs, ...nbs, ...snaps];
}

export const manifest = (o: SoakObject): KubeObject & { spec: Record<string, unknown> } => ({
  apiVersion: "linode.operator.dev/v1alpha1", kind: o.kind, metadata: { name: o.name, labels: { "soak.linode.operator.dev/rev": String(o.rev) } }, spec: o.spec(o.rev),
});

/** Applies an update: the spec's next revision (a snapshot, whose spec is fixed, gets a label: a pass with nothing to send). */
export async function update(kube: KubeClient, o: SoakObject): Promise<void> {
  o.rev++;
  const spec = o.kind === "DatabaseSnapshot" ? {} : { spec: o.spec(o.rev) };
  await kube.mergePatchCustom(o.type, { namespace: o.namespace, name: o.name }, { metadata: { labels: { "soak.linode.operator.dev/rev": String(o.rev) } }, ...spec });
}

/** Whether the resource is gone from the API server (its finalizer removed once its cloud object was). */
export async function isGone(kube: KubeClient, o: SoakObject): Promise<boolean> {
  try {
    await kube.getCustom(o.type, { namespace: o.namespace, name: o.name });
    return false;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return true;
    throw err;
  }
}

/**
 * Deletes the objects (all at once), waits until each is gone (at most `timeoutMillis`), and
 * creates them again under the same names: databases before their snapshots. The names not
 * gone in time are returned (and not recreated).
 */
export async function deleteAndRecreate(kube: KubeClient, objects: SoakObject[], timeoutMillis: number): Promise<string[]> {
  const uids = new Set((await Promise.all(objects.map((o) => kube.getCustom(o.type, { namespace: o.namespace, name: o.name })))).map((o) => o.metadata.uid));
  await Promise.all(objects.map((o) => kube.deleteCustom(o.type, { namespace: o.namespace, name: o.name })));
  const t0 = Date.now();
  let pending = [...objects];
  while (pending.length > 0 && Date.now() - t0 < timeoutMillis) {
    await sleep(2_000);
    const gone = await Promise.all(pending.map((o) => isGone(kube, o)));
    pending = pending.filter((_, i) => gone[i] !== true);
  }
  await collectOwnedSecrets(kube, [...new Set(objects.map((o) => o.namespace))], uids);
  const recreate = objects.filter((o) => !pending.includes(o));
  for (const o of recreate.filter((x) => x.kind !== "DatabaseSnapshot")) await kube.createCustom(o.type, o.namespace, manifest(o));
  for (const o of recreate.filter((x) => x.kind === "DatabaseSnapshot")) await kube.createCustom(o.type, o.namespace, manifest(o));
  return pending.map((o) => `${o.kind} ${o.namespace}/${o.name}`);
}

/**
 * The garbage collector's part (the benchmark's API server runs without kube-controller-manager):
 * the connection Secrets the deleted resources owned are deleted. Left in place, a database
 * created again under the same name would find a Secret of its name owned by another (the
 * deleted one) and report SecretConflict until it goes.
 */
async function collectOwnedSecrets(kube: KubeClient, namespaces: string[], owners: Set<string | undefined>): Promise<void> {
  for (const namespace of namespaces) {
    let token: string | undefined;
    do {
      const page = await kube.list<SecretObject>(secretsType, { namespace, ...ownedSecretSelectors, ...(token !== undefined ? { continueToken: token } : {}) });
      for (const s of page.items) {
        if (s.metadata.ownerReferences?.some((r) => owners.has(r.uid)) === true) await kube.deleteSecret({ namespace, name: s.metadata.name });
      }
      token = page.continueToken;
    } while (token !== undefined);
  }
}

/** One look at the operator: memory, the event loop's lag since the last look, every map's size, Ready objects by kind. */
export interface Sample {
  /** Seconds since the soak began. */
  t: number;
  /** Which operator process (0 before the restart, 1 after). */
  process: number;
  rss: number;
  /** Of `rss`, the pages of mapped files (the node binary's code as it first runs): MiB. */
  rssFile: number;
  heapUsed: number;
  /** V8's heap reserved (used or not) and memory held outside it (Buffers), in MiB: what RSS holds besides objects. */
  heapTotal: number;
  external: number;
  /** nodejs_eventloop_lag_p99_seconds in ms: the p99 since the previous scrape. */
  lagP99: number;
  maps: Map<string, number>;
  ready: Record<CallKind, number>;
}

/** The event loop's lag; a page without it has no lag to report (NaN), not a lag of 0. */
const LAG = "nodejs_eventloop_lag_p99_seconds";

export async function sampleOperator(metricsUrl: string, pid: number, t: number, process: number): Promise<Sample> {
  const [s, mem] = await Promise.all([scrape(metricsUrl), rssMiB(pid)]);
  const maps = new Map(s.filter((x) => x.name === "linode_operator_cache_entries").map((x): [string, number] => [x.labels.get("map") ?? "?", x.value]));
  const ready = (kind: CallKind): number => sum(s, "linode_operator_resources", (l) => l.get("kind") === kind && l.get("ready") === "True");
  return {
    t, process, rss: mem.rss, rssFile: mem.file, heapUsed: sum(s, "nodejs_heap_size_used_bytes") / 1_048_576,
    heapTotal: sum(s, "nodejs_heap_size_total_bytes") / 1_048_576, external: sum(s, "nodejs_external_memory_bytes") / 1_048_576, lagP99: s.some((x) => x.name === LAG) ? sum(s, LAG) * 1000 : Number.NaN, maps,
    ready: { ManagedDatabase: ready("ManagedDatabase"), NodeBalancer: ready("NodeBalancer"), DatabaseSnapshot: ready("DatabaseSnapshot") },
  };
}

/**
 * A trend in MiB per hour: one least-squares slope over every process's samples, each measured
 * from its own mean (a restart's drop is not a trend), after each process's first
 * `warmupSeconds` (a new process fills its caches first), with its standard error: a slope
 * within two errors of the target cannot tell growth from the garbage collector's sawtooth.
 * NaN without two samples in a process.
 */
export function slopePerHour(samples: readonly Sample[], warmupSeconds: number, of: (s: Sample) => number = (s) => s.rss): { slope: number; error: number } {
  let sxy = 0;
  let sxx = 0;
  const kept: { t: number; y: number; mt: number; my: number }[] = [];
  for (const p of new Set(samples.map((s) => s.process))) {
    const own = samples.filter((s) => s.process === p);
    const start = own[0]?.t ?? 0;
    const mine = own.filter((s) => s.t - start >= warmupSeconds);
    if (mine.length < 2) continue;
    const mt = mine.reduce((a, s) => a + s.t, 0) / mine.length;
    const my = mine.reduce((a, s) => a + of(s), 0) / mine.length;
    for (const s of mine) {
      sxy += (s.t - mt) * (of(s) - my);
      sxx += (s.t - mt) ** 2;
      kept.push({ t: s.t, y: of(s), mt, my });
    }
  }
  if (sxx === 0) return { slope: Number.NaN, error: Number.NaN };
  const b = sxy / sxx;
  const processes = new Set(samples.map((s) => s.process)).size;
  const residuals = kept.reduce((a, k) => a + (k.y - k.my - b * (k.t - k.mt)) ** 2, 0);
  const freedom = Math.max(1, kept.length - processes - 1);
  return { slope: b * 3600, error: Math.sqrt(residuals / freedom / sxx) * 3600 };
}

/**
 * Each process's lowest value of `of` in each `bucketSeconds` after its first `warmupSeconds`, as
 * one sample per bucket at the bucket's middle: what stays after garbage collection. Its trend
 * is growth without the sawtooth; a bucket shorter than half its length (the end) is dropped.
 */
export function lowestPerBucket(samples: readonly Sample[], warmupSeconds: number, bucketSeconds: number, of: (s: Sample) => number = (s) => s.rss): Sample[] {
  const out: Sample[] = [];
  for (const p of new Set(samples.map((s) => s.process))) {
    const own = samples.filter((s) => s.process === p);
    const start = (own[0]?.t ?? 0) + warmupSeconds;
    const buckets = new Map<number, Sample[]>();
    for (const s of own.filter((x) => x.t >= start)) {
      const b = Math.floor((s.t - start) / bucketSeconds);
      const list = buckets.get(b);
      if (list === undefined) buckets.set(b, [s]);
      else list.push(s);
    }
    for (const [b, list] of buckets) {
      if (list.length < 2 || (list.at(-1)?.t ?? 0) - (list[0]?.t ?? 0) < bucketSeconds / 2) continue;
      const low = list.reduce((a, s) => (of(s) < of(a) ? s : a));
      out.push({ ...low, t: start + (b + 0.5) * bucketSeconds, rss: of(low) });
    }
  }
  return out;
}

/** Every resource of the three kinds in these namespaces. */
export async function listResources(kube: KubeClient, namespaces: readonly string[]): Promise<{ kind: CallKind; obj: ManagedObject }[]> {
  const out: { kind: CallKind; obj: ManagedObject }[] = [];
  for (const kind of Object.keys(typeOf) as CallKind[]) {
    for (const namespace of namespaces) {
      let token: string | undefined;
      do {
        const page = await kube.list<ManagedObject>(typeOf[kind], { namespace, ...(token !== undefined ? { continueToken: token } : {}) });
        out.push(...page.items.map((obj) => ({ kind, obj })));
        token = page.continueToken;
      } while (token !== undefined);
    }
  }
  return out;
}

/** The resources not Ready (or being deleted), each with what its Ready condition says. */
export const notReady = (all: { kind: CallKind; obj: ManagedObject }[]): string[] =>
  all.filter((r) => !isReady(r.obj) || r.obj.metadata.deletionTimestamp !== undefined).map((r) => {
    const c = r.obj.status?.conditions?.find((x) => x.type === "Ready");
    return `${r.kind} ${r.obj.metadata.namespace ?? ""}/${r.obj.metadata.name} (${r.obj.metadata.deletionTimestamp !== undefined ? "deleting; " : ""}${c === undefined ? "no Ready condition" : `${c.reason}: ${(c as { message?: string }).message ?? ""}`})`;
  });

export interface Audit { cloud: number; duplicates: string[]; orphans: string[]; missing: string[] }

/**
 * The emulator's accounts against the resources: a cloud database, NodeBalancer or snapshot
 * backup no resource records is an orphan; two cloud objects with one label (one resource's
 * derived label) a duplicate; a recorded id the account does not hold, missing.
 */
export async function auditCloud(accounts: LinodeClient[], resources: { kind: CallKind; obj: ManagedObject }[]): Promise<Audit> {
  const recorded = (kind: CallKind, field: string): Set<number> => new Set(resources.filter((r) => r.kind === kind).map((r) => Number(r.obj.status?.[field])).filter(Number.isFinite));
  const dbIds = recorded("ManagedDatabase", "id");
  const nbIds = recorded("NodeBalancer", "id");
  const backupIds = recorded("DatabaseSnapshot", "backupId");
  // Only databases snapshots were taken of hold snapshot backups (a deleted database's go with it).
  const snapshotted = recorded("DatabaseSnapshot", "databaseId");
  const a: Audit = { cloud: 0, duplicates: [], orphans: [], missing: [] };
  const seen = { db: new Set<number>(), nb: new Set<number>(), backup: new Set<number>() };
  const check = (what: string, items: { id: number; label: string }[], ids: Set<number>, into: Set<number>): void => {
    const labels = new Map<string, number>();
    for (const x of items) {
      a.cloud++;
      into.add(x.id);
      labels.set(x.label, (labels.get(x.label) ?? 0) + 1);
      if (!ids.has(x.id)) a.orphans.push(`${what} ${String(x.id)} ${x.label}`);
    }
    for (const [label, n] of labels) if (n > 1) a.duplicates.push(`${what} ${label} ×${String(n)}`);
  };
  for (const linode of accounts) {
    const dbs = await linode.databases.listAllInstances();
    check("database", dbs, dbIds, seen.db);
    check("NodeBalancer", await linode.nodeBalancers.listAll(), nbIds, seen.nb);
    for (const db of dbs.filter((d) => snapshotted.has(d.id))) {
      const backups = (await linode.databases.engine(db.engine === "postgresql" ? "postgresql" : "mysql").listAllBackups(db.id)).filter((b) => b.type === "snapshot");
      check(`snapshot of database ${String(db.id)}:`, backups, backupIds, seen.backup);
    }
  }
  for (const [what, ids, found] of [["database", dbIds, seen.db], ["NodeBalancer", nbIds, seen.nb], ["snapshot", backupIds, seen.backup]] as const) {
    for (const id of ids) if (!found.has(id)) a.missing.push(`${what} ${String(id)}`);
  }
  return a;
}

/** A map is back when within the passes in flight at that moment (the concurrency, 8) and 2 % of its size before the churn. */
const backTo = (before: number, now: number): boolean => now <= before * 1.02 + 8;

/**
 * The maps (linode_operator_cache_entries) not back to their size before the churn. One there
 * before and absent at the end is not back: the gauge keeps an emptied map at 0, so a series
 * gone is a count that was not read, not an empty map. One new at the end is held to 0 before.
 */
export function mapsNotBack(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].sort().filter((m) => {
    const now = after.get(m);
    return now === undefined || !backTo(before.get(m) ?? 0, now);
  });
}
