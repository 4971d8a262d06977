// References between objects, resolved in one stage before observe. For each reference a kind
// declares, an index on the kind's own cache maps a referenced object to the objects that
// refer to it, so a change to the referenced object (both its old and new state) reconciles
// exactly its referrers: no poll loop waits for a database to become Ready.
import { objectKey, type KubeObject, type ResourceType } from "../kube/types.ts";
import { ConditionReasons } from "./reasons.ts";
import { referrersIndex, type Decoded, type Managed, type ManagedObject, type Reference, type ResolvedRef, type ResolvedRefs, type Target, type Watch } from "./managed.ts";
import type { ReferenceProtection } from "./protection.ts";
import { SharedStore } from "./stores.ts";

/** The cache of a declared read; undefined while its gate is off. */
export type StoreFor = (target: Target) => SharedStore<KubeObject> | undefined;

export interface Resolution {
  refs: ResolvedRefs;
  /** The first required reference that did not resolve: the Ready reason and message to report. */
  unresolved?: { reason: string; message: string };
}

/** What a read the operator may not make holds: nothing, ever (no informer). */
const absent = new SharedStore<KubeObject>("not-readable", []);

const isSecrets = (t: Target): boolean => t.type.group === "" && t.type.plural === "secrets";

export class References<Spec> {
  private readonly declared: { ref: Reference<Spec>; store: SharedStore<KubeObject> }[];

  constructor(declared: readonly Reference<Spec>[], storeFor: StoreFor) {
    // A reference whose read the operator may not make (its gate off) finds nothing: a required one is not found.
    this.declared = declared.map((ref) => ({ ref, store: storeFor(ref.target) ?? absent }));
  }

  /**
   * Indexes `self` by what each object refers to (by its spec, or by what its status recorded)
   * and calls `enqueue` with the referrers of every referenced object that changes. `parse` is
   * the kind's spec parser (a spec that does not parse refers to nothing). References that
   * protect what they name are registered with `protection`.
   */
  wire(self: SharedStore<ManagedObject>, parse: (raw: unknown) => Spec, enqueue: (key: string) => void, protection?: ReferenceProtection): void {
    for (const { ref, store } of this.declared) {
      const index = referrersIndex(ref.name);
      const refersTo = (obj: ManagedObject): string[] => {
        let names: string[] = [];
        try {
          names = ref.names(parse(obj.spec));
        } catch {
          // refers to nothing by its spec
        }
        const all = new Set([...names, ...(ref.recorded?.(obj) ?? [])]);
        return [...all].map((name) => `${obj.metadata.namespace ?? ""}/${name}`);
      };
      self.addIndex(index, refersTo);
      // A store that reads content by name (Secrets a tenant can label) reads what these name:
      // told when what an object names may have changed (its spec, its record, its deletion).
      if (store.readsByName) {
        store.contentNamedBy(self, index);
        self.onEvent((_ev, obj, old) => {
          for (const o of old === undefined ? [obj] : [obj, old]) for (const key of refersTo(o)) store.renamed(key);
        });
      }
      store.onEvent((ev, obj, old) => {
        // A change that leaves what referrers read of it alone (its decoded view: kinds read
        // nothing else) wakes none of them: a database's status write carrying only its backups
        // does not send each of its snapshots to look at the cloud again.
        let concerns: (referrer: ManagedObject) => boolean = () => true;
        if (ev === "update" && old !== undefined) {
          const [before, after] = [decode(ref, store, old), decode(ref, store, obj)];
          if (JSON.stringify(before) === JSON.stringify(after)) return;
          if (ref.wakes !== undefined) concerns = (referrer) => ref.wakes?.(referrer, before, after) ?? true;
        }
        for (const o of old === undefined ? [obj] : [obj, old]) {
          for (const referrer of self.byIndex(index, objectKey(o))) if (concerns(referrer)) enqueue(objectKey(referrer));
        }
      });
      if (ref.protect === true) {
        if (!isSecrets(ref.target)) throw new Error(`reference ${ref.name}: only Secrets can be protected`);
        if (protection === undefined) throw new Error(`reference ${ref.name} protects what it names: a ReferenceProtection is needed`);
        protection.register(store, self, index, refersTo);
      }
    }
  }

  /** The resolved objects of this pass that must outlive the object (their finalizer is put on before it acts). */
  protectedOf(m: Managed<Spec>): KubeObject[] {
    return this.declared.filter(({ ref }) => ref.protect === true).flatMap(({ ref }) => [...(m.refs[ref.name]?.values() ?? [])].map((r) => r.obj));
  }

  /**
   * Resolves and decodes what `m` refers to: the names its spec gives (required unless the
   * reference says otherwise, or the object is being deleted) and those its status recorded.
   */
  resolve(m: Managed<Spec>, deleting: boolean): Resolution {
    const refs: Record<string, Map<string, ResolvedRef>> = {};
    let unresolved: Resolution["unresolved"];
    for (const { ref, store } of this.declared) {
      const found = new Map<string, ResolvedRef>();
      const required = !deleting && (ref.required?.(m) ?? true);
      const named = ref.names(m.spec);
      for (const name of new Set([...named, ...(ref.recorded?.(m.obj) ?? [])])) {
        const needed = required && named.includes(name);
        const obj = store.get(m.key.namespace, name);
        if (obj === undefined) {
          if (needed) unresolved ??= { reason: ref.reasons?.notFound ?? ConditionReasons.ReferenceNotFound, message: `${ref.target.type.kind} ${name} not found in namespace ${m.key.namespace}${ref.notFoundHint !== undefined ? ` ${ref.notFoundHint}` : ""}` };
          continue;
        }
        const decoded = decode(ref, store, obj);
        if (decoded.notReady !== undefined && needed) unresolved ??= { reason: ref.reasons?.notReady ?? ConditionReasons.ReferenceNotReady, message: `${ref.target.type.kind} ${name} is not ready: ${decoded.notReady}` };
        found.set(name, { obj, decoded });
      }
      refs[ref.name] = found;
    }
    return unresolved === undefined ? { refs } : { refs, unresolved };
  }
}

/**
 * What `ref` makes of `obj`: its decode of the content, or, when the store holds the object
 * without its content (too large, not read yet), what the reference makes of why.
 */
function decode<Spec>(ref: Reference<Spec>, store: SharedStore<KubeObject>, obj: KubeObject): Decoded<unknown> {
  const why = store.unreadable(obj);
  if (why === undefined) return ref.decode(obj);
  return ref.unreadable?.(why) ?? { notReady: why };
}

/** Subscribes `enqueue` to the keys a secondary watch maps each change to (old and new state). */
export function wireWatch(watch: Watch, storeFor: StoreFor, enqueue: (key: string) => void): void {
  // A target the operator may not read (its gate off: Nodes without --read-nodes) wakes nothing: the kind says why where it needs it.
  storeFor(watch.target)?.onEvent((_ev, obj, old) => {
    if (old !== undefined && watch.changed !== undefined && !watch.changed(obj, old)) return;
    for (const o of old === undefined ? [obj] : [obj, old]) for (const key of watch.map(o)) enqueue(key);
  });
}

/** Keys of the objects of type `owner` that own `obj` (its ownerReferences). */
export function ownerKeys(obj: KubeObject, owner: ResourceType): string[] {
  const apiVersion = `${owner.group}/${owner.version}`;
  return (obj.metadata.ownerReferences ?? [])
    .filter((r) => r.kind === owner.kind && r.apiVersion === apiVersion)
    .map((r) => `${obj.metadata.namespace ?? ""}/${r.name}`);
}
