// Kubernetes and Linode helpers for the tests of what crosses a namespace: objects of any kind
// in any namespace, their conditions, token Secrets, and clients of the emulator as a user
// (or a team, by its token) would hold one.
import { Registry } from "prom-client";
import { LinodeClient } from "../../src/linode/index.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import type { TestCluster } from "./cluster.ts";
import type { OperatorEnv } from "./operator-env.ts";
import { waitFor } from "./operator-runtime.ts";

export type Cond = { status: string; reason: string; message?: string };

/** Kubernetes and Linode helpers over one env, for objects in any namespace. */
export function kit(cluster: TestCluster, env: () => OperatorEnv) {
  const clients: LinodeClient[] = [];
  const api = {
    create: (t: ResourceType, namespace: string, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Promise<ManagedObject> => env().deps.kube.createCustom(t, namespace, {
      apiVersion: "linode.operator.dev/v1alpha1", kind: t.kind, metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, spec,
    }),
    get: (t: ResourceType, namespace: string, name: string): Promise<ManagedObject> => env().deps.kube.getCustom<ManagedObject>(t, { namespace, name }),
    patch: (t: ResourceType, namespace: string, name: string, patch: Record<string, unknown>): Promise<unknown> => env().deps.kube.mergePatchCustom(t, { namespace, name }, patch),
    remove: (t: ResourceType, namespace: string, name: string): Promise<void> => env().deps.kube.deleteCustom(t, { namespace, name }),
    cond: (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type),
    async condWith(t: ResourceType, namespace: string, name: string, type: string, reason: string): Promise<Cond> {
      return waitFor(`${name} ${type} ${reason}`, async () => { const c = api.cond(await api.get(t, namespace, name), type); return c?.reason === reason ? c : undefined; }, 60_000, 100);
    },
    async ready(t: ResourceType, namespace: string, name: string): Promise<ManagedObject> {
      return waitFor(`${name} Ready`, async () => {
        const o = await api.get(t, namespace, name);
        return api.cond(o, "Ready")?.status === "True" && api.cond(o, "Synced")?.status === "True" && o.status?.observedGeneration === o.metadata.generation ? o : undefined;
      }, 60_000, 100);
    },
    async gone(t: ResourceType, namespace: string, name: string): Promise<true> {
      return waitFor(`${name} gone`, async () => api.get(t, namespace, name).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
    },
    tokenSecret: (namespace: string, name: string, token: string): Promise<unknown> => env().deps.kube.applySecret({
      metadata: { name, namespace, labels: { "linode.operator.dev/credentials": "true" } },
      type: "Opaque", data: { token: Buffer.from(token).toString("base64") },
    }),
    secret: (namespace: string, name: string) => cluster.core.readNamespacedSecret({ namespace, name }).catch(() => undefined),
    /** A client of the emulator as `token` (the operator's when absent), as a user would hold one. */
    as(token?: string): LinodeClient {
      if (token === undefined) return env().linode;
      const c = new LinodeClient({ token, baseUrl: env().emulator.url, registry: new Registry(), rateLimit: false });
      clients.push(c);
      return c;
    },
    count: (key: string): number => env().emulator.requestCounts()[key] ?? 0,
    /** Mutations the emulator recorded on one path (e.g. one database's). */
    mutationsOn: (path: string, method?: string): number => env().emulator.mutations().filter((x) => x.path === path && (method === undefined || x.method === method)).length,
    close: async (): Promise<void> => { await Promise.all(clients.map((c) => c.close())); },
    /** Makes the operator look at an object `times` more times, one pass after the other (enqueued, whatever its cadence). */
    repass: (t: ResourceType, namespace: string, name: string, times: number): Promise<void> => env().repass(t.kind, `${namespace}/${name}`, times),
  };
  return api;
}

