// The marks the runtime reads and writes on every managed object.
import type { ManagedObject } from "./managed-object.ts";

export const FINALIZER = "linode.operator.dev/finalizer";
/** A copy of status.externalId for people and tools; never read as the truth. */
export const EXTERNAL_ID_ANNOTATION = "linode.operator.dev/external-id";
/** Written by operators before status.createPending existed; removed when seen, never followed. */
export const CREATE_PENDING_ANNOTATION = "linode.operator.dev/create-pending";
/** `"true"` stops every write for the object (cloud and Kubernetes, finalizer removal included) but the Synced condition saying so. */
export const PAUSED_ANNOTATION = "linode.operator.dev/paused";

export const isPaused = (obj: ManagedObject): boolean => obj.metadata.annotations?.[PAUSED_ANNOTATION] === "true";
