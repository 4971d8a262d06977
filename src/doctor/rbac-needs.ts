// Every Kubernetes permission the operator uses, and why: what `doctor` asks the API server about
// (SelfSubjectAccessReview) and what the chart's templates/rbac.yaml grants
// (test/e2e/rbac-needs.test.ts renders the chart and checks that the two agree, both ways).
import { API_GROUP, type KindDefinition } from "../runtime/kind-definition.ts";

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
  /** --read-nodes: Nodes, and the Services and EndpointSlices NodeBalancer backends follow. */
  readNodes: boolean;
  /** --cluster-id set: kube-system's UID is not read. */
  clusterIdSet: boolean;
  /** The Lease's name (--leader-election-id): the ownership key Secret is named after it. */
  leaseName: string;
  /** --linode-token-secret: the operator's token Secret, read again while its token cannot work. */
  tokenSecret?: string | undefined;
  /** DEPLOYMENT_NAME: the Deployment a Warning Event names when the token cannot work. */
  deploymentName?: string | undefined;
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
    { group: "", resource: "configmaps", verbs: ["get", "list", "watch"], where: "watched", why: "allow lists from ConfigMaps (spec.allowListFrom.cidrs)" },
    { group: "events.k8s.io", resource: "events", verbs: ["create", "patch"], where: "watched", why: "Events on its resources" },
    { group: "coordination.k8s.io", resource: "leases", verbs: ["get", "create", "update"], where: "own", why: "leader election" },
    { group: "", resource: "secrets", verbs: ["get"], where: "own", name: `${s.leaseName}-ownership-key`, why: "the install's ownership key" },
    { group: "", resource: "secrets", verbs: ["create"], where: "own", why: "create the ownership key at the first start" },
  );
  if (s.readNodes) {
    out.push(
      { group: "", resource: "nodes", verbs: ["get", "list", "watch"], where: "cluster", why: "allow lists and backends that follow the nodes (spec.allowListFrom.nodes, configs[].nodesFrom)" },
      { group: "", resource: "services", verbs: ["get", "list", "watch"], where: "watched", why: "backends that follow a Service (configs[].nodesFrom.serviceRef)" },
      { group: "discovery.k8s.io", resource: "endpointslices", verbs: ["get", "list", "watch"], where: "watched", why: "the nodes a Service's endpoints run on" },
    );
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
