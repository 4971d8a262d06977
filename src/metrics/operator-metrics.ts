// The operator's own Prometheus metrics (the Linode client registers its own on the same
// registry). One registry per process, passed in, so tests can create their own.
import { readFileSync } from "node:fs";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { CacheEntries } from "./cache-entries.ts";

export interface OperatorMetrics {
  registry: Registry;
  reconcileTotal: Counter<"kind" | "result">;
  reconcileDuration: Histogram<"kind">;
  queueDepth: Gauge<"kind">;
  queueRetries: Counter<"kind">;
  inFlight: Gauge<"kind">;
  statusWrites: Counter<"kind">;
  informerRestarts: Counter<"informer" | "reason">;
  /**
   * Throws that escaped where they were made (a kind's bug, a handler, a promise nobody awaited)
   * and were caught at a boundary instead of ending the process, by where.
   */
  unexpectedErrors: Counter<"where">;
  /** 1 while this replica holds the leader lease, else 0. */
  leader: { set(value: 0 | 1): void };
  /** With shards: how many this replica sees alive, and the sharder's label writes by action. */
  shards: {
    alive(count: number): void;
    moved(action: string): void;
    /** An object another replica had worked on, first passed here `seconds` after it came into this replica's care. */
    tookOver(kind: string, seconds: number): void;
  };
  /** Where components register the per-object and per-token maps they keep (linode_operator_cache_entries). */
  cacheEntries: CacheEntries;
  /** Adds a kind whose objects the readiness gauges count at scrape time. */
  countObjects(kind: string, list: () => readonly { status?: { conditions?: readonly { type: string; status: string; lastTransitionTime?: string }[] } }[]): void;
}

type Listed = ReturnType<Parameters<OperatorMetrics["countObjects"]>[1]>;

/**
 * `operator` names the install ("namespace/leader-election-id", what the chart's alerts select
 * by, whatever job scrapes it); it labels linode_operator_build_info and linode_operator_leader.
 */
