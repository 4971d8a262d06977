// DatabaseSnapshot: a user-created snapshot backup of a ManagedDatabase. One source of truth
// for the CRD and the controller. A backup cannot be edited through the API, so everything
// that shapes it is immutable; only deletionPolicy may change.
import { z } from "zod";
import { immutable, immutableOptional } from "../../runtime/contract.ts";
import { accountRecordSchema, externalIdProofSchema, credentialsRefSchema, deletionPolicySchema, localObjectRefSchema } from "../shared/schema.ts";

export const snapshotPhases = ["Pending", "Waiting", "BackingUp", "Available", "Failed", "Deleting"] as const;

const takenOnce = "a snapshot is taken once; create another DatabaseSnapshot";

export const databaseSnapshotSpecSchema = z.object({
  databaseRef: localObjectRefSchema.meta({
    description: "The ManagedDatabase (same namespace) to snapshot. Immutable.",
    "x-kubernetes-validations": [immutable("databaseRef", takenOnce)],
  }),
  label: z.string().min(1).max(30).regex(/^[a-zA-Z0-9]+$/).optional().meta({
    description: "Backup label: 1..30 ASCII letters or digits. Default: derived from namespace and name. Immutable.",
  }),
  target: z.enum(["primary", "secondary"]).default("primary").meta({
    description: "Which node to snapshot: primary, or secondary (highly available clusters). Immutable.",
    "x-kubernetes-validations": [immutable("target", takenOnce)],
  }),
  credentialsRef: credentialsRefSchema.optional().meta({
    description: "The Linode API token to act with, from a Secret in this namespace. Default: the database's spec.credentialsRef (a snapshot lives in its database's account), else the operator's token.",
  }),
  deletionPolicy: deletionPolicySchema,
}).meta({
  description: "Desired snapshot. At most 3 snapshots per database and one backup at a time: extra snapshots wait (status says why).",
  "x-kubernetes-validations": [immutableOptional("label", takenOnce)],
});

export type DatabaseSnapshotSpec = z.infer<typeof databaseSnapshotSpecSchema>;

export const databaseSnapshotStatusSchema = z.object({
  phase: z.enum(snapshotPhases).optional().meta({
    description: "Pending: not requested yet. Waiting: blocked by the API's limits (3 snapshots, one backup at a time), an earlier DatabaseSnapshot of the same database, or the database not being active. BackingUp: requested, not listed yet. Available: restorable. Failed. Deleting.",
  }),
  backupId: z.int().optional().meta({ description: "Linode id of the backup." }),
  databaseId: z.int().optional().meta({ description: "Linode id of the database the backup belongs to." }),
  label: z.string().optional().meta({ description: "Label of the backup." }),
  created: z.string().optional().meta({ description: "When the API created the backup." }),
  account: accountRecordSchema.optional(),
  externalIdProof: externalIdProofSchema,
}).meta({ description: "Observed state of the snapshot." });

export type DatabaseSnapshotStatus = z.infer<typeof databaseSnapshotStatusSchema>;
export type SnapshotPhase = (typeof snapshotPhases)[number];
