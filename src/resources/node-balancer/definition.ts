// The NodeBalancer kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { z } from "zod";
import { columns, resourceTypeOf, type KindDefinition, type KindSetting } from "../../runtime/contract.ts";
import { credentialsRead } from "../shared/credentials.ts";
import { backendReads } from "./backends-from.ts";
import { nodeBalancerReasonMeanings } from "./reasons.ts";
import { tlsSecretsRead } from "./tls.ts";
import { nodeBalancerSpecSchema, nodeBalancerStatusSchema } from "./schema.ts";

export const nodeBalancerSettings = {
  statsSeconds: {
    flag: "nodebalancer-stats-seconds", env: "NODEBALANCER_STATS_SECONDS",
    help: "how often each NodeBalancer's statistics are read for the linode_nodebalancer_* metrics, a call per NodeBalancer (default 3600: the API's statistics class allows 50 calls a minute per token, so hourly reads at half of it serve 1,500 NodeBalancers per token, and cost a twelfth of a configs list per 5-minute drift window; 0 = never, no such metrics)",
    schema: z.coerce.number().refine((v) => v === 0 || (v >= 60 && v <= 86_400), "0 (off) or 60..86400").default(3600),
  },
  healthSeconds: {
    flag: "poll-health-seconds", env: "POLL_HEALTH_SECONDS",
    help: "how often a Ready NodeBalancer's configs list (the backends' health counts the API updates on its own) is read when its `updated` has not moved, a call per NodeBalancer (default 0: every drift window, --poll-ready-seconds; longer spends fewer calls and reports a backend going down later)",
    schema: z.coerce.number().refine((v) => v === 0 || (v >= 60 && v <= 86_400), "0 (every drift window) or 60..86400").default(0),
  },
  rereadSeconds: {
    flag: "nodebalancer-reread-seconds", env: "NODEBALANCER_REREAD_SECONDS",
    help: "a safety net: read each NodeBalancer's nodes and firewalls in full this often even when its `updated` has not moved (default 0 = off: the operator trusts that a config or node change moves `updated`; a firewall named in spec.firewallId is checked every drift window regardless)",
    schema: z.coerce.number().refine((v) => v >= 0 && v <= 86_400, "0 (off) or up to 86400").default(0),
  },
} as const satisfies Record<string, KindSetting>;

export const nodeBalancerDefinition: KindDefinition = {
  kind: "NodeBalancer",
  plural: "nodebalancers",
  singular: "nodebalancer",
  shortNames: ["nb"],
  description: "A Linode NodeBalancer with its per-port configs and backend nodes.",
  spec: nodeBalancerSpecSchema,
  status: nodeBalancerStatusSchema,
  printerColumns: [
    { name: "Region", type: "string", jsonPath: ".spec.region" },
    { name: "Hostname", type: "string", jsonPath: ".status.hostname" },
    { name: "IPv4", type: "string", jsonPath: ".status.ipv4" },
    // kubectl prints only the first value of a list: the ports are one string in status.
    { name: "Ports", type: "string", jsonPath: ".status.ports", description: "Ports of the configs the API reports." },
    columns.ready,
    columns.synced,
    columns.reason,
    { name: "Type", type: "string", jsonPath: ".status.type", priority: 1 },
    { name: "IPv6", type: "string", jsonPath: ".status.ipv6", priority: 1 },
    { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
    columns.age,
  ],
  reasons: nodeBalancerReasonMeanings,
  reads: [credentialsRead, tlsSecretsRead, backendReads.nodes, backendReads.services, backendReads.endpointSlices],
  settings: nodeBalancerSettings,
};

export const nodeBalancerType = resourceTypeOf(nodeBalancerDefinition);
