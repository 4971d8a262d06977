// Every condition reason, Event reason and interval the kinds add to the runtime's
// (src/runtime/reasons.ts, src/runtime/timings.ts), in one place.

export const KindReasons = {
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
} as const;

export const KindEvents = {
  CredentialsReset: { reason: "CredentialsReset", action: "ResetCredentials" },
  Patched: { reason: "Patched", action: "Patch" },
} as const;

export const KindTimings = {
  /** A refusal because of the object's current state (busy, updating): look again after this. */
  preconditionWaitMillis: 10_000,
  /** A 429 without Retry-After: wait this long; never less than the minimum. */
  rateLimitDefaultMillis: 5_000,
  rateLimitMinMillis: 1_000,
  /** After a credentials reset the API serves the new password within seconds: re-read it for this long. */
  credentialsRefreshMillis: 120_000,
  /** A settled database may be read from a list this fraction of the ready poll old. */
  settledListAgeFraction: 1 / 5,
  /** A database still changing is read from a list at most this old (else fresh). */
  changingListAgeMillis: 1_000,
} as const;
