// The three kinds as CRDs: names, short names, category, printer columns and subresources
// next to the zod schemas that define their spec and status.
import type { z } from "zod";
import type { ResourceType } from "../kube/types.ts";
import { databaseSnapshotSpecSchema, databaseSnapshotStatusSchema } from "../resources/database-snapshot/schema.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "../resources/managed-database/schema.ts";
import { nodeBalancerSpecSchema, nodeBalancerStatusSchema } from "../resources/node-balancer/schema.ts";

export const crdGroup = "linode.operator.dev";
export const crdVersion = "v1alpha1";
export const crdCategory = "linode";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  /** 0: always shown; 1: only with -o wide. */
  priority?: number;
}

export type KindName = "ManagedDatabase" | "DatabaseSnapshot" | "NodeBalancer";

export interface KindDefinition {
  kind: KindName;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

const ready: PrinterColumn = { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status", description: "The cloud object is usable." };
const synced: PrinterColumn = { name: "Synced", type: "string", jsonPath: ".status.conditions[?(@.type==\"Synced\")].status", description: "The cloud object matches the spec." };
const age: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

export const kindDefinitions: KindDefinition[] = [
  {
    kind: "ManagedDatabase",
    plural: "manageddatabases",
    singular: "manageddatabase",
    shortNames: ["mdb"],
    description: "A Linode managed MySQL or PostgreSQL cluster (1 or 3 nodes), its connection Secret and one-shot actions.",
    spec: managedDatabaseSpecSchema,
    status: managedDatabaseStatusSchema,
    printerColumns: [
      { name: "Engine", type: "string", jsonPath: ".spec.engine" },
      { name: "Version", type: "string", jsonPath: ".spec.version" },
      { name: "Region", type: "string", jsonPath: ".spec.region" },
      { name: "Status", type: "string", jsonPath: ".status.status", description: "The API's state of the database." },
      ready,
      synced,
      { name: "Type", type: "string", jsonPath: ".spec.type", priority: 1 },
      { name: "Nodes", type: "integer", jsonPath: ".spec.clusterSize", priority: 1 },
      { name: "Host", type: "string", jsonPath: ".status.hosts.primary", priority: 1 },
      { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
      age,
    ],
  },
  {
    kind: "DatabaseSnapshot",
    plural: "databasesnapshots",
    singular: "databasesnapshot",
    shortNames: ["dbsnap"],
    description: "A user-created snapshot backup of a ManagedDatabase.",
    spec: databaseSnapshotSpecSchema,
    status: databaseSnapshotStatusSchema,
    printerColumns: [
      { name: "Database", type: "string", jsonPath: ".spec.databaseRef.name" },
      { name: "Label", type: "string", jsonPath: ".status.label" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      ready,
      { name: "Backup ID", type: "integer", jsonPath: ".status.backupId" },
      { name: "Reason", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].reason", priority: 1 },
      { name: "Created", type: "string", jsonPath: ".status.created", priority: 1 },
      age,
    ],
  },
  {
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
      ready,
      synced,
      { name: "Reason", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].reason", priority: 1 },
      { name: "IPv6", type: "string", jsonPath: ".status.ipv6", priority: 1 },
      { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
      age,
    ],
  },
];

/** Group, version, plural and kind of one of our kinds: the single source for every controller and client. */
export function resourceType(kind: KindName): ResourceType {
  const d = kindDefinitions.find((k) => k.kind === kind);
  if (d === undefined) throw new Error(`unknown kind ${kind}`);
  return { group: crdGroup, version: crdVersion, plural: d.plural, kind: d.kind };
}
