// The NodeBalancer kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { z } from "zod";
import { columns, resourceTypeOf, type KindDefinition, type KindSetting } from "../../runtime/contract.ts";
import { nodeBalancerReasonMeanings } from "./reasons.ts";
import { nodeBalancerSpecSchema, nodeBalancerStatusSchema } from "./schema.ts";

export const nodeBalancerSettings = {
  statsSeconds: {
    flag: "nodebalancer-stats-seconds", env: "NODEBALANCER_STATS_SECONDS",
    help: "how often each NodeBalancer's statistics are read for the linode_nodebalancer_* metrics, a call per NodeBalancer (default 300: the API samples every 5 minutes; 0 = never, no such metrics)",
    schema: z.coerce.number().refine((v) => v === 0 || (v >= 60 && v <= 86_400), "0 (off) or 60..86400").default(300),
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
    { name: "IPv6", type: "string", jsonPath: ".status.ipv6", priority: 1 },
    { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
    columns.age,
  ],
  reasons: nodeBalancerReasonMeanings,
  settings: nodeBalancerSettings,
};

export const nodeBalancerType = resourceTypeOf(nodeBalancerDefinition);
