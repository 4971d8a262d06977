// The DatabaseSnapshot kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { columns, resourceTypeOf, type KindDefinition } from "../../runtime/contract.ts";
import { credentialsRead } from "../shared/credentials.ts";
import { databaseSnapshotReasonMeanings } from "./reasons.ts";
import { databaseSnapshotSpecSchema, databaseSnapshotStatusSchema } from "./schema.ts";

export const databaseSnapshotDefinition: KindDefinition = {
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
    columns.ready,
    { name: "Backup ID", type: "integer", jsonPath: ".status.backupId" },
    columns.reason,
    { name: "Created", type: "string", jsonPath: ".status.created", priority: 1 },
    columns.age,
  ],
  reasons: databaseSnapshotReasonMeanings,
  reads: [credentialsRead],
};

export const databaseSnapshotType = resourceTypeOf(databaseSnapshotDefinition);
