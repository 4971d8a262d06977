// The marks the runtime reads and writes on every managed object.
import type { ManagedObject } from "./managed-object.ts";

export const FINALIZER = "linode.operator.dev/finalizer";
/** A copy of status.externalId for people and tools; never read as the truth. */
export const EXTERNAL_ID_ANNOTATION = "linode.operator.dev/external-id";
/** Written by operators before status.createPending existed; removed when seen, never followed. */
export const CREATE_PENDING_ANNOTATION = "linode.operator.dev/create-pending";
/**
 * The cloud id whose values the spec was initialized from on adoption (late initialization):
 * written in the same patch as those values, so the spec is initialized once per adopted
 * object, whatever happens between that patch and the next pass.
 */
export const INITIALIZED_FROM_ANNOTATION = "linode.operator.dev/initialized-from";
/** `"true"` stops every write for the object (cloud and Kubernetes, finalizer removal included) but the Synced condition saying so. */
export const PAUSED_ANNOTATION = "linode.operator.dev/paused";

export const isPaused = (obj: ManagedObject): boolean => obj.metadata.annotations?.[PAUSED_ANNOTATION] === "true";
