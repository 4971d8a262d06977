// Informer-backed caches that controllers share (client-go's SharedInformerFactory, kube-rs's
// reflector Store): one list+watch per resource, selector set and namespace, however many
// controllers read it or react to it. Kinds get read-only handles (ReadStore); the runtime
// also subscribes to changes and adds indexes.
//
// A cache of Secrets or ConfigMaps holds only what the operator owns or needs, with a bound
// (issue 41, 8). Whoever may create them in a namespace the operator watches can give them the
// label or type a cache selects by, so a selector says nothing of whose they are: a hundred
// labelled Secrets of 0.5 MiB took the operator from 119 to 298 MiB. So each such cache says
// what it keeps (ContentPolicy):
// - byName: the Secrets and ConfigMaps a resource names (a token, a certificate, an allow list)
//   are listed and watched as metadata only (their content never crosses the wire); the content
//   of those a resource names is read by name (GET) and kept, cut to a bound, while something
//   names it. Their watch still sees every change, so a changed token or a renewed certificate
//   is read again and wakes its referrers as before.
// - owned: the Secrets the operator publishes are listed and watched whole (they are read on
//   every pass of their owner: read by name, each would cost a GET at every start and after
//   every write), in small pages, and kept only when a kind of the operator controls them (their
//   controller ownerReference), cut to what the operator itself can write.
import { errorChain, isNotFound } from "../kube/errors.ts";
import { Informer, resourceSource, type InformerEvent, type InformerFailure, type InformerHandler, type InformerLogger, type InformerOptions } from "../kube/informer.ts";
import { apiVersionOf, objectKey, type KubeApi, type KubeObject, type ObjectKey, type ObjectMeta, type OwnerReference, type ResourceType } from "../kube/types.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";
import { SHARD_LABEL, shardSelector } from "./sharding/assignment.ts";

/** What a kind may do with a cache: read it. */
export interface ReadStore<T extends KubeObject> {
  get(namespace: string, name: string): T | undefined;
  list(): T[];
  /** Cached objects whose index `index` holds `value`. */
  byIndex(index: string, value: string): T[];
}

/**
 * What a cache of Secrets or ConfigMaps keeps of them (required for those: see the top of this
 * file). Plain data: two caches with the same selectors and policy are one.
 */
export type ContentPolicy =
  /**
   * Listed and watched as metadata only; the content (`data`, only `keys` when given) of an
   * object a reference names is read by name while it is named. Content larger than `maxBytes`
   * (keys and values as the API serves them) is not kept: its readers are told why.
   */
  | { byName: { maxBytes: number; keys?: readonly string[] } }
  /**
   * Listed (`pageSize` at a time) and watched whole; kept only when its controller
   * ownerReference is one of the kinds registered with `keepOwnedBy` (before the store starts).
   * One whose data, labels and annotations exceed `maxBytes` is kept without them, and its
   * readers are told why.
   */
  | { owned: { maxBytes: number; pageSize: number } };

export interface Selectors { labelSelector?: string; fieldSelector?: string; content?: ContentPolicy }

/** The index of another store whose objects name objects of a by-name store ("namespace/name" values). */
export interface Referrers {
  indexHas(index: string, value: string): boolean;
  waitForSync(): Promise<void>;
}

/** A cache over one resource type (one informer per watched namespace). */
export class SharedStore<T extends KubeObject> implements ReadStore<T> {
  readonly name: string;
  protected readonly informers: Informer<T>[];
  /** Where its objects and index entries are counted, under `name`. */
  protected readonly entries: CacheEntries | undefined;
  /** Objects kept without their content, and why (filled by the informers' transform). */
  private readonly unread: WeakMap<object, string>;

  /** The kinds whose controlled objects an owned store keeps ("apiVersion/kind"); undefined: not an owned store. */
  private readonly owners: Set<string> | undefined;
  /** What an owned store keeps of an object (its informers' transform). */
  private readonly keep: ((obj: T) => T | undefined) | undefined;