export function createOperatorMetrics(registry = new Registry(), opts: { defaultMetrics?: boolean; operator?: string } = {}): OperatorMetrics {
  // The standard names (process_*, nodejs_*): the dashboards everyone has expect them unprefixed.
  // Among them nodejs_eventloop_lag_p99_seconds, over the time since the last scrape.
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const operator = opts.operator ?? "unknown";
  registerBuildInfo(registers, operator);
  const kinds = new Map<string, () => Listed>();
  const cacheEntries = new CacheEntries();
  cacheEntries.register(registry);
  const readyOf = (o: Listed[number]) => o.status?.conditions?.find((c) => c.type === "Ready");
  new Gauge({
    name: "linode_operator_resources", help: "Resources by kind and Ready condition status (True, False, Unknown when not reported yet).", labelNames: ["kind", "ready"], registers,
    collect() {
      this.reset();
      for (const [kind, list] of kinds) {
        const counts: Record<string, number> = { True: 0, False: 0, Unknown: 0 };
        for (const o of list()) { const s = readyOf(o)?.status ?? "Unknown"; counts[s] = (counts[s] ?? 0) + 1; }
        for (const [ready, n] of Object.entries(counts)) this.set({ kind, ready }, n);
      }
    },
  });
  new Gauge({
    name: "linode_operator_oldest_not_ready_seconds", help: "How long the longest-not-Ready resource of a kind has been so (0 when all are Ready).", labelNames: ["kind"], registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const [kind, list] of kinds) {
        let oldest = 0;
        for (const o of list()) {
          const c = readyOf(o);
          if (c?.status === "True") continue;
          const since = c?.lastTransitionTime !== undefined ? Date.parse(c.lastTransitionTime) : Number.NaN;
          if (Number.isFinite(since)) oldest = Math.max(oldest, (now - since) / 1000);
        }
        this.set({ kind }, oldest);
      }
    },
  });
  return {
    countObjects: (kind, list) => { kinds.set(kind, list); },
    registry,
    cacheEntries,
    reconcileTotal: new Counter({ name: "linode_operator_reconcile_total", help: "Reconciles by kind and result (success, requeue, deferred, error, terminal, conflict).", labelNames: ["kind", "result"], registers }),
    reconcileDuration: new Histogram({ name: "linode_operator_reconcile_duration_seconds", help: "Reconcile duration by kind.", labelNames: ["kind"], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers }),
    queueDepth: new Gauge({ name: "linode_operator_workqueue_depth", help: "Keys waiting in the work queue.", labelNames: ["kind"], registers }),
    queueRetries: new Counter({ name: "linode_operator_workqueue_retries_total", help: "Keys re-queued with backoff after an error.", labelNames: ["kind"], registers }),
    inFlight: new Gauge({ name: "linode_operator_reconciles_in_flight", help: "Reconciles running now.", labelNames: ["kind"], registers }),
    statusWrites: new Counter({ name: "linode_operator_status_writes_total", help: "Status subresource writes.", labelNames: ["kind"], registers }),
    informerRestarts: new Counter({ name: "linode_operator_informer_restarts_total", help: "Watch restarts after errors or silence.", labelNames: ["informer", "reason"], registers }),
    unexpectedErrors: new Counter({ name: "linode_operator_unexpected_errors_total", help: "Throws caught at a boundary instead of ending the process (a bug to report): where is reconcile, worker, informer-handler, informer-index or process.", labelNames: ["where"], registers }),
    leader: ((g) => ({ set: (value: 0 | 1) => { g.set({ operator }, value); } }))(
      new Gauge({ name: "linode_operator_leader", help: "1 while this replica holds the leader lease; operator names the install (namespace/lease).", labelNames: ["operator"], registers }),
    ),
    // Registered only when first used: an install without shards shows neither.
    shards: ((reg) => {
      let alive: Gauge<"operator"> | undefined;
      let moves: Counter<"operator" | "action"> | undefined;
      let takeovers: Histogram<"kind"> | undefined;
      return {
        alive: (count: number) => {
          alive ??= new Gauge({ name: "linode_operator_shards", help: "Shards this replica sees alive (their Leases renewed), with --shards.", labelNames: ["operator"], registers: reg });
          alive.set({ operator }, count);
        },
        moved: (action: string) => {
          moves ??= new Counter({ name: "linode_operator_shard_moves_total", help: "The sharder's label writes by action: assign (an unassigned object, or a dead shard's), drain (a live shard's object that moves), undrain.", labelNames: ["operator", "action"], registers: reg });
          moves.inc({ operator, action });
        },
        tookOver: (kind: string, seconds: number) => {
          takeovers ??= new Histogram({
            name: "linode_operator_takeover_seconds",
            help: "Seconds from an object another replica had worked on (it carries the finalizer: a dead or leaving shard's) coming into this replica's care to the end of this replica's first successful pass of it, by kind.",
            labelNames: ["kind"], buckets: [1, 2.5, 5, 10, 20, 30, 60, 120, 300], registers: reg,
          });
          takeovers.observe({ kind }, seconds);
        },
      };
    })(registers),
  };
}

/**
 * The running build (version from package.json; commit baked in by scripts/build.ts, "unknown"
 * when run from source or built without git), as a constant 1 to join other series with.
 */
function registerBuildInfo(registers: Registry[], operator: string): void {
  let version = "unknown";
  try {
    // ../../package.json from src/metrics/ and from dist/cli/ alike.
    version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? version;
  } catch { /* not beside a package.json */ }
  const commit = process.env.LINODE_OPERATOR_COMMIT ?? "unknown";
  new Gauge({ name: "linode_operator_build_info", help: "The running build: version and commit, and the install it belongs to (operator: namespace/lease); always 1.", labelNames: ["version", "commit", "operator"], registers })
    .set({ version, commit, operator }, 1);
}
