// Informers feed keys into one work queue; N workers run the generic reconciler for each
// key, never two at once for the same key. Outcomes map to the queue: requeueAfter → delayed
// add, TerminalError → wait for the next spec change, RetryAfterError → delayed add, 409 →
// quick retry without counting as an error, anything else → per-key exponential backoff.
import type { KubeClient, KubeObject, ListPage } from "../kube/client.ts";
import { isConflict } from "../kube/errors.ts";
import { Informer, objectKey, type InformerEvent, type InformerSource } from "../kube/informer.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import { RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
import type { Logger } from "./logger.ts";
import type { KindDescriptor, ManagedObject } from "./managed.ts";
import { ManagedReconciler, type ReconcilerDeps } from "./reconciler.ts";
import { WorkQueue, type BackoffPolicy } from "./workqueue.ts";

export interface ControllerOptions {
  concurrency: number;
  /** Namespaces to watch; empty or undefined means all. */
  namespaces?: string[];
  backoff?: Partial<BackoffPolicy>;
  /** Enqueue every cached object this often (jittered), in case an event was missed. */
  resyncMillis?: number;
  watchdogMillis?: number;
  /** Longest a shutdown waits for in-flight reconciles before aborting them. */
  shutdownGraceMillis?: number;
  /**
   * Events within this window after the first one coalesce into one reconcile, so a burst
   * of edits (e.g. rapid allowList changes) becomes one API update, not one per edit.
   */
  coalesceMillis?: number;
}

export interface SecondarySource<T extends KubeObject> {
  source: (namespace: string | undefined) => InformerSource<T>;
  /** Keys (namespace/name) of our objects that an event on this object concerns. */
  map: (obj: T) => string[];
}

/** Whether an update changed anything a reconcile depends on (not just our own status write). */
function relevantChange(obj: ManagedObject, old: ManagedObject | undefined): boolean {
  if (old === undefined) return true;
  const a = obj.metadata, b = old.metadata;
  return a.generation !== b.generation
    || a.deletionTimestamp !== b.deletionTimestamp
    || JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {})
    || JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {})
    || JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []);
}

export class Controller<Spec, Status> {
  readonly kind: KindDescriptor<Spec, Status>;
  readonly queue: WorkQueue;
  private readonly kube: KubeClient;
  private readonly reconciler: ManagedReconciler<Spec, Status>;
  private readonly informers: Informer<ManagedObject>[] = [];
  private readonly secondary: Informer<KubeObject>[] = [];
  private readonly secondaryByName = new Map<string, Informer<KubeObject>[]>();
  private readonly opts: ControllerOptions;
  private readonly log: Logger;
  private readonly metrics: OperatorMetrics | undefined;
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private stopRequested = false;
  private readonly kindName: string;

  constructor(kind: KindDescriptor<Spec, Status>, deps: ReconcilerDeps & { log: Logger; metrics?: OperatorMetrics }, opts: ControllerOptions) {
    this.kind = kind;
    this.kube = deps.kube;
    this.opts = opts;
    this.log = deps.log.child({ kind: kind.type.kind });
    this.metrics = deps.metrics;
    this.kindName = kind.type.kind;
    const m = this.metrics;
    this.queue = new WorkQueue({
      ...(opts.backoff !== undefined ? { backoff: opts.backoff } : {}),
      observer: {
        depth: (d) => m?.queueDepth.set({ kind: this.kindName }, d),
        retried: () => m?.queueRetries.inc({ kind: this.kindName }),
      },
    });
    this.reconciler = new ManagedReconciler(kind, {
      ...deps,
      onStatusWrite: () => { m?.statusWrites.inc({ kind: this.kindName }); deps.onStatusWrite?.(); },
    });
    const t = kind.type;
    for (const ns of this.namespaceList()) {
      const path = ns === undefined ? `/apis/${t.group}/${t.version}/${t.plural}` : `/apis/${t.group}/${t.version}/namespaces/${ns}/${t.plural}`;
      const source: InformerSource<ManagedObject> = {
        name: t.plural,
        watchPath: path,
        list: (token): Promise<ListPage<ManagedObject>> => this.kube.listCustom<ManagedObject>(t, { ...(ns !== undefined ? { namespace: ns } : {}), ...(token !== undefined ? { continueToken: token } : {}) }),
      };
      this.informers.push(new Informer(this.kube, source, (ev: InformerEvent, obj, old) => {
        if (ev === "update" && !relevantChange(obj, old)) return;
        if (ev === "delete") return;
        this.enqueue(objectKey(obj));
      }, this.informerOptions(t.plural)));
    }
  }

  /** Also watch objects of another type and enqueue the keys they map to (e.g. owned Secrets). */
  watches<T extends KubeObject>(sec: SecondarySource<T>): this {
    for (const ns of this.namespaceList()) {
      const source = sec.source(ns);
      const informer = new Informer<T>(this.kube, source, (_ev, obj) => {
        for (const key of sec.map(obj)) this.enqueue(key);
      }, this.informerOptions(source.name));
      this.secondary.push(informer as unknown as Informer<KubeObject>);
      const list = this.secondaryByName.get(source.name) ?? [];
      list.push(informer as unknown as Informer<KubeObject>);
      this.secondaryByName.set(source.name, list);
    }
    return this;
  }

