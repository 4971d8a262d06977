// Installs the generated CRDs from crds/ into the shared test control plane. CRDs are
// cluster-wide and test files run in parallel, so this is idempotent: server-side apply
// under one field manager (re-applying the same manifests is a no-op), then wait until
// every CRD is Established and its kinds are served.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestCluster } from "./cluster.ts";

export const crdDir = fileURLToPath(new URL("../../crds", import.meta.url));

export async function crdFiles(): Promise<string[]> {
  return (await readdir(crdDir)).filter((f) => f.endsWith(".yaml")).sort().map((f) => join(crdDir, f));
}

export async function installCrds(cluster: Pick<TestCluster, "kubectl">): Promise<void> {
  const files = await crdFiles();
  const fileArgs = files.flatMap((f) => ["-f", f]);
  const applied = await cluster.kubectl(["apply", "--server-side", "--force-conflicts", "--field-manager=linode-operator-tests", ...fileArgs]);
  if (applied.code !== 0) throw new Error(`installing CRDs failed: ${applied.stderr}`);
  const established = await cluster.kubectl(["wait", "--for=condition=Established", "--timeout=60s", ...fileArgs]);
  if (established.code !== 0) throw new Error(`CRDs not Established: ${established.stderr}`);
  // Established means served, but discovery (kubectl's short names, categories) can lag.
  for (let i = 0; i < 100; i++) {
    const res = await cluster.kubectl(["api-resources", "--api-group=linode.operator.dev", "-o", "name"]);
    if (res.code === 0 && res.stdout.trim().split("\n").length >= files.length) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("CRDs are Established but not in discovery");
}
