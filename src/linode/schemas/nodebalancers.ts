// NodeBalancer responses (spec 4.176.0 plus fields the real API added since, as recorded:
// type, client_udp_sess_throttle, lke_cluster, frontend_address_type, frontend_vpc_subnet_id,
// locks; transfer's counts null on a new one). ssl_cert/ssl_key come back as null or the
// placeholder `<REDACTED>`.
import { z } from "zod";
import { envelope, openEnum, optionalNullableNumber, optionalNullableString } from "./common.ts";

export const nbProtocols = ["http", "https", "tcp", "udp"] as const;
export const nbAlgorithms = ["roundrobin", "leastconn", "source", "ring_hash"] as const;
export const nbStickiness = ["none", "table", "http_cookie", "session", "source_ip"] as const;
export const nbChecks = ["none", "connection", "http", "http_body"] as const;
export const nbCipherSuites = ["recommended", "legacy", "none"] as const;
export const nbProxyProtocols = ["none", "v1", "v2"] as const;
export const nbNodeModes = ["accept", "reject", "drain", "backup", "none"] as const;
export const nbNodeStatuses = ["unknown", "UP", "DOWN"] as const;

const transferSchema = z
  .object({ in: optionalNullableNumber, out: optionalNullableNumber, total: optionalNullableNumber })
  .nullish()
  .transform((t) => ({ in: t?.in ?? null, out: t?.out ?? null, total: t?.total ?? null }));

export const nodeBalancerSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  region: z.string(),
  hostname: optionalNullableString,
  ipv4: optionalNullableString,
  ipv6: optionalNullableString,
  client_conn_throttle: z.number().int(),
  tags: z.array(z.string()).nullish().transform((v) => v ?? []),
  transfer: transferSchema,
  created: z.string(),
  updated: z.string(),
  type: z.string().optional(),
  client_udp_sess_throttle: z.number().nullish(),
  lke_cluster: z.object({ id: z.number(), label: z.string().nullish() }).loose().nullish(),
  /** `public` or `vpc` (the frontend address is a VPC address: `ipv4` is it, `hostname` is ""). */
  frontend_address_type: z.string().nullish(),
  frontend_vpc_subnet_id: z.number().nullish(),
  /** `vpc` recorded (linodego's recordings, 2026-07); other values unknown, so kept open. */
  backend_connectivity: z.string().nullish(),
  // Lock types (`cannot_delete`, `cannot_delete_with_subresources`): absent where the API does not serve the field (LG: v4beta only),
  // which is "not known", unlike null or [] (none).
  locks: z.array(z.string()).nullish().transform((v) => (v === null ? [] : v)).optional(),
});
export const nodeBalancerListSchema = envelope(nodeBalancerSchema);

/**
 * One of a NodeBalancer's VPC configs (GET /nodebalancers/{id}/vpcs). `purpose` and
 * `ipv6_range` were recorded since 2026-03 (FB0, FB) and are absent from answers for NodeBalancers
 * with a backend VPC only (F, 2026-07): absent `purpose` means a backend, the only kind then.
 */
export const nodeBalancerVpcConfigSchema = z.object({
  id: z.number().int(),
  nodebalancer_id: z.number().int().nullish(),
  vpc_id: z.number().int().nullish(),
  subnet_id: z.number().int(),
  ipv4_range: z.string().nullish(),
  ipv6_range: z.string().nullish(),
  purpose: z.string().nullish().transform((v) => v ?? "backend"),
});
export const nodeBalancerVpcConfigListSchema = envelope(nodeBalancerVpcConfigSchema);

export const nodeBalancerConfigSchema = z.object({
  id: z.number().int(),
  nodebalancer_id: z.number().int(),
  port: z.number().int(),
  protocol: openEnum(nbProtocols),
  algorithm: openEnum(nbAlgorithms),
  stickiness: openEnum(nbStickiness),
  check: openEnum(nbChecks),
  check_interval: z.number().int(),
  check_timeout: z.number().int(),
  check_attempts: z.number().int(),
  check_path: z.string().nullish().transform((v) => v ?? ""),
  check_body: z.string().nullish().transform((v) => v ?? ""),
  check_passive: z.boolean(),
  cipher_suite: openEnum(nbCipherSuites),
  proxy_protocol: openEnum(nbProxyProtocols).nullish().transform((v) => v ?? "none"),
  ssl_commonname: z.string().nullish().transform((v) => v ?? ""),
  ssl_fingerprint: z.string().nullish().transform((v) => v ?? ""),
  /** Never the real PEM: null, or the API's `<REDACTED>` placeholder once set. */
  ssl_cert: optionalNullableString,
  ssl_key: optionalNullableString,
  nodes_status: z
    .object({ up: z.number().int(), down: z.number().int() })
    .nullish()
    .transform((v) => v ?? { up: 0, down: 0 }),
  udp_check_port: z.number().nullish(),
  udp_session_timeout: z.number().nullish(),
});
export const nodeBalancerConfigListSchema = envelope(nodeBalancerConfigSchema);

// New nodes are reported as "Unknown" by the real API although the spec says "unknown".
const nodeStatusSchema = openEnum(nbNodeStatuses).transform((s) => (s.toLowerCase() === "unknown" ? "unknown" : s));

export const nodeBalancerNodeSchema = z.object({
  id: z.number().int(),
  address: z.string(),
  label: z.string(),
  status: nodeStatusSchema,
  weight: z.number().int(),
  mode: openEnum(nbNodeModes),
  config_id: z.number().int(),
  nodebalancer_id: z.number().int(),
  vpc_config_id: z.number().nullish(),
});
export const nodeBalancerNodeListSchema = envelope(nodeBalancerNodeSchema);

const firewallRuleSchema = z.object({
  action: z.string(),
  protocol: z.string(),
  addresses: z
    .object({ ipv4: z.array(z.string()).nullish(), ipv6: z.array(z.string()).nullish() })
    .nullish(),
  ports: z.string().nullish(),
  label: z.string().nullish(),
  description: z.string().nullish(),
});

export const firewallSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  status: z.string(),
  tags: z.array(z.string()).nullish().transform((v) => v ?? []),
  created: z.string(),
  updated: z.string(),
  rules: z.object({
    inbound: z.array(firewallRuleSchema).nullish().transform((v) => v ?? []),
    inbound_policy: z.string(),
    outbound: z.array(firewallRuleSchema).nullish().transform((v) => v ?? []),
    outbound_policy: z.string(),
    version: z.number().optional(),
    fingerprint: z.string().optional(),
  }),
  entities: z
    .array(z.object({ id: z.number(), type: z.string(), label: z.string().nullish(), url: z.string().nullish() }))
    .optional(),
});
export const firewallListSchema = envelope(firewallSchema);

// Points are `[timestamp, value]` pairs in the documented example; kept as number arrays.
const seriesSchema = z.array(z.array(z.number()));
export const nodeBalancerStatsSchema = z.object({
  data: z.object({
    connections: seriesSchema,
    traffic: z.object({ in: seriesSchema, out: seriesSchema }),
  }),
  title: z.string(),
});