  constructor(name: string, informers: Informer<T>[], entries?: CacheEntries, owned?: { unread: WeakMap<object, string>; owners: Set<string>; keep: (obj: T) => T | undefined }) {
    this.name = name;
    this.informers = informers;
    this.entries = entries;
    this.unread = owned?.unread ?? new WeakMap();
    this.owners = owned?.owners;
    this.keep = owned?.keep;
    entries?.track(`informer.${name}`, () => this.size);
  }

  /** An owned store (ContentPolicy.owned) keeps the objects a kind of this type controls. */
  keepOwnedBy(t: ResourceType): void {
    if (this.owners === undefined) throw new Error(`${this.name} keeps what its policy says, not what a kind owns`);
    this.owners.add(ownerId(apiVersionOf(t), t.kind));
  }

  /**
   * What this cache would hold of `obj`, read by name from the API (not from the cache): an
   * owned store's bound and owners applied, so it is trusted no more than a cached one
   * (unreadable() says why its content is not kept). Undefined: the cache would not keep it.
   */
  asCached(obj: T): T | undefined {
    return this.keep !== undefined ? this.keep(obj) : obj;
  }

  /** Objects cached. */
  get size(): number {
    return this.informers.reduce((n, i) => n + i.size, 0);
  }

  get(namespace: string, name: string): T | undefined {
    return this.getByKey(`${namespace}/${name}`);
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

  indexHas(index: string, value: string): boolean {
    return this.informers.some((i) => i.indexHas(index, value));
  }

  /**
   * Why the cache holds this object (one it gave) without its content, if it does: e.g. it is
   * larger than the cache keeps. Its readers say so instead of reading what is not there.
   */
  unreadable(obj: T): string | undefined {
    return this.unread.get(obj);
  }

  /** Whether this store reads content by name (ContentPolicy.byName): it is told what names what. */
  get readsByName(): boolean {
    return false;
  }

  /** The objects `referrers` name (through their index `index`) are the ones whose content is read (a by-name store; others hold what they keep). */
  contentNamedBy(_referrers: Referrers, _index: string): void {
    // Every object's content is kept (as its policy cuts it): nothing to read by name.
  }

  /** What names `key` may have changed: its content is read, or dropped, accordingly (a by-name store). */
  renamed(_key: string): void {
    // Nothing is read by name.
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

export interface ByNameOptions {
  /** Reads one object whole (a GET). */
  read(key: ObjectKey): Promise<KubeObject>;
  policy: { maxBytes: number; keys?: readonly string[] };
  logger?: InformerLogger | undefined;
  onUnexpectedError?: ((where: InformerFailure, err: unknown) => void) | undefined;
  /** Most reads in flight at once (default 4). */
  concurrency?: number;
  /** First wait before a failed read is tried again (doubling up to 30 s; default 500 ms). */
  retryBaseMillis?: number;
}

/**
 * A cache whose informers hold metadata only, and which reads by name the content of the
 * objects `contentNamedBy` says are named (ContentPolicy.byName). Handlers hear of a named
 * object once its content (at that version or later) is read: a changed token wakes its
 * referrers with the new token in hand. `get` gives the content of a named object, or its
 * metadata, whose `unreadable` says why it has no content (not read yet, unreadable, too large).
 */
export class ByNameStore<T extends KubeObject> extends SharedStore<T> {
  private readonly o: ByNameOptions;
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly referrers: { store: Referrers; index: string }[] = [];
  /** Named objects' content as last read (or a stub saying why there is none), by key. */
  private readonly content = new Map<string, T>();
  /** Every object made of content read (current or not), and why a stub has none (too large). */
  private readonly views = new WeakMap<object, string | undefined>();
  /** Named objects whose first read has not completed yet: handlers have not heard of them. */
  private readonly unheard = new Set<string>();
  private readonly reading = new Map<string, Promise<void>>();
  /** Changed again while being read: read once more after. */
  private readonly readAgain = new Set<string>();
  private readonly failures = new Map<string, { message: string; count: number; timer: NodeJS.Timeout | undefined }>();
  private readonly waiting: (() => void)[] = [];
  private inFlight = 0;
  private syncing: Promise<void> | undefined;
  private contentSynced = false;
  private stopped = false;

  constructor(name: string, informers: Informer<T>[], entries: CacheEntries | undefined, o: ByNameOptions) {
    super(name, informers, entries);
    this.o = o;
    for (const i of informers) i.onEvent((ev, obj, old) => { this.observed(ev, obj, old); });
    entries?.track(`informer.${name}.content`, () => this.content.size);
  }

  /**
   * A named object whose first read has not completed is not there yet, as its handlers have not
   * heard of it: a pass meanwhile sees what it saw before (e.g. not found), not a passing "not
   * read yet" reported as the referrer's reason; the read's event wakes the referrers.
   */
  override get(namespace: string, name: string): T | undefined {
    return this.getByKey(`${namespace}/${name}`);
  }

  override getByKey(key: string): T | undefined {
    if (this.unheard.has(key)) return undefined;
    return this.content.get(key) ?? super.getByKey(key);
  }

  override list(): T[] {
    return super.list().map((o) => this.content.get(objectKey(o)) ?? o);
  }

  override byIndex(index: string, value: string): T[] {
    return super.byIndex(index, value).map((o) => this.content.get(objectKey(o)) ?? o);
  }

  override unreadable(obj: T): string | undefined {
    if (this.views.has(obj)) return this.views.get(obj);
    // Metadata only: not named, or not read (yet).
    const failed = this.failures.get(objectKey(obj));
    return failed !== undefined ? `it could not be read: ${failed.message}` : "it has not been read yet";
  }

  override get readsByName(): boolean {
    return true;
  }

  override contentNamedBy(referrers: Referrers, index: string): void {
    this.referrers.push({ store: referrers, index });
  }

  override renamed(key: string): void {
    if (this.stopped) return;
    const meta = super.getByKey(key);
    if (meta === undefined) return;
    if (!this.named(key)) {
      // Named by nothing now: its content is not kept (its metadata is what the cache has).
      this.content.delete(key);
      this.clearFailure(key);
      if (this.unheard.delete(key)) this.emit("add", meta);
      return;
    }
    if (this.content.get(key)?.metadata.resourceVersion !== meta.metadata.resourceVersion) void this.readContent(key);
  }

  override onEvent(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Listed, and the content of every object named by then read (or tried once): no pass finds its token unread. */
  override waitForSync(): Promise<void> {
    this.syncing ??= (async () => {
      await super.waitForSync();
      await Promise.all(this.referrers.map((r) => r.store.waitForSync()));
      const keys = super.list().map((o) => objectKey(o)).filter((k) => this.named(k) && !this.content.has(k));
      await Promise.all(keys.map((k) => this.readContent(k)));
      this.contentSynced = true;
    })();
    return this.syncing;
  }

  override get hasSynced(): boolean {
    return this.contentSynced;
  }

  override async stop(): Promise<void> {
    this.stopped = true;
    for (const f of this.failures.values()) clearTimeout(f.timer);
    for (const w of this.waiting.splice(0)) w();
    await super.stop();
  }

  /** A method, not the field: the flag changes while reads are pending. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private named(key: string): boolean {
    return this.referrers.some((r) => r.store.indexHas(r.index, key));
  }

  /** An informer event (metadata only). */
  private observed(ev: InformerEvent, meta: T, old: T | undefined): void {
    const key = objectKey(meta);
    if (ev === "delete") {
      const last = this.content.get(key) ?? meta;
      this.content.delete(key);
      this.clearFailure(key);
      if (!this.unheard.delete(key)) this.emit("delete", last);
      return;
    }
    if (!this.named(key)) {
      const held = this.content.get(key);
      this.content.delete(key);
      const first = this.unheard.delete(key) || ev === "add";
      this.emit(first ? "add" : "update", meta, first ? undefined : held ?? old);
      return;
    }
    // Named: handlers hear of it with its content. Its own version read already (nothing new): nothing to do.
    if (this.content.get(key)?.metadata.resourceVersion === meta.metadata.resourceVersion) return;
    if (ev === "add") this.unheard.add(key);
    void this.readContent(key);
  }

  /** Reads `key` (once at a time; again after, if it changed meanwhile). Never rejects. */
  private readContent(key: string): Promise<void> {
    const current = this.reading.get(key);
    if (current !== undefined) {
      this.readAgain.add(key);
      return current;
    }
    const p = this.readOnce(key).finally(() => {
      this.reading.delete(key);
      if (this.readAgain.delete(key)) this.renamed(key);
    });
    this.reading.set(key, p);
    return p;
  }

  private async readOnce(key: string): Promise<void> {
    const sep = key.indexOf("/");
    let obj: KubeObject;
    await this.slot();
    try {
      if (this.isStopped()) return;
      obj = await this.o.read({ namespace: key.slice(0, sep), name: key.slice(sep + 1) });
    } catch (err) {
      // Gone: its delete event follows. Anything else is tried again, with backoff.
      if (!this.isStopped() && !isNotFound(err)) this.failed(key, err);
      return;
    } finally {
      this.release();
    }
    const meta = super.getByKey(key);
    // Deleted, or named by nothing, meanwhile: nothing to keep.
    if (this.isStopped() || meta === undefined || !this.named(key)) return;
    this.clearFailure(key);
    const view = this.view(obj);
    const prev = this.content.get(key);
    this.content.set(key, view);
    const first = this.unheard.delete(key);
    this.emit(first ? "add" : "update", view, first ? undefined : prev ?? meta);
  }

  /**
   * What is kept of an object read by name: its metadata as the informers keep it, its type,
   * and its data (the policy's keys) when within the bound; else a stub saying why.
   */
  private view(obj: KubeObject): T {
    const { maxBytes, keys } = this.o.policy;
    const all = stringMap(obj.data);
    const data = keys === undefined ? all : Object.fromEntries(Object.entries(all).filter(([k]) => keys.includes(k)));
    const bytes = mapBytes(data);
    const base = { ...shell(obj), metadata: metadataOf(obj.metadata) };
    if (bytes <= maxBytes) {
      const view = { ...base, data } as unknown as T;
      this.views.set(view, undefined);
      return view;
    }
    const stub = base as unknown as T;
    const what = keys === undefined ? "its data is" : `${keys.join(" and ")} are`;
    this.views.set(stub, `${what} larger than ${String(maxBytes)} bytes (${String(bytes)}): the operator does not read it`);
    return stub;
  }

  private failed(key: string, err: unknown): void {
    const prior = this.failures.get(key);
    clearTimeout(prior?.timer);
    const count = (prior?.count ?? 0) + 1;
    const delay = Math.min(30_000, (this.o.retryBaseMillis ?? 500) * 2 ** (count - 1));
    this.o.logger?.warn({ informer: this.name, object: key, err: errorChain(err), retryInMillis: delay }, "could not read a named object; retrying");
    const timer = setTimeout(() => { this.renamed(key); }, delay);
    this.failures.set(key, { message: errorChain(err), count, timer });
    // Its referrers hear of it now, unreadable with the reason, rather than not at all.
    const meta = super.getByKey(key);
    if (this.unheard.delete(key) && meta !== undefined) this.emit("add", meta);
  }

  private clearFailure(key: string): void {
    clearTimeout(this.failures.get(key)?.timer);
    this.failures.delete(key);
  }

  private async slot(): Promise<void> {
    if (this.inFlight < (this.o.concurrency ?? 4)) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => { this.waiting.push(resolve); });
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }

  /** Every handler hears every event, whatever another one does (as an informer's handlers). */
  private emit(ev: InformerEvent, obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        h(ev, obj, old);
      } catch (err) {
        try {
          this.o.logger?.warn({ informer: this.name, object: objectKey(obj), err: errorChain(err) }, "an event handler threw; skipped for this object");
          this.o.onUnexpectedError?.("informer-handler", err);
        } catch {
          // Reporting must not fail the cache either.
        }
      }
    }
  }
}

/** An object's identity and what the operator reads of its metadata: no labels, annotations or managedFields (a tenant's to fill). */
function metadataOf(m: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = { name: m.name };
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.uid !== undefined) out.uid = m.uid;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (m.creationTimestamp !== undefined) out.creationTimestamp = m.creationTimestamp;
  if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
  // The in-use finalizer is judged and patched against the whole list.
  if (m.finalizers !== undefined) out.finalizers = m.finalizers;
  return out;
}

