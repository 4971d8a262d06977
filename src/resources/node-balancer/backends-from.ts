// configs[].nodesFrom: backends that follow the workload instead of a hand-kept address list.
// From a Service: the nodes that can serve its node port — every Ready node with
// externalTrafficPolicy Cluster, only those running its endpoints with Local — at their private
// InternalIP and the port's nodePort. From a node selector: the selected Ready nodes at a given
// port. A node leaving (cordoned, or its endpoints terminating) is drained first and removed
// once it is gone; a node without a private IPv4 address cannot be a backend (RFC 1918) and is
// skipped. A bare node port (the selector's) reaches whatever listens there on every node (the
// kubelet's 10250, another namespace's NodePort): only in namespaces the admin allows. A tenant
// learns no node beyond the backends it uses: skipped nodes are counted, named only in the log.
import { createHash } from "node:crypto";
import { isIPv4 } from "node:net";
import { endpointSlicesType, servicesType, type EndpointSliceObject, type NodeObject, type Read, type ReadStore, type ServiceObject } from "../../runtime/contract.ts";
import { matchesSelector, type LabelSelector } from "../shared/label-selector.ts";
import { hostAddressProblem, nodesRead, READ_NODES_GATE } from "../shared/nodes.ts";
import { canonicalBackendAddress, canonicalIP, isGlobalUnicastIPv6, isPrivateIPv4, joinBackendAddress, parseBackendAddress } from "./addresses.ts";
import { NodeBalancerReasons } from "./reasons.ts";

export interface NodesFrom {
  serviceRef?: { name: string; port: number | string } | undefined;
  nodes?: { selector: LabelSelector; port: number } | undefined;
  weight?: number | undefined;
  /** IPv6: each node's public IPv6 address instead of its private IPv4 one. */
  addressFamily?: "IPv4" | "IPv6" | undefined;
}

export interface FollowedBackend {
  address: string;
  label: string;
  mode: "accept" | "drain";
  weight?: number;
  /** A VPC backend's subnet (the NodeBalancer's backend subnet). */
  subnetId?: number;
  /** Where it came from, for status and messages. */
  from: string;
}

/** What nodesFrom reads, all granted by --read-nodes (the chart's rbac.readNodes): otherwise NodesNotReadable. */
export const backendReads = {
  nodes: nodesRead("NodeBalancer backends that follow the nodes (configs[].nodesFrom)"),
  services: { type: servicesType, scope: "namespaces", gate: READ_NODES_GATE, why: "NodeBalancer backends that follow a Service (configs[].nodesFrom.serviceRef): its node ports" },
  endpointSlices: { type: endpointSlicesType, scope: "namespaces", gate: READ_NODES_GATE, why: "the nodes a followed Service's endpoints run on (configs[].nodesFrom.serviceRef)" },
} as const satisfies Record<string, Read>;

export interface BackendSources {
  nodes: ReadStore<NodeObject> | undefined;
  services: ReadStore<ServiceObject> | undefined;
  endpointSlices: ReadStore<EndpointSliceObject> | undefined;
}

/** A node nodesFrom found that cannot be a backend: named for the operator's log only. */
export interface SkippedBackend {
  node: string;
  /** The addresses looked at (InternalIP; with IPv6 ExternalIP too), none of them fit. */
  addresses: string[];
  /** Why, said without naming it (absent: no private IPv4 InternalIP). */
  why?: string;
}

/**
 * The NodeBalancer's backend subnet: backends are VPC nodes in it (each node's InternalIP inside
 * `range`, as the cloud controller manager's getNodeBackendIP takes a node's InternalIP when
 * backends are in a VPC, here the one in the subnet when a node has several).
 */
export interface BackendSubnet {
  id: number;
  /** Its IPv4 range (CIDR); null when unknown (the first private InternalIP is taken). */
  range: string | null;
}

export type FollowedBackends =
  | { backends: FollowedBackend[]; skipped: SkippedBackend[] }
  | { held: { reason: "NodesNotReadable" | "BackendSourceNotFound"; message: string } };

/** Why a skipped node cannot be a backend, said without naming it. */
const NO_PRIVATE_ADDRESS = "no private IPv4 InternalIP: a NodeBalancer reaches backends on 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 only";

/**
 * What status and Events say of the skipped nodes: how many and why, never which (the cluster's
 * node names and addresses are not the tenant's to learn; the operator's log has them).
 */
export function skippedSummary(skipped: readonly SkippedBackend[]): string[] {
  const byWhy = new Map<string, number>();
  for (const s of skipped) byWhy.set(s.why ?? NO_PRIVATE_ADDRESS, (byWhy.get(s.why ?? NO_PRIVATE_ADDRESS) ?? 0) + 1);
  return [...byWhy].map(([why, n]) => `${String(n)} node${n === 1 ? "" : "s"} skipped, with ${why}`);
}

