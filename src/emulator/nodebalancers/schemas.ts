// Request bodies of the NodeBalancer endpoints with the spec's enums and ranges.
import { z } from "zod";
import { intRange, label, oneOf } from "../validation.ts";
import { NODEBALANCER_TYPES, nodeBalancerVpcFields, nodeSubnetField } from "./vpcs.ts";

export const nodeBalancerLabel = label(3, 32, /^[a-zA-Z0-9_-]+$/);
const nodeLabel = z.string().min(3, { error: "Length must be 3-32 characters" }).max(32, { error: "Length must be 3-32 characters" })
  .regex(/^[a-zA-Z0-9._-]+$/, { error: "Must only contain ASCII letters, numbers, dots, dashes and underscores" });

const required = (field: string) => ({ error: (i: { input: unknown }) => (i.input === undefined ? `${field} is required` : "Must be a string") });

export const NODE_MODES = ["accept", "reject", "drain", "backup"] as const;

const nodeFields = {
  address: z.string(required("address")),
  label: nodeLabel,
  weight: intRange(1, 255).nullish(),
  mode: oneOf(NODE_MODES).nullish(),
  ...nodeSubnetField,
};

export const nodeCreateSchema = z.object({ ...nodeFields, label: z.string(required("label")).pipe(nodeLabel) });
export const nodeUpdateSchema = z.object({
  address: z.string({ error: "Must be a string" }).nullish(),
  label: nodeLabel.nullish(),
  weight: nodeFields.weight,
  mode: nodeFields.mode,
  ...nodeSubnetField,
});
export const rebuildNodeSchema = z.object({ ...nodeCreateSchema.shape, id: z.number().int().positive().nullish() });

// Every protocol's values are accepted here; which go with which protocol is applyConfig's
// check (model.ts), since the rule spans fields (the spec's four config variants, 4.234.0).
export const configFields = {
  port: intRange(1, 65535).nullish(),
  protocol: oneOf(["http", "https", "tcp", "udp"]).nullish(),
  algorithm: oneOf(["roundrobin", "leastconn", "source", "ring_hash"]).nullish(),
  stickiness: oneOf(["none", "table", "http_cookie", "session", "source_ip"]).nullish(),
  check: oneOf(["none", "connection", "http", "http_body"]).nullish(),
  // The spec only says "greater than check_timeout"; the live API bounds it to 2..3600.
  check_interval: intRange(2, 3600).nullish(),
  check_timeout: intRange(1, 30).nullish(),
  check_attempts: intRange(1, 30).nullish(),
  check_path: z.string({ error: "Must be a string" }).regex(/^[a-zA-Z0-9/\-%?&=.]*$/, { error: "Must be a valid URL path" }).nullish(),
  check_body: z.string({ error: "Must be a string" }).max(4096, { error: "Must be at most 4096 characters" }).nullish(),
  check_passive: z.boolean({ error: "Must be a boolean" }).nullish(),
  cipher_suite: oneOf(["recommended", "legacy"]).nullish(),
  proxy_protocol: oneOf(["none", "v1", "v2"]).nullish(),
  ssl_cert: z.string({ error: "Must be a string" }).nullable().optional(),
  ssl_key: z.string({ error: "Must be a string" }).nullable().optional(),
  udp_check_port: intRange(1, 65535).nullish(),
};

export const configSchema = z.object(configFields);
export const configWithNodesSchema = z.object({ ...configFields, nodes: z.array(nodeCreateSchema).nullish() });
export const rebuildSchema = z.object({
  ...configFields,
  nodes: z.array(rebuildNodeSchema, { error: (i) => (i.input === undefined ? "nodes is required" : "Must be an array") }),
});
export type ConfigInput = z.infer<typeof configSchema>;

export const nodeBalancerCreateSchema = z.object({
  region: z.string(required("region")),
  label: nodeBalancerLabel.nullish(),
  client_conn_throttle: intRange(0, 20).nullish(),
  client_udp_sess_throttle: intRange(0, 20).nullish(),
  tags: z.array(z.string({ error: "Must be a string" }).min(1).max(50), { error: "Must be an array of strings" }).nullish(),
  firewall_id: z.number().int().positive().nullish(),
  type: oneOf(NODEBALANCER_TYPES).nullish(),
  configs: z.array(configWithNodesSchema).nullish(),
  ...nodeBalancerVpcFields,
});

export const nodeBalancerUpdateSchema = z.object({
  label: nodeBalancerLabel.nullish(),
  client_conn_throttle: intRange(0, 20).nullish(),
  client_udp_sess_throttle: intRange(0, 20).nullish(),
  tags: z.array(z.string({ error: "Must be a string" }).min(1).max(50), { error: "Must be an array of strings" }).nullish(),
});

/**
 * PUT /nodebalancers/{id}/firewalls: the complete list of the NodeBalancer's firewalls
 * (techdocs put-node-balancer-firewalls: `firewall_ids`, required, array of integers; `[]`
 * removes them all).
 */
export const nodeBalancerFirewallsSchema = z.object({
  firewall_ids: z.array(z.number({ error: "Must be an integer" }).int({ error: "Must be an integer" }).positive({ error: "Must be a positive integer" }), {
    error: (i) => (i.input === undefined ? "firewall_ids is required" : "Must be an array of integers"),
  }),
});
