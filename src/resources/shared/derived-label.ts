// Cloud labels are unique per account, but Kubernetes names are unique only per namespace, and
// one account may serve several clusters. A default label built from namespace and name plus a
// hash of the cluster's identity, namespace and name can never collide across namespaces or
// clusters, and is the same on every reconcile: that is what makes a lost create response
// recoverable (look the label up, adopt what is found) without ever adopting another's object.
import { createHash } from "node:crypto";

export interface LabelOwner {
  /** The cluster's identity (by default the kube-system namespace's UID). */
  clusterId: string;
  namespace: string;
  name: string;
}

export function derivedLabel(owner: LabelOwner, opts: { max: number; allowed?: RegExp; separator?: string } = { max: 32 }): string {
  const allowed = opts.allowed ?? /[^a-zA-Z0-9-]/g;
  const sep = opts.separator ?? "-";
  const hash = createHash("sha256").update(`${owner.clusterId}/${owner.namespace}/${owner.name}`).digest("hex").slice(0, 8);
  const readable = `${owner.namespace}${sep}${owner.name}`.replace(allowed, sep);
  const room = opts.max - hash.length - sep.length;
  const head = readable.slice(0, room).replace(/[^a-zA-Z0-9]+$/, "");
  return head === "" ? hash : `${head}${sep}${hash}`;
}

/** The cloud label a resource's object has: the spec's, or the one derived from its cluster, namespace and name. */
export function labelOf(m: { spec: { label?: string | undefined }; key: { namespace: string; name: string } }, clusterId: string,
  opts?: { max: number; allowed?: RegExp; separator?: string }): string {
  return m.spec.label ?? derivedLabel({ clusterId, namespace: m.key.namespace, name: m.key.name }, opts);
}

/** `${name}${suffix}`, kept within a Kubernetes name's 253 characters (a hash keeps long ones distinct). */
export function nameWithSuffix(name: string, suffix: string, max = 253): string {
  const whole = `${name}${suffix}`;
  if (whole.length <= max) return whole;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.slice(0, max - suffix.length - hash.length - 1).replace(/[^a-z0-9]+$/, "")}-${hash}${suffix}`;
}