/** Whether IPv4 `ip` is inside IPv4 CIDR `range`. */
export function inCidr(ip: string, range: string): boolean {
  const [base = "", bits = "32"] = range.split("/");
  if (!isIPv4(ip) || !isIPv4(base)) return false;
  const value = (a: string): number => a.split(".").reduce((v, p) => v * 256 + Number(p), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(value(ip) / size) === Math.floor(value(base) / size);
}

interface NodeAddress { ip?: string | undefined; looked: string[]; why?: string }

/** The node's private IPv4 InternalIP (in a VPC, the one inside the backend subnet `range`). */
function privateIPv4Of(node: NodeObject, range: string | null): NodeAddress {
  const looked = (node.status?.addresses ?? []).filter((a) => a.type === "InternalIP").map((a) => a.address);
  const ip = range !== null ? looked.find((a) => isPrivateIPv4(a) && inCidr(a, range)) : looked.find(isPrivateIPv4);
  return { ip, looked, ...(range !== null ? { why: `no InternalIP in the NodeBalancer's backend subnet (${range})` } : {}) };
}

const NO_PUBLIC_IPV6 = "no public IPv6 address (a global unicast ExternalIP or InternalIP, 2000::/3): nodesFrom.addressFamily IPv6 reaches nodes there only";

/**
 * The node's public IPv6 address: an ExternalIP first (the cloud controller manager's node
 * addresses put the public ones there), else an InternalIP; one host's global unicast address only.
 */
function publicIPv6Of(node: NodeObject): NodeAddress {
  const addresses = node.status?.addresses ?? [];
  const looked = ["ExternalIP", "InternalIP"].flatMap((type) => addresses.filter((a) => a.type === type).map((a) => a.address));
  return { ip: looked.find((a) => isGlobalUnicastIPv6(a) && hostAddressProblem(a) === undefined), looked, why: NO_PUBLIC_IPV6 };
}

const isReady = (n: NodeObject): boolean => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;

/** A node label the API takes (3..32 of letters, digits, '-', '_', '.'). */
export function backendLabel(nodeName: string): string {
  const clean = nodeName.replace(/[^a-zA-Z0-9_.-]/g, "-");
  const cut = clean.length > 32 ? `${clean.slice(0, 23)}-${hash8(clean)}` : clean;
  return cut.padEnd(3, "_");
}

const hash8 = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 8);

/**
 * The backends `from` names now, in namespace `namespace`. Held (nothing sent) when a source
 * cannot be read or does not exist: a config emptied by a missing Service would stop serving.
 */
