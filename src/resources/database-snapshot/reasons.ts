// The DatabaseSnapshot's own condition reasons, with what each means (its definition carries
// them to docs/api.md). The API's limits are a queue: Ready=False while it waits.
import { reasonNames } from "../../runtime/contract.ts";

export const databaseSnapshotReasonMeanings = {
  SnapshotLimitReached: "The database has 3 snapshots, the most the API allows: this one is taken when one is deleted.",
  BackupInProgress: "Another backup of the database is in progress, or an earlier DatabaseSnapshot of it goes first.",
  DatabaseNotActive: "The database is not active (snapshots need an active database).",
  BackupIdMismatch: "The recorded backup is not of the database databaseRef names, or the external-id annotation disagrees with the record: nothing is done with it.",
} as const;

export const DatabaseSnapshotReasons = reasonNames(databaseSnapshotReasonMeanings);
