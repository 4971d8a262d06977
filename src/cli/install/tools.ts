// The one place `install` and `uninstall` start other programs (kubectl, helm, buildah, kind,
// k3d, minikube, ctr): always an argv array, never a shell string, so no value a user typed (a
// release name, a --set) is ever interpreted by a shell, and a token only ever goes on stdin.
import { access, constants, readdir } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { execCapture, type ExecResult } from "../../local-cluster/exec.ts";
import { cacheDir } from "../../local-cluster/paths.ts";

export type ToolName = "kubectl" | "helm" | "buildah" | "kind" | "k3d" | "minikube" | "ctr";

export interface ToolCall {
  tool: ToolName;
  args: string[];
  /** Written to the program's stdin (e.g. a manifest for `kubectl apply -f -`). */
  stdin?: string;
}

/** Tools this project builds into its cache (src/local-cluster/build.sh) when PATH has none. */
const BUILT_HERE: ReadonlySet<ToolName> = new Set(["kubectl", "helm"]);

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(() => true, () => false);
}

/** The program `name` on PATH, else (kubectl, helm) the one build.sh left in the cache; never builds one. */
export async function findTool(name: ToolName, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? "").split(delimiter).filter((d) => d !== "")) {
    if (await executable(join(dir, name))) return join(dir, name);
  }
  if (!BUILT_HERE.has(name)) return undefined;
  // build.sh's k8s-v<version>/bin, newest version first.
  const versions = (await readdir(cacheDir()).catch(() => [])).filter((d) => d.startsWith("k8s-v")).sort().reverse();
  for (const v of versions) if (await executable(join(cacheDir(), v, "bin", name))) return join(cacheDir(), v, "bin", name);
  return undefined;
}

const HOW_TO_GET: Record<ToolName, string> = {
  kubectl: "install kubectl, or run src/local-cluster/build.sh (it builds kubectl and helm into ~/.cache/linode-operator)",
  helm: "install Helm 3, or run src/local-cluster/build.sh (it builds kubectl and helm into ~/.cache/linode-operator)",
  buildah: "install buildah (Debian: apt-get install buildah debootstrap), or pass --image with an image the cluster can pull",
  kind: "install kind, or pick another way with --load-with or --registry",
  k3d: "install k3d, or pick another way with --load-with or --registry",
  minikube: "install minikube, or pick another way with --load-with or --registry",
  ctr: "install containerd's ctr, or pick another way with --load-with or --registry",
};

/** Runs `call`; never throws on a non-zero exit. */
export async function runTool(call: ToolCall, opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<ExecResult> {
  const path = await findTool(call.tool);
  if (path === undefined) throw new Error(`${call.tool} not found on PATH: ${HOW_TO_GET[call.tool]}`);
  return execCapture(path, call.args, {
    ...(call.stdin !== undefined ? { input: call.stdin } : {}),
    ...(opts.env !== undefined ? { env: opts.env } : {}),
    timeoutMs: opts.timeoutMs ?? 600_000,
  });
}

/** Runs `call` and answers its stdout; a non-zero exit throws with the command and the end of what it said. */
export async function mustRunTool(call: ToolCall, opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  const r = await runTool(call, opts);
  if (r.code !== 0) throw new Error(`${showCall(call)} failed (exit ${r.code}):\n${(r.stderr || r.stdout).trim().split("\n").slice(-15).join("\n")}`);
  return r.stdout;
}

/** The call as a shell line, for people to read (and paste): arguments quoted where a shell would need it. */
export function showCall(call: ToolCall): string {
  return [call.tool, ...call.args].map(shellQuote).join(" ");
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
