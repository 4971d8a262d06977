// What kinds that follow the cluster's Nodes read of one, so that a watch wakes them only when
// that changed: labels, addresses, cordon, readiness, deletion — not the periodic status
// heartbeats every node sends.
import { BlockList, isIP } from "node:net";
import { nodesType, type KubeObject, type NodeObject, type Read } from "../../runtime/contract.ts";

/**
 * The operator setting that grants reading the cluster's Nodes, and with them the Services and
 * EndpointSlices NodeBalancer backends follow (--read-nodes, READ_NODES, the chart's rbac.readNodes).
 */
export const READ_NODES_GATE = "read-nodes";

/** The cluster's Nodes (cluster-scoped), read only where --read-nodes grants it; each kind that follows them declares it with its own why. */
export const nodesRead = (why: string): Read => ({ type: nodesType, scope: "cluster", gate: READ_NODES_GATE, why });

const view = (n: KubeObject): string => {
  const node = n as NodeObject;
  return JSON.stringify([
    node.metadata.labels ?? {}, node.metadata.deletionTimestamp !== undefined, node.spec?.unschedulable === true,
    node.status?.addresses ?? [], node.status?.conditions?.find((c) => c.type === "Ready")?.status,
  ]);
};

export const nodeChanged = (obj: KubeObject, old: KubeObject): boolean => view(obj) !== view(old);

// A Node's status is written by its kubelet, or by anyone allowed to patch nodes/status: what it
// claims as an address is input, not fact. One that is not a single host's unicast address
// (`0.0.0.0/0`, `::`, loopback, link-local, multicast, broadcast) would, as an allow-list entry
// or a backend, reach far more than that node; it is never used as one.
const hostRanges = (() => {
  const ranges: [BlockList, string][] = [];
  const range = (why: string, subnets: [string, number, "ipv4" | "ipv6"][]): void => {
    const list = new BlockList();
    for (const [net, prefix, family] of subnets) list.addSubnet(net, prefix, family);
    ranges.push([list, why]);
  };
  // Most specific first: the first that contains the address names why.
  range("is the broadcast address", [["255.255.255.255", 32, "ipv4"]]);
  range("is unspecified (any address), not a host's", [["0.0.0.0", 32, "ipv4"], ["::", 128, "ipv6"]]);
  range("is in 0.0.0.0/8 (this network), never a host's address", [["0.0.0.0", 8, "ipv4"]]);
  range("is a loopback address", [["127.0.0.0", 8, "ipv4"], ["::1", 128, "ipv6"]]);
  range("is a link-local address", [["169.254.0.0", 16, "ipv4"], ["fe80::", 10, "ipv6"]]);
  range("is a multicast address", [["224.0.0.0", 4, "ipv4"], ["ff00::", 8, "ipv6"]]);
  range("is reserved (240.0.0.0/4), not a host's", [["240.0.0.0", 4, "ipv4"]]);
  range("is an IPv4-compatible IPv6 address (deprecated), not a host's", [["::", 96, "ipv6"]]);
  return ranges;
})();

/**
 * Why `address`, as a Node's status reports it, is not one host's unicast address (a bare IPv4
 * or IPv6 literal, no prefix or zone; not unspecified, loopback, link-local, multicast or
 * broadcast); undefined when it is one.
 */
export function hostAddressProblem(address: string): string | undefined {
  if (address.includes("/")) return "is a CIDR range, not a host address";
  const family = isIP(address);
  if (family === 0) return "is not an IP address";
  if (address.includes("%")) return "has a zone (an interface of one host), not a routable host address";
  // IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) are checked as the IPv4 address they carry.
  return hostRanges.find(([list]) => list.check(address, family === 4 ? "ipv4" : "ipv6"))?.[1];
}
