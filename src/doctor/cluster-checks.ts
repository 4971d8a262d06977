// Doctor's checks of the cluster side: the CRDs (installed, and the schema this build carries),
// the operator's RBAC (SelfSubjectAccessReview of every permission it uses), and the Nodes.
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { buildCrd, crdName } from "../crd/build-crd.ts";
import { errorChain, KubeApiError } from "../kube/errors.ts";
import type { AccessAttributes, ClusterInspection, KubeApi } from "../kube/types.ts";
import { API_VERSION, resourceTypeOf, type KindDefinition } from "../runtime/kind-definition.ts";
import { fail, ok, warn, type CheckResult } from "./report.ts";
import type { Permission } from "./rbac-needs.ts";

export type Cluster = ClusterInspection & Pick<KubeApi, "list">;

const APPLY_CRDS = "kubectl apply --server-side -f crds/ from this release (or `helm upgrade` with crds.enabled=true)";

type Schema = Record<string, unknown>;
/** What the check reads of a served CRD: its versions' schemas (anything else in it is left alone). */
const servedCrdSchema = z.object({
  spec: z.object({ versions: z.array(z.object({ name: z.string(), schema: z.object({ openAPIV3Schema: z.record(z.string(), z.unknown()) }).optional() })) }),
});
const servedSchema = (crd: unknown): Schema | undefined => {
  const parsed = servedCrdSchema.safeParse(crd);
  return parsed.success ? parsed.data.spec.versions.find((v) => v.name === API_VERSION)?.schema?.openAPIV3Schema : undefined;
};

/** The first path where two JSON values differ, for the message (the schemas are large). */
export function firstDifference(a: unknown, b: unknown, path = ""): string | undefined {
  if (isDeepStrictEqual(a, b)) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path || "(root)";
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
    if (d !== undefined) return d;
  }
  return path || "(root)";
}

/** `watched`: the namespaces the operator watches (none: all), where its credentials may list the kinds. */
export async function crdChecks(kube: Cluster, kinds: readonly KindDefinition[], watched: readonly string[] = []): Promise<CheckResult[]> {
  return Promise.all(kinds.map(async (def): Promise<CheckResult> => {
    const name = crdName(def);
    const check = `CRD ${name}`;
    let crd: unknown;
    try {
      crd = await kube.getCrd(name);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return fail(check, "not installed", APPLY_CRDS);
      if (!(err instanceof KubeApiError && err.code === 403)) return fail(check, `cannot be read: ${errorChain(err)}`, "check the connection to the Kubernetes API server");
      // The operator's own credentials may not read CRDs (it does not need to): served is all it can see.
      try {
        await kube.list(resourceTypeOf(def), { limit: 1, ...(watched[0] !== undefined ? { namespace: watched[0] } : {}) });
        return warn(check, `served; its version is not checked: these credentials cannot get customresourcedefinitions`, "run doctor with credentials that may read CRDs (e.g. an admin's kubeconfig) to compare the schema");
      } catch (listErr) {
        if (listErr instanceof KubeApiError && listErr.code === 403) {
          return warn(check, `cannot be checked: these credentials may neither get customresourcedefinitions nor list ${def.plural}`, "run doctor with the operator's credentials (see the RBAC line) or an admin's");
        }
        return fail(check, `not served (${errorChain(listErr)})`, APPLY_CRDS);
      }
    }
    const want = (buildCrd(def) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } }).spec.versions[0]?.schema.openAPIV3Schema;
    const have = servedSchema(crd);
    if (have === undefined) return fail(check, `installed without version ${API_VERSION}`, APPLY_CRDS);
    const diff = firstDifference(have, want);
    if (diff !== undefined) return fail(check, `installed, but its ${API_VERSION} schema is not this build's (first difference at ${diff}): another release's CRD`, APPLY_CRDS);
    return ok(check, `installed, schema as this build's`);
  }));
}

/** One access review per verb: in each watched namespace (all: ""), the operator's own, or cluster-wide. */
export function accessQuestions(p: Permission, watched: readonly string[], own: string): AccessAttributes[] {
  const namespaces = p.where === "cluster" ? [undefined] : p.where === "own" ? [own] : watched.length === 0 ? [""] : watched;
  return namespaces.flatMap((namespace) => p.verbs.map((verb) => ({
    verb, group: p.group, resource: p.resource,
    ...(p.subresource !== undefined ? { subresource: p.subresource } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
  })));
}

const describe = (a: AccessAttributes): string =>
  `${a.verb} ${a.resource}${a.subresource !== undefined ? `/${a.subresource}` : ""}${a.group !== "" ? `.${a.group}` : ""}${a.name !== undefined ? ` ${a.name}` : ""}${a.namespace === undefined ? "" : a.namespace === "" ? " (all namespaces)" : ` in ${a.namespace}`}`;

/** The RBAC line: every permission the operator uses, asked of the API server as these credentials. */
export async function rbacCheck(kube: Cluster, needed: readonly Permission[], watched: readonly string[], own: string): Promise<CheckResult> {
  const questions = needed.filter((p) => p.resource !== "nodes").flatMap((p) => accessQuestions(p, watched, own).map((q) => ({ q, why: p.why })));
  const answers = await Promise.all(questions.map(async ({ q, why }) => ({ q, why, allowed: (await kube.canI(q)).allowed })));
  const denied = answers.filter((a) => !a.allowed);
  if (denied.length === 0) return ok("RBAC", `all ${String(answers.length)} permissions the operator uses are granted`);
  return fail("RBAC", `missing ${String(denied.length)} of ${String(answers.length)}: ${denied.map((d) => `${describe(d.q)} (${d.why})`).join("; ")}`,
    "install with the chart's rbac.create=true (the default) and the same watchNamespaces, or grant these to the operator's ServiceAccount; run doctor with its credentials (kubectl exec deploy/<release> -- linode-operator doctor)");
}

/** Nodes: only allow lists and backends that follow them need them, so not readable is a warning unless the operator is told to read them. */
export async function nodesCheck(kube: Cluster, readNodes: boolean): Promise<CheckResult> {
  const verbs = ["get", "list", "watch"];
  const answers = await Promise.all(verbs.map((verb) => kube.canI({ verb, group: "", resource: "nodes" })));
  const readable = answers.every((a) => a.allowed);
  const needs = "database allow lists that follow the nodes (spec.allowListFrom.nodes) and NodeBalancer backends that follow them (configs[].nodesFrom)";
  if (readable && readNodes) return ok("Nodes", "readable (get, list, watch)");
  if (readable) return warn("Nodes", "readable, but the operator is not told to read them (READ_NODES unset)", `set the chart's rbac.readNodes=true (it grants Nodes, Services and EndpointSlices and sets READ_NODES=true) if you use ${needs}`);
  const message = `not readable (${verbs.filter((_v, i) => answers[i]?.allowed !== true).join(", ")} denied): ${needs} will say NodesNotReadable`;
  return readNodes ? fail("Nodes", `${message}, though READ_NODES=true`, "install with the chart's rbac.readNodes=true, which grants get, list and watch on Nodes, and on Services and EndpointSlices where the operator watches") : warn("Nodes", message, "install with the chart's rbac.readNodes=true if you use them");
}
