// What another kind may know of a DatabaseSnapshot resource it refers to (a ManagedDatabase's
// restore snapshotRef): read with this kind's own status schema, never cast.
import type { Decoded, KubeObject, ManagedObject } from "../../runtime/contract.ts";
import { databaseSnapshotStatusSchema } from "./schema.ts";

export interface SnapshotView {
  phase: string;
  /** The backup taken, and the database it is of, once taken. */
  backupId: number | undefined;
  databaseId: number | undefined;
  /** The backup's label and creation time, as the API showed them. */
  label: string | undefined;
  created: string | undefined;
}

const viewSchema = databaseSnapshotStatusSchema.pick({ phase: true, backupId: true, databaseId: true, label: true, created: true });

/** The view of a DatabaseSnapshot object; not ready until its backup is Available. */
export function snapshotView(obj: KubeObject): Decoded<SnapshotView> {
  const parsed = viewSchema.safeParse((obj as ManagedObject).status ?? {});
  const status = parsed.success ? parsed.data : {};
  const value: SnapshotView = { phase: status.phase ?? "Pending", backupId: status.backupId, databaseId: status.databaseId, label: status.label, created: status.created };
  return value.phase === "Available" && value.backupId !== undefined ? { value } : { value, notReady: `it is ${value.phase}` };
}