/** apiVersion, kind and a Secret's type: what says what the object is. */
function shell(obj: KubeObject): Pick<KubeObject, "apiVersion" | "kind"> & { type?: string } {
  return {
    ...(obj.apiVersion !== undefined ? { apiVersion: obj.apiVersion } : {}),
    ...(obj.kind !== undefined ? { kind: obj.kind } : {}),
    ...(typeof obj.type === "string" ? { type: obj.type } : {}),
  };
}

const stringMap = (v: unknown): Record<string, string> => (v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === "string")) : {});
const mapBytes = (m: Readonly<Record<string, string>> | undefined): number => Object.entries(m ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0);
const ownerId = (apiVersion: string, kind: string): string => `${apiVersion}/${kind}`;

/** The informers' transform of a metadata-only (by-name) cache: identity, version and finalizers. */
function keepMetadata<T extends KubeObject>(obj: T): T {
  return { metadata: metadataOf(obj.metadata) } as T;
}

/** The informers' transform of an owned cache (ContentPolicy.owned). */
function keepOwned<T extends KubeObject>(policy: { maxBytes: number }, owned: { unread: WeakMap<object, string>; owners: Set<string> }): (obj: T) => T | undefined {
  const { unread, owners } = owned;
  return (obj) => {
    const controller: OwnerReference | undefined = obj.metadata.ownerReferences?.find((r) => r.controller === true);
    // Not controlled by one of the operator's kinds: not the operator's, whatever its labels say.
    if (controller === undefined || !owners.has(ownerId(controller.apiVersion, controller.kind))) return undefined;
    const data = stringMap(obj.data);
    const labels = stringMap(obj.metadata.labels);
    const annotations = stringMap(obj.metadata.annotations);
    const bytes = mapBytes(data) + mapBytes(labels) + mapBytes(annotations);
    const metadata = { ...metadataOf(obj.metadata), ownerReferences: [controller] };
    if (bytes > policy.maxBytes) {
      const stub = { ...shell(obj), metadata } as unknown as T;
      unread.set(stub, `its data, labels and annotations are larger than ${String(policy.maxBytes)} bytes (${String(bytes)}): more than the operator writes`);
      return stub;
    }
    return { ...shell(obj), metadata: { ...metadata, labels, annotations }, data } as unknown as T;
  };
}

