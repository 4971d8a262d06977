// The NodeBalancer kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { columns, resourceTypeOf, type KindDefinition } from "../../runtime/kind-definition.ts";
import { nodeBalancerReasonMeanings } from "./reasons.ts";
import { nodeBalancerSpecSchema, nodeBalancerStatusSchema } from "./schema.ts";

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
};

export const nodeBalancerType = resourceTypeOf(nodeBalancerDefinition);
