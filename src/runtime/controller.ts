// A controller assembled from parts: the kind (built with read handles to the caches it
// needs), the shared informer caches, one work queue and N workers running the generic
// reconciler, never two at once for the same key. Outcomes map to the queue:
//   requeueAfter      → a delayed add (the poll);
//   TerminalError     → nothing until something changes: the object (spec, deletion,
//                       annotations, labels, finalizers: not its status, not our own writes)
//                       or what it refers to. Resyncs and repeated events skip it;
//   RetryAfterError   → a delayed add after its delay;
//   409 conflict      → a quick retry with a fresh copy, not counted as an error;
//   anything else     → per-key exponential backoff.
// A throw anywhere in one object's pass (a kind's bug, a metric, a log call) ends that pass for
// that object only: the worker survives it, counts it (linode_operator_unexpected_errors_total)
// and backs the key off; every other object goes on.
import { errorChain, isConflict, isInvalid } from "../kube/errors.ts";
import { objectKey, type KubeApi } from "../kube/types.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import { FINALIZER } from "./annotations.ts";
import { readyAtGeneration } from "./conditions.ts";
import { RetryAfterError, TerminalError } from "./errors.ts";
import { PassTurn, runAsPass } from "./lent-turns.ts";
import type { Logger } from "./logger.ts";
import type { AnyManagedKind, KindModule, ManagedObject } from "./managed.ts";
import type { ReferenceProtection } from "./protection.ts";
import { recordedIdOf } from "./ownership.ts";
import type { ManagedReconciler, ReconcileResult } from "./reconciler.ts";
import { InformerPool, type SharedStore } from "./stores.ts";
import { RECORDED_ID_INDEX, wireKind, type ControllerDeps } from "./controller-builder.ts";

export type { ControllerDeps };
import { Timings, jittered } from "./timings.ts";
import { WorkQueue, trackQueue, type BackoffPolicy } from "./workqueue.ts";
import { DRAIN_LABEL, labelPointer, SHARD_LABEL, TAKEN_FROM_ANNOTATION } from "./sharding/assignment.ts";

/**
 * Accounts (flows) that each get the whole `concurrency` at once: every Linode account has a call
 * budget of its own, so a pass waiting on one account's slow or rate-limited API should not
 * take a worker another account could use. Beyond that many busy at once they share fairly.
 */
export const ACCOUNTS_AT_FULL_CONCURRENCY = 8;
const workersFor = (concurrency: number): number => concurrency * ACCOUNTS_AT_FULL_CONCURRENCY;

export interface ControllerOptions {
  /** Reconciles at once per Linode account (flow); the controller runs that many per account for up to ACCOUNTS_AT_FULL_CONCURRENCY accounts. */
  concurrency: number;
  /** Namespaces to watch when the controller makes its own caches; empty or undefined means all. */
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
  /** How soon a pass that met a write conflict runs again (default Timings.conflictRetryMillis). */
  conflictRetryMillis?: number;
  /**
   * The flow of an object whose kind names none (ManagedKind.flow): the workers are shared fairly
   * among flows (workqueue.ts, flows.ts). Neither: one flow, first come first served.
   */
  flowOf?: (obj: ManagedObject) => string;
  /**
   * This replica's shard, when replicas share the work (its caches hold only the objects
   * labelled to it): it acts on an object only while its own ring gives it the object's
   * namespace too, and lets go of one the sharder drains once no pass of it runs.
   */
  shard?: {
    identity: string;
    owns: (obj: ManagedObject) => boolean | Promise<boolean>;
    /** When this replica saw `shard` dead, if it did lately (ShardMembers.diedAt). */
    diedAt?: (shard: string) => number | undefined;
  };
}


const OWN_WRITES_KEPT = 8;

/** What a terminal failure waits to see change: everything in the object a reconcile acts on, but its status. */
function fingerprint(obj: ManagedObject): string {
  const md = obj.metadata;
  return JSON.stringify([md.generation, md.deletionTimestamp, md.annotations ?? {}, md.labels ?? {}, md.finalizers ?? []]);
}

