// The NodeBalancer's own condition reasons, with what each means (its definition carries them
// to docs/api.md).
import { reasonNames } from "../../runtime/contract.ts";

export const nodeBalancerReasonMeanings = {
  NodeBalancerIdMismatch: "spec.nodeBalancerId (or the external-id annotation) names another NodeBalancer than the one this resource recorded: refused, never followed.",
  TLSSecretNotFound: "An https config's tlsSecretRef names no kubernetes.io/tls Secret in the namespace.",
  TLSSecretInvalid: "The TLS Secret lacks tls.crt or tls.key, or they do not parse or do not match.",
  NoBackendUp: "Ready=False: a config with health checks has no backend UP.",
} as const;

export const NodeBalancerReasons = reasonNames(nodeBalancerReasonMeanings);
