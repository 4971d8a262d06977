// Cloud labels are unique per account, but Kubernetes names are unique only per namespace.
// A default label built from namespace and name plus a hash of both can never collide across
// namespaces, and is the same on every reconcile — which is what makes a lost create
// response recoverable: look the label up, adopt what is found.
import { createHash } from "node:crypto";

export function derivedLabel(namespace: string, name: string, opts: { max: number; allowed?: RegExp; separator?: string } = { max: 32 }): string {
  const allowed = opts.allowed ?? /[^a-zA-Z0-9-]/g;
  const sep = opts.separator ?? "-";
  const hash = createHash("sha256").update(`${namespace}/${name}`).digest("hex").slice(0, 8);
  const readable = `${namespace}${sep}${name}`.replace(allowed, sep);
  const room = opts.max - hash.length - sep.length;
  const head = readable.slice(0, room).replace(/[^a-zA-Z0-9]+$/, "");
  return head === "" ? hash : `${head}${sep}${hash}`;
}
