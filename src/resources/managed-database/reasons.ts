// The ManagedDatabase's own condition reasons, with what each means (its definition carries
// them to docs/api.md), and its Events.
import { reasonNames } from "../../runtime/contract.ts";

export const managedDatabaseReasonMeanings = {
  DatabaseIdMismatch: "spec.databaseId (or the external-id annotation) names another database than the one this resource recorded: refused, never followed.",
  Restoring: "Ready=False while the API restores the database from a backup.",
  RestoreAfterCredentialsReset: "A restore after a credentials reset leaves the cluster failed (the spec): refused unless the request says force: true.",
  RestoreFailed: "The cluster is failed after a restore.",
  Suspended: "Ready=False while the cluster is suspended or suspending (spec.suspended: true, or outside: then it is resumed): stopped, not billed, its data and connection Secret kept.",
  SnapshotOfAnotherDatabase: "The restore names a DatabaseSnapshot of another database.",
  InvalidEngineConfig: "spec.engineConfig has a parameter the engine does not have, of the wrong type or out of range (GET /databases/{engine}/config): nothing is sent; the message names each and what it accepts.",
  ResizeNotAllowed: "spec.type asks for a plan the API does not list, or a smaller disk than the database has (clusters cannot be resized to smaller plans): nothing is sent; the message lists the plans and their disks.",
  WaitingForRestoreSource: "spec.restoreFrom names a source that is not yet active, degraded or failed, or a ManagedDatabase without a database yet: the fork waits for it (nothing is sent).",
  RestoreTimeOutOfRange: "spec.restoreFrom.pointInTime.restoreTime is before the source's oldest restore point or in the future: nothing is sent; the message gives the valid range.",
  RestoreSourceMismatch: "spec.restoreFrom names a database the fork cannot be made of: another engine or major version than the spec's, a legacy-platform database (no point-in-time restore), one in another Linode account, or none: nothing is sent.",
  AllowListSourceNotFound: "spec.allowListFrom names a ConfigMap (labelled linode.operator.dev/allow-list: \"true\") or key that is not there: the allow list is held as it is (nothing is sent), the create waits.",
  InvalidAllowListSource: "A ConfigMap key spec.allowListFrom names holds something that is not an IP address or CIDR range: the allow list is held as it is; the message names the entries.",
  AllowListWouldBeEmpty: "spec.allowListFrom resolves to no address and allowList is empty: the update (or create) is held rather than blocking every connection, unless spec.allowEmpty is true. Nodes whose only addresses are not one host's unicast address (skipped, see NodeAddressSkipped) count as none; the message names them.",
  UnknownEngine: "spec.engine is an engine the API does not offer to this account (GET /databases/engines lists none of it; Valkey is in limited availability): nothing is sent.",
  ConnectionPoolsRemain: "Deleting: DatabaseConnectionPools in the namespace still hold pools of this database; it is deleted once they are gone (pools first).",
  UnknownEngineVersion: "spec.version is not a version the API offers for the engine (GET /databases/engines): nothing is sent; the message lists those that exist.",
} as const;

export const ManagedDatabaseReasons = reasonNames(managedDatabaseReasonMeanings);

export const ManagedDatabaseEvents = {
  CredentialsReset: { reason: "CredentialsReset", action: "ResetCredentials" },
  MaintenancePlanned: { reason: "MaintenancePlanned", action: "Observe" },
  EngineRestart: { reason: "EngineRestart", action: "Update" },
  Patched: { reason: "Patched", action: "Patch" },
  Restored: { reason: "Restored", action: "Restore" },
  Forked: { reason: "Forked", action: "Create" },
  RestoreFailed: { reason: "RestoreFailed", action: "Restore" },
  /** Warning: a selected Node's address is not one host's unicast address (e.g. 0.0.0.0/0, ::, loopback): never allowed. */
  NodeAddressSkipped: { reason: "NodeAddressSkipped", action: "Reconcile" },
} as const;