export interface InformerPoolOptions {
  /** Namespaces to watch; empty or undefined means all. */
  namespaces?: string[] | undefined;
  informer?: Omit<InformerOptions, "onRestart" | "transform">;
  onRestart?: (informer: string, reason: string) => void;
  /** A handler, index function or transform threw for one object (skipped; the cache goes on). */
  onUnexpectedError?: (where: InformerFailure, err: unknown) => void;
  /** Where each store's objects and index entries are counted (linode_operator_cache_entries). */
  cacheEntries?: CacheEntries;
  /**
   * This replica's shard: every cache of a type in `group` (the operator's own kinds), and of
   * the Secrets the operator publishes (ContentPolicy.owned, labelled like their owner), holds
   * only the objects labelled to `identity`, so caches split across shards.
   */
  shard?: { group: string; identity: string };
}

/** Resources whose content is anyone's to fill: a cache of them must say what it keeps (ContentPolicy). */
const CONTENT_TYPES = new Set(["secrets", "configmaps"]);

/**
 * Objects per page of a metadata-only list. Metadata is a tenant's to fill too (256 KiB of
 * annotations each): a page is held whole while it is read, and what the process's allocator
 * took for it is not all given back (test/integration/tenant-memory.test.ts: a restart among 200
 * labelled objects with 128 KiB annotations settled 55 MiB higher than a start without them
 * with pages of 500, 18 to 29 with 20). Secrets and ConfigMaps selected by such a label or type
 * are few where nobody is hostile: a small page costs little.
 */
