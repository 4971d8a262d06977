// Objects a resource cannot do without until it is gone (the token Secret its cloud object is
// reached with) must outlive it. A namespace being deleted removes everything in it at once:
// without this, the token can go first and the resource can never delete its cloud object, and
// the namespace cannot even receive the Secret again. As Crossplane keeps a ProviderConfig that
// is in use, a finalizer stays on each such object while any resource of any kind refers to it
// (by its spec or by what its status recorded), and is removed once none does.
//
// Only after every cache has listed is anything decided: a referrer not listed yet would make a
// Secret look unused.
import { errorChain, isConflict, isNotFound } from "../kube/errors.ts";
import { keyOf, objectKey, type JsonPatchOp, type KubeApi, type KubeObject } from "../kube/types.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";
import type { Logger } from "./logger.ts";
import type { ManagedObject } from "./managed.ts";
import type { SharedStore } from "./stores.ts";
import { WorkQueue, trackQueue } from "./workqueue.ts";

export const IN_USE_FINALIZER = "linode.operator.dev/in-use";

interface Users { store: SharedStore<ManagedObject>; index: string; refersTo: (obj: ManagedObject) => string[] }
interface Target { store: SharedStore<KubeObject>; users: Users[] }

export class ReferenceProtection {
  private readonly kube: KubeApi;
  private readonly log: Logger | undefined;
  /** By target store: the stores (and their referrer indexes) whose objects may refer into it. */
  private readonly targets = new Map<SharedStore<KubeObject>, Target>();
  private readonly queue = new WorkQueue({ backoff: { baseMillis: 500, maxMillis: 60_000 } });
  private worker: Promise<void> | undefined;
  private stopped = false;

  constructor(kube: KubeApi, log?: Logger, entries?: CacheEntries) {
    this.kube = kube;
    this.log = log;
    trackQueue(entries, "protection", this.queue);
  }

  /**
   * Objects of `store` refer to Secrets of `target` (keys "namespace/name" that `refersTo`
   * gives, and that index `index` of `store` maps back to them): those are protected while
   * referred to.
   */
  register(target: SharedStore<KubeObject>, store: SharedStore<ManagedObject>, index: string, refersTo: (obj: ManagedObject) => string[]): void {
    let t = this.targets.get(target);
    if (t === undefined) {
      t = { store: target, users: [] };
      this.targets.set(target, t);
      const tt = t;
      // A delete from a selected cache is also a Secret that lost its label (it left the
      // selection, it still exists): it is looked at too, so its finalizer never outlives its use.
      target.onEvent((_ev, obj) => { this.enqueue(tt, objectKey(obj)); });
    }
    t.users.push({ store, index, refersTo });
    const tt = t;
    // A referrer added, changed or gone: what it referred to (before and after) may have changed use.
    store.onEvent((_ev, obj, old) => {
      for (const o of old === undefined ? [obj] : [obj, old]) for (const key of refersTo(o)) this.enqueue(tt, key);
    });
  }

  /** Whether anything refers to `key` in `target` now. */
  inUse(target: SharedStore<KubeObject>, key: string): boolean {
    const t = this.targets.get(target);
    return t?.users.some((u) => u.store.byIndex(u.index, key).length > 0) ?? false;
  }

  /**
   * Puts the finalizer on `obj` now, if it is not there yet (before a pass acts with it, so a
   * namespace deleted at that moment cannot take it first). An object already being deleted
   * cannot take a new finalizer; it is used as long as it is there.
   */
  async ensure(obj: KubeObject): Promise<void> {
    if (obj.metadata.finalizers?.includes(IN_USE_FINALIZER) === true || obj.metadata.deletionTimestamp !== undefined) return;
    await this.patch(obj, "add");
  }

  /** Starts deciding (idempotent): call once every cache has listed. */
  start(): void {
    if (this.worker !== undefined || this.stopped) return;
    for (const t of this.targets.values()) for (const o of t.store.list()) this.enqueue(t, objectKey(o));
    this.worker = this.work();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.shutDown();
    await this.worker;
  }

  private enqueue(t: Target, key: string): void {
    this.queue.add(`${[...this.targets.values()].indexOf(t)}|${key}`);
  }

  private async work(): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (item === undefined) return;
      try {
        await this.check(item);
        this.queue.forget(item);
      } catch (err) {
        if (isConflict(err)) this.queue.addAfter(item, 200);
        else {
          const delay = this.queue.addRateLimited(item);
          this.log?.warn({ object: item.slice(item.indexOf("|") + 1), err: errorChain(err), retryInMillis: delay }, "could not update the in-use finalizer");
        }
      } finally {
        this.queue.done(item);
      }
    }
  }

  private async check(item: string): Promise<void> {
    const sep = item.indexOf("|");
    const t = [...this.targets.values()][Number(item.slice(0, sep))];
    const key = item.slice(sep + 1);
    if (t === undefined) return;
    const used = this.inUse(t.store, key);
    // Not in the cache: gone, or no longer selected (its label removed). Read by name only when
    // it may carry our finalizer and nothing uses it any more, to take it off.
    const obj = t.store.getByKey(key) ?? (used ? undefined : await this.read(key));
    if (obj === undefined) return;
    const has = obj.metadata.finalizers?.includes(IN_USE_FINALIZER) === true;
    if (used && !has && obj.metadata.deletionTimestamp === undefined) await this.patch(obj, "add");
    else if (!used && has) await this.patch(obj, "remove");
  }

  /** The Secret `key` ("namespace/name") as the API server has it now; undefined when it is gone. */
  private async read(key: string): Promise<KubeObject | undefined> {
    const sep = key.indexOf("/");
    try {
      return await this.kube.getSecret({ namespace: key.slice(0, sep), name: key.slice(sep + 1) });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async patch(obj: KubeObject, op: "add" | "remove"): Promise<void> {
    const finalizers = obj.metadata.finalizers;
    let ops: JsonPatchOp[];
    if (op === "add") {
      ops = finalizers === undefined
        ? [{ op: "test", path: "/metadata/resourceVersion", value: obj.metadata.resourceVersion }, { op: "add", path: "/metadata/finalizers", value: [IN_USE_FINALIZER] }]
        : [{ op: "test", path: "/metadata/finalizers", value: finalizers }, { op: "add", path: "/metadata/finalizers/-", value: IN_USE_FINALIZER }];
    } else {
      const i = finalizers?.indexOf(IN_USE_FINALIZER) ?? -1;
      if (i < 0) return;
      ops = [{ op: "test", path: `/metadata/finalizers/${String(i)}`, value: IN_USE_FINALIZER }, { op: "remove", path: `/metadata/finalizers/${String(i)}` }];
    }
    try {
      await this.kube.jsonPatchSecret(keyOf(obj), ops);
      this.log?.debug({ secret: objectKey(obj), op }, "in-use finalizer");
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
