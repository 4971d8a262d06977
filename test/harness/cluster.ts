// Per-test-file helpers on the shared control plane: a namespace of one's own, an admin
// KubeConfig, kubectl, and kubeconfigs for ServiceAccounts minted by TokenRequest.
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, inject } from "vitest";
import { kubeconfigYaml } from "./control-plane.ts";
import { execCapture, type ExecResult } from "../../src/local-cluster/exec.ts";

export { execCapture, type ExecResult };

export interface TestCluster {
  namespace: string;
  kc: KubeConfig;
  core: CoreV1Api;
  adminKubeconfig: string;
  server: string;
  binDir: string;
  version: string;
  /** Runs kubectl as admin (or with the kubeconfig given); never throws on a non-zero exit. */
  kubectl(args: string[], opts?: { kubeconfig?: string; input?: string }): Promise<ExecResult>;
  /** Creates the ServiceAccount if needed and returns a kubeconfig path authenticating as it. */
  serviceAccountKubeconfig(name: string, namespace?: string): Promise<string>;
  /** A fresh temp dir for the test file, removed after it. */
  tmp: string;
}

/** Registers beforeAll/afterAll hooks; the returned object is usable inside tests. */
export function useTestCluster(prefix: string): TestCluster {
  const info = inject("controlPlane");
  const namespace = `${prefix}-${randomBytes(3).toString("hex")}`;
  const kc = new KubeConfig();
  kc.loadFromFile(info.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const cluster: TestCluster = {
    namespace, kc, core,
    adminKubeconfig: info.adminKubeconfig, server: info.server, binDir: info.binDir, version: info.version,
    tmp: "",
    kubectl: (args, opts = {}) => execCapture(join(info.binDir, "kubectl"), ["--kubeconfig", opts.kubeconfig ?? info.adminKubeconfig, ...args], opts.input !== undefined ? { input: opts.input } : {}),
    async serviceAccountKubeconfig(name, ns = namespace) {
      try {
        await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
      const tr = await core.createNamespacedServiceAccountToken({
        namespace: ns, name, body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } },
      });
      const token = tr.status?.token;
      if (token === undefined) throw new Error("TokenRequest returned no token");
      const path = join(cluster.tmp, `sa-${ns}-${name}.kubeconfig`);
      const ca = await readFile(info.caFile, "utf8");
      await writeFile(path, kubeconfigYaml({ server: info.server, caData: ca, token, user: `${ns}-${name}`, namespace: ns }), { mode: 0o600 });
      return path;
    },
  };
  beforeAll(async () => {
    cluster.tmp = await mkdtemp(join(tmpdir(), `${prefix}-`));
    await core.createNamespace({ body: { metadata: { name: namespace, labels: { "linode.operator.dev/test": "true" } } } });
  });
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    if (cluster.tmp !== "") await rm(cluster.tmp, { recursive: true, force: true });
  });
  return cluster;
}