export function followedBackends(from: NodesFrom, namespace: string, sources: BackendSources, subnet?: BackendSubnet): FollowedBackends {
  if (sources.nodes === undefined || (from.serviceRef !== undefined && (sources.services === undefined || sources.endpointSlices === undefined))) {
    return { held: { reason: "NodesNotReadable", message: "configs[].nodesFrom needs the operator to read the cluster's Nodes (and Services and EndpointSlices here), and it may not: install the chart with rbac.readNodes=true" } };
  }
  const skipped: SkippedBackend[] = [];
  const out = new Map<string, FollowedBackend>();
  const add = (node: NodeObject, port: number, mode: "accept" | "drain", source: string): void => {
    const { ip, looked, why } = from.addressFamily === "IPv6" ? publicIPv6Of(node) : privateIPv4Of(node, subnet?.range ?? null);
    if (ip === undefined) {
      if (!skipped.some((s) => s.node === node.metadata.name)) skipped.push({ node: node.metadata.name, addresses: looked, ...(why !== undefined ? { why } : {}) });
      return;
    }
    const address = joinBackendAddress(ip, port);
    const have = out.get(address);
    // A node serving and draining at once (an endpoint ready, another terminating) still serves.
    if (have !== undefined && (have.mode === "accept" || mode === "drain")) return;
    out.set(address, { address, label: backendLabel(node.metadata.name), mode, ...(from.weight !== undefined ? { weight: from.weight } : {}), ...(subnet !== undefined && from.addressFamily !== "IPv6" ? { subnetId: subnet.id } : {}), from: source });
  };
  const live = sources.nodes.list().filter((n) => n.metadata.deletionTimestamp === undefined);
  if (from.nodes !== undefined) {
    const { selector, port } = from.nodes;
    for (const n of live) {
      if (!matchesSelector(n.metadata.labels, selector) || !isReady(n)) continue;
      add(n, port, n.spec?.unschedulable === true ? "drain" : "accept", `node ${n.metadata.name}`);
    }
  }
  if (from.serviceRef !== undefined) {
    const { name, port } = from.serviceRef;
    const svc = sources.services?.get(namespace, name);
    if (svc === undefined) return { held: { reason: "BackendSourceNotFound", message: `configs[].nodesFrom.serviceRef names Service ${name}, which is not in namespace ${namespace}` } };
    const sp = (svc.spec?.ports ?? []).find((p) => (typeof port === "number" ? p.port === port : p.name === port));
    if (sp?.nodePort === undefined) {
      return { held: { reason: "BackendSourceNotFound", message: `Service ${name} has ${sp === undefined ? `no port ${String(port)}` : `no nodePort on port ${String(port)}`}: backends are the nodes at the port's nodePort, so the Service must be of type NodePort or LoadBalancer` } };
    }
    const nodePort = sp.nodePort;
    if (svc.spec?.externalTrafficPolicy === "Local") {
      // Only nodes running an endpoint answer on the node port: draining ones until their endpoints go.
      const modes = new Map<string, "accept" | "drain">();
      for (const slice of sources.endpointSlices?.list() ?? []) {
        if (slice.metadata.namespace !== namespace || slice.metadata.labels?.["kubernetes.io/service-name"] !== name) continue;
        for (const e of slice.endpoints ?? []) {
          if (e.nodeName === undefined) continue;
          const mode = e.conditions?.terminating === true ? "drain" : e.conditions?.ready !== false ? "accept" : undefined;
          if (mode !== undefined && modes.get(e.nodeName) !== "accept") modes.set(e.nodeName, mode);
        }
      }
      for (const n of live) {
        const mode = modes.get(n.metadata.name);
        if (mode !== undefined) add(n, nodePort, n.spec?.unschedulable === true ? "drain" : mode, `Service ${name} endpoint on node ${n.metadata.name}`);
      }
    } else {
      for (const n of live) if (isReady(n)) add(n, nodePort, n.spec?.unschedulable === true ? "drain" : "accept", `Service ${name} (node port ${String(nodePort)}) on node ${n.metadata.name}`);
    }
  }
  return { backends: [...out.values()].sort((a, b) => a.address.localeCompare(b.address)), skipped };
}

/** The spec with each config's followed backends merged into its nodes (static ones win on an address). */
export interface EffectiveSpec<Spec> {
  spec: Spec;
  /** Nodes that cannot be backends (each once): for the log; status and Events say skippedSummary. */
  skipped: SkippedBackend[];
  /** Why the configs cannot be made now (nothing is sent meanwhile). */
  held?: { reason: string; message: string };
}

interface ConfigWithNodes {
  port: number;
  nodes: { address: string; label: string; weight?: number | undefined; mode?: "accept" | "reject" | "drain" | "backup" | undefined; subnetId?: number | undefined }[];
  nodesFrom?: NodesFrom | undefined;
}

/**
 * `nodePorts`: whether this namespace may publish a bare node port (configs[].nodesFrom.nodes;
 * --node-port-namespaces). Where it may not, nothing of the spec is sent: never a NodeBalancer
 * made with some configs and not the others.
 */
/**
 * Backends a config of a NodeBalancer of this type takes (the API's: 1,000 on common, 2,000 on
 * premium, CL26; premium_40gb assumed as premium). Static nodes are capped far below by the
 * schema; nodesFrom on a large cluster is what can pass it.
 */
export const backendLimit = (type: string | undefined): number => (type === undefined || type === "common" ? 1_000 : 2_000);

