// Where built things are cached, outside the repository (same root as build.sh uses).
import { homedir } from "node:os";
import { join } from "node:path";

export function cacheDir(): string {
  return process.env.LINODE_OPERATOR_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "linode-operator");
}

/** Our private buildah store (images.ts); its mounts come and go with image builds, never with a cluster. */
export function buildahRoot(): string {
  return join(cacheDir(), "images", "buildah");
}
