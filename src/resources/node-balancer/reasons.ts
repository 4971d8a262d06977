// The NodeBalancer's own condition reasons, with what each means (its definition carries them
// to docs/api.md).
import { reasonNames } from "../../runtime/contract.ts";

export const nodeBalancerReasonMeanings = {
  NodeBalancerIdMismatch: "spec.nodeBalancerId (or the external-id annotation) names another NodeBalancer than the one this resource recorded: refused, never followed.",
  VPCNotFound: "spec.vpcs or spec.frontendVpc names a subnet (by id, or by the labels of a VPC and its subnet) the Linode account has not, or one in another region than spec.region: nothing is created (a NodeBalancer's VPC cannot change once it is made) until the spec names one that is there, looked for again at the drift cadence.",
  TLSSecretNotFound: "An https config's tlsSecretRef names no kubernetes.io/tls Secret in the namespace.",
  TLSSecretInvalid: "The TLS Secret lacks tls.crt or tls.key, or they do not parse or do not match.",
  BackendSourceNotFound: "configs[].nodesFrom.serviceRef names a Service that is not in the namespace, or a port without a nodePort: the config's backends are held as they are (nothing is sent); the create waits.",
  NodePortsNotAllowed: "configs[].nodesFrom.nodes, or a static backend typed at a node's address on a port no NodePort Service of the namespace exposes (a bare port of the cluster's nodes: the kubelet's, another namespace's NodePort; known where the operator reads Nodes), in a namespace the operator's admin has not allowed (--node-port-namespaces, chart value nodePortNamespaces): nothing is created or sent for the NodeBalancer. nodesFrom.serviceRef (a Service of the namespace's own) is allowed everywhere.",
  NoBackends: "configs[].nodesFrom finds no backend (no Ready node, no endpoint, or none with a private address) and the config has no static nodes: its backends are held as they are rather than emptied; the create waits.",
  TooManyBackends: "configs[].nodesFrom finds more backends than a config of the NodeBalancer's type takes (1,000 common, 2,000 premium): its backends are held as they are and nothing is sent; the create waits. Narrow the selector, or use a premium NodeBalancer.",
  NoConfigs: "Ready=False: the NodeBalancer has no configs, so it serves nothing (the cloud NodeBalancer is kept; Synced is unaffected) until spec.configs has a port with at least one node.",
  NoNodes: "Ready=False: a config in the cloud has no nodes, so nothing serves its port (the message names the ports). The spec requires a node per config, so this is an adopted or observed NodeBalancer, or nodes removed outside until the operator puts them back.",
  NoBackendUp: "Ready=False: a config with health checks has no backend UP.",
  FirewallNotFound: "Synced=False: spec.firewallId names no Cloud Firewall this resource may assign: none with that id in its Linode account (or deleted outside the operator), a NodeBalancer of another namespace names or holds it, or naming a firewall by id with the operator's shared token is not allowed in the namespace (--adopt-namespaces). One message for every case, so it tells nothing of other namespaces. Nothing is sent for it (an Event says so once; no NodeBalancer is created without it, the create is tried again at the drift cadence; one this resource assigned before stays) until the spec names another or none. The rest of the spec is still applied.",
  FirewallConflict: "Synced=False: spec.firewallId cannot be assigned because another enabled Cloud Firewall, one this resource did not assign (someone else did, or it was already assigned when spec.firewallId first named it), holds the NodeBalancer's one place; the operator never removes it (a Warning Event says so once). Remove it outside the operator, or name it in spec.firewallId.",
  Locked: "Synced=False while the resource is being deleted: the NodeBalancer has a resource lock (cannot_delete or cannot_delete_with_subresources; the message names it and its id), so the API refuses its deletion. No DELETE is sent while it shows the lock; it is looked at again with backoff (from the pending poll, doubling, up to the drift poll) and the deletion completes once the lock is gone. A lock spec.deletionProtection made is removed by setting that field to false.",
} as const;

export const NodeBalancerReasons = reasonNames(nodeBalancerReasonMeanings);