  /** An object from a secondary watch's cache (by source name and namespace/name key). */
  getSecondary(sourceName: string, key: string): KubeObject | undefined {
    for (const i of this.secondaryByName.get(sourceName) ?? []) {
      const o = i.get(key);
      if (o !== undefined) return o;
    }
    return undefined;
  }

  get synced(): boolean {
    return [...this.informers, ...this.secondary].every((i) => i.hasSynced);
  }

  /** Age of the stalest watch, for readiness. */
  get oldestWatchMillis(): number {
    return Math.max(0, ...[...this.informers, ...this.secondary].map((i) => Date.now() - i.lastEventAt));
  }

  get(key: string): ManagedObject | undefined {
    for (const i of this.informers) {
      const o = i.get(key);
      if (o !== undefined) return o;
    }
    return undefined;
  }

  list(): ManagedObject[] {
    return this.informers.flatMap((i) => i.list());
  }

  async start(): Promise<void> {
    for (const i of [...this.informers, ...this.secondary]) i.start();
    await Promise.all([...this.informers, ...this.secondary].map((i) => i.synced));
    // Stopped while the caches were filling: start nothing.
    if (this.stopRequested) return;
    this.log.info({ objects: this.list().length }, "cache synced; starting workers");
    this.workers = Array.from({ length: this.opts.concurrency }, () => this.worker());
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.resyncTimer !== undefined) clearTimeout(this.resyncTimer);
    await Promise.all([...this.informers, ...this.secondary].map((i) => i.stop()));
    this.queue.shutDown();
    const grace = this.opts.shutdownGraceMillis ?? 20_000;
    const timer = setTimeout(() => this.abort.abort(new Error("operator shutting down")), grace);
    await Promise.all(this.workers);
    clearTimeout(timer);
  }

  /** Enqueues a key after the coalescing window (the earliest pending time wins). */
  enqueue(key: string): void {
    this.queue.addAfter(key, this.opts.coalesceMillis ?? 300);
  }

  private namespaceList(): (string | undefined)[] {
    return this.opts.namespaces !== undefined && this.opts.namespaces.length > 0 ? this.opts.namespaces : [undefined];
  }

  private informerOptions(name: string): ConstructorParameters<typeof Informer>[3] {
    return {
      ...(this.opts.watchdogMillis !== undefined ? { watchdogMillis: this.opts.watchdogMillis } : {}),
      logger: this.log,
      onRestart: (reason: string) => this.metrics?.informerRestarts.inc({ informer: name, reason }),
    };
  }

  private scheduleResync(): void {
    const every = this.opts.resyncMillis ?? 10 * 60_000;
    this.resyncTimer = setTimeout(() => {
      for (const o of this.list()) this.queue.add(objectKey(o));
      this.scheduleResync();
    }, every * (0.9 + 0.2 * Math.random()));
    this.resyncTimer.unref();
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const obj = this.get(key);
    if (obj === undefined) {
      this.queue.forget(key);
      return;
    }
    const kind = this.kindName;
    const end = this.metrics?.reconcileDuration.startTimer({ kind });
    this.metrics?.inFlight.inc({ kind });
    const log = this.log.child({ key, generation: obj.metadata.generation });
    try {
      // The reconciler may update the object's metadata/status in place: give it a copy.
      const result = await this.reconciler.reconcile(structuredClone(obj), this.abort.signal);
      this.queue.forget(key);
      if (result.requeueAfterMillis !== undefined) this.queue.addAfter(key, result.requeueAfterMillis);
      this.metrics?.reconcileTotal.inc({ kind, result: "success" });
      log.debug({ requeueAfterMillis: result.requeueAfterMillis }, "reconciled");
    } catch (err) {
      if (this.abort.signal.aborted) return;
      if (err instanceof TerminalError) {
        this.queue.forget(key);
        this.metrics?.reconcileTotal.inc({ kind, result: "terminal" });
        log.warn({ reason: err.reason, err: err.message }, "reconcile failed; waiting for a spec change");
      } else if (err instanceof RetryAfterError) {
        this.queue.forget(key);
        this.queue.addAfter(key, err.delayMillis);
        this.metrics?.reconcileTotal.inc({ kind, result: "requeue" });
        log.info({ reason: err.reason, detail: err.message, retryInMillis: err.delayMillis }, "waiting");
      } else if (isConflict(err)) {
        this.queue.addAfter(key, 200);
        this.metrics?.reconcileTotal.inc({ kind, result: "conflict" });
        log.debug({}, "conflict; retrying with a fresh copy");
      } else {
        const delay = this.queue.addRateLimited(key);
        this.metrics?.reconcileTotal.inc({ kind, result: "error" });
        log.warn({ err: errorMessage(err), retryInMillis: delay }, "reconcile failed; backing off");
      }
    } finally {
      end?.();
      this.metrics?.inFlight.dec({ kind });
    }
  }
}