/** Ready as of its generation and not being deleted: what a new process may look at after the rest. */
function settled(obj: ManagedObject): boolean {
  return readyAtGeneration(obj) && obj.metadata.deletionTimestamp === undefined;
}

/** Whether an update changed anything a reconcile depends on (not just a status write). */
function relevantChange(obj: ManagedObject, old: ManagedObject | undefined): boolean {
  if (old === undefined) return true;
  const a = obj.metadata, b = old.metadata;
  return a.generation !== b.generation
    || a.deletionTimestamp !== b.deletionTimestamp
    || JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {})
    || JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {})
    || JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []);
}

export class Controller<D = unknown> {
  readonly kind: AnyManagedKind;
  readonly queue: WorkQueue;
  private readonly pool: InformerPool;
  private readonly self: SharedStore<ManagedObject>;
  private readonly reconciler: ManagedReconciler;
  private readonly opts: ControllerOptions;
  private readonly log: Logger;
  private readonly metrics: OperatorMetrics | undefined;
  private readonly onPass: ((key: string) => void) | undefined;
  private readonly abort = new AbortController();
  private readonly protection: ReferenceProtection;
  /** Keys whose last reconcile failed terminally, with the object's state (fingerprint) after that pass. */
  private readonly terminal = new Map<string, string>();
  /** Keys something other than the object itself asked to reconcile (a referenced object, a Secret, a caller). */
  private readonly woken = new Set<string>();
  /**
   * resourceVersions our own writes produced, per key: the watch event of a write we made
   * (adding the finalizer, recording the id) is not a change to react to. Without this, a
   * create the API refuses would be sent a second time by the pass our finalizer write woke.
   */
  private readonly ownWrites = new Map<string, string[]>();
  /**
   * Update events of a key that arrived while a pass of it ran: judged when the pass ends, once
   * every write it made has been answered and remembered. A watch event can come before the
   * answer to the write that caused it; judged at once, the pass's own write (the finalizer and
   * id after a create) would queue another pass, a configs list and nodes lists more.
   */
  private readonly heldEvents = new Map<string, { events: { resourceVersion: string | undefined; relevant: boolean }[]; overflow: boolean }>();
  /**
   * Keys that came into this process's care after it started (a shard took them over), with
   * when and the dead shard the sharder took them from, if it named one: Managed.managedSince.
   * Kept no longer than a settled object's poll: a cached read older than that is refused anyway.
   */
  private readonly arrived = new Map<string, { at: number; from: string | undefined }>();
  /**
   * Keys that came into this process's care already worked on by another replica (they carry
   * the finalizer: a shard's takeover), with when, until this process's first successful pass
   * of each: linode_operator_takeover_seconds.
   */
  private readonly takenOver = new Map<string, number>();
  /** Keys whose shard could not be told (their key unreadable now), with the error last logged: said once, not every retry. */
  private readonly ownerUnknown = new Map<string, string>();
  private workers: Promise<void>[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private warming: Promise<void> | undefined;
  /** Workers started: events queue keys from then on. */
  private active = false;
  private stopRequested = false;
  private readonly kube: KubeApi;
  readonly kindName: string;

  constructor(module: KindModule<D>, deps: ControllerDeps<D>, opts: ControllerOptions) {
    this.kindName = module.type.kind;
    this.opts = opts;
    this.kube = deps.kube;
    this.log = deps.log.child({ kind: this.kindName });
    this.metrics = deps.metrics;
    this.onPass = deps.onPass;
    const m = this.metrics;
    // A standby's caches are warm too; only the process that works on the objects reports them.
    m?.countObjects(this.kindName, () => (this.active ? this.list() : []));
    this.pool = deps.informers ?? new InformerPool(deps.kube, {
      namespaces: opts.namespaces,
      ...(opts.shard !== undefined ? { shard: { group: module.type.group, identity: opts.shard.identity } } : {}),
      informer: { logger: this.log, ...(opts.watchdogMillis !== undefined ? { watchdogMillis: opts.watchdogMillis } : {}) },
      onRestart: (informer, reason) => m?.informerRestarts.inc({ informer, reason }),
      onUnexpectedError: (where) => { m?.unexpectedErrors.inc({ where }); },
    });
    const wired = wireKind(module, deps, this.pool, {
      enqueue: (key) => { this.enqueue(key); },
      managedSince: (key) => this.managedSince(key),
      ownWrite: (key, resourceVersion, status) => {
        this.rememberOwnWrite(key, resourceVersion);
        if (status) {
          m?.statusWrites.inc({ kind: this.kindName });
          deps.onStatusWrite?.();
        }
      },
    });
    this.self = wired.self;
    this.kind = wired.kind;
    this.reconciler = wired.reconciler;
    this.protection = wired.protection;
    const flowOf = (obj: ManagedObject): string => {
      try {
        return this.kind.flow?.(obj) ?? opts.flowOf?.(obj) ?? "";
      } catch (err) {
        // Asked by the queue, outside any pass: a throw here would lose the key. Its pass still runs (in the shared flow).
        this.unexpected("flow", objectKey(obj), err, false);
        return "";
      }
    };
    this.queue = new WorkQueue({
      ...(opts.backoff !== undefined ? { backoff: opts.backoff } : {}),
      flows: {
        workers: workersFor(opts.concurrency),
        perFlow: opts.concurrency,
        // A key whose object is gone goes in flow "" (its pass only forgets it: quick).
        of: (key) => { const obj = this.self.getByKey(key); return obj === undefined ? "" : flowOf(obj); },
        // A flow settling is looked at every pending poll: its share is kept for two of them.
        lingerMillis: 2 * this.kind.poll.pendingMillis,
      },
      observer: {
        depth: (d) => m?.queueDepth.set({ kind: this.kindName }, d),
        retried: () => m?.queueRetries.inc({ kind: this.kindName }),
      },
    });

    this.self.onEvent((ev, obj, old) => {
      const key = objectKey(obj);
      if (ev === "delete") {
        this.terminal.delete(key);
        this.ownWrites.delete(key);
        this.heldEvents.delete(key);
        this.ownerUnknown.delete(key);
        this.arrived.delete(key);
        this.takenOver.delete(key);
        this.reconciler.forget(key);
        deps.events.forget?.(obj);
        const id = recordedIdOf(this.kind, obj);
        // Another object of the kind recording the same cloud id (one adopted it) still needs what is kept of it.
        const shared = id !== undefined && this.self.byIndex(RECORDED_ID_INDEX, id).some((o) => o.metadata.uid !== obj.metadata.uid);
        this.kind.forget?.(obj, shared ? undefined : id);
        return;
      }
      // Before start() nothing is queued: start() queues every object it then finds.
      if (!this.active) return;
      if (ev === "add") {
        // Whose it was, as the sharder's assignment said: the event that brought it is that write.
        const now = Date.now();
        this.arrived.set(key, { at: now, from: obj.metadata.annotations?.[TAKEN_FROM_ANNOTATION] });
        if (this.opts.shard !== undefined && obj.metadata.finalizers?.includes(FINALIZER) === true) this.takenOver.set(key, now);
      }
      if (ev === "update" && this.queue.isProcessing(key)) {
        const held = this.heldEvents.get(key) ?? { events: [], overflow: false };
        // Bounded whatever a tenant writes during a long pass: more events than own writes are
        // remembered means at least one is someone else's, and the key is queued anyway.
        if (held.events.length > OWN_WRITES_KEPT) held.overflow = true;
        else held.events.push({ resourceVersion: obj.metadata.resourceVersion, relevant: relevantChange(obj, old) });
        this.heldEvents.set(key, held);
        return;
      }
      if (ev === "update" && (this.isOwnWrite(key, obj.metadata.resourceVersion) || !relevantChange(obj, old))) return;
      this.queue.addAfter(key, this.coalesceMillis);
    });
    this.trackMaps(deps.cacheEntries ?? m?.cacheEntries);
  }

  /** Every map kept per key, counted under the kind's name: each drains once its objects are gone. */
  private trackMaps(entries: CacheEntries | undefined): void {
    if (entries === undefined) return;
    const kind = this.kindName;
    trackQueue(entries, kind, this.queue);
    entries.track(`${kind}.terminal`, () => this.terminal.size);
    entries.track(`${kind}.woken`, () => this.woken.size);
    entries.track(`${kind}.ownWrites`, () => this.ownWrites.size);
    entries.track(`${kind}.heldEvents`, () => this.heldEvents.size);
    entries.track(`${kind}.arrived`, () => this.arrived.size);
    entries.track(`${kind}.takenOver`, () => this.takenOver.size);
    entries.track(`${kind}.answeredCreates`, () => this.reconciler.answeredCreateCount);
    entries.track(`${kind}.repeatedUpdates`, () => this.reconciler.repeatedUpdateCount);
    entries.track(`${kind}.unsentCreates`, () => this.reconciler.unsentCreateCount);
  }

  /**
   * The moment from which a read of the cloud holds everything the object's previous shard did:
   * its arrival here, or earlier when it was a dead shard's (the sharder's assignment names it)
   * that this replica saw dead: that shard had stopped acting before then. So every object a
   * dead shard leaves can be judged from one list begun after its death, not each from a list
   * begun after its own arrival (at 10,000 objects, lists of 20 pages one after another).
   */
  private managedSince(key: string): number | undefined {
    const arrival = this.arrived.get(key);
    if (arrival === undefined) return undefined;
    if (Date.now() - arrival.at > this.kind.poll.readyMillis) {
      this.arrived.delete(key);
      return undefined;
    }
    const died = arrival.from !== undefined ? this.opts.shard?.diedAt?.(arrival.from) : undefined;
    return died !== undefined ? Math.min(arrival.at, died) : arrival.at;
  }

  private rememberOwnWrite(key: string, resourceVersion: string | undefined): void {
    // Gone already: the write that removed the last finalizer, whose delete event came before
    // its answer. Remembered, it would be kept for good.
    if (resourceVersion === undefined || this.self.getByKey(key) === undefined) return;
    const list = this.ownWrites.get(key) ?? [];
    list.push(resourceVersion);
    // Bounded: a relist may skip versions, whose events then never come.
    if (list.length > OWN_WRITES_KEPT) list.shift();
    this.ownWrites.set(key, list);
  }

  /**
   * A shard acts on an object labelled to it that its own ring gives it as well: a label alone
   * (a tenant can write one) never makes two shards act. One the sharder drains is let go: no
   * pass of it runs now (the queue runs one per key), and none starts after the labels go.
   */
  private async mayAct(key: string, obj: ManagedObject, shard: NonNullable<ControllerOptions["shard"]>): Promise<boolean> {
    const labels = obj.metadata.labels ?? {};
    // Relabelled away: its watch event drops it from this shard's cache.
    if (labels[SHARD_LABEL] !== shard.identity) return false;
    if (labels[DRAIN_LABEL] !== undefined) {
      await this.letGo(key, obj, shard.identity);
      return false;
    }
    // Unknown (its key could not be read now) is not ours yet: looked at again below.
    const owns = await (async () => shard.owns(obj))().then((yes) => {
      if (this.ownerUnknown.delete(key)) this.log.info({ namespace: obj.metadata.namespace, name: obj.metadata.name }, "the object's shard is known again");
      return yes;
    }, (err: unknown) => {
      const said = errorChain(err);
      if (this.ownerUnknown.get(key) !== said) {
        this.ownerUnknown.set(key, said);
        this.log.warn({ namespace: obj.metadata.namespace, name: obj.metadata.name, err: said, retryInMillis: Timings.retryPeriodMillis }, "cannot tell which shard owns this object now (its shard key could not be read); no shard acts on it until it can");
      }
      return false;
    });
    if (!owns) {
      // The sharder's ring and this shard's disagree for now (a membership change seen first
      // by one of them; with --shard-by account, a token rotated into another account, or not
      // readable now): looked at again once this shard's view has had time to catch up.
      this.queue.addAfter(key, Timings.retryPeriodMillis);
      return false;
    }
    return true;
  }

  private async letGo(key: string, obj: ManagedObject, identity: string): Promise<void> {
    try {
      await this.reconciler.withdrawUnsentCreate(obj);
      await this.kube.jsonPatchCustom(this.kind.type, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name }, [
        { op: "test", path: labelPointer(SHARD_LABEL), value: identity },
        { op: "remove", path: labelPointer(SHARD_LABEL) },
        { op: "remove", path: labelPointer(DRAIN_LABEL) },
      ]);
      this.queue.forget(key);
      this.log.info({ namespace: obj.metadata.namespace, name: obj.metadata.name }, "let go of an object the sharder moves to another shard");
    } catch (err) {
      // Changed meanwhile (the drain called off, relabelled): its event brings it back if it is still ours.
      if (isConflict(err) || isInvalid(err)) return;
      const delay = this.queue.addRateLimited(key);
      this.log.warn({ err: errorChain(err), retryInMillis: delay }, "could not let go of a drained object; retrying");
    }
  }

