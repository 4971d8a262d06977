// `linode-operator doctor`: what the operator needs, checked where it runs: the Linode API and
// its token (valid, its scopes against what the kinds need), the CRDs (installed, this build's
// schema), the RBAC it uses, the Nodes. One line each, OK / WARN / FAIL with the fix; exit code 1
// on any FAIL; --json for machines. It reads the operator's own settings (flags and environment,
// as `run` does), so in the operator's pod (`kubectl exec deploy/<release> --
// linode-operator doctor`) it checks exactly what the operator has.
import { loadOperatorConfig, runFlags, type OperatorConfig } from "../config/operator-config.ts";
import { crdChecks, nodesCheck, rbacCheck, type Cluster } from "../doctor/cluster-checks.ts";
import { neededPermissions } from "../doctor/rbac-needs.ts";
import { exitCode, fail, ok, renderJson, renderText, type CheckResult } from "../doctor/report.ts";
import { assessToken, tokenChecks } from "../doctor/token.ts";
import { connectKube } from "../kube/config.ts";
import { errorChain } from "../kube/errors.ts";
import type { KubeApi } from "../kube/types.ts";
import { LinodeClient } from "../linode/index.ts";
import { kindDefinitions, readGates } from "../resources/index.ts";
import { readToken } from "../runtime/token-source.ts";

const help = `Usage: linode-operator doctor [--json] [run options]

Checks what the operator needs and prints one line per check (OK, WARN or FAIL, with the fix):
the Linode API and the operator's token (valid, and its scopes, the API's X-OAuth-Scopes, against
what the installed kinds need), the CRDs (installed, and this build's schema), every Kubernetes
permission the operator uses (SelfSubjectAccessReview, as the credentials it runs with), and
whether Nodes are readable. Exit code 1 when any check FAILs.

It takes the options and environment of \`linode-operator run\` (LINODE_TOKEN, LINODE_API_URL,
WATCH_NAMESPACES, READ_NODES, POD_NAMESPACE, ...), so run it where the operator runs:
  kubectl -n <namespace> exec deploy/<release> -- linode-operator doctor
(the image's entrypoint is this command), or with a kubeconfig of the operator's ServiceAccount.

  --json   one JSON document: {"ok": bool, "checks": [{check, status, message, fix?}]}`;

export interface DoctorDeps {
  config: OperatorConfig;
  kube: (Cluster & Pick<KubeApi, "ping" | "getSecret">) | Error;
  clientFor: (token: string) => LinodeClient;
}

/** Every check, in order; the cluster's are skipped (one FAIL line) when it cannot be reached. */
export async function runChecks(deps: DoctorDeps): Promise<CheckResult[]> {
  const { config, kube } = deps;
  const results: CheckResult[] = [];
  let cluster: (Cluster & Pick<KubeApi, "ping" | "getSecret">) | undefined;
  if (kube instanceof Error) {
    results.push(fail("Kubernetes API", kube.message, "set KUBECONFIG, or run doctor in the operator's pod"));
  } else {
    try {
      await kube.ping();
      results.push(ok("Kubernetes API", "reachable"));
      cluster = kube;
    } catch (err) {
      results.push(fail("Kubernetes API", `not reachable: ${errorChain(err)}`, "check KUBECONFIG and the API server"));
    }
  }
  const crds = cluster === undefined ? [] : await crdChecks(cluster, kindDefinitions, config.namespaces);
  // The kinds whose CRDs are there are the ones whose needs count (all, if none is).
  const installed = kindDefinitions.filter((_d, i) => crds[i]?.status !== "FAIL").map((d) => d.kind);
  const kinds = installed.length > 0 ? installed : kindDefinitions.map((d) => d.kind);
  results.push(...await linodeChecks(deps, cluster, kinds));
  if (cluster === undefined) return results;
  results.push(...crds);
  const needed = neededPermissions({
    kinds: kindDefinitions, gates: readGates(config), clusterIdSet: config.clusterId !== undefined, leaseName: config.leaderElectionId,
    tokenSecret: config.linodeTokenSecret, deploymentName: config.deploymentName, shards: config.shards,
  });
  results.push(await rbacCheck(cluster, needed, config.namespaces, config.leaderElectionNamespace));
  results.push(await nodesCheck(cluster, config.readNodes));
  return results;
}

async function linodeChecks(deps: DoctorDeps, cluster: Pick<KubeApi, "getSecret"> | undefined, kinds: readonly string[]): Promise<CheckResult[]> {
  const { config } = deps;
  const noSecretReader: Pick<KubeApi, "getSecret"> = { getSecret: () => Promise.reject(new Error("the Kubernetes API is not reachable")) };
  const read = await readToken(config, cluster ?? noSecretReader);
  if (read.token === undefined) {
    if (config.requireCredentialsRef.includes("*") && config.linodeTokenSecret === undefined) {
      return [ok("Linode token", "none of the operator's own: every resource names its own (requireCredentialsRef)")];
    }
    return [fail("Linode token", read.problem, "set LINODE_TOKEN, --linode-token-file or --linode-token-secret (docs/token-scopes.md)")];
  }
  const client = deps.clientFor(read.token);
  try {
    return tokenChecks(await assessToken(client, kinds), config.linodeApiUrl);
  } finally {
    await client.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${help}\n\nRun options: ${runFlags.map((f) => `--${f}`).join(" ")}\n`);
    return 0;
  }
  const json = argv.includes("--json");
  let config: OperatorConfig;
  try {
    // The operator's own settings; a missing token is a check's FAIL here, not a refusal to start.
    config = loadOperatorConfig(argv.filter((a) => a !== "--json"), process.env, kindDefinitions.flatMap((d) => Object.values(d.settings ?? {})), { tokenOptional: true });
  } catch (err) {
    const result = [fail("Configuration", (err as Error).message, "fix the option or environment variable named")];
    process.stdout.write(`${json ? renderJson(result) : renderText(result)}\n`);
    return 2;
  }
  let kube: DoctorDeps["kube"];
  try {
    kube = connectKube();
  } catch (err) {
    kube = err instanceof Error ? err : new Error(String(err));
  }
  const results = await runChecks({
    config, kube,
    clientFor: (token) => new LinodeClient({ token, baseUrl: config.linodeApiUrl, userAgent: "linode-operator-doctor", rateLimit: false, retry: { maxAttempts: 2 } }),
  });
  process.stdout.write(`${json ? renderJson(results) : renderText(results)}\n`);
  return exitCode(results);
}
