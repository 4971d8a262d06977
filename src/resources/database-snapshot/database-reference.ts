// A snapshot's databaseRef: the ManagedDatabase it is of, resolved (and decoded) by the runtime
// before observe, and woken when that database changes.
import { kindRead, reference, type ManagedObject } from "../../runtime/contract.ts";
import { databaseView, managedDatabaseType, type DatabaseView } from "../managed-database/public.ts";
import type { DatabaseSnapshotSpec } from "./schema.ts";

export type { DatabaseView } from "../managed-database/public.ts";

/** Whether a snapshot's backup was taken and recorded (by this operator, or one before status.externalId). */
export const taken = (o: ManagedObject): boolean => o.status?.externalId !== undefined || typeof o.status?.backupId === "number";

export const databaseReference = reference<DatabaseSnapshotSpec, DatabaseView>({
  name: "database",
  target: kindRead(managedDatabaseType, "the database it is a backup of"),
  names: (spec) => [spec.databaseRef.name],
  decode: databaseView,
  // Needed to take the snapshot; once it exists its identity says where it lives.
  required: (m) => m.externalId === undefined,
  // One taken looks at its database only to see it gone or replaced: its ManagedDatabase turning
  // not Ready (its database gone, or busy) or naming another database wakes it; turning Ready
  // again (after the backup its own snapshot caused) or its state moving does not.
  wakes: (referrer, before, after) => !taken(referrer) || (before.notReady === undefined && after.notReady !== undefined) || before.value?.id !== after.value?.id,
});