  /** The events held during a pass of `key`: one that is not of our own writes and changes something queues it. */
  private judgeHeldEvents(key: string): void {
    const held = this.heldEvents.get(key);
    if (held === undefined) return;
    this.heldEvents.delete(key);
    // Each is looked up, in order, so that the versions our writes made are spent either way.
    const queue = held.events.map((e) => !this.isOwnWrite(key, e.resourceVersion) && e.relevant).some(Boolean) || held.overflow;
    if (queue && this.active && !this.stopRequested) this.queue.addAfter(key, this.coalesceMillis);
  }

  private isOwnWrite(key: string, resourceVersion: string | undefined): boolean {
    const list = this.ownWrites.get(key);
    const i = resourceVersion === undefined ? -1 : (list?.indexOf(resourceVersion) ?? -1);
    if (list === undefined || i < 0) return false;
    // Versions before ours will not come any more.
    list.splice(0, i + 1);
    if (list.length === 0) this.ownWrites.delete(key);
    return true;
  }

  get synced(): boolean {
    return this.pool.hasSynced;
  }

  get(key: string): ManagedObject | undefined {
    return this.self.getByKey(key);
  }

  list(): ManagedObject[] {
    return this.self.list();
  }

  /**
   * One reconcile pass of `key` as the cache has it now (controller-runtime's Reconcile): its
   * result, or what it threw. Nothing is queued either way. Undefined when the object is not cached.
   */
  async reconcileOnce(key: string): Promise<ReconcileResult | undefined> {
    const obj = this.get(key);
    // The reconciler updates the object's metadata and status in place: give it a copy.
    return obj === undefined ? undefined : this.reconciler.reconcile(structuredClone(obj), this.abort.signal);
  }

