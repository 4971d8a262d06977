// Where the operator's Kubernetes credentials come from: in-cluster when the pod's service
// account is mounted, else KUBECONFIG or ~/.kube/config. Never client-node's silent
// fallback to http://localhost:8080.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "./client.ts";

/** The field manager of everything the operator applies, and its Events' reporting controller. */
export const FIELD_MANAGER = "linode-operator";

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== "") {
    kc.loadFromDefault();
  } else if (env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(join(serviceAccountDir, "token"))) {
    kc.loadFromCluster();
  } else if (existsSync(join(homedir(), ".kube", "config"))) {
    kc.loadFromFile(join(homedir(), ".kube", "config"));
  } else {
    throw new Error("no Kubernetes credentials: set KUBECONFIG, or run in a pod with a service account");
  }
  if (kc.getCurrentCluster() === null) throw new Error("the kubeconfig has no current cluster");
  return kc;
}

export function loadKubeConfigFromFile(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** A client for the operator: from a kubeconfig file, or from the environment as loadKubeConfig finds it. */
export function connectKube(kubeconfigPath?: string): KubeClient {
  return new KubeClient(kubeconfigPath !== undefined ? loadKubeConfigFromFile(kubeconfigPath) : loadKubeConfig(), { fieldManager: FIELD_MANAGER });
}

/** Where a person's command connects, as kubectl decides it: the kubeconfig, the context, and the namespace. */
export interface UserConnection {
  client: KubeClient;
  /** `-n`, else the context's namespace, else `default` (kubectl's rule). */
  namespace: string;
  context: string;
}

/**
 * A client for a command a person runs (a kubectl plugin): `--kubeconfig`, else KUBECONFIG or
 * ~/.kube/config (or in a pod, its service account); `--context` chooses another context of it.
 * A kubectl plugin gets these as arguments and the environment kubectl was started with.
 */
export function connectAsUser(opts: { kubeconfig?: string | undefined; context?: string | undefined; namespace?: string | undefined; fieldManager: string }): UserConnection {
  const kc = opts.kubeconfig !== undefined ? loadKubeConfigFromFile(opts.kubeconfig) : loadKubeConfig();
  if (opts.context !== undefined) {
    if (kc.getContextObject(opts.context) === null) throw new Error(`context "${opts.context}" does not exist in the kubeconfig`);
    kc.setCurrentContext(opts.context);
  }
  if (kc.getCurrentCluster() === null) throw new Error("the kubeconfig has no current cluster");
  const context = kc.getCurrentContext();
  const namespace = opts.namespace ?? kc.getContextObject(context)?.namespace ?? "default";
  return { client: new KubeClient(kc, { fieldManager: opts.fieldManager, timeoutMillis: 20_000, connections: 4 }), namespace, context };
}
