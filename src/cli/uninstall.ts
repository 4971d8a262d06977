// `linode-operator uninstall`: reverses `install`. The release and the token Secret install made
// go; the CRDs, the resources and their Linode objects stay unless --delete-crds (refused while
// resources remain, unless --force: install/uninstall-plan.ts says why).
import { z } from "zod";
import { kindDefinitions } from "../resources/index.ts";
import { API_GROUP } from "../runtime/kind-definition.ts";
import { helmTarget, kubectlTarget } from "./install/cluster-context.ts";
import { durationMillis, parseUninstallArgs, readOptions, type UninstallOptions } from "./install/options.ts";
import { planUninstall, type CustomResource } from "./install/uninstall-plan.ts";
import { mustRunTool, runTool, showCall } from "./install/tools.ts";

const HELP = `Usage: linode-operator uninstall [options]

Uninstalls what \`linode-operator install\` installed: the Helm release and the token Secret it
made. The CRDs, your ManagedDatabases, DatabaseSnapshots, NodeBalancers and
DatabaseConnectionPools and their Linode objects stay: nothing acts on them until an operator
is installed again.

  --delete-crds           also delete the CRDs, first, while the operator still runs. Deleting a
                          CRD deletes every resource of its kind, and the operator then deletes
                          each one's Linode object under deletionPolicy Delete (the default):
                          refused while any resource remains, unless --force
  --force                 delete the CRDs even with resources left
  -n, --namespace NS      the operator's namespace (default linode-operator)
  --release NAME          the Helm release (default linode-operator)
  --kubeconfig FILE       the kubeconfig (default: KUBECONFIG, ~/.kube/config)
  --context NAME          its context (default: the current one)
  --timeout D             how long to wait (default 5m)
  --dry-run               print what would run, change nothing
  -h, --help              show this help
`;

const crdNames = kindDefinitions.map((d) => `${d.plural}.${API_GROUP}`);

const releaseValues = z.object({ crds: z.object({ enabled: z.boolean().optional(), keep: z.boolean().optional() }).loose().optional() }).loose();
const resourceList = z.object({
  items: z.array(z.object({
    kind: z.string(),
    metadata: z.object({ name: z.string(), namespace: z.string().default(""), finalizers: z.array(z.string()).default([]) }).loose(),
    spec: z.object({ deletionPolicy: z.string().default("Delete"), managementPolicy: z.string().default("Manage") }).loose().default({ deletionPolicy: "Delete", managementPolicy: "Manage" }),
  }).loose()),
});

/** Whether the release exists, and whether its values let helm uninstall delete the CRDs. */
async function releaseFacts(opts: UninstallOptions): Promise<{ installed: boolean; crdsGoWithRelease: boolean }> {
  const at = [...helmTarget(opts), "--namespace", opts.namespace];
  const status = await runTool({ tool: "helm", args: ["status", opts.release, ...at, "-o", "json"] });
  if (status.code !== 0) {
    if (/not found/i.test(status.stderr)) return { installed: false, crdsGoWithRelease: false };
    throw new Error(`helm status ${opts.release}: ${status.stderr.trim()}`);
  }
  const values = releaseValues.parse(JSON.parse(await mustRunTool({ tool: "helm", args: ["get", "values", opts.release, ...at, "--all", "-o", "json"] })));
  return { installed: true, crdsGoWithRelease: values.crds?.enabled !== false && values.crds?.keep === false };
}

export async function main(argv: string[]): Promise<number> {
  const opts = readOptions("uninstall", argv, parseUninstallArgs, HELP);
  if (typeof opts === "number") return opts;
  const say = (s: string): void => { process.stdout.write(`${s}\n`); };
  const kubectl = (args: string[]): Promise<string> => mustRunTool({ tool: "kubectl", args: [...kubectlTarget(opts), ...args] });

  const release = await releaseFacts(opts);
  const crds = (await kubectl(["get", "crd", ...crdNames, "--ignore-not-found", "-o", "name"])).split("\n").map((l) => l.replace(/^.*\//, "").trim()).filter((l) => l !== "");
  let resources: CustomResource[] = [];
  if ((opts.deleteCrds || release.crdsGoWithRelease) && crds.length > 0) {
    const plurals = kindDefinitions.filter((d) => crds.includes(`${d.plural}.${API_GROUP}`)).map((d) => `${d.plural}.${API_GROUP}`);
    resources = resourceList.parse(JSON.parse(await kubectl(["get", plurals.join(","), "--all-namespaces", "-o", "json"]))).items.map((i) => ({
      kind: i.kind, namespace: i.metadata.namespace, name: i.metadata.name, finalizers: i.metadata.finalizers,
      deletionPolicy: i.spec.deletionPolicy, managementPolicy: i.spec.managementPolicy,
    }));
  }
  const plan = planUninstall({ opts, ...release, crds, resources });
  if (plan.refusal !== undefined) {
    process.stderr.write(`linode-operator uninstall: ${plan.refusal}\n`);
    return 1;
  }
  if (!release.installed) say(`release ${opts.release} is not installed in namespace ${opts.namespace}`);
  plan.steps.forEach((s, i) => {
    if (opts.dryRun) say(`${String(i + 1)}. ${s.say}\n   ${showCall(s.call)}`);
  });
  if (!opts.dryRun) {
    for (const s of plan.steps) {
      say(s.say);
      await mustRunTool(s.call, { timeoutMs: durationMillis(opts.timeout) + 60_000 });
    }
  }
  say(`${opts.dryRun ? "would be left" : "left"}:\n${plan.kept.map((k) => `  - ${k}`).join("\n")}`);
  if (opts.dryRun) say("(dry run: nothing was changed)");
  return 0;
}
