// Informer-backed caches that controllers share (client-go's SharedInformerFactory, kube-rs's
// reflector Store): one list+watch per resource, selector set and namespace, however many
// controllers read it or react to it. Kinds get read-only handles (ReadStore); the runtime
// also subscribes to changes and adds indexes.
import { Informer, resourceSource, type InformerHandler, type InformerOptions } from "../kube/informer.ts";
import type { KubeApi, KubeObject, ResourceType } from "../kube/types.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";

/** What a kind may do with a cache: read it. */
export interface ReadStore<T extends KubeObject> {
  get(namespace: string, name: string): T | undefined;
  list(): T[];
  /** Cached objects whose index `index` holds `value`. */
  byIndex(index: string, value: string): T[];
}

export interface Selectors { labelSelector?: string; fieldSelector?: string }

/** A cache over one resource type (one informer per watched namespace). */
export class SharedStore<T extends KubeObject> implements ReadStore<T> {
  readonly name: string;
  private readonly informers: Informer<T>[];
  /** Where its objects and index entries are counted, under `name`. */
  private readonly entries: CacheEntries | undefined;

  constructor(name: string, informers: Informer<T>[], entries?: CacheEntries) {
    this.name = name;
    this.informers = informers;
    this.entries = entries;
    entries?.track(`informer.${name}`, () => this.size);
  }

  /** Objects cached. */
  get size(): number {
    return this.informers.reduce((n, i) => n + i.size, 0);
  }

  get(namespace: string, name: string): T | undefined {
    const key = `${namespace}/${name}`;
    for (const i of this.informers) {
      const o = i.get(key);
      if (o !== undefined) return o;
    }
    return undefined;
  }

  getByKey(key: string): T | undefined {
    for (const i of this.informers) {
      const o = i.get(key);
      if (o !== undefined) return o;
    }
    return undefined;
  }

  list(): T[] {
    return this.informers.flatMap((i) => i.list());
  }

  byIndex(index: string, value: string): T[] {
    return this.informers.flatMap((i) => i.byIndex(index, value));
  }

  addIndex(index: string, fn: (obj: T) => string[]): void {
    for (const i of this.informers) i.addIndex(index, fn);
    this.entries?.track(`informer.${this.name}.index.${index}`, () => this.informers.reduce((n, i) => n + i.indexSize(index), 0));
  }

  onEvent(handler: InformerHandler<T>): void {
    for (const i of this.informers) i.onEvent(handler);
  }

  start(): void {
    for (const i of this.informers) i.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.synced));
  }

  get hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}

export interface InformerPoolOptions {
  /** Namespaces to watch; empty or undefined means all. */
  namespaces?: string[] | undefined;
  informer?: Omit<InformerOptions, "onRestart">;
  onRestart?: (informer: string, reason: string) => void;
  /** A handler or index function threw for one object (skipped; the cache goes on). */
  onUnexpectedError?: (where: "informer-handler" | "informer-index", err: unknown) => void;
  /** Where each store's objects and index entries are counted (linode_operator_cache_entries). */
  cacheEntries?: CacheEntries;
}

/** Hands out one SharedStore per resource type and selector set, and starts and stops them all. */
export class InformerPool {
  private readonly kube: KubeApi;
  private readonly opts: InformerPoolOptions;
  private readonly stores = new Map<string, SharedStore<KubeObject>>();

  constructor(kube: KubeApi, opts: InformerPoolOptions = {}) {
    this.kube = kube;
    this.opts = opts;
  }

  store<T extends KubeObject>(t: ResourceType, selectors: Selectors = {}): SharedStore<T> {
    return this.make(t, selectors, this.opts.namespaces !== undefined && this.opts.namespaces.length > 0 ? this.opts.namespaces : [undefined]);
  }

  /** A cache of a cluster-scoped resource (Nodes): one list+watch, whatever namespaces the operator watches. */
  clusterStore<T extends KubeObject>(t: ResourceType, selectors: Selectors = {}): SharedStore<T> {
    return this.make(t, selectors, [undefined]);
  }

  private make<T extends KubeObject>(t: ResourceType, selectors: Selectors, namespaces: (string | undefined)[]): SharedStore<T> {
    const id = `${namespaces.join(",")}|${t.group}/${t.version}/${t.plural}?${selectors.labelSelector ?? ""}&${selectors.fieldSelector ?? ""}`;
    const existing = this.stores.get(id);
    if (existing !== undefined) return existing as unknown as SharedStore<T>;
    const informers = namespaces.map((namespace) => {
      const source = resourceSource<T>(this.kube, t, { namespace, ...selectors });
      return new Informer<T>(this.kube, source, {
        ...this.opts.informer,
        onRestart: (reason: string) => this.opts.onRestart?.(source.name, reason),
        ...(this.opts.onUnexpectedError !== undefined ? { onUnexpectedError: this.opts.onUnexpectedError } : {}),
      });
    });
    // Two stores of one type differ by their selectors (token Secrets, connection Secrets).
    const selected = [selectors.labelSelector, selectors.fieldSelector].filter((x) => x !== undefined && x !== "").join(",");
    const store = new SharedStore<T>(selected === "" ? t.plural : `${t.plural}{${selected}}`, informers, this.opts.cacheEntries);
    this.stores.set(id, store as unknown as SharedStore<KubeObject>);
    return store;
  }

  all(): SharedStore<KubeObject>[] {
    return [...this.stores.values()];
  }

  /** Starts every store (idempotent) and resolves once all have listed. */
  async startAndSync(): Promise<void> {
    for (const s of this.stores.values()) s.start();
    await Promise.all([...this.stores.values()].map((s) => s.waitForSync()));
  }

  get hasSynced(): boolean {
    return [...this.stores.values()].every((s) => s.hasSynced);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.stores.values()].map((s) => s.stop()));
  }
}
