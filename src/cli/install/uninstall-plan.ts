// What `uninstall` does, as data: the release and the token Secret `install` made go; the CRDs,
// the resources and their Linode objects stay unless --delete-crds, which is refused while
// resources remain unless --force, because deleting a CRD deletes every resource of its kind
// and the operator then deletes each one's Linode object under deletionPolicy Delete.
import { helmTarget, kubectlTarget } from "./cluster-context.ts";
import { chartFullname, tokenSecretLabels } from "./install-plan.ts";
import type { UninstallOptions } from "./options.ts";
import type { ToolCall } from "./tools.ts";

/** The operator's finalizer: a resource with it waits for the operator before it goes. */
export const FINALIZER = "linode.operator.dev/finalizer";

export interface CustomResource {
  kind: string;
  namespace: string;
  name: string;
  deletionPolicy: string;
  managementPolicy: string;
  finalizers: string[];
}

export interface UninstallFacts {
  opts: UninstallOptions;
  /** Whether the release is installed (helm status found it). */
  installed: boolean;
  /** The release's values leave the CRDs to `helm uninstall` (crds.enabled and not crds.keep). */
  crdsGoWithRelease: boolean;
  /** The kinds' CRDs the cluster has. */
  crds: string[];
  /** Resources of those kinds, in every namespace (read only when the CRDs would go). */
  resources: CustomResource[];
}

export interface UninstallStep { say: string; call: ToolCall }
export interface UninstallPlan { refusal: string | undefined; steps: UninstallStep[]; kept: string[] }

/** Whether deleting this resource deletes its Linode object (runtime: Retain and Observe leave it). */
export const deletesCloudObject = (r: CustomResource): boolean => r.deletionPolicy !== "Retain" && r.managementPolicy !== "Observe";

export function planUninstall(f: UninstallFacts): UninstallPlan {
  const { opts } = f;
  const deleteCrds = (opts.deleteCrds || f.crdsGoWithRelease) && f.crds.length > 0;
  const why = opts.deleteCrds ? "--delete-crds" : "the release's values (crds.keep: false) let helm uninstall delete the CRDs";
  const refusal = deleteCrds ? crdRefusal(f, why) : undefined;
  const steps: UninstallStep[] = [];
  const kubectl = (args: string[]): ToolCall => ({ tool: "kubectl", args: [...kubectlTarget(opts), ...args] });
  if (deleteCrds) {
    // Before the release: the operator must still run to finish each resource's finalizer.
    steps.push({
      say: `delete the CRDs ${f.crds.join(", ")} while the operator still runs, and wait until their resources are gone`,
      call: kubectl(["delete", "crd", ...f.crds, "--ignore-not-found", "--wait", `--timeout=${opts.timeout}`]),
    });
  }
  if (f.installed) {
    steps.push({
      say: `uninstall release ${opts.release}${deleteCrds || !f.crdsGoWithRelease ? " (the chart keeps its CRDs)" : ""}`,
      call: { tool: "helm", args: ["uninstall", opts.release, ...helmTarget(opts), "--namespace", opts.namespace, "--wait", "--timeout", opts.timeout] },
    });
  }
  const selector = Object.entries(tokenSecretLabels(opts.release)).map(([k, v]) => `${k}=${v}`).join(",");
  steps.push({ say: "delete the token Secret install made", call: kubectl(["delete", "secret", "-n", opts.namespace, "-l", selector, "--ignore-not-found"]) });

  const kept: string[] = [];
  if (!deleteCrds && f.crds.length > 0) {
    kept.push(`the CRDs and every resource of their kinds, with their Linode objects: nothing acts on them until an operator is installed again, which takes them over (--delete-crds removes them)`);
  }
  kept.push(`namespace ${opts.namespace}, with Secret ${chartFullname(opts.release)}-ownership-key (a reinstall proves the resources' ownership with the same key)`);
  return { refusal, steps, kept };
}

function crdRefusal(f: UninstallFacts, why: string): string | undefined {
  const { resources, opts } = f;
  if (resources.length === 0) return undefined;
  // Only the operator removes its finalizer: without it the CRDs' deletion would wait forever.
  const noOperator = !f.installed && resources.some((r) => r.finalizers.includes(FINALIZER));
  if (opts.force && !noOperator) return undefined;
  const deleting = resources.filter(deletesCloudObject);
  const width = Math.max(...resources.map((r) => `${r.kind} ${r.namespace}/${r.name}`.length));
  return [
    `refusing to delete the CRDs (${why}): ${String(resources.length)} resource(s) of their kinds remain, and deleting a CRD deletes every resource of its kind:`,
    ...resources.map((r) => `  ${`${r.kind} ${r.namespace}/${r.name}`.padEnd(width)}  deletionPolicy ${r.deletionPolicy}${r.managementPolicy === "Observe" ? ", managementPolicy Observe" : ""}${deletesCloudObject(r) ? "  → its Linode object is deleted" : "  → its Linode object is left"}`),
    "While the operator runs, each resource's finalizer acts first: with deletionPolicy Delete (the default) it deletes the Linode object — the database and its data, the snapshot's backup, the NodeBalancer — and with Retain (or managementPolicy Observe) it leaves it in the account.",
    ...(noOperator
      ? [
        `But release ${opts.release} is not installed in ${opts.namespace}: no operator runs to let these resources go, and a CRD is not deleted while a resource of its kind holds the operator's finalizer (not even with --force).`,
        "Install the operator again (its finalizers then delete or retain each Linode object), or remove the finalizers to let the resources go without touching Linode (README, Uninstalling).",
      ]
      : [
        `So this would delete ${String(deleting.length)} Linode object(s).`,
        "To keep one, set deletionPolicy: Retain on it first (kubectl patch <kind> <name> -n <namespace> --type=merge -p '{\"spec\":{\"deletionPolicy\":\"Retain\"}}');",
        "then, or to delete them as they are, run again with --force. Without --delete-crds the CRDs, the resources and their Linode objects all stay.",
      ]),
  ].join("\n");
}
