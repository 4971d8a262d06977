// Create/update custom objects of the operator's kinds and report admission outcomes as data,
// so the rule tests read as tables: "this spec → rejected with this message".
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { TestCluster } from "../../harness/cluster.ts";

export const group = "linode.operator.dev";
export const version = "v1alpha1";

export type Admission =
  | { ok: true; obj: { metadata: { name: string; generation?: number }; spec: Record<string, unknown>; status?: Record<string, unknown> } }
  | { ok: false; code: number; message: string };

export interface Kind { kind: string; plural: string }
export const managedDatabase: Kind = { kind: "ManagedDatabase", plural: "manageddatabases" };
export const databaseSnapshot: Kind = { kind: "DatabaseSnapshot", plural: "databasesnapshots" };
export const nodeBalancer: Kind = { kind: "NodeBalancer", plural: "nodebalancers" };

async function admit(call: () => Promise<unknown>): Promise<Admission> {
  try {
    return { ok: true, obj: (await call()) as Extract<Admission, { ok: true }>["obj"] };
  } catch (err) {
    const e = err as { code?: number; body?: unknown };
    if (typeof e.code !== "number") throw err;
    let message = typeof e.body === "string" ? e.body : JSON.stringify(e.body);
    try {
      message = (JSON.parse(message) as { message: string }).message;
    } catch { /* keep the raw body */ }
    return { ok: false, code: e.code, message };
  }
}

export function customObjects(cluster: TestCluster): {
  create(kind: Kind, name: string, spec: unknown, opts?: { dryRun?: boolean }): Promise<Admission>;
  mergePatchSpec(kind: Kind, name: string, spec: unknown): Promise<Admission>;
  get(kind: Kind, name: string): Promise<Extract<Admission, { ok: true }>["obj"]>;
} {
  const api = cluster.kc.makeApiClient(CustomObjectsApi);
  const namespace = cluster.namespace;
  return {
    create: (kind, name, spec, opts = {}) => admit(() => api.createNamespacedCustomObject({
      group, version, namespace, plural: kind.plural,
      body: { apiVersion: `${group}/${version}`, kind: kind.kind, metadata: { name }, spec },
      ...(opts.dryRun === true ? { dryRun: "All" } : {}),
    })),
    mergePatchSpec: (kind, name, spec) => admit(() => api.patchNamespacedCustomObject(
      { group, version, namespace, plural: kind.plural, name, body: { spec } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )),
    get: async (kind, name) => (await api.getNamespacedCustomObject({ group, version, namespace, plural: kind.plural, name })) as Extract<Admission, { ok: true }>["obj"],
  };
}

/** Deep-merges `patch` into a copy of `base` (objects only; arrays and scalars replace; undefined deletes). */
export function withSpec(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out = new Map<string, unknown>(Object.entries(structuredClone(base)));
  for (const [k, v] of Object.entries(patch)) {
    const cur = out.get(k);
    if (v === undefined) out.delete(k);
    else if (isPlain(v) && isPlain(cur)) out.set(k, withSpec(cur, v));
    else out.set(k, v);
  }
  return Object.fromEntries(out);
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
