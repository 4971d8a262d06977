// Every condition reason and Event reason the generic runtime writes, in one place. Kinds add
// their own in src/resources/shared/constants.ts. Reasons are constant CamelCase words, so
// users and alerts can match on them; the message carries the detail.

export const ConditionReasons = {
  // Ready
  Available: "Available",
  Creating: "Creating",
  Updating: "Updating",
  Deleting: "Deleting",
  Unavailable: "Unavailable",
  Waiting: "Waiting",
  ReferenceNotFound: "ReferenceNotFound",
  ReferenceNotReady: "ReferenceNotReady",
  /** Ready in the cloud, but the connection Secret is not published yet. */
  SecretPending: "SecretPending",
  /** A Secret of that name exists and this object does not own it: it is never written. */
  SecretConflict: "SecretConflict",
  /** The recorded cloud object no longer exists; it is not replaced without spec.requests.recreate. */
  ExternalResourceGone: "ExternalResourceGone",
  // Synced
  ReconcileSuccess: "ReconcileSuccess",
  ReconcileError: "ReconcileError",
  InvalidSpec: "InvalidSpec",
  ApiRejected: "ApiRejected",
  Forbidden: "Forbidden",
  RateLimited: "RateLimited",
  NotFound: "NotFound",
  Observing: "Observing",
  /** A one-shot request was sent but its outcome was never recorded: it is not sent again. */
  RequestOutcomeUnknown: "RequestOutcomeUnknown",
  /** The object carries the paused annotation: nothing is changed in the cloud or in Kubernetes. */
  Paused: "Paused",
  /** The cloud id this resource names or recorded is managed by another resource: nothing is done with it here. */
  ExternalIdInUse: "ExternalIdInUse",
  /** The external-id annotation disagrees with the recorded id (a kind may name it more precisely). */
  ExternalIdMismatch: "ExternalIdMismatch",
} as const;

export const EventReasons = {
  Created: "Created",
  Updated: "Updated",
  Deleted: "Deleted",
  ConnectionSecretPublished: "ConnectionSecretPublished",
  ConnectionSecretRemoved: "ConnectionSecretRemoved",
  ExternalResourceGone: "ExternalResourceGone",
  /** A resource was deleted and its cloud object left in place, because another resource manages it. */
  NotDeleted: "NotDeleted",
} as const;

/** The `action` field of the Events above. */
export const EventActions = {
  Create: "Create",
  Update: "Update",
  Delete: "Delete",
  PublishSecret: "PublishSecret",
  Reconcile: "Reconcile",
} as const;
