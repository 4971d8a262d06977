// The `install` and `uninstall` commands as a user starts them, against the real API server, with
// the real kubectl and helm: --dry-run reads the kubeconfig, prints its plan, never the token, and
// changes nothing; uninstall finds the resources a CRD deletion would take and refuses.
// (The whole install, image and pod included, runs on the real node: test/real-cluster/install.test.ts.)
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { execCapture, useTestCluster, type ExecResult } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";

const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const cluster = useTestCluster("install-cli");

/** The command with this control plane's kubectl and helm on PATH, and the token in its environment. */
const run = (args: string[], env: Record<string, string> = {}): Promise<ExecResult> =>
  execCapture(process.execPath, [cli, ...args], { env: { ...process.env, PATH: `${cluster.binDir}:${process.env.PATH ?? ""}`, HOME: cluster.tmp, ...env }, timeoutMs: 60_000 });

describe("install / uninstall commands on a real API server", () => {
  beforeAll(async () => { await installCrds(cluster); });

  it("install --dry-run: the plan for the kubeconfig's cluster, no token in it, and nothing made", async () => {
    const token = `tok-${randomBytes(12).toString("hex")}`;
    const ns = `${cluster.namespace}-op`;
    const r = await run(["install", "--dry-run", "--kubeconfig", cluster.adminKubeconfig, "--load-with", "ctr", "-n", ns, "--release", "op", "--set", "rbac.readNodes=true"], { LINODE_TOKEN: token });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(token);
    expect(r.stdout).toContain(`cluster: context test (${cluster.server}); image: built here, imported into the containerd at /run/containerd/containerd.sock`);
    expect(r.stdout).toContain(`kubectl --kubeconfig ${cluster.adminKubeconfig} apply --server-side --force-conflicts --field-manager=linode-operator-install -f -  <<< (a Secret manifest with the token)`);
    expect(r.stdout).toMatch(new RegExp(`helm upgrade --install op \\S+/helm/linode-operator --kubeconfig ${cluster.adminKubeconfig} --namespace ${ns} --create-namespace --wait --timeout 5m -f install-values.json --set rbac.readNodes=true`));
    expect(r.stdout).toContain("(dry run: nothing was changed)");
    expect((await cluster.kubectl(["get", "namespace", ns])).stderr).toMatch(/not found/);
  });

  it("install on a context it cannot tell how to load into: refused before anything runs, with the ways to say how", async () => {
    const r = await run(["install", "--kubeconfig", cluster.adminKubeconfig, "-n", `${cluster.namespace}-op`], { LINODE_TOKEN: "t" });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot tell how to get the operator's image onto the cluster of context "test"[\s\S]*--registry HOST\/REPO/);
    expect((await cluster.kubectl(["get", "namespace", `${cluster.namespace}-op`])).stderr).toMatch(/not found/);
  });

  it("uninstall --delete-crds --dry-run with a ManagedDatabase left: refused, naming it; the CRDs stay", async () => {
    const db = { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "kept", namespace: cluster.namespace },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", deletionPolicy: "Retain" } };
    const applied = await cluster.kubectl(["apply", "-f", "-"], { input: JSON.stringify(db) });
    expect(applied.code, applied.stderr).toBe(0);
    const r = await run(["uninstall", "--dry-run", "--delete-crds", "--kubeconfig", cluster.adminKubeconfig, "-n", `${cluster.namespace}-op`, "--release", "op"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`ManagedDatabase ${cluster.namespace}/kept\\s+deletionPolicy Retain {2}→ its Linode object is left`));
    expect((await cluster.kubectl(["get", "crd", "manageddatabases.linode.operator.dev", "-o", "name"])).code).toBe(0);
    // Without --delete-crds the plan is the release (not installed here) and the token Secret only.
    const plain = await run(["uninstall", "--dry-run", "--kubeconfig", cluster.adminKubeconfig, "-n", `${cluster.namespace}-op`, "--release", "op"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain(`release op is not installed in namespace ${cluster.namespace}-op`);
    expect(plain.stdout).toContain(`1. delete the token Secret install made\n   kubectl --kubeconfig ${cluster.adminKubeconfig} delete secret -n ${cluster.namespace}-op -l app.kubernetes.io/name=linode-operator,app.kubernetes.io/instance=op,app.kubernetes.io/managed-by=linode-operator-install --ignore-not-found`);
  });

  it("--help of each names its flags", async () => {
    for (const [cmd, flag] of [["install", "--registry HOST/REPO"], ["uninstall", "--delete-crds"]] as const) {
      const r = await run([cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(flag);
    }
    const top = await run(["help"]);
    expect(top.stdout).toMatch(/\n {2}install +install onto the cluster your kubeconfig names/);
  });
});
