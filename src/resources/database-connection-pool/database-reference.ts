// A pool's databaseRef: the ManagedDatabase it belongs to, resolved (and decoded) by the runtime
// before observe, and woken when that database changes. Required while the pool is not being
// deleted: ReferenceNotFound / ReferenceNotReady until the database is there and Ready.
import { kindRead, reference } from "../../runtime/contract.ts";
import { databaseView, managedDatabaseType, type DatabaseView } from "../managed-database/public.ts";
import type { DatabaseConnectionPoolSpec } from "./schema.ts";

export const poolDatabaseReference = reference<DatabaseConnectionPoolSpec, DatabaseView>({
  name: "database",
  target: kindRead(managedDatabaseType, "the database the pool belongs to"),
  names: (spec) => [spec.databaseRef.name],
  decode: databaseView,
});
