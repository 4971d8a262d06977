// A reflector + cache for one kind (or one namespace of it): list in pages of 500, then
// watch from the list's resourceVersion with bookmarks. Any error reconnects with backoff,
// a 410 re-lists (and reports objects that vanished meanwhile as deleted), and a watchdog
// aborts a watch that has gone silent, so the cache never silently stops updating. client-node's
// own ListWatch (2.0) stops on any error but a clean close, a 410 or a timeout, and has no
// watchdog for a watch that stalls silently (client-node issues #364, #596, #958).
// Several handlers may share one informer, and indexes (client-go's Indexers) answer "which
// cached objects have this value" without a scan.
import { KubeApiError, errorChain, isGone, isTooManyRequests, toKubeError } from "./errors.ts";
import { collectionPath, objectKey, type KubeApi, type KubeObject, type ListPage, type ResourceType } from "./types.ts";

export type InformerEvent = "add" | "update" | "delete";
export type InformerHandler<T> = (event: InformerEvent, obj: T, old?: T) => void;

export interface InformerSource<T extends KubeObject> {
  /** Human name for logs and metrics, e.g. "manageddatabases" or "secrets". */
  name: string;
  list(continueToken: string | undefined): Promise<ListPage<T>>;
  watchPath: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Watch each object's metadata only (the list says the same to its API). */
  metadataOnly?: boolean;
}

export interface SourceOptions {
  namespace?: string | undefined;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects' metadata only, in lists and watches (ListOptions.metadataOnly). */
  metadataOnly?: boolean;
  /**
   * Objects per list page (default 500). A page is held whole while it is read: where objects
   * may be large (up to 1 MiB each) and many, a smaller page bounds that.
   */
  pageSize?: number;
}

/** A list+watch source for a resource type, optionally one namespace and selectors. */
export function resourceSource<T extends KubeObject>(kube: Pick<KubeApi, "list">, t: ResourceType, opts: SourceOptions = {}): InformerSource<T> {
  const selectors = {
    ...(opts.labelSelector !== undefined ? { labelSelector: opts.labelSelector } : {}),
    ...(opts.fieldSelector !== undefined ? { fieldSelector: opts.fieldSelector } : {}),
  };
  const shape = {
    ...(opts.metadataOnly === true ? { metadataOnly: true } : {}),
    ...(opts.pageSize !== undefined ? { limit: opts.pageSize } : {}),
  };
  return {
    name: t.plural,
    watchPath: collectionPath(t, opts.namespace),
    ...selectors,
    ...(opts.metadataOnly === true ? { metadataOnly: true } : {}),
    list: (token) => kube.list<T>(t, { ...selectors, ...shape, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}), ...(token !== undefined ? { continueToken: token } : {}) }),
  };
}

export interface InformerLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  /** Abort and reopen a watch that has delivered nothing (not even a bookmark) for this long. */
  watchdogMillis?: number;
  backoffBaseMillis?: number;
  backoffMaxMillis?: number;
  logger?: InformerLogger;
  onRestart?: (reason: string) => void;
  /**
   * What of each listed or watched object the cache keeps (client-go's SetTransform), made
   * before it is stored or any handler hears of it; undefined keeps nothing of it, as if the
   * object were not selected (one that was kept is then deleted from the cache). The object
   * given is the API's answer, used by nothing else: a transform may return parts of it.
   */
  transform?: (obj: T) => T | undefined;
  /**
   * A handler, an index function or the transform threw (a bug, or an object no code
   * expected): that one call is skipped and reported here (a transform's object is not kept),
   * and the cache goes on for every other object.
   */
  onUnexpectedError?: (where: InformerFailure, err: unknown) => void;
}

export type InformerFailure = "informer-handler" | "informer-index" | "informer-transform";

export { objectKey };