  /**
   * Fills and keeps the informer caches without acting on anything: what a standby does, so the
   * replica that takes the lease over starts with every object already listed.
   */
  async warm(): Promise<void> {
    // A failed fill is tried afresh by the next call (start() after a standby's failed one).
    this.warming ??= this.pool.startAndSync().catch((err: unknown) => { this.warming = undefined; throw err; });
    await this.warming;
  }

  /**
   * Fills the caches and starts what judges by them (Secret protection: it writes, so a
   * leader's), without workers: until start(), objects are reconciled only when reconcileOnce is called.
   */
  async syncCaches(): Promise<void> {
    await this.warm();
    // Every cache has listed (one pool): only now can a Secret's use be judged.
    if (!this.stopRequested) this.protection.start();
  }

  async start(): Promise<void> {
    await this.syncCaches();
    // Stopped while the caches were filling: start nothing.
    if (this.stopRequested) return;
    this.active = true;
    // What a previous process left settled is looked at again after everything that is not
    // (new objects, edits, objects still converging), so those act first whatever the count.
    let routine = 0;
    for (const o of this.list()) {
      if (settled(o)) { this.queue.addRoutine(objectKey(o)); routine++; }
      else this.queue.add(objectKey(o));
    }
    this.log.info({ objects: this.list().length, settled: routine }, "cache synced; starting workers");
    this.workers = Array.from({ length: workersFor(this.opts.concurrency) }, () => this.worker());
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.resyncTimer !== undefined) clearTimeout(this.resyncTimer);
    await this.pool.stop();
    await this.protection.stop();
    this.queue.shutDown();
    const grace = this.opts.shutdownGraceMillis ?? Timings.shutdownGraceMillis;
    const started = Date.now();
    const timer = setTimeout(() => { this.abort.abort(new Error("operator shutting down")); }, grace);
    await Promise.all(this.workers);
    clearTimeout(timer);
    await this.withdrawUnsentCreates(started + grace);
  }

  /** Within what is left of the grace: one not withdrawn by then costs its next owner the create grace, nothing worse. */
  private async withdrawUnsentCreates(until: number): Promise<void> {
    for (const key of this.reconciler.unsentCreateKeys()) {
      if (Date.now() >= until) return;
      const obj = this.get(key);
      if (obj !== undefined) await this.reconciler.withdrawUnsentCreate(obj).catch((err: unknown) => { this.log.debug({ key, err: errorChain(err) }, "an unsent create's announcement stays"); });
    }
  }

  /** Aborts every reconcile in flight (their Linode calls included) and starts no more. */
  abortNow(reason: string): void {
    this.stopRequested = true;
    if (this.resyncTimer !== undefined) clearTimeout(this.resyncTimer);
    this.queue.shutDown();
    this.abort.abort(new Error(reason));
  }

  /**
   * Reconciles a key after the coalescing window (the earliest pending time wins), even one
   * waiting on a terminal failure: something it depends on changed.
   */
  enqueue(key: string): void {
    if (!this.active) return;
    this.woken.add(key);
    this.queue.addAfter(key, this.coalesceMillis);
  }

  private get coalesceMillis(): number {
    return this.opts.coalesceMillis ?? Timings.coalesceMillis;
  }

  private get resyncMillis(): number {
    return this.opts.resyncMillis ?? Timings.resyncMillis;
  }

  private scheduleResync(): void {
    this.resyncTimer = setTimeout(() => {
      this.resync();
      this.scheduleResync();
    }, jittered(this.resyncMillis));
    this.resyncTimer.unref();
  }

  /**
   * Queues every cached object no pass is planned for (none running, none queued or scheduled);
   * returns how many. A scheduled pass is the kind's own plan for when to look again (a poll at
   * the drift window, a retry's backoff, an Available snapshot every sixth window: a backup never
   * changes): queueing such a key would only add a pass (a NodeBalancer's configs list, a
   * snapshot's backup read) before the one already coming, every object at once. What the resync
   * is for is an object that has no pass coming at all.
   */
  resync(): number {
    let queued = 0;
    for (const o of this.list()) {
      const key = objectKey(o);
      if (this.queue.isProcessing(key) || this.queue.dueIn(key) !== undefined) continue;
      this.queue.addRoutine(key);
      queued++;
    }
    return queued;
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const turn = new PassTurn(this.queue, key);
      try {
        await runAsPass(turn, () => this.process(key));
      } catch (err) {
        // Escaped process()'s own handling (a metric or a log call threw there): this key's
        // pass ends, retried with backoff; the worker and every other key go on.
        this.unexpected("worker", key, err);
      } finally {
        turn.end();
        this.judgeHeldEvents(key);
        this.queue.done(key);
      }
    }
  }

  /** Counts and logs a throw caught at a boundary, and (`requeue`) backs its key off; never throws itself. */
  private unexpected(where: string, key: string, err: unknown, requeue = true): void {
    let delay: number | undefined;
    try {
      if (requeue) delay = this.queue.addRateLimited(key);
    } catch { /* the queue is shutting down */ }
    try {
      this.metrics?.unexpectedErrors.inc({ where });
    } catch { /* a broken metric must not break the boundary */ }
    try {
      this.log.error({ key, err: errorChain(err), retryInMillis: delay }, `unexpected error (${where}): contained to this object, the operator goes on`);
    } catch { /* nor a broken logger */ }
  }

  private async process(key: string): Promise<void> {
    const obj = this.get(key);
    if (obj === undefined) {
      this.queue.forget(key);
      this.terminal.delete(key);
      this.woken.delete(key);
      return;
    }
    if (this.opts.shard !== undefined && !(await this.mayAct(key, obj, this.opts.shard))) return;
    const woken = this.woken.delete(key);
    const failedAt = this.terminal.get(key);
    // Compared only for an object that failed terminally: its metadata stringified on every look cost each pass.
    if (!woken && failedAt !== undefined && failedAt === fingerprint(obj)) {
      // Failed terminally and nothing has changed since: trying again would fail the same way.
      this.queue.forget(key);
      return;
    }
    const kind = this.kindName;
    const end = this.metrics?.reconcileDuration.startTimer({ kind });
    this.metrics?.inFlight.inc({ kind });
    // namespace and name as controller-runtime logs them (key kept: "namespace/name", to grep by).
    const log = this.log.child({ namespace: obj.metadata.namespace, name: obj.metadata.name, key, generation: obj.metadata.generation });
    try {
      // The reconciler updates the object's metadata and status in place: give it a copy.
      const copy = structuredClone(obj);
      let result: ReconcileResult;
      try {
        result = await this.reconciler.reconcile(copy, this.abort.signal);
      } catch (err) {
        if (err instanceof TerminalError) this.terminal.set(key, fingerprint(copy));
        throw err;
      }
      this.queue.forget(key);
      this.terminal.delete(key);
      if (result.requeueAfterMillis !== undefined) this.queue.addAfter(key, result.requeueAfterMillis, { routine: result.routine === true });
      this.metrics?.reconcileTotal.inc({ kind, result: "success" });
      const since = this.takenOver.get(key);
      if (since !== undefined) {
        this.takenOver.delete(key);
        this.metrics?.shards.tookOver(kind, (Date.now() - since) / 1000);
      }
      log.debug({ requeueAfterMillis: result.requeueAfterMillis }, "reconciled");
    } catch (err) {
      if (this.abort.signal.aborted) return;
      if (err instanceof TerminalError) {
        this.queue.forget(key);
        this.metrics?.reconcileTotal.inc({ kind, result: "terminal" });
        log.warn({ reason: err.reason, err: err.message }, "reconcile failed; waiting for a change");
      } else if (err instanceof RetryAfterError) {
        this.queue.forget(key);
        // A routine look the budget held back stays routine: back in the non-routine lane, every
        // settled NodeBalancer's deferred health look (at a 10 s window, most of 200) queued
        // ahead of the one a list had woken for drift, which waited its turn among them (122 s).
        this.queue.addAfter(key, err.delayMillis, { routine: err.unsent && this.queue.isRoutinePass(key) });
        this.metrics?.reconcileTotal.inc({ kind, result: err.unsent ? "deferred" : "requeue" });
        // Held back by the budget: routine under load, and one line per object would flood the log.
        log[err.unsent ? "debug" : "info"]({ reason: err.reason, detail: err.message, retryInMillis: err.delayMillis }, "waiting");
      } else if (isConflict(err)) {
        this.queue.addAfter(key, this.opts.conflictRetryMillis ?? Timings.conflictRetryMillis);
        this.metrics?.reconcileTotal.inc({ kind, result: "conflict" });
        log.debug({}, "conflict; retrying with a fresh copy");
      } else {
        const delay = this.queue.addRateLimited(key);
        this.metrics?.reconcileTotal.inc({ kind, result: "error" });
        // Not one of the errors a pass reports by design: a bug, or an input no code expected.
        if (!(err instanceof Error) || err.name === "TypeError" || err.name === "RangeError" || err.name === "ReferenceError" || err.name === "SyntaxError") this.metrics?.unexpectedErrors.inc({ where: "reconcile" });
        log.warn({ err: errorChain(err), retryInMillis: delay }, "reconcile failed; backing off");
      }
    } finally {
      end?.();
      this.metrics?.inFlight.dec({ kind });
      this.onPass?.(key);
    }
  }
}
