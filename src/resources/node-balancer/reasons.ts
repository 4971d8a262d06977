// The NodeBalancer's own condition reasons, with what each means (its definition carries them
// to docs/api.md).
import { reasonNames } from "../../runtime/contract.ts";

export const nodeBalancerReasonMeanings = {
  NodeBalancerIdMismatch: "spec.nodeBalancerId (or the external-id annotation) names another NodeBalancer than the one this resource recorded: refused, never followed.",
  TLSSecretNotFound: "An https config's tlsSecretRef names no kubernetes.io/tls Secret in the namespace.",
  TLSSecretInvalid: "The TLS Secret lacks tls.crt or tls.key, or they do not parse or do not match.",
  NoConfigs: "Ready=False: the NodeBalancer has no configs, so it serves nothing (the cloud NodeBalancer is kept; Synced is unaffected) until spec.configs has a port with at least one node.",
  NoNodes: "Ready=False: a config in the cloud has no nodes, so nothing serves its port (the message names the ports). The spec requires a node per config, so this is an adopted or observed NodeBalancer, or nodes removed outside until the operator puts them back.",
  NoBackendUp: "Ready=False: a config with health checks has no backend UP.",
} as const;

export const NodeBalancerReasons = reasonNames(nodeBalancerReasonMeanings);