const METADATA_PAGE_SIZE = 20;

/** Hands out one SharedStore per resource type and selector set, and starts and stops them all. */
export class InformerPool {
  private readonly kube: KubeApi;
  private readonly opts: InformerPoolOptions;
  private readonly stores = new Map<string, SharedStore<KubeObject>>();

  constructor(kube: KubeApi, opts: InformerPoolOptions = {}) {
    this.kube = kube;
    this.opts = opts;
  }

  /** The labels an object this replica writes carries to be in its own caches (its shard's), if it shards. */
  get shardLabels(): Record<string, string> {
    return this.opts.shard !== undefined ? { [SHARD_LABEL]: this.opts.shard.identity } : {};
  }

  store<T extends KubeObject>(t: ResourceType, selectors: Selectors = {}): SharedStore<T> {
    return this.make(t, selectors, this.opts.namespaces !== undefined && this.opts.namespaces.length > 0 ? this.opts.namespaces : [undefined]);
  }

  /** A cache of a cluster-scoped resource (Nodes): one list+watch, whatever namespaces the operator watches. */
  clusterStore<T extends KubeObject>(t: ResourceType, selectors: Selectors = {}): SharedStore<T> {
    return this.make(t, selectors, [undefined]);
  }

  private make<T extends KubeObject>(t: ResourceType, given: Selectors, namespaces: (string | undefined)[]): SharedStore<T> {
    const sharded = this.opts.shard !== undefined && (t.group === this.opts.shard.group || (given.content !== undefined && "owned" in given.content));
    const shard = sharded && this.opts.shard !== undefined ? shardSelector(this.opts.shard.identity) : undefined;
    const labelSelector = [given.labelSelector, shard].filter((x) => x !== undefined && x !== "").join(",");
    const selectors: Selectors = { ...given, ...(labelSelector !== "" ? { labelSelector } : {}) };
    const policy = selectors.content;
    if (t.group === "" && CONTENT_TYPES.has(t.plural) && policy === undefined) throw new Error(`a cache of ${t.plural} must say what it keeps of them (Selectors.content): a selector alone lets anyone fill it`);
    const id = `${namespaces.join(",")}|${t.group}/${t.version}/${t.plural}?${selectors.labelSelector ?? ""}&${selectors.fieldSelector ?? ""}&${JSON.stringify(policy ?? null)}`;
    const existing = this.stores.get(id);
    if (existing !== undefined) return existing as unknown as SharedStore<T>;
    const byName = policy !== undefined && "byName" in policy ? policy.byName : undefined;
    const owned = policy !== undefined && "owned" in policy ? policy.owned : undefined;
    const ownership = owned !== undefined ? { unread: new WeakMap<object, string>(), owners: new Set<string>() } : undefined;
    const keep = owned !== undefined && ownership !== undefined ? keepOwned<T>(owned, ownership) : undefined;
    const transform = byName !== undefined ? keepMetadata<T> : keep;
    const informers = namespaces.map((namespace) => {
      const source = resourceSource<T>(this.kube, t, {
        namespace,
        ...(selectors.labelSelector !== undefined ? { labelSelector: selectors.labelSelector } : {}),
        ...(selectors.fieldSelector !== undefined ? { fieldSelector: selectors.fieldSelector } : {}),
        ...(byName !== undefined ? { metadataOnly: true, pageSize: METADATA_PAGE_SIZE } : {}),
        ...(owned !== undefined ? { pageSize: owned.pageSize } : {}),
      });
      return new Informer<T>(this.kube, source, {
        ...this.opts.informer,
        ...(transform !== undefined ? { transform } : {}),
        onRestart: (reason: string) => this.opts.onRestart?.(source.name, reason),
        ...(this.opts.onUnexpectedError !== undefined ? { onUnexpectedError: this.opts.onUnexpectedError } : {}),
      });
    });
    // Two stores of one type differ by their selectors (token Secrets, connection Secrets).
    const selected = [selectors.labelSelector, selectors.fieldSelector].filter((x) => x !== undefined && x !== "").join(",");
    const name = selected === "" ? t.plural : `${t.plural}{${selected}}`;
    const store = byName !== undefined
      ? new ByNameStore<T>(name, informers, this.opts.cacheEntries, {
        read: (key) => (t.plural === "secrets" && t.group === "" ? this.kube.getSecret(key) : this.kube.getCustom(t, key)),
        policy: byName, logger: this.opts.informer?.logger, onUnexpectedError: this.opts.onUnexpectedError,
      })
      : new SharedStore<T>(name, informers, this.opts.cacheEntries, ownership !== undefined && keep !== undefined ? { ...ownership, keep } : undefined);
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
