// The Kubernetes objects and the one interface (KubeApi) the rest of the operator speaks in.
// Plain data shapes of our own, so nothing outside src/kube depends on @kubernetes/client-node:
// KubeClient implements KubeApi against a real API server, and tests implement it in memory.

export interface ResourceType { group: string; version: string; plural: string; kind: string }
export interface ObjectKey { namespace: string; name: string }

/** Core v1 Secrets as a ResourceType (the empty group is the core API). */
export const secretsType: ResourceType = { group: "", version: "v1", plural: "secrets", kind: "Secret" };

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string | Date;
  ownerReferences?: OwnerReference[];
  creationTimestamp?: string | Date;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

/** Core v1 ConfigMaps. */
export const configMapsType: ResourceType = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap" };

export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

/** Core v1 Services. */
export const servicesType: ResourceType = { group: "", version: "v1", plural: "services", kind: "Service" };

/** A Service, as far as the operator reads one: its ports (with their node ports) and traffic policy. */
export interface ServiceObject extends KubeObject {
  spec?: {
    type?: string;
    externalTrafficPolicy?: string;
    ports?: { name?: string; port: number; nodePort?: number; protocol?: string }[];
  };
}

/** discovery.k8s.io/v1 EndpointSlices: which nodes a Service's ready endpoints run on. */
export const endpointSlicesType: ResourceType = { group: "discovery.k8s.io", version: "v1", plural: "endpointslices", kind: "EndpointSlice" };

export interface EndpointSliceObject extends KubeObject {
  endpoints?: { nodeName?: string; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean } }[];
}

/** Core v1 Nodes (cluster-scoped). */
export const nodesType: ResourceType = { group: "", version: "v1", plural: "nodes", kind: "Node" };

/** A Node, as far as the operator reads one: its addresses and whether it takes new pods. */
export interface NodeObject extends KubeObject {
  spec?: { unschedulable?: boolean };
  status?: { addresses?: { type: string; address: string }[]; conditions?: { type: string; status: string }[] };
}

/** events.k8s.io/v1 Events, as the operator records them (src/runtime/events.ts) and people read them. */
export const eventsType: ResourceType = { group: "events.k8s.io", version: "v1", plural: "events", kind: "Event" };

export interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  note?: string;
  action?: string;
  eventTime?: string | null;
  /** Core v1 Events seen through events.k8s.io (another component's) carry these instead of eventTime. */
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
  deprecatedCount?: number;
  reportingController?: string;
  series?: { count?: number; lastObservedTime?: string };
  regarding?: { kind?: string; name?: string; namespace?: string; uid?: string };
}

export interface SecretObject extends KubeObject {
  type?: string;
  /** base64-encoded values, as the API serves them. */
  data?: Record<string, string>;
}

/** A Secret to apply: name and namespace are required. */
export interface SecretManifest {
  type?: string;
  metadata: ObjectMeta & { namespace: string };
  data: Record<string, string>;
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** MicroTime values: see microTime() in client.ts. */
  acquireTime?: Date;
  renewTime?: Date;
  leaseTransitions?: number;
}

export interface LeaseObject {
  metadata?: Partial<ObjectMeta>;
  spec?: LeaseSpec;
}

export interface ListPage<T> { items: T[]; resourceVersion: string; continueToken: string | undefined }
export interface JsonPatchOp { op: "add" | "remove" | "replace" | "test"; path: string; value?: unknown }

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  continueToken?: string;
  limit?: number;
  /**
   * Each item's metadata only (the API server's PartialObjectMetadata): a Secret's or a
   * ConfigMap's content never crosses the wire. An API that does not support it answers whole
   * objects, so callers keep only what they read either way.
   */
  metadataOnly?: boolean;
}

export type WatchQuery = Record<string, string | number | boolean | undefined>;

/** Per-call options: an abort signal bounds a call more tightly than the client's timeout. */
export interface CallOptions { signal?: AbortSignal }

export interface WatchHandle { abort(): void }

/**
 * What the operator does with the Kubernetes API. A failed JSON-patch `test` op is reported as
 * a 409 conflict (KubeApiError), like a stale resourceVersion: both mean "read again".
 */
export interface KubeApi {
  readonly fieldManager: string;
  ping(): Promise<void>;

