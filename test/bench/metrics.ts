// Reading the operator's /metrics from a benchmark: samples with their labels, and the Linode
// calls it made sorted into the classes the issues count (lists, single reads, writes).
import { readFile } from "node:fs/promises";
import { fetch } from "undici";

export interface Sample { name: string; labels: Map<string, string>; value: number }

/**
 * The operator's /metrics; a connection refused or reset (a process starting, or busy), or an
 * answer other than 200, is tried again for up to a minute, then thrown: a page that never
 * came is not a page of zeros.
 */
export async function scrape(url: string): Promise<Sample[]> {
  let text: string | undefined;
  for (let attempt = 1; text === undefined; attempt++) {
    try {
      const res = await fetch(url);
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${url}: ${String(res.status)} ${body.slice(0, 200)}`);
      text = body;
    } catch (err) {
      if (attempt >= 60) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  return parseSamples(text);
}

/** Prometheus text format: one sample per line, comments and anything else skipped. */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) continue;
    const labels = new Map([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x): [string, string] => [x[1] ?? "", x[2] ?? ""]));
    out.push({ name: m[1] ?? "", labels, value: Number(m[3]) });
  }
  return out;
}

export const sum = (samples: Sample[], name: string, match: (labels: Map<string, string>) => boolean = () => true): number =>
  samples.filter((s) => s.name === name && match(s.labels)).reduce((a, s) => a + s.value, 0);

/**
 * The connection Secrets a process's cache holds (with --shards, its shard's alone): the owned
 * store's own count under linode_operator_cache_entries, not its indexes' ("…}.index.…").
 */
export const connectionSecretsCached = (samples: Sample[]): number => sum(samples, "linode_operator_cache_entries", (l) => {
  const map = l.get("map") ?? "";
  return /^informer\.secrets\{app\.kubernetes\.io\/managed-by=linode-operator[,}]/.test(map) && !map.includes("}.");
});

/** Reconcile passes with this result (success, deferred, …) as the operator counts them: per kind named, or (no kinds) in all. */
export async function reconciles(url: string, result: string): Promise<number>;
export async function reconciles(url: string, result: string, kinds: readonly string[]): Promise<Record<string, number>>;
export async function reconciles(url: string, result: string, kinds?: readonly string[]): Promise<number | Record<string, number>> {
  const s = await scrape(url);
  const of = (kind?: string): number => sum(s, "linode_operator_reconcile_total", (l) => l.get("result") === result && (kind === undefined || l.get("kind") === kind));
  return kinds === undefined ? of() : Object.fromEntries(kinds.map((k) => [k, of(k)]));
}

export type CallKind = "ManagedDatabase" | "DatabaseSnapshot" | "NodeBalancer";
export type CallClass = "lists" | "reads" | "writes";
export interface CallCounts { byKind: Record<CallKind, Record<CallClass, number>>; total: number; refused429: number; serverErrors: number }

/**
 * Which kind a Linode route serves and what class of call it is. Backups routes are the
 * snapshots' (a database's own backups list, read daily, is counted there too); a list is a
 * GET of a collection every object of the kind shares (the engines' instances, /nodebalancers);
 * a GET of one object or of one object's sub-collection (credentials, configs, nodes) is a
 * single read, because it is paid per object.
 */
export function classify(route: string, method: string): { kind: CallKind; cls: CallClass } {
  const kind: CallKind = route.startsWith("/nodebalancers") ? "NodeBalancer" : route.includes("/backups") ? "DatabaseSnapshot" : "ManagedDatabase";
  if (method !== "GET") return { kind, cls: "writes" };
  const list = route === "/nodebalancers" || /^\/databases\/[^/]+\/instances$/.test(route) || route === "/databases/instances";
  return { kind, cls: list ? "lists" : "reads" };
}

export async function linodeCalls(metricsUrl: string): Promise<CallCounts> {
  const zero = (): Record<CallClass, number> => ({ lists: 0, reads: 0, writes: 0 });
  const c: CallCounts = { byKind: { ManagedDatabase: zero(), DatabaseSnapshot: zero(), NodeBalancer: zero() }, total: 0, refused429: 0, serverErrors: 0 };
  for (const s of await scrape(metricsUrl)) {
    if (s.name !== "linode_api_requests_total") continue;
    const { kind, cls } = classify(s.labels.get("route") ?? "", s.labels.get("method") ?? "");
    c.byKind[kind][cls] += s.value;
    c.total += s.value;
    const status = s.labels.get("status") ?? "";
    if (status === "429") c.refused429 += s.value;
    if (status.startsWith("5")) c.serverErrors += s.value;
  }
  return c;
}

/** Linode calls by "METHOD route", e.g. "GET /nodebalancers/{nodeBalancerId}/configs". */
export async function callsByRoute(metricsUrl: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of await scrape(metricsUrl)) {
    if (s.name !== "linode_api_requests_total") continue;
    const key = `${s.labels.get("method") ?? ""} ${s.labels.get("route") ?? ""}`;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

export function minus(a: CallCounts, b: CallCounts): CallCounts {
  const kinds = Object.keys(a.byKind) as CallKind[];
  const byKind = Object.fromEntries(kinds.map((k) => [k, { lists: a.byKind[k].lists - b.byKind[k].lists, reads: a.byKind[k].reads - b.byKind[k].reads, writes: a.byKind[k].writes - b.byKind[k].writes }])) as CallCounts["byKind"];
  return { byKind, total: a.total - b.total, refused429: a.refused429 - b.refused429, serverErrors: a.serverErrors - b.serverErrors };
}

export const callsOf = (c: CallCounts, k: CallKind): number => c.byKind[k].lists + c.byKind[k].reads + c.byKind[k].writes;

/**
 * A process's resident and peak resident memory, in MiB; NaN for a field its status lacks (a
 * process that exited and was not reaped yet has none), which a figure shows as no data.
 */
export async function rssMiB(pid: number): Promise<{ rss: number; peak: number; file: number }> {
  const status = await readFile(`/proc/${String(pid)}/status`, "utf8");
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  // RssFile: pages of files mapped in (the node binary's code as it first runs), which the kernel can drop and read again.
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024, file: kb("RssFile") / 1024 };
}

/** The highest of a series of samples; one that could not be taken (undefined) makes it unknown, as it may have been the highest. */
export class Peak {
  /** -Infinity: nothing seen yet; NaN: a sample was missed (and stays so: Math.max(NaN, x) is NaN). */
  private max = Number.NEGATIVE_INFINITY;
  see(sample: number | undefined): void {
    this.max = sample === undefined ? Number.NaN : Math.max(this.max, sample);
  }
  /** Undefined with no samples or a missed one. */
  get value(): number | undefined {
    return Number.isFinite(this.max) ? this.max : undefined;
  }
}
