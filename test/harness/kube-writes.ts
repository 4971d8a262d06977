// Counts the writes an operator sends to the Kubernetes API, by what they write (a status, an
// Event, a Secret, an object's metadata or spec), at the client: a no-op patch the API server
// answers without a new resourceVersion is a request all the same, and counted.
import type { KubeApi } from "../../src/kube/types.ts";

/** KubeApi's writing methods, by what they write. */
const WRITES: Readonly<Record<string, string>> = {
  patchCustomStatus: "status", mergePatchCustom: "object", jsonPatchCustom: "object", createCustom: "object", deleteCustom: "object",
  createSecret: "secret", applySecret: "secret", deleteSecret: "secret", jsonPatchSecret: "secret",
  createEvent: "event", patchEvent: "event",
  createLease: "lease", replaceLease: "lease",
};

export interface KubeWrites {
  /** `kube` with every write counted. */
  kube: KubeApi;
  /** Writes so far, by what they write (status, event, secret, object, lease) and by method. */
  counts(): Record<string, number>;
  /** Each write so far, in order: the method, what it wrote to, and the top-level fields of a patch (to say what moved). */
  log(): string[];
}

/** "method kind namespace/name fields" of a write's arguments, as far as they say. */
function describe(method: string, args: unknown[]): string {
  const parts: string[] = [method];
  for (const a of args) {
    if (a === null || typeof a !== "object") continue;
    const o = a as Record<string, unknown>;
    if (typeof o.kind === "string" && typeof o.plural === "string") parts.push(o.kind);
    else if (typeof o.name === "string" && Object.keys(o).every((k) => k === "name" || k === "namespace")) parts.push(`${typeof o.namespace === "string" ? o.namespace : ""}/${o.name}`);
    else if (Array.isArray(a)) parts.push(a.map((op: { path?: unknown }) => String(op.path)).join(","));
    else parts.push(`{${Object.keys(o).sort().join(",")}}`);
  }
  return parts.join(" ");
}

export function countingKube(kube: KubeApi): KubeWrites {
  const counts: Record<string, number> = {};
  const log: string[] = [];
  const counted = new Proxy(kube, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      const what = typeof prop === "string" ? WRITES[prop] : undefined;
      if (what === undefined || typeof value !== "function") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (...args: unknown[]): unknown => {
        counts[what] = (counts[what] ?? 0) + 1;
        counts[prop as string] = (counts[prop as string] ?? 0) + 1;
        log.push(describe(prop as string, args));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { kube: counted, counts: () => ({ ...counts }), log: () => [...log] };
}