export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly indexers = new Map<string, (obj: T) => string[]>();
  /** index name → value → keys. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private resourceVersion: string | undefined;
  private stopped = false;
  /** Ends the current watch at once, whether it is connected yet or not. */
  private endCurrent: (() => void) | undefined;
  private syncedResolve!: () => void;
  readonly synced: Promise<void>;
  hasSynced = false;
  lastEventAt = Date.now();
  private readonly opts: Required<Omit<InformerOptions<T>, "logger" | "onRestart" | "onUnexpectedError" | "transform">> & Pick<InformerOptions<T>, "logger" | "onRestart" | "onUnexpectedError" | "transform">;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  private readonly client: Pick<KubeApi, "watch">;
  readonly source: InformerSource<T>;

  constructor(client: Pick<KubeApi, "watch">, source: InformerSource<T>, options: InformerOptions<T> = {}) {
    this.client = client;
    this.source = source;
    this.opts = { watchdogMillis: 5 * 60_000, backoffBaseMillis: 800, backoffMaxMillis: 15_000, ...options };
    this.synced = new Promise((r) => { this.syncedResolve = r; });
  }

  /** Calls `handler` for every change from now on (and for every object of the first list). */
  onEvent(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Keeps an index of the cached objects by the values `fn` gives each (e.g. the names it refers to). */
  addIndex(name: string, fn: (obj: T) => string[]): void {
    if (this.indexers.has(name)) throw new Error(`index ${name} already exists on ${this.source.name}`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.store) for (const v of this.indexValues(fn, obj)) addTo(index, v, key);
  }

  get(key: string): T | undefined { return this.store.get(key); }
  list(): T[] { return [...this.store.values()]; }
  get size(): number { return this.store.size; }
  /** How many values index `name` holds (each with the keys of the objects that have it). */
  indexSize(name: string): number { return this.indices.get(name)?.size ?? 0; }
  /** Whether any cached object's index `name` holds `value`. */
  indexHas(name: string, value: string): boolean { return (this.indices.get(name)?.get(value)?.size ?? 0) > 0; }

  /** Cached objects whose index `name` holds `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.indices.get(name)?.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.store.get(k);
      if (o !== undefined) out.push(o);
    }
    return out;
  }

  private put(key: string, obj: T): void {
    // Nothing reads managedFields, often the largest part of an object: not kept in memory
    // (controller-runtime's TransformStripManagedFields).
    delete (obj.metadata as { managedFields?: unknown }).managedFields;
    const prev = this.store.get(key);
    this.store.set(key, obj);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name);
      if (index === undefined) continue;
      if (prev !== undefined) for (const v of this.indexValues(fn, prev)) removeFrom(index, v, key);
      for (const v of this.indexValues(fn, obj)) addTo(index, v, key);
    }
  }

  private remove(key: string): void {
    const prev = this.store.get(key);
    if (prev === undefined) return;
    this.store.delete(key);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name);
      if (index !== undefined) for (const v of this.indexValues(fn, prev)) removeFrom(index, v, key);
    }
  }

  /**
   * Every handler hears every event, whatever another one does: a throw here would otherwise
   * end the watch (and, repeated on each relist, stop this cache for every namespace).
   */
  private emit(event: InformerEvent, obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        h(event, obj, old);
      } catch (err) {
        this.unexpected("informer-handler", err, obj);
      }
    }
  }

  /** An index function's values for `obj`; none when it throws (the object is just not indexed). */
  private indexValues(fn: (obj: T) => string[], obj: T): string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.unexpected("informer-index", err, obj);
      return [];
    }
  }

  /** What the cache keeps of `obj`: the transform's answer (undefined when it throws), or `obj`. */
  private kept(obj: T): T | undefined {
    const transform = this.opts.transform;
    if (transform === undefined) return obj;
    try {
      return transform(obj);
    } catch (err) {
      this.unexpected("informer-transform", err, obj);
      return undefined;
    }
  }

  private unexpected(where: InformerFailure, err: unknown, obj: T): void {
    const what = { "informer-handler": "an event handler", "informer-index": "an index function", "informer-transform": "the cache's transform" }[where];
    try {
      this.opts.logger?.warn({ informer: this.source.name, object: objectKey(obj), err: describe(err) }, `${what} threw; skipped for this object`);
      this.opts.onUnexpectedError?.(where, err);
    } catch {
      // Reporting must not fail the cache either.
    }
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.endCurrent?.();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        if (this.isStopped()) break;
        await this.watchOnce();
        failures = 0;
      } catch (raw) {
        const err = toKubeError(raw);
        if (this.isStopped()) break;
        if (isGone(err)) {
          this.resourceVersion = undefined;
          continue;
        }
        failures++;
        const delay = Math.min(this.opts.backoffMaxMillis, this.opts.backoffBaseMillis * 2 ** (failures - 1)) * (0.8 + 0.4 * Math.random());
        if (isTooManyRequests(err) && failures <= 5) {
          // The apiserver refuses watches with 429 while its watch cache for the resource initializes
          // (KEP-4568; e.g. a CRD installed just before): expected, retried, not a failure to warn about.
          this.opts.logger?.info({ informer: this.source.name, retryInMillis: Math.round(delay) }, "watch deferred by the API server (429, its cache is initializing); retrying");
        } else {
          this.opts.logger?.warn({ informer: this.source.name, err: describe(err), retryInMillis: Math.round(delay) }, "watch failed; reconnecting");
        }
        this.opts.onRestart?.("error");
        await this.sleep(delay);
      }
    }
  }

  /** A method, not the field: the flag changes while awaits are pending. */
  private isStopped(): boolean { return this.stopped; }

  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let token: string | undefined;
    let rv: string;
    do {
      const page = await this.source.list(token);
      // Only what the transform keeps outlives the page.
      for (const item of page.items) {
        const kept = this.kept(item);
        if (kept !== undefined) fresh.set(objectKey(kept), kept);
      }
      token = page.continueToken;
      rv = page.resourceVersion;
    } while (token !== undefined && !this.stopped);
    const old = new Map(this.store);
    for (const k of old.keys()) if (!fresh.has(k)) this.remove(k);
    for (const [k, v] of fresh) this.put(k, v);
    for (const [k, v] of fresh) {
      const prev = old.get(k);
      if (prev === undefined) this.emit("add", v);
      else if (prev.metadata.resourceVersion !== v.metadata.resourceVersion) this.emit("update", v, prev);
    }
    for (const [k, v] of old) if (!fresh.has(k)) this.emit("delete", v);
    this.resourceVersion = rv;
    this.lastEventAt = Date.now();
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.syncedResolve();
    }
  }

  private async watchOnce(): Promise<void> {
    let settle!: (err?: unknown) => void;
    const ended = new Promise<void>((resolve, reject) => {
      settle = (err?: unknown) => { if (err === undefined || err === null) resolve(); else reject(err instanceof Error ? err : new Error(JSON.stringify(err))); };
    });
    // Server-side timeouts spread over 5..10 min make every watch end cleanly now and then,
    // as client-go's reflector does.
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    this.lastEventAt = Date.now();
    const state = { gone: false };
    // Not awaited: a stop (or the watchdog) must end this watch even while it is connecting.
    const connecting = this.client.watch(this.source.watchPath, {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds,
      labelSelector: this.source.labelSelector,
      fieldSelector: this.source.fieldSelector,
    }, (type, raw) => {
      this.lastEventAt = Date.now();
      const obj = raw as T;
      if (type === "BOOKMARK") {
        this.resourceVersion = obj.metadata.resourceVersion ?? this.resourceVersion;
        return;
      }
      if (type === "ERROR") {
        const status = raw as { code?: number; message?: string };
        if (status.code === 410) state.gone = true;
        settle(new KubeApiError(status.code ?? 500, "WatchError", status.message ?? "watch error"));
        return;
      }
      const key = objectKey(obj);
      const prev = this.store.get(key);
      this.resourceVersion = obj.metadata.resourceVersion ?? this.resourceVersion;
      const kept = this.kept(obj);
      if (type === "DELETED") {
        this.remove(key);
        // Its last state as the cache keeps it; one the cache never kept is no news to handlers.
        const last = kept ?? prev;
        if (last !== undefined) this.emit("delete", last);
      } else if (kept === undefined) {
        // No longer kept (e.g. no longer the operator's): for the cache and its handlers, deleted.
        if (prev === undefined) return;
        this.remove(key);
        this.emit("delete", prev);
      } else {
        this.put(key, kept);
        this.emit(prev === undefined ? "add" : "update", kept, prev);
      }
    }, (err) => settle(err), {
      // The watchdog below judges silence; the server-side timeout ends the watch cleanly.
      inactivityMillis: Math.max(this.opts.watchdogMillis, timeoutSeconds * 1000) + 30_000,
      ...(this.source.metadataOnly === true ? { metadataOnly: true } : {}),
    }).catch((err: unknown) => { settle(err); return undefined; });
    this.endCurrent = () => { settle(); };
    if (this.isStopped()) settle();
    const watchdog = setInterval(() => {
      if (Date.now() - this.lastEventAt > this.opts.watchdogMillis) {
        this.opts.logger?.warn({ informer: this.source.name }, "watch silent for too long; restarting it");
        this.opts.onRestart?.("watchdog");
        settle();
      }
    }, Math.min(10_000, this.opts.watchdogMillis / 2));
    try {
      await ended;
    } catch (err) {
      if (state.gone) this.resourceVersion = undefined;
      if (!this.isStopped()) throw err;
    } finally {
      clearInterval(watchdog);
      this.endCurrent = undefined;
      // Closes the connection now, or as soon as it is made.
      void connecting.then((c) => { c?.abort(); });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.wake = undefined; resolve(); }, ms);
      this.wake = () => { clearTimeout(t); resolve(); };
    });
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (keys === undefined) {
    keys = new Set();
    index.set(value, keys);
  }
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}

const describe = errorChain;
