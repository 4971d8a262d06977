// Where built things are cached, outside the repository (same root as build.sh uses).
import { randomUUID } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";

export function cacheDir(): string {
  return process.env.LINODE_OPERATOR_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "linode-operator");
}

/** Our private buildah store (images.ts); its mounts come and go with image builds, never with a cluster. */
export function buildahRoot(): string {
  return join(cacheDir(), "images", "buildah");
}

/**
 * A temporary name beside `path`, unique to this writer: two test suites (or processes)
 * filling the same empty cache at once each write their own file and rename it into place,
 * so neither renames or removes the other's half-written one (the last rename wins, and both
 * wrote the same content).
 */
export function tempBeside(path: string): string {
  return `${path}.${String(process.pid)}-${randomUUID().slice(0, 8)}.tmp`;
}
