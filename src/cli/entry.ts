// What each of the package's commands (linode-operator, kubectl-linode) checks before it runs.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The oldest Node.js the commands run on (package.json's engines say the same). */
export const MIN_NODE = "22.19.0";

/** Whether Node.js `version` ("v22.19.0" or "22.19.0") is at least `min`. */
export function nodeAtLeast(version: string, min = MIN_NODE): boolean {
  const [a, b] = [version, min].map((v) => v.replace(/^v/, "").split(".").map((n) => Number.parseInt(n, 10) || 0));
  for (let i = 0; i < 3; i++) if ((a?.[i] ?? 0) !== (b?.[i] ?? 0)) return (a?.[i] ?? 0) > (b?.[i] ?? 0);
  return true;
}

/**
 * Whether the module at `moduleUrl` is the program Node was asked to run. npm starts a command
 * through symlinks (node_modules/.bin, a global prefix's bin/), kubectl a plugin through PATH:
 * compare real paths, not the link.
 */
export function invokedDirectly(moduleUrl: string): boolean {
  const argv1 = process.argv[1];
  if (argv1 === undefined) return false;
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