  list<T extends KubeObject>(t: ResourceType, opts?: ListOptions): Promise<ListPage<T>>;
  /**
   * `onDone` is called once when the watch ends, with the error if it failed. `metadataOnly`:
   * each event's object is its metadata only (as ListOptions.metadataOnly).
   */
  watch(path: string, query: WatchQuery, onEvent: (type: string, obj: unknown) => void, onDone: (err: unknown) => void,
    opts?: { inactivityMillis?: number; metadataOnly?: boolean }): Promise<WatchHandle>;

  /** One namespaced object by type: a custom resource, or a core one the operator reads by name (a ConfigMap, a Secret). */
  getCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey): Promise<T>;
  createCustom<T extends KubeObject>(t: ResourceType, namespace: string, body: KubeObject): Promise<T>;
  deleteCustom(t: ResourceType, key: ObjectKey): Promise<void>;
  /**
   * Merge-patches `.status` through the status subresource. With `resourceVersion`, the write
   * happens only if the object is still at that version (else a 409).
   */
  patchCustomStatus<T extends KubeObject>(t: ResourceType, key: ObjectKey, status: unknown, opts?: { resourceVersion?: string }): Promise<T>;
  mergePatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, patch: unknown): Promise<T>;
  jsonPatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, ops: JsonPatchOp[]): Promise<T>;

  getSecret(key: ObjectKey): Promise<SecretObject>;
  /** Creates a Secret; a 409 if one of that name exists. */
  createSecret(secret: SecretManifest): Promise<SecretObject>;
  /** Server-side apply of a whole Secret under our field manager. */
  applySecret(secret: SecretManifest): Promise<SecretObject>;
  deleteSecret(key: ObjectKey): Promise<void>;
  /** JSON-patches a Secret's metadata (e.g. its finalizers); a failed `test` op is a 409 conflict. */
  jsonPatchSecret(key: ObjectKey, ops: JsonPatchOp[]): Promise<SecretObject>;

  createEvent(namespace: string, body: Record<string, unknown>): Promise<void>;
  patchEvent(key: ObjectKey, patch: Record<string, unknown>): Promise<void>;

  getLease(key: ObjectKey, opts?: CallOptions): Promise<LeaseObject>;
  createLease(namespace: string, lease: LeaseObject, opts?: CallOptions): Promise<LeaseObject>;
  /** PUT with metadata.resourceVersion: a 409 means someone else wrote it first. */
  replaceLease(key: ObjectKey, lease: LeaseObject, opts?: CallOptions): Promise<LeaseObject>;
  /** The Leases of a namespace with these labels (e.g. the shards' membership Leases). */
  listLeases(namespace: string, labelSelector: string, opts?: CallOptions): Promise<LeaseObject[]>;
  /** Deleted only if it is still `resourceVersion` (else a 409: someone renewed it meanwhile). */
  deleteLease(key: ObjectKey, resourceVersion: string, opts?: CallOptions): Promise<void>;

  /** A namespace's UID (e.g. kube-system's, a stable identity of the cluster). */
  namespaceUid(name: string): Promise<string>;
}

/** What an access review asks: may I `verb` this resource (in `namespace`, or all; `name`, or any)? */
export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface AccessVerdict { allowed: boolean; reason?: string }

/**
 * What `doctor` and the start-up token check ask of the cluster beyond KubeApi: their own access
 * (SelfSubjectAccessReview), the CRDs as served, and the operator's own Deployment (whose
 * Events say why it is not Ready).
 */
export interface ClusterInspection {
  canI(attrs: AccessAttributes): Promise<AccessVerdict>;
  getCrd(name: string): Promise<KubeObject>;
  getDeployment(key: ObjectKey): Promise<KubeObject>;
}

export const objectKey = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
export const keyOf = (o: KubeObject): ObjectKey => ({ namespace: o.metadata.namespace ?? "", name: o.metadata.name });
export const apiVersionOf = (t: ResourceType): string => (t.group === "" ? t.version : `${t.group}/${t.version}`);

/** The collection path of a resource, across all namespaces or in one. */
export function collectionPath(t: ResourceType, namespace?: string): string {
  const base = t.group === "" ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  return namespace === undefined ? `${base}/${t.plural}` : `${base}/namespaces/${namespace}/${t.plural}`;
}
