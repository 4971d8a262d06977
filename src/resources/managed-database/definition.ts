// The ManagedDatabase kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { columns, resourceTypeOf, type KindDefinition } from "../../runtime/kind-definition.ts";
import { managedDatabaseReasonMeanings } from "./reasons.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "./schema.ts";

export const managedDatabaseDefinition: KindDefinition = {
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
    columns.ready,
    columns.synced,
    { name: "Type", type: "string", jsonPath: ".spec.type", priority: 1 },
    { name: "Nodes", type: "integer", jsonPath: ".spec.clusterSize", priority: 1 },
    { name: "Host", type: "string", jsonPath: ".status.hosts.primary", priority: 1 },
    { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
    columns.age,
  ],
  reasons: managedDatabaseReasonMeanings,
};

export const managedDatabaseType = resourceTypeOf(managedDatabaseDefinition);
