// The operator's one door to the Kubernetes API. Everything else in src/ talks to this
// class, never to @kubernetes/client-node, so the rest of the code is plain data.
import {
  CoordinationV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api, Observable, PatchStrategy, Watch,
  type ConfigurationOptions, type KubeConfig, type ObservableMiddleware, type RequestContext,
  type ResponseContext, type V1Lease, type V1Secret, V1MicroTime,
} from "@kubernetes/client-node";
import { kubeCall } from "./errors.ts";

export interface ResourceType { group: string; version: string; plural: string; kind: string }
export interface ObjectKey { namespace: string; name: string }

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string | Date;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    creationTimestamp?: string | Date;
  };
  [k: string]: unknown;
}

export interface ListPage<T> { items: T[]; resourceVersion: string; continueToken: string | undefined }
export type JsonPatchOp = { op: "add" | "remove" | "replace" | "test"; path: string; value?: unknown };

export interface KubeClientOptions {
  /** Server-side apply field manager and event reportingController. */
  fieldManager: string;
  /** Per-request timeout (watches excluded). */
  timeoutMillis?: number;
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

function withContentType(base: ConfigurationOptions, type: string): ConfigurationOptions {
  const header: ObservableMiddleware = {
    pre: (ctx: RequestContext) => { ctx.setHeaderParam("Content-Type", type); return new Observable(Promise.resolve(ctx)); },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  return { ...base, middleware: [...(base.middleware ?? []), header], middlewareMergeStrategy: "append" };
}

export class KubeClient {
  readonly kc: KubeConfig;
  readonly fieldManager: string;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly events: EventsV1Api;
  private readonly opts: ConfigurationOptions;

  constructor(kc: KubeConfig, options: KubeClientOptions) {
    this.kc = kc;
    this.fieldManager = options.fieldManager;
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.coordination = kc.makeApiClient(CoordinationV1Api);
    this.events = kc.makeApiClient(EventsV1Api);
    this.opts = { middleware: [timeoutMiddleware(options.timeoutMillis ?? 30_000)], middlewareMergeStrategy: "append" };
  }

  /** One cheap call that fails fast when the server or the credentials are wrong. */
  async ping(): Promise<void> {
    await kubeCall(() => this.core.listNamespace({ limit: 1 }, this.opts).catch((err: unknown) => {
      // A namespaced ServiceAccount may not list namespaces; reading its own kind list is enough.
      if ((err as { code?: number }).code === 403) return undefined;
      throw err;
    }));
  }

  async listCustom<T extends KubeObject>(t: ResourceType, opts: { namespace?: string; labelSelector?: string; continueToken?: string; limit?: number } = {}): Promise<ListPage<T>> {
    const common = { group: t.group, version: t.version, plural: t.plural, labelSelector: opts.labelSelector, limit: opts.limit ?? 500, _continue: opts.continueToken };
    const res = (await kubeCall(() => opts.namespace === undefined
      ? this.custom.listClusterCustomObject(common, this.opts)
      : this.custom.listNamespacedCustomObject({ ...common, namespace: opts.namespace }, this.opts))) as {
      items: T[]; metadata: { resourceVersion: string; continue?: string };
    };
    return { items: res.items, resourceVersion: res.metadata.resourceVersion, continueToken: res.metadata.continue || undefined };
  }

  async getCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey): Promise<T> {
    return (await kubeCall(() => this.custom.getNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, ...key }, this.opts))) as T;
  }

  async createCustom<T extends KubeObject>(t: ResourceType, namespace: string, body: KubeObject): Promise<T> {
    return (await kubeCall(() => this.custom.createNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, namespace, body }, this.opts))) as T;
  }

  async deleteCustom(t: ResourceType, key: ObjectKey): Promise<void> {
    await kubeCall(() => this.custom.deleteNamespacedCustomObject({ group: t.group, version: t.version, plural: t.plural, ...key }, this.opts));
  }

  /** Merge-patches `.status` through the status subresource (spec and metadata are ignored there). */
  async patchCustomStatus<T extends KubeObject>(t: ResourceType, key: ObjectKey, status: unknown): Promise<T> {
    return (await kubeCall(() => this.custom.patchNamespacedCustomObjectStatus(
      { group: t.group, version: t.version, plural: t.plural, ...key, body: { status } },
      withContentType(this.opts, PatchStrategy.MergePatch),
    ))) as T;
  }

  async mergePatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, patch: unknown): Promise<T> {
    return (await kubeCall(() => this.custom.patchNamespacedCustomObject(
      { group: t.group, version: t.version, plural: t.plural, ...key, body: patch },
      withContentType(this.opts, PatchStrategy.MergePatch),
    ))) as T;
  }

  /** JSON Patch: with a leading `test` op a concurrent change fails (409/422) instead of being clobbered. */
  async jsonPatchCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey, ops: JsonPatchOp[]): Promise<T> {
    return (await kubeCall(() => this.custom.patchNamespacedCustomObject(
      { group: t.group, version: t.version, plural: t.plural, ...key, body: ops },
      withContentType(this.opts, PatchStrategy.JsonPatch),
    ))) as T;
  }

  async listSecrets(opts: { namespace?: string; labelSelector?: string; continueToken?: string; limit?: number } = {}): Promise<ListPage<V1Secret & KubeObject>> {
    const common = { labelSelector: opts.labelSelector, limit: opts.limit ?? 500, _continue: opts.continueToken };
    const res = await kubeCall(() => opts.namespace === undefined
      ? this.core.listSecretForAllNamespaces(common, this.opts)
      : this.core.listNamespacedSecret({ ...common, namespace: opts.namespace }, this.opts));
    return { items: res.items as (V1Secret & KubeObject)[], resourceVersion: res.metadata?.resourceVersion ?? "", continueToken: res.metadata?._continue || undefined };
  }

  async getSecret(key: ObjectKey): Promise<V1Secret> {
    return kubeCall(() => this.core.readNamespacedSecret(key, this.opts));
  }

  /** Server-side apply of a whole Secret, owned by our field manager. */
  async applySecret(secret: V1Secret & { metadata: { name: string; namespace: string } }): Promise<V1Secret> {
    const body = { apiVersion: "v1", kind: "Secret", ...secret };
    return kubeCall(() => this.core.patchNamespacedSecret(
      { name: secret.metadata.name, namespace: secret.metadata.namespace, body, fieldManager: this.fieldManager, force: true },
      withContentType(this.opts, PatchStrategy.ServerSideApply),
    ));
  }

  async deleteSecret(key: ObjectKey): Promise<void> {
    await kubeCall(() => this.core.deleteNamespacedSecret(key, this.opts));
  }

  async createEvent(namespace: string, body: Record<string, unknown>): Promise<void> {
    await kubeCall(() => this.events.createNamespacedEvent({ namespace, body: body as never }, this.opts));
  }

  async patchEvent(key: ObjectKey, patch: Record<string, unknown>): Promise<void> {
    await kubeCall(() => this.events.patchNamespacedEvent({ ...key, body: patch }, withContentType(this.opts, PatchStrategy.MergePatch)));
  }

  async getLease(key: ObjectKey): Promise<V1Lease> {
    return kubeCall(() => this.coordination.readNamespacedLease(key, this.opts));
  }

  async createLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return kubeCall(() => this.coordination.createNamespacedLease({ namespace, body: lease }, this.opts));
  }

  /** PUT with metadata.resourceVersion: a 409 means someone else wrote it first. */
  async replaceLease(key: ObjectKey, lease: V1Lease): Promise<V1Lease> {
    return kubeCall(() => this.coordination.replaceNamespacedLease({ ...key, body: lease }, this.opts));
  }

  /**
   * Starts a watch; `onEvent` gets each event, `onDone` is called once when it ends.
   * `inactivityMillis` replaces client-node's 30 s: the apiserver sends bookmarks only about
   * once a minute, so a quiet watch would otherwise be aborted and backed off every 30 s.
   */
  watch(path: string, query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, obj: unknown) => void, onDone: (err: unknown) => void,
    opts: { inactivityMillis?: number } = {}): Promise<AbortController> {
    const w = new Watch(this.kc);
    // A private field in client-node 2.x (test/unit/kube-watch-timeout.test.ts guards it).
    if (opts.inactivityMillis !== undefined) (w as unknown as { requestTimeoutMs: number }).requestTimeoutMs = opts.inactivityMillis;
    return w.watch(path, query, onEvent, onDone);
  }
}

/** Lease times must carry six fractional digits (MicroTime). */
export function microTime(d: Date = new Date()): Date {
  return new V1MicroTime(d.getTime());
}
