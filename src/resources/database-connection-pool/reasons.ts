// The DatabaseConnectionPool's own condition reasons, with what each means (its definition
// carries them to docs/api.md).
import { reasonNames } from "../../runtime/contract.ts";

export const databaseConnectionPoolReasonMeanings = {
  PoolDatabaseMismatch: "The recorded pool is not in the database databaseRef names now: nothing is done with it for this resource.",
  InvalidPoolLabel: "spec.label is unset and metadata.name is not a valid pool label (it has a dot, or more than 63 characters): set spec.label. Nothing is sent.",
} as const;

export const DatabaseConnectionPoolReasons = reasonNames(databaseConnectionPoolReasonMeanings);
