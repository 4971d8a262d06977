// The chart values that name the operator's image: the one place `install` says how, so a change
// of the chart's image values (a separate registry, a digest) is a change here only.

export interface OperatorImage {
  /** registry/path, as the pod's image names it (e.g. localhost/linode-operator, ghcr.io/me/linode-operator). */
  repository: string;
  tag: string;
  /** Never for an image loaded onto the nodes (a pull of localhost/… could only fail); else IfNotPresent. */
  pullPolicy: "Never" | "IfNotPresent";
}

/** `repository:tag` split at the tag's colon (a registry's port has one too). */
export function splitImageRef(ref: string): { repository: string; tag: string } {
  const at = ref.lastIndexOf(":");
  if (at < 0 || ref.slice(at).includes("/")) throw new Error(`${ref} has no tag`);
  return { repository: ref.slice(0, at), tag: ref.slice(at + 1) };
}

/** The chart values (helm/linode-operator/values.yaml `image`) that make its pod run `image`. */
export function imageValues(image: OperatorImage): { image: Record<string, string> } {
  return { image: { repository: image.repository, tag: image.tag, pullPolicy: image.pullPolicy } };
}
