// Every condition reason, Event reason and interval the kinds add to the runtime's
// (src/runtime/reasons.ts, src/runtime/timings.ts), in one place.

export const KindReasons = {
  // Credentials (spec.credentialsRef).
  /** The credentials Secret (or, where the operator requires one, spec.credentialsRef) is missing. */
  CredentialsNotFound: "CredentialsNotFound",
  /** The credentials Secret has no usable token, or the API refused the token (401). */
  CredentialsInvalid: "CredentialsInvalid",
  /** The credentials now reach another account than the one the cloud object was recorded in: nothing is done in either. */
  AccountChanged: "AccountChanged",
  /** Adopting an existing cloud object by id with the operator's own token, where the admin does not allow it. */
  AdoptionNotAllowed: "AdoptionNotAllowed",
  // Ready, while the API reports a transitional database state.
  BackingUp: "BackingUp",
  Restoring: "Restoring",
  // Synced: what the operator refuses to do.
  /** The label is taken by a cloud object this resource did not create: never adopted, never deleted. */
  LabelInUse: "LabelInUse",
  /** The cloud object differs in what the API cannot change; nothing is sent. */
  ImmutableFieldMismatch: "ImmutableFieldMismatch",
  /** spec.databaseId names another database than the one this resource already manages. */
  DatabaseIdMismatch: "DatabaseIdMismatch",
  // DatabaseSnapshot: the API's limits are a queue (Ready=False while waiting).
  /** 3 snapshots exist for the database: a slot frees when one is deleted. */
  SnapshotLimitReached: "SnapshotLimitReached",
  /** Another backup of the database is in progress (or an earlier DatabaseSnapshot goes first). */
  BackupInProgress: "BackupInProgress",
  /** The database is not active (snapshots need an active database). */
  DatabaseNotActive: "DatabaseNotActive",
  /** The database the snapshot belonged to no longer exists. */
  DatabaseGone: "DatabaseGone",
  /** The database is only observed (managementPolicy: Observe): a snapshot would change it. */
  DatabaseNotManaged: "DatabaseNotManaged",
  /** The database carries the paused annotation: no snapshot is taken until it is removed. */
  DatabasePaused: "DatabasePaused",
  /** The recorded backup is not of the database databaseRef names, or the external-id annotation disagrees with the record. */
  BackupIdMismatch: "BackupIdMismatch",
  // Restore.
  /** The spec: a restore after a credentials reset leaves the cluster failed; refused unless forced. */
  RestoreAfterCredentialsReset: "RestoreAfterCredentialsReset",
  /** The cluster is failed after a restore. */
  RestoreFailed: "RestoreFailed",
  /** The restore names a snapshot of another database. */
  SnapshotOfAnotherDatabase: "SnapshotOfAnotherDatabase",
  // NodeBalancer.
  /** spec.nodeBalancerId names another NodeBalancer than the one this resource already manages. */
  NodeBalancerIdMismatch: "NodeBalancerIdMismatch",
  /** An https config's tlsSecretRef names no kubernetes.io/tls Secret in the namespace. */
  TLSSecretNotFound: "TLSSecretNotFound",
  /** The TLS Secret lacks tls.crt or tls.key, or they do not parse or do not match. */
  TLSSecretInvalid: "TLSSecretInvalid",
  /** Ready=False: a config with health checks has no backend UP. */
  NoBackendUp: "NoBackendUp",
} as const;

export const KindEvents = {
  CredentialsReset: { reason: "CredentialsReset", action: "ResetCredentials" },
  Patched: { reason: "Patched", action: "Patch" },
  Restored: { reason: "Restored", action: "Restore" },
  RestoreFailed: { reason: "RestoreFailed", action: "Restore" },
} as const;

export const KindTimings = {
  /** A refusal because of the object's current state (busy, updating): look again after this. */
  preconditionWaitMillis: 10_000,
  /** A 429 without Retry-After: wait this long; never less than the minimum. */
  rateLimitDefaultMillis: 5_000,
  rateLimitMinMillis: 1_000,
  /** After a credentials reset the API serves the new password within seconds: re-read it for this long. */
  credentialsRefreshMillis: 120_000,
  /** How often a settled database's backups are listed for its status (automatic backups are daily). */
  backupsRefreshMillis: 24 * 3_600_000,
  /** A database younger than this that this resource created has no backup to list yet. */
  freshDatabaseMillis: 3_600_000,
  /**
   * A settled NodeBalancer's configs list (with each config's health counts) is read every
   * ready poll; its nodes and firewalls in full when its `updated` moves or its counts change,
   * and otherwise this many ready polls apart.
   */
  nodeBalancerConfigRefreshPolls: 6,
  /**
   * An Available snapshot is read again this many ready polls apart: a backup never changes,
   * and its database's deletion wakes it at once (through the ManagedDatabase), so only a
   * backup deleted alone outside the operator waits this long to be reported.
   */
  snapshotRefreshPolls: 6,
  /** NodeBalancer statistics (5-minute samples) are read this often per NodeBalancer. */
  nodeBalancerStatsMillis: 5 * 60_000,
} as const;

export const KindLimits = {
  /** How many of a database's latest backups its status lists. */
  backupsInStatus: 10,
} as const;
