// The permissions doctor checks (src/doctor/rbac-needs.ts) are exactly what the chart's
// templates/rbac.yaml grants the operator's ServiceAccount, both ways, for the settings the
// rendered Deployment passes it (watched namespaces, READ_NODES, CLUSTER_ID, the token Secret,
// DEPLOYMENT_NAME): a permission the operator uses that the chart forgets, or one the chart
// grants that nothing uses, fails here.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { neededPermissions, type Permission } from "../../src/doctor/rbac-needs.ts";
import { kindDefinitions, readGates } from "../../src/resources/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";

const chart = fileURLToPath(new URL("../../helm/linode-operator", import.meta.url));
const NS = "ops";

interface Rule { apiGroups?: string[]; resources?: string[]; verbs?: string[]; resourceNames?: string[] }
interface Doc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  spec?: { template?: { spec: { serviceAccountName?: string; containers: { env: { name: string; value?: string }[] }[] } } };
}

/** One permission on one object set: "group resource[/sub] verb @where [name]", where is a namespace or "*" (every one) or "cluster". */
type Grant = string;
const grant = (group: string, resource: string, verb: string, where: string, name?: string): Grant => `${group} ${resource} ${verb} @${where}${name !== undefined ? ` ${name}` : ""}`;

function granted(docs: Doc[]): Set<Grant> {
  const sa = docs.find((d) => d.kind === "Deployment")?.spec?.template?.spec.serviceAccountName ?? "";
  const out = new Set<Grant>();
  for (const b of docs.filter((d) => (d.kind === "RoleBinding" || d.kind === "ClusterRoleBinding") && d.subjects?.some((s) => s.kind === "ServiceAccount" && s.name === sa && s.namespace === NS))) {
    const role = docs.find((d) => d.kind === b.roleRef?.kind && d.metadata?.name === b.roleRef?.name && (d.kind === "ClusterRole" || d.metadata?.namespace === b.metadata?.namespace));
    const where = b.kind === "RoleBinding" ? b.metadata?.namespace ?? "" : "*";
    for (const r of role?.rules ?? []) {
      for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs ?? []) {
        for (const n of r.resourceNames ?? [undefined]) out.add(grant(g, res, v, where, n));
      }
    }
  }
  return out;
}

function needed(perms: Permission[], watched: string[]): Set<Grant> {
  const out = new Set<Grant>();
  for (const p of perms) {
    const resource = p.subresource !== undefined ? `${p.resource}/${p.subresource}` : p.resource;
    // A cluster-scoped resource is granted by a ClusterRoleBinding, as is "every namespace".
    const wheres = p.where === "cluster" ? ["*"] : p.where === "own" ? [NS] : watched.length === 0 ? ["*"] : watched;
    for (const where of wheres) for (const v of p.verbs) out.add(grant(p.group, resource, v, where, p.name));
  }
  return out;
}

describe("the operator's RBAC: what doctor checks is what the chart grants", () => {
  const cluster = useTestCluster("rbacneeds");
  const render = async (...set: string[]): Promise<Doc[]> => {
    const r = await execCapture(join(cluster.binDir, "helm"), ["template", "x", chart, "--namespace", NS, "--set", "crds.enabled=false", ...set.flatMap((s) => ["--set", s])]);
    expect(r.code, r.stderr).toBe(0);
    return parseAllDocuments(r.stdout).map((d) => d.toJSON() as Doc | null).filter((d): d is Doc => d !== null);
  };

  it.each([
    [["linode.token=t"]],
    [["linode.existingSecret=tok", "rbac.readNodes=true", "clusterId=c1", "watchNamespaces={team-a,team-b}"]],
    [["requireCredentialsRef=true", "fullnameOverride=op"]],
    [["linode.token=t", "sharding.enabled=true", "replicaCount=3"]],
  ])("with %j", async (set) => {
    const docs = await render(...set);
    const env = Object.fromEntries((docs.find((d) => d.kind === "Deployment")?.spec?.template?.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    const watched = (env.WATCH_NAMESPACES ?? "").split(",").filter((n) => n !== "");
    const perms = neededPermissions({
      kinds: kindDefinitions, gates: readGates({ readNodes: env.READ_NODES === "true" }), clusterIdSet: env.CLUSTER_ID !== undefined,
      leaseName: env.LEADER_ELECTION_ID ?? "", tokenSecret: env.LINODE_TOKEN_SECRET, deploymentName: env.DEPLOYMENT_NAME, shards: env.SHARDS === "true",
    });
    const want = needed(perms, watched);
    const have = granted(docs);
    expect([...want].filter((g) => !have.has(g)), "used by the operator, not granted by the chart").toEqual([]);
    expect([...have].filter((g) => !want.has(g)), "granted by the chart, not in the operator's table").toEqual([]);
    expect(want.size).toBeGreaterThan(20);
  });
});
