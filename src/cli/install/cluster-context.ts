// Which cluster a kubeconfig names, as kubectl itself resolves it (KUBECONFIG lists, --context),
// and how an image built here gets onto it.
import { z } from "zod";
import type { InstallOptions } from "./options.ts";
import { mustRunTool, type ToolCall } from "./tools.ts";

export interface ClusterContext {
  context: string;
  cluster: string;
  server: string;
  /** The cluster entry's extensions' providers (minikube writes minikube.sigs.k8s.io). */
  providers: string[];
}

const minifiedConfig = z.object({
  "current-context": z.string(),
  contexts: z.array(z.object({ name: z.string(), context: z.object({ cluster: z.string() }) })).min(1),
  clusters: z.array(z.object({
    name: z.string(),
    cluster: z.object({
      server: z.string(),
      extensions: z.array(z.object({ name: z.string(), extension: z.object({ provider: z.string().optional() }).loose() })).nullish(),
    }).loose(),
  })).min(1),
});

/** The flags that point kubectl and helm at the cluster the user named. */
export interface Target { kubeconfig?: string | undefined; context?: string | undefined }
export const kubectlTarget = (t: Target): string[] => [...(t.kubeconfig !== undefined ? ["--kubeconfig", t.kubeconfig] : []), ...(t.context !== undefined ? ["--context", t.context] : [])];
export const helmTarget = (t: Target): string[] => [...(t.kubeconfig !== undefined ? ["--kubeconfig", t.kubeconfig] : []), ...(t.context !== undefined ? ["--kube-context", t.context] : [])];

/** The context the kubeconfig selects (`kubectl config view --minify`: no credentials are read out). */
export async function readClusterContext(t: Target): Promise<ClusterContext> {
  const call: ToolCall = { tool: "kubectl", args: [...kubectlTarget(t), "config", "view", "--minify", "-o", "json"] };
  const config = minifiedConfig.parse(JSON.parse(await mustRunTool(call)));
  const context = config.contexts[0];
  const cluster = config.clusters[0];
  if (context === undefined || cluster === undefined) throw new Error("the kubeconfig names no context");
  return {
    context: config["current-context"] || context.name,
    cluster: cluster.name,
    server: cluster.cluster.server,
    providers: (cluster.cluster.extensions ?? []).flatMap((e) => (e.extension.provider !== undefined ? [e.extension.provider] : [])),
  };
}

/** How the image gets to the cluster's nodes. */
export type Loader =
  | { kind: "kind"; cluster: string }
  | { kind: "k3d"; cluster: string }
  | { kind: "minikube"; profile: string }
  | { kind: "ctr"; address: string }
  | { kind: "registry"; repository: string; insecure: boolean }
  /** --image: the cluster pulls it as named; nothing is built or moved. */
  | { kind: "none" };

/** The local cluster tool that made this context, from the names kind, k3d and minikube give their contexts. */
export function detectLoader(ctx: ClusterContext): Loader | undefined {
  const kind = /^kind-(.+)$/.exec(ctx.context)?.[1];
  if (kind !== undefined) return { kind: "kind", cluster: kind };
  const k3d = /^k3d-(.+)$/.exec(ctx.context)?.[1];
  if (k3d !== undefined) return { kind: "k3d", cluster: k3d };
  // minikube names the context after the profile, and marks the cluster entry.
  if (ctx.providers.includes("minikube.sigs.k8s.io") || ctx.context === "minikube") return { kind: "minikube", profile: ctx.context };
  return undefined;
}

/** What the flags ask for, else what the context shows; throws with the choices when neither says. */
export function chooseLoader(opts: Pick<InstallOptions, "image" | "registry" | "registryInsecure" | "loadWith" | "containerdAddress">, ctx: ClusterContext): Loader {
  if (opts.image !== undefined) return { kind: "none" };
  if (opts.registry !== undefined) return { kind: "registry", repository: opts.registry, insecure: opts.registryInsecure };
  switch (opts.loadWith) {
    case "ctr": return { kind: "ctr", address: opts.containerdAddress };
    case "kind": return { kind: "kind", cluster: ctx.context.replace(/^kind-/, "") };
    case "k3d": return { kind: "k3d", cluster: ctx.context.replace(/^k3d-/, "") };
    case "minikube": return { kind: "minikube", profile: ctx.context };
    case undefined: break;
  }
  const detected = detectLoader(ctx);
  if (detected !== undefined) return detected;
  throw new Error([
    `cannot tell how to get the operator's image onto the cluster of context "${ctx.context}" (${ctx.server}): it is not a kind, k3d or minikube context. Say how:`,
    "  --registry HOST/REPO   push it to a registry the cluster pulls from (e.g. ghcr.io/me/linode-operator; log in with buildah login first)",
    "  --load-with ctr        import it into the containerd on this machine (a one-node cluster; --containerd-address, default /run/containerd/containerd.sock)",
    "  --load-with kind|k3d|minikube",
    "  --image REPO:TAG       an image the cluster can already pull (nothing is built)",
  ].join("\n"));
}
