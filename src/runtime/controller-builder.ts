// Wires what a controller runs from a kind's module and definition: the caches the kind declares
// it reads (and only those: an undeclared read stops the operator at start), the kind built with
// read handles to them, its references and watches, the indexes by cloud id, the connection
// Secrets it publishes, and the reconciler. The Controller keeps only the queue, the workers
// and the lifecycle; nothing here is per kind.
import { objectKey, secretsType, type KubeObject, type SecretObject } from "../kube/types.ts";
import { ConnectionSecrets, ownedSecretSelectors } from "./connection-secrets.ts";
import type { EventRecorder } from "./events.ts";
import type { Logger } from "./logger.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";
import type { KubeApi } from "../kube/types.ts";
import { DeclaredReads } from "./declared-reads.ts";
import { completeKind } from "./kind-defaults.ts";
import type { AnyManagedKind, KindModule, KindStores, ManagedObject, Target } from "./managed.ts";
import { recordedIdOf } from "./ownership.ts";
import { ReferenceProtection } from "./protection.ts";
import { kindRead } from "./reads.ts";
import { ManagedReconciler } from "./reconciler.ts";
import { References, ownerKeys, wireWatch } from "./references.ts";
import { forbiddenKeyPaths } from "./safe-keys.ts";
import type { InformerPool, SharedStore } from "./stores.ts";

export type ControllerDeps<D> = {
  kube: KubeApi;
  events: EventRecorder;
  log: Logger;
  metrics?: OperatorMetrics;
  /** Where the per-object maps are counted (default: the metrics'). */
  cacheEntries?: CacheEntries;
  /** Counts status writes, for tests. */
  onStatusWrite?: () => void;
  /** Called after every reconcile pass that ran (whatever its outcome), for tests to count passes instead of waiting for time. */
  onPass?: (key: string) => void;
  /** Caches shared with other controllers; the controller makes its own when absent. */
  informers?: InformerPool;
  /** Protection of referenced Secrets, shared with the other controllers (one finalizer for all kinds); its own when absent. */
  protection?: ReferenceProtection;
  /**
   * The read gates (operator settings, e.g. "read-nodes") that are on: a read a kind declares
   * with a gate not listed here gets no cache (its store is undefined, its watches wake nothing).
   */
  gates?: ReadonlySet<string>;
} & (undefined extends D ? { kindDeps?: D } : {
  /** What the kind needs to build itself (its Linode client, poll intervals, ...). */
  kindDeps: D;
});

/** The index of a kind's own cache by the cloud id each object recorded. */
export const RECORDED_ID_INDEX = "recorded-id";
/** ... and by the cloud id each object's spec names to adopt. */
const NAMED_ID_INDEX = "named-id";

/** What the wiring asks of the controller it is for. */
export interface WiringHooks {
  /** Reconcile this key soon (a referenced or watched object changed, the kind asked). */
  enqueue: (key: string) => void;
  /** The reconciler wrote the object (its status, when `status`): the watch event of it is no change. */
  ownWrite: (key: string, resourceVersion: string | undefined, status: boolean) => void;
  /** When this process began to manage the object under `key`, if after it started. */
  managedSince?: (key: string) => number | undefined;
}

export interface WiredKind {
  kind: AnyManagedKind;
  /** The kind's own objects, indexed by recorded cloud id. */
  self: SharedStore<ManagedObject>;
  reconciler: ManagedReconciler;
  protection: ReferenceProtection;
}

