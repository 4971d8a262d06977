// A snapshot's databaseRef: the ManagedDatabase it is of, resolved (and decoded) by the runtime
// before observe, and woken when that database changes.
import { reference } from "../../runtime/contract.ts";
import { managedDatabaseType } from "../managed-database/definition.ts";
import { databaseView, type DatabaseView } from "../managed-database/reference-view.ts";
import type { DatabaseSnapshotSpec } from "./schema.ts";

export type { DatabaseView } from "../managed-database/reference-view.ts";

export const databaseReference = reference<DatabaseSnapshotSpec, DatabaseView>({
  name: "database",
  target: { kind: managedDatabaseType },
  names: (spec) => [spec.databaseRef.name],
  decode: databaseView,
  // Needed to take the snapshot; once it exists its identity says where it lives.
  required: (m) => m.externalId === undefined,
});