export function withFollowedBackends<Spec extends { configs: ConfigWithNodes[]; type?: string | undefined }>(spec: Spec, namespace: string, sources: BackendSources, nodePorts: boolean, subnet?: BackendSubnet): EffectiveSpec<Spec> {
  const skipped: SkippedBackend[] = [];
  const bare = nodePorts ? [] : spec.configs.filter((c) => c.nodesFrom?.nodes !== undefined).map((c) => String(c.port));
  if (bare.length > 0) {
    return {
      spec, skipped, held: {
        reason: NodeBalancerReasons.NodePortsNotAllowed,
        message: `config${bare.length === 1 ? "" : "s"} ${bare.join(", ")}: configs[].nodesFrom.nodes publishes a port of the cluster's nodes themselves (whatever listens there: the kubelet, another namespace's NodePort), which the operator's admin allows only in the namespaces it lists (--node-port-namespaces, chart value nodePortNamespaces), and namespace ${namespace} is not one. Use nodesFrom.serviceRef (a NodePort or LoadBalancer Service of this namespace) instead; nothing is sent for this NodeBalancer meanwhile`,
      },
    };
  }
  const atNodes = nodePorts ? [] : staticNodePorts(spec.configs, namespace, sources);
  if (atNodes.length > 0) {
    return {
      spec, skipped, held: {
        reason: NodeBalancerReasons.NodePortsNotAllowed,
        message: `${atNodes.join(", ")}: a static backend at an address of one of the cluster's nodes, on a port no NodePort Service of namespace ${namespace} exposes, publishes whatever listens there (the kubelet, another namespace's NodePort), which the operator's admin allows only in the namespaces it lists (--node-port-namespaces, chart value nodePortNamespaces). Use nodesFrom.serviceRef, or a port of this namespace's own Service; nothing is sent for this NodeBalancer meanwhile`,
      },
    };
  }
  const configs: ConfigWithNodes[] = [];
  // In a VPC every backend is a VPC node: a static one without a subnet is in the backend subnet.
  // An IPv6 address is sent in one spelling (addresses.ts), the one diff.ts compares.
  const inSubnet = (nodes: ConfigWithNodes["nodes"]): ConfigWithNodes["nodes"] => nodes.map((n0) => {
    const n = { ...n0, address: canonicalBackendAddress(n0.address) };
    return subnet === undefined || n.subnetId !== undefined ? n : { ...n, subnetId: subnet.id };
  });
  for (const c0 of spec.configs) {
    const c = { ...c0, nodes: inSubnet(c0.nodes) };
    if (c.nodesFrom === undefined) {
      configs.push(c);
      continue;
    }
    const found = followedBackends(c.nodesFrom, namespace, sources, subnet);
    if ("held" in found) return { spec, skipped, held: { reason: found.held.reason, message: `config ${String(c.port)}: ${found.held.message}; its backends are left as they are` } };
    skipped.push(...found.skipped.filter((s) => !skipped.some((k) => k.node === s.node)));
    const static_ = new Set(c.nodes.map((n) => n.address));
    const nodes = [...c.nodes, ...found.backends.filter((b) => !static_.has(b.address)).map((b) => ({ address: b.address, label: b.label, mode: b.mode, ...(b.weight !== undefined ? { weight: b.weight } : {}), ...(b.subnetId !== undefined ? { subnetId: b.subnetId } : {}) }))];
    if (nodes.length === 0) {
      return { spec, skipped, held: { reason: "NoBackends", message: `config ${String(c.port)}: nodesFrom finds no backend now${found.skipped.length > 0 ? ` (${String(found.skipped.length)} node(s) skipped)` : ""} and the config has no static nodes; its backends are left as they are rather than emptied` } };
    }
    const limit = backendLimit(spec.type);
    if (nodes.length > limit) {
      // Refused here, not by the API after a partial rebuild: nothing is sent for the NodeBalancer.
      return { spec, skipped, held: { reason: NodeBalancerReasons.TooManyBackends, message: `config ${String(c.port)}: nodesFrom finds ${String(nodes.length)} backends, more than the ${String(limit)} a config of a ${spec.type ?? "common"} NodeBalancer takes; narrow the selector${spec.type === undefined || spec.type === "common" ? " (or use a premium NodeBalancer, up to 2,000)" : ""}; its backends are left as they are` } };
    }
    configs.push({ ...c, nodes });
  }
  return { spec: { ...spec, configs }, skipped };
}

/**
 * Static backends (configs[].nodes) that name one of the cluster's nodes at a port no NodePort
 * Service of the namespace exposes: the same bare node port nodesFrom.nodes would publish,
 * typed by hand (a tenant sees its pods' hostIP). Known only where the operator may read Nodes
 * and Services; elsewhere nothing is known of the nodes, and nothing is refused.
 */
function staticNodePorts(configs: readonly ConfigWithNodes[], namespace: string, sources: BackendSources): string[] {
  if (sources.nodes === undefined) return [];
  // IPv6 in the one spelling parseBackendAddress gives: [2001:DB8::0:1] is 2001:db8::1.
  const nodeAddresses = new Set(sources.nodes.list().flatMap((n) => (n.status?.addresses ?? []).map((a) => canonicalIP(a.address))));
  const own = new Set((sources.services?.list() ?? []).filter((s) => s.metadata.namespace === namespace).flatMap((s) => (s.spec?.ports ?? []).flatMap((p) => (p.nodePort !== undefined ? [p.nodePort] : []))));
  return configs.flatMap((c) => c.nodes.flatMap((n) => {
    const parsed = parseBackendAddress(n.address);
    return parsed !== undefined && nodeAddresses.has(parsed.ip) && !own.has(parsed.port) ? [`config ${String(c.port)} node ${n.address}`] : [];
  }));
}
