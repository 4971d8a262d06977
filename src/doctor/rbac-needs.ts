// Every Kubernetes permission the operator uses, and why: what `doctor` asks the API server about
// (SelfSubjectAccessReview) and what the chart's templates/rbac.yaml grants
// (test/e2e/rbac-needs.test.ts renders the chart and checks that the two agree, both ways). What
// the kinds read besides their own objects comes from the reads their definitions declare
// (readRules), as the chart's rules for them do (scripts/render-deploy.ts).
import { API_GROUP, type KindDefinition } from "../runtime/kind-definition.ts";
import type { Read } from "../runtime/reads.ts";

export interface Permission {
  group: string;
  resource: string;
  subresource?: string;
  verbs: readonly string[];
  /** watched: every namespace the operator watches; own: the operator's namespace (its Lease's); cluster: cluster-scoped. */
  where: "watched" | "own" | "cluster";
  /** Limited to one object by name. */
  name?: string;
  why: string;
}

export interface RbacSettings {
  kinds: readonly KindDefinition[];
  /** The read gates that are on (src/resources/read-gates.ts: --read-nodes grants Nodes, Services and EndpointSlices). */
  gates: ReadonlySet<string>;
  /** --cluster-id set: kube-system's UID is not read. */
  clusterIdSet: boolean;
  /** The Lease's name (--leader-election-id): the ownership key Secret is named after it. */
  leaseName: string;
  /** --linode-token-secret: the operator's token Secret, read again while its token cannot work. */
  tokenSecret?: string | undefined;
  /** DEPLOYMENT_NAME: the Deployment a Warning Event names when the token cannot work. */
  deploymentName?: string | undefined;
  /** --shards: the shards' Leases are listed to know which are alive. */
  shards?: boolean;
}

export function neededPermissions(s: RbacSettings): Permission[] {
  const kinds = s.kinds.map((k) => k.plural);
  const out: Permission[] = [];
  for (const plural of kinds) {
    out.push({ group: API_GROUP, resource: plural, verbs: ["get", "list", "watch", "patch"], where: "watched", why: "watch its resources; add and remove its finalizer and the external-id annotation" });
    out.push({ group: API_GROUP, resource: plural, subresource: "status", verbs: ["patch"], where: "watched", why: "write their status" });
    out.push({ group: API_GROUP, resource: plural, subresource: "finalizers", verbs: ["update"], where: "watched", why: "own the Secrets it writes with blockOwnerDeletion" });
  }
  out.push(
    { group: "", resource: "secrets", verbs: ["get", "list", "watch", "create", "patch", "delete"], where: "watched", why: "connection Secrets (written), token and TLS Secrets (read, protected by a finalizer)" },
    { group: "events.k8s.io", resource: "events", verbs: ["create", "patch"], where: "watched", why: "Events on its resources" },
    { group: "coordination.k8s.io", resource: "leases", verbs: s.shards === true ? ["get", "create", "update", "list", "delete"] : ["get", "create", "update"], where: "own", why: s.shards === true ? "leader election, its shard's Lease and the others' (which are alive; the leader deletes those dead for 10 minutes)" : "leader election" },
    { group: "", resource: "secrets", verbs: ["get"], where: "own", name: `${s.leaseName}-ownership-key`, why: "the install's ownership key" },
    { group: "", resource: "secrets", verbs: ["create"], where: "own", why: "create the ownership key at the first start" },
  );
  for (const rule of readRules(s.kinds)) {
    if (rule.gate === undefined || s.gates.has(rule.gate)) out.push({ group: rule.group, resource: rule.resource, verbs: READ_VERBS, where: rule.scope === "cluster" ? "cluster" : "watched", why: rule.why });
  }
  if (!s.clusterIdSet) out.push({ group: "", resource: "namespaces", verbs: ["get"], where: "cluster", name: "kube-system", why: "the cluster's identity (kube-system's UID) in cloud labels" });
  if (s.tokenSecret !== undefined) out.push({ group: "", resource: "secrets", verbs: ["get"], where: "own", name: s.tokenSecret, why: "read the token Secret again while its token cannot work, so fixing it needs no restart" });
  if (s.deploymentName !== undefined) {
    out.push(
      { group: "apps", resource: "deployments", verbs: ["get"], where: "own", name: s.deploymentName, why: "name its Deployment in the Warning Event that says why it is not Ready" },
      { group: "events.k8s.io", resource: "events", verbs: ["create", "patch"], where: "own", why: "the Warning Event on its Deployment" },
    );
  }
  return out;
}

export const READ_VERBS = ["get", "list", "watch"] as const;

/** One RBAC rule for what the kinds read: a resource, where, under which gate, and why (every kind's reasons). */
export interface ReadRule {
  group: string;
  resource: string;
  scope: Read["scope"];
  gate?: string;
  why: string;
}

/**
 * The read of Secrets or of the operator's kinds is granted by the runtime's own rules (every
 * verb the operator uses on Secrets in the namespaces it watches; the kinds' get, list and watch).
 */
const grantedByRuntime = (r: Read): boolean => r.type.group === API_GROUP || (r.type.group === "" && r.type.plural === "secrets");

/** What the kinds' declared reads need: one rule per resource, scope and gate, in the order first declared. */
export function readRules(kinds: readonly KindDefinition[]): ReadRule[] {
  const rules = new Map<string, ReadRule & { whys: string[] }>();
  for (const kind of kinds) {
    for (const r of (kind.reads ?? []).filter((x) => !grantedByRuntime(x))) {
      const key = `${r.type.group}/${r.type.plural}|${r.scope}|${r.gate ?? ""}`;
      const rule = rules.get(key) ?? { group: r.type.group, resource: r.type.plural, scope: r.scope, ...(r.gate !== undefined ? { gate: r.gate } : {}), why: "", whys: [] };
      const why = `${kind.kind}: ${r.why}`;
      if (!rule.whys.includes(why)) rule.whys.push(why);
      rules.set(key, rule);
    }
  }
  return [...rules.values()].map(({ whys, ...rule }) => ({ ...rule, why: whys.join("; ") }));
}
