// Every condition reason and Event reason the generic runtime writes, in one place. Kinds add
// their own in their folder's reasons.ts. Reasons are constant CamelCase words, so users and
// alerts can match on them; the message carries the detail.
import { reasonNames } from "./kind-definition.ts";

/** Every reason of the Ready and Synced conditions the runtime writes, with what it means (docs/api.md lists them). */
export const conditionReasonMeanings = {
  // Ready
  Available: "Ready=True: the cloud object is usable (and its connection Secret, if any, published).",
  Creating: "Ready=False while the cloud object is being created (or a create announced moments ago may still land).",
  Updating: "Ready=False while a change is being applied.",
  Deleting: "Ready=False while the cloud object is being deleted; the finalizer stays until it is gone.",
  Unavailable: "Ready=False: the cloud object exists but is not usable (its API state says why).",
  Waiting: "Ready=False: a change waits for the cloud object to leave a state the API refuses it in.",
  ReferenceNotFound: "An object the spec refers to (in the same namespace) does not exist.",
  ReferenceNotReady: "An object the spec refers to is not Ready yet.",
  SecretPending: "Ready in the cloud, but the connection Secret is not published yet.",
  SecretConflict: "A Secret of that name exists and this resource does not own it: it is never written.",
  ExternalResourceGone: "The recorded cloud object no longer exists; it is not replaced without spec.requests.recreate.",
  // Synced
  ReconcileSuccess: "Synced=True: the cloud object matches the spec.",
  ReconcileError: "A passing failure (a timeout, a 5xx, an unexpected answer): retried with backoff.",
  InvalidSpec: "The spec does not parse: nothing is done until it changes.",
  ApiRejected: "The Linode API refused the request as invalid (4xx): not retried until the spec changes.",
  Forbidden: "The token may not do this (403): not retried until the spec or the token changes.",
  RateLimited: "A call waits for the token's rate-limit budget; the resource keeps its state meanwhile.",
  NotFound: "The id the spec names does not exist in the account.",
  Observing: "managementPolicy: Observe: mirrored read-only; the message lists how the cloud object differs from the spec.",
  RequestOutcomeUnknown: "A one-shot request may have been sent but its outcome was never recorded: it is not sent again (set a new token to ask again).",
  Paused: "The resource carries linode.operator.dev/paused: \"true\": nothing is changed in the cloud or in Kubernetes.",
  ExternalIdInUse: "The cloud id this resource names or recorded is managed by another resource: nothing is read from or written to it for this one.",
  NotConverging: "The same update was sent three passes running and the cloud object still differs (the API stores the value in another form, or something outside puts it back): nothing more is sent until the spec or the cloud object changes.",
  CannotExpress: "Synced=False, Ready=False: an adopted cloud object (spec names its id, managementPolicy Manage) has, in a field the spec leaves unset, what the spec cannot express (e.g. a NodeBalancer config of a protocol the schema lacks, a certificate only Linode holds); the message names each field. Nothing is written to the spec and nothing is sent until the spec says those fields itself (what it says then replaces what the object has) or managementPolicy is Observe.",
  ExternalIdMismatch: "The external-id annotation disagrees with status.externalId (a kind may name this more precisely): refused, never followed.",
} as const;

export const ConditionReasons = reasonNames(conditionReasonMeanings);

export const EventReasons = {
  Created: "Created",
  Updated: "Updated",
  Deleted: "Deleted",
  ConnectionSecretPublished: "ConnectionSecretPublished",
  ConnectionSecretRemoved: "ConnectionSecretRemoved",
  /** A resource was deleted and its cloud object left in place, because another resource manages it. */
  NotDeleted: "NotDeleted",
  /** An adopted cloud object's values were written to the fields its spec left unset (once). */
  LateInitialized: "LateInitialized",
} as const;

/** The `action` field of the Events above. */
export const EventActions = {
  Create: "Create",
  Update: "Update",
  Delete: "Delete",
  PublishSecret: "PublishSecret",
  Reconcile: "Reconcile",
} as const;
