// The DatabaseConnectionPool kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { columns, resourceTypeOf, type KindDefinition } from "../../runtime/contract.ts";
import { credentialsRead } from "../shared/credentials.ts";
import { databaseConnectionPoolReasonMeanings } from "./reasons.ts";
import { databaseConnectionPoolSpecSchema, databaseConnectionPoolStatusSchema } from "./schema.ts";

export const databaseConnectionPoolDefinition: KindDefinition = {
  kind: "DatabaseConnectionPool",
  plural: "databaseconnectionpools",
  singular: "databaseconnectionpool",
  shortNames: ["dbpool"],
  description: "A PgBouncer connection pool of a PostgreSQL ManagedDatabase on Linode's current platform.",
  spec: databaseConnectionPoolSpecSchema,
  status: databaseConnectionPoolStatusSchema,
  publishesConnection: true,
  printerColumns: [
    { name: "Database", type: "string", jsonPath: ".spec.databaseRef.name" },
    { name: "Label", type: "string", jsonPath: ".status.label" },
    { name: "Mode", type: "string", jsonPath: ".status.mode" },
    { name: "Size", type: "integer", jsonPath: ".status.size" },
    columns.ready,
    columns.reason,
    columns.age,
  ],
  reasons: databaseConnectionPoolReasonMeanings,
  reads: [credentialsRead],
};

export const databaseConnectionPoolType = resourceTypeOf(databaseConnectionPoolDefinition);
