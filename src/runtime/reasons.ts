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
  // Synced
  ReconcileSuccess: "ReconcileSuccess",
  ReconcileError: "ReconcileError",
  InvalidSpec: "InvalidSpec",
  ApiRejected: "ApiRejected",
  Forbidden: "Forbidden",
  RateLimited: "RateLimited",
  NotFound: "NotFound",
  Observing: "Observing",
} as const;

export const EventReasons = {
  Created: "Created",
  Updated: "Updated",
  Deleted: "Deleted",
  ConnectionSecretPublished: "ConnectionSecretPublished",
} as const;

/** The `action` field of the Events above. */
export const EventActions = {
  Create: "Create",
  Update: "Update",
  Delete: "Delete",
  PublishSecret: "PublishSecret",
  Reconcile: "Reconcile",
} as const;
