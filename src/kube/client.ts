// The operator's one door to the Kubernetes API: KubeApi on @kubernetes/client-node. Everything
// else in src/ talks to KubeApi, never to client-node, so the rest of the code is plain data.
import {
  AuthorizationV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api, Observable, PatchStrategy, Watch,
  type ConfigurationOptions, type KubeConfig, type ObservableMiddleware, type RequestContext,
  type ResponseContext, type V1Lease, type V1Secret, V1MicroTime,
} from "@kubernetes/client-node";
import { Agent, type Dispatcher } from "undici";
import { KubeApiError, kubeCall } from "./errors.ts";
import { serviceAccountOf, type ServiceAccountRef } from "./service-account.ts";
import type {
  AccessAttributes, AccessVerdict, CallOptions, ClusterInspection, JsonPatchOp, KubeApi, KubeObject, LeaseObject, ListOptions, ListPage, ObjectKey, ResourceType, SecretManifest,
  SecretObject, WatchHandle, WatchQuery,
} from "./types.ts";

export * from "./types.ts";

export interface KubeClientOptions {
  /** Server-side apply field manager and event reportingController. */
  fieldManager: string;
  /** Per-request timeout (watches excluded). */
  timeoutMillis?: number;
  /** Most keep-alive connections to the API server for requests (watches have their own); default 8. */
  connections?: number;
}

/**
 * client-node 2.x builds a new undici Agent, so a new TLS connection, for every request: 1,000
 * objects converging opened ~500 connections to the API server at once. Requests share one
 * keep-alive pool instead, bounded, with the TLS options client-node would have used (the
 * credentials still go in each request's headers, so rotated tokens keep working). A proxy
 * configuration keeps client-node's own dispatcher.
 */