export function wireKind<D>(module: KindModule<D>, deps: ControllerDeps<D>, pool: InformerPool, hooks: WiringHooks): WiredKind {
  const kindName = module.type.kind;
  // Every cache the kind reads is one its definition declares (its own type apart): one generic
  // path, whatever the type, checked as the kind asks for it and as its references and watches
  // are wired below.
  const declared = new DeclaredReads(kindName, module.type, module.definition?.reads ?? []);
  const storeOf = (target: Target): SharedStore<KubeObject> | undefined => {
    if (target.gate !== undefined && deps.gates?.has(target.gate) !== true) return undefined;
    return target.scope === "cluster" ? pool.clusterStore(target.type, target.selectors) : pool.store(target.type, target.selectors);
  };
  const storeFor = (usedBy: string) => (target: Target): SharedStore<KubeObject> | undefined => storeOf(declared.check(target, usedBy));
  const self = pool.store<ManagedObject>(module.type);
  const stores: KindStores = {
    self,
    kind: (t) => {
      const store = storeFor("stores.kind")(kindRead(t, ""));
      if (store === undefined) throw new Error(`${kindName}: a read of ${t.kind} cannot be gated`);
      return store;
    },
    read: <T extends KubeObject>(r: Target) => storeFor("stores.read")(r) as SharedStore<T> | undefined,
  };
  const recorders = (id: string): ManagedObject[] => self.byIndex(RECORDED_ID_INDEX, id);
  const parts = module.build({ deps: deps.kindDeps as D, stores, events: deps.events, wake: hooks.enqueue, recorders });
  const kind = refusingPrototypeKeys(completeKind(kindName, parts, module.definition?.spec));

  const protection = deps.protection ?? new ReferenceProtection(deps.kube, deps.log.child({ kind: kindName }));
  // Checked by name first, so the start-up error says which reference or watch reads what is not declared.
  for (const ref of kind.references ?? []) declared.check(ref.target, `its reference ${ref.name}`);
  for (const [i, w] of (kind.watches ?? []).entries()) declared.check(w.target, `its watch #${String(i + 1)}`);
  const references = kind.references !== undefined && kind.references.length > 0 ? new References<unknown>(kind.references, storeFor("a reference")) : undefined;
  references?.wire(self, (raw) => kind.parseSpec(raw), hooks.enqueue, protection);
  indexByCloudId(kind, self, hooks.enqueue);
  for (const w of kind.watches ?? []) wireWatch(w, storeFor("a watch"), hooks.enqueue);

  let connections: ConnectionSecrets | undefined;
  if (kind.connection !== undefined) {
    // The Secrets we publish, mapped to their owners: a deleted or edited one is put back.
    const secrets = pool.store<SecretObject>(secretsType, ownedSecretSelectors);
    // The runtime's own read (the chart's Secrets rule grants it), not the kind's: no declaration.
    wireWatch({ target: { type: secretsType, scope: "namespaces", selectors: ownedSecretSelectors, why: "connection Secrets" }, map: (s) => ownerKeys(s, module.type) }, storeOf, hooks.enqueue);
    // Labelled to this replica's shard, if it shards: its cache of them holds its own only.
    connections = new ConnectionSecrets(deps.kube, secrets, module.type, pool.shardLabels);
  }
  const reconciler = new ManagedReconciler(kind, {
    kube: deps.kube, events: deps.events, protection, recorders,
    ...(references !== undefined ? { references } : {}),
    ...(connections !== undefined ? { connections } : {}),
    onWrite: (write) => { hooks.ownWrite(write.key, write.resourceVersion, write.status); },
    ...(hooks.managedSince !== undefined ? { managedSince: hooks.managedSince } : {}),
  });
  return { kind, self, reconciler, protection };
}

/**
 * The kind's objects by the cloud id each recorded and each names to adopt: one letting go of an
 * id (deleted, or its record changed) frees it for those that were refused it.
 */
function indexByCloudId(kind: AnyManagedKind, self: SharedStore<ManagedObject>, enqueue: (key: string) => void): void {
  self.addIndex(RECORDED_ID_INDEX, (obj) => {
    const id = recordedIdOf(kind, obj);
    return id === undefined ? [] : [id];
  });
  self.addIndex(NAMED_ID_INDEX, (obj) => {
    try {
      const id = kind.namedId?.(kind.parseSpec(obj.spec));
      return id === undefined ? [] : [id];
    } catch {
      return [];
    }
  });
  self.onEvent((ev, obj, old) => {
    const before = recordedIdOf(kind, old ?? obj);
    if (before === undefined || (ev !== "delete" && recordedIdOf(kind, obj) === before)) return;
    for (const o of [...self.byIndex(NAMED_ID_INDEX, before), ...self.byIndex(RECORDED_ID_INDEX, before)]) {
      if (o.metadata.uid !== obj.metadata.uid) enqueue(objectKey(o));
    }
  });
}

/**
 * The kind with its spec parser refusing keys that name an object's prototype, at any depth
 * (the CRD refuses them too; an object stored before that rule, or written around it, is
 * InvalidSpec here): no kind's code ever walks such a key.
 */
function refusingPrototypeKeys(kind: AnyManagedKind): AnyManagedKind {
  const parse = kind.parseSpec.bind(kind);
  return Object.assign(Object.create(Object.getPrototypeOf(kind) as object | null) as AnyManagedKind, kind, {
    parseSpec(raw: unknown): unknown {
      const bad = forbiddenKeyPaths(raw);
      if (bad.length > 0) throw new TypeError(`spec.${bad.join(", spec.")}: __proto__, constructor and prototype are not allowed as keys (they name an object's prototype)`);
      return parse(raw);
    },
  });
}