function sharedPool(kc: KubeConfig, connections: number): ObservableMiddleware {
  let pool: Promise<Dispatcher | undefined> | undefined;
  const make = async (): Promise<Dispatcher | undefined> => {
    const https: { ca?: unknown; cert?: unknown; key?: unknown; pfx?: unknown; passphrase?: string; rejectUnauthorized?: boolean; servername?: string } = {};
    await kc.applyToHTTPSOptions(https);
    const agentOptions = {
      ca: https.ca, cert: https.cert, key: https.key, pfx: https.pfx, passphrase: https.passphrase,
      ...(https.rejectUnauthorized !== undefined ? { rejectUnauthorized: https.rejectUnauthorized } : {}),
      ...(https.servername !== undefined ? { servername: https.servername } : {}),
    };
    const options = kc.createDispatcherOptions(kc.getCurrentCluster(), agentOptions as never);
    return options.type === "agent" ? new Agent({ connect: options.connect, connections, keepAliveTimeout: 30_000 }) : undefined;
  };
  return {
    pre: (ctx: RequestContext) => new Observable((async () => {
      pool ??= make();
      const shared = await pool;
      if (shared !== undefined) ctx.setDispatcher(shared);
      return ctx;
    })()),
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
}

function timeoutMiddleware(ms: number): ObservableMiddleware {
  return {
    pre: (ctx: RequestContext) => {
      const existing = ctx.getSignal();
      const timeout = AbortSignal.timeout(ms);
      ctx.setSignal(existing === undefined ? timeout : AbortSignal.any([existing, timeout]));
      return new Observable(Promise.resolve(ctx));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
}

function withHeader(base: ConfigurationOptions, name: string, value: string): ConfigurationOptions {
  const header: ObservableMiddleware = {
    pre: (ctx: RequestContext) => { ctx.setHeaderParam(name, value); return new Observable(Promise.resolve(ctx)); },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  return { ...base, middleware: [...(base.middleware ?? []), header], middlewareMergeStrategy: "append" };
}

const withContentType = (base: ConfigurationOptions, type: string): ConfigurationOptions => withHeader(base, "Content-Type", type);

/**
 * The core group's types through the custom-objects calls, whose paths are /apis/{group}/...:
 * the core group's are /api/..., where a request for one (group "") is sent instead. So a core
 * type the client has no typed call for (a kind's new read, e.g. PersistentVolumeClaims) is
 * listed and read like any other group's, with nothing added here for it.
 */
function atCorePaths(base: ConfigurationOptions): ConfigurationOptions {
  const rewrite: ObservableMiddleware = {
    pre: (ctx: RequestContext) => { ctx.setUrl(ctx.getUrl().replace("/apis//", "/api/")); return new Observable(Promise.resolve(ctx)); },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  return { ...base, middleware: [...(base.middleware ?? []), rewrite], middlewareMergeStrategy: "append" };
}

/**
 * What the API server answers instead of whole objects when asked for metadata only (the
 * protocol controller-runtime's metadata-only informers use): lists and watches of Secrets whose
 * content the operator reads by name never carry that content. The JSON keeps its shape (items,
 * each with its metadata), so client-node's list parsing still applies.
 */
const PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const PARTIAL_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/**
 * client-node's Watch reads two things of its KubeConfig: the cluster, and the request's
 * credentials. This one adds an Accept header to the latter (test/unit/kube-watch.test.ts
 * guards that Watch still reads only these).
 */
function acceptingConfig(kc: KubeConfig, accept: string): KubeConfig {
  const shim: Pick<KubeConfig, "getCurrentCluster" | "applySecurityAuthentication"> = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (ctx: RequestContext) => {
      await kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam("Accept", accept);
    },
  };
  return shim as KubeConfig;
}

export class KubeClient implements KubeApi, ClusterInspection {
  readonly kc: KubeConfig;
  readonly fieldManager: string;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly events: EventsV1Api;
  private readonly authorization: AuthorizationV1Api;
  private readonly opts: ConfigurationOptions;
  /**
   * Leases (leader election, the shards' membership) go through connections of their own, as
   * client-go gives leader election a client of its own: a renewal never waits behind a burst of
   * lists or writes in the shared pool (a new leader's caches listing sixty namespaces at once
   * held one past its renew deadline, and the process stopped).
   */
  private readonly leaseOpts: ConfigurationOptions;
  private readonly options: KubeClientOptions;

  constructor(kc: KubeConfig, options: KubeClientOptions) {
    this.kc = kc;
    this.options = options;
    this.fieldManager = options.fieldManager;
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.coordination = kc.makeApiClient(CoordinationV1Api);
    this.events = kc.makeApiClient(EventsV1Api);
    this.authorization = kc.makeApiClient(AuthorizationV1Api);
    this.opts = { middleware: [timeoutMiddleware(options.timeoutMillis ?? 30_000), sharedPool(kc, options.connections ?? 8)], middlewareMergeStrategy: "append" };
    this.leaseOpts = { middleware: [timeoutMiddleware(options.timeoutMillis ?? 30_000), sharedPool(kc, 2)], middlewareMergeStrategy: "append" };
  }

  /** The ServiceAccount these credentials belong to, when they are a bound ServiceAccount token. */
  serviceAccount(): ServiceAccountRef | undefined {
    return serviceAccountOf(this.kc);
  }

  /**
   * A client on the same credentials with a pool of `connections` of its own: a burst of writes
   * (the sharder handing a dead shard's objects to the others) neither waits behind this
   * client's requests nor holds them up.
   */
  withOwnPool(connections: number): KubeClient {
    return new KubeClient(this.kc, { ...this.options, connections });
  }

  /** One cheap call that fails fast when the server or the credentials are wrong. */
  async ping(): Promise<void> {
    await this.call(() => this.core.listNamespace({ limit: 1 }, this.opts).catch((err: unknown) => {
      // A namespaced ServiceAccount may not list namespaces; reading its own kind list is enough.
      if ((err as { code?: number }).code === 403) return undefined;
      throw err;
    }));
  }

  /** The core resources the operator lists with typed calls, in one namespace or all (Nodes are cluster-scoped); any other goes through the generic path (atCorePaths). */
  private coreLists(common: { labelSelector?: string | undefined; fieldSelector?: string | undefined; limit: number; _continue?: string | undefined }, namespace: string | undefined, config: ConfigurationOptions):
    Record<string, (() => Promise<{ items: unknown[]; metadata?: { resourceVersion?: string; _continue?: string } }>) | undefined> {
    const ns = { ...common, namespace: namespace ?? "" };
    const all = namespace === undefined;
    return {
      secrets: () => (all ? this.core.listSecretForAllNamespaces(common, config) : this.core.listNamespacedSecret(ns, config)),
      configmaps: () => (all ? this.core.listConfigMapForAllNamespaces(common, config) : this.core.listNamespacedConfigMap(ns, config)),
      services: () => (all ? this.core.listServiceForAllNamespaces(common, config) : this.core.listNamespacedService(ns, config)),
      nodes: () => this.core.listNode(common, config),
    };
  }

  async list<T extends KubeObject>(t: ResourceType, opts: ListOptions = {}): Promise<ListPage<T>> {
    const common = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit ?? 500, _continue: opts.continueToken };
    const config = opts.metadataOnly === true ? withHeader(this.opts, "Accept", PARTIAL_LIST) : this.opts;
    const lists = t.group === "" ? this.coreLists(common, opts.namespace, config)[t.plural] : undefined;
    if (lists !== undefined) {
      const res = await this.call(lists);
      // An empty metadata-only list says `items: null`.
      return { items: (res.items as unknown as T[] | null | undefined) ?? [], resourceVersion: res.metadata?.resourceVersion ?? "", continueToken: res.metadata?._continue || undefined };
    }
    const gvp = { group: t.group, version: t.version, plural: t.plural, ...common };
    const generic = t.group === "" ? atCorePaths(config) : config;
    const res = (await this.call(() => opts.namespace === undefined
      ? this.custom.listClusterCustomObject(gvp, generic)
      : this.custom.listNamespacedCustomObject({ ...gvp, namespace: opts.namespace }, generic))) as {
      items: T[] | null; metadata: { resourceVersion: string; continue?: string };
    };
    return { items: res.items ?? [], resourceVersion: res.metadata.resourceVersion, continueToken: res.metadata.continue || undefined };
  }

  async getCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey): Promise<T> {
    if (t.group === "") {
      const reads: Record<string, (() => Promise<unknown>) | undefined> = {
        configmaps: () => this.core.readNamespacedConfigMap(key, this.opts),
        secrets: () => this.core.readNamespacedSecret(key, this.opts),
      };
      const read = reads[t.plural];
      if (read !== undefined) return (await this.call(read)) as T;
    }
    return (await this.call(() => this.custom.getNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, ...key }, t.group === "" ? atCorePaths(this.opts) : this.opts))) as T;
  }

  async createCustom<T extends KubeObject>(t: ResourceType, namespace: string, body: KubeObject): Promise<T> {
    return (await this.call(() => this.custom.createNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, namespace, body }, this.opts))) as T;
  }

  async deleteCustom(t: ResourceType, key: ObjectKey): Promise<void> {
    await this.call(() => this.custom.deleteNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, ...key }, this.opts));
  }

  async patchCustomStatus<T extends KubeObject>(t: ResourceType, key: ObjectKey, status: unknown, opts: { resourceVersion?: string } = {}): Promise<T> {
    const body = opts.resourceVersion !== undefined ? { metadata: { resourceVersion: opts.resourceVersion }, status } : { status };
    return (await this.call(() => this.custom.patchNamespacedCustomObjectStatus(
      { group: t.group, version: t.version, plural: t.plural, ...key, body },
      withContentType(this.opts, PatchStrategy.MergePatch),
    ))) as T;
  }

  async mergePatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, patch: unknown): Promise<T> {
    return (await this.call(() => this.custom.patchNamespacedCustomObject(
      { group: t.group, version: t.version, plural: t.plural, ...key, body: patch },
      withContentType(this.opts, PatchStrategy.MergePatch),
    ))) as T;
  }

  async jsonPatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, ops: JsonPatchOp[]): Promise<T> {
    try {
      return (await this.call(() => this.custom.patchNamespacedCustomObject(
        { group: t.group, version: t.version, plural: t.plural, ...key, body: ops },
        withContentType(this.opts, PatchStrategy.JsonPatch),
      ))) as T;
    } catch (err) {
      // The API server answers a failed `test` op with 422: someone changed the object since
      // we read it, which is a conflict like any other.
      if (err instanceof KubeApiError && err.code === 422 && ops.some((o) => o.op === "test")) {
        throw new KubeApiError(409, "Conflict", err.message);
      }
      throw err;
    }
  }

  async getSecret(key: ObjectKey): Promise<SecretObject> {
    return (await this.call(() => this.core.readNamespacedSecret(key, this.opts))) as unknown as SecretObject;
  }

  async createSecret(secret: SecretManifest): Promise<SecretObject> {
    const body = { apiVersion: "v1", kind: "Secret", ...secret } as V1Secret;
    return (await this.call(() => this.core.createNamespacedSecret({ namespace: secret.metadata.namespace, body, fieldManager: this.fieldManager }, this.opts))) as unknown as SecretObject;
  }

  async applySecret(secret: SecretManifest): Promise<SecretObject> {
    const body = { apiVersion: "v1", kind: "Secret", ...secret } as V1Secret;
    return (await this.call(() => this.core.patchNamespacedSecret(
      { name: secret.metadata.name, namespace: secret.metadata.namespace, body, fieldManager: this.fieldManager, force: true },
      withContentType(this.opts, PatchStrategy.ServerSideApply),
    ))) as unknown as SecretObject;
  }

  async deleteSecret(key: ObjectKey): Promise<void> {
    await this.call(() => this.core.deleteNamespacedSecret(key, this.opts));
  }

  async jsonPatchSecret(key: ObjectKey, ops: JsonPatchOp[]): Promise<SecretObject> {
    try {
      return (await this.call(() => this.core.patchNamespacedSecret({ ...key, body: ops }, withContentType(this.opts, PatchStrategy.JsonPatch)))) as unknown as SecretObject;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 422 && ops.some((o) => o.op === "test")) throw new KubeApiError(409, "Conflict", err.message);
      throw err;
    }
  }

  async createEvent(namespace: string, body: Record<string, unknown>): Promise<void> {
    await this.call(() => this.events.createNamespacedEvent({ namespace, body: body as never }, this.opts));
  }

  async patchEvent(key: ObjectKey, patch: Record<string, unknown>): Promise<void> {
    await this.call(() => this.events.patchNamespacedEvent({ ...key, body: patch }, withContentType(this.opts, PatchStrategy.MergePatch)));
  }

  async getLease(key: ObjectKey, opts: CallOptions = {}): Promise<LeaseObject> {
    return this.call(() => this.coordination.readNamespacedLease(key, this.withSignal(opts.signal, this.leaseOpts)));
  }

  async createLease(namespace: string, lease: LeaseObject, opts: CallOptions = {}): Promise<LeaseObject> {
    return this.call(() => this.coordination.createNamespacedLease({ namespace, body: lease as V1Lease }, this.withSignal(opts.signal, this.leaseOpts)));
  }

  async replaceLease(key: ObjectKey, lease: LeaseObject, opts: CallOptions = {}): Promise<LeaseObject> {
    return this.call(() => this.coordination.replaceNamespacedLease({ ...key, body: lease as V1Lease }, this.withSignal(opts.signal, this.leaseOpts)));
  }

  async listLeases(namespace: string, labelSelector: string, opts: CallOptions = {}): Promise<LeaseObject[]> {
    return this.call(async () => (await this.coordination.listNamespacedLease({ namespace, labelSelector }, this.withSignal(opts.signal, this.leaseOpts))).items);
  }

  async deleteLease(key: ObjectKey, resourceVersion: string, opts: CallOptions = {}): Promise<void> {
    await this.call(() => this.coordination.deleteNamespacedLease({ ...key, body: { preconditions: { resourceVersion } } }, this.withSignal(opts.signal, this.leaseOpts)));
  }

  async namespaceUid(name: string): Promise<string> {
    const ns = await this.call(() => this.core.readNamespace({ name }, this.opts));
    const uid = ns.metadata?.uid;
    if (uid === undefined) throw new Error(`namespace ${name} has no uid`);
    return uid;
  }

  async canI(attrs: AccessAttributes): Promise<AccessVerdict> {
    const review = await this.call(() => this.authorization.createSelfSubjectAccessReview({
      body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes: { ...attrs } } },
    }, this.opts));
    return { allowed: review.status?.allowed === true, ...(review.status?.reason !== undefined ? { reason: review.status.reason } : {}) };
  }

  // Both read as plain JSON, as served: client-node's typed reads rename schema keys
  // (x-kubernetes-validations becomes xKubernetesValidations) and drop apiVersion and kind.
  async getCrd(name: string): Promise<KubeObject> {
    return (await this.call(() => this.custom.getClusterCustomObject({ group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", name }, this.opts))) as KubeObject;
  }

  async getDeployment(key: ObjectKey): Promise<KubeObject> {
    return (await this.call(() => this.custom.getNamespacedCustomObject({ group: "apps", version: "v1", plural: "deployments", ...key }, this.opts))) as KubeObject;
  }

  /** The client's options plus a caller's abort signal (e.g. a renew deadline). */
  /** Every call, bounded past the request's own timeout (see kubeCall). */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    return kubeCall(fn, (this.options.timeoutMillis ?? 30_000) + 5_000);
  }

  private withSignal(signal: AbortSignal | undefined, base: ConfigurationOptions = this.opts): ConfigurationOptions {
    if (signal === undefined) return base;
    const abort: ObservableMiddleware = {
      pre: (ctx: RequestContext) => {
        const existing = ctx.getSignal();
        ctx.setSignal(existing === undefined ? signal : AbortSignal.any([existing, signal]));
        return new Observable(Promise.resolve(ctx));
      },
      post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
    };
    return { ...base, middleware: [...(base.middleware ?? []), abort], middlewareMergeStrategy: "append" };
  }

  /**
   * Starts a watch; `onEvent` gets each event, `onDone` is called once when it ends.
   * `inactivityMillis` replaces client-node's 30 s: the apiserver sends bookmarks only about
   * once a minute, so a quiet watch would otherwise be aborted and backed off every 30 s.
   */
  watch(path: string, query: WatchQuery, onEvent: (type: string, obj: unknown) => void, onDone: (err: unknown) => void,
    opts: { inactivityMillis?: number; metadataOnly?: boolean } = {}): Promise<WatchHandle> {
    const w = new Watch(opts.metadataOnly === true ? acceptingConfig(this.kc, PARTIAL_OBJECT) : this.kc);
    // A private field in client-node 2.x (test/unit/kube-watch.test.ts guards it).
    if (opts.inactivityMillis !== undefined) (w as unknown as { requestTimeoutMs: number }).requestTimeoutMs = opts.inactivityMillis;
    return w.watch(path, query, onEvent, onDone);
  }
}

/** Lease times must carry six fractional digits (MicroTime). */
export function microTime(d: Date = new Date()): Date {
  return new V1MicroTime(d.getTime());
}
