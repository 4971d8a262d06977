// The intervals and limits the kinds add to the runtime's (src/runtime/timings.ts). Reasons are
// each kind's own (src/resources/<kind>/reasons.ts), or shared ones (shared/reasons.ts).

export const KindTimings = {
  /** A refusal because of the object's current state (busy, updating): look again after this. */
  preconditionWaitMillis: 10_000,
  /** A 429 without Retry-After: wait this long; never less than the minimum. */
  rateLimitDefaultMillis: 5_000,
  rateLimitMinMillis: 1_000,
  /** After a credentials reset the API serves the new password within seconds: re-read it for this long. */
  credentialsRefreshMillis: 120_000,
  /** A database younger than this that this resource created has no backup to list yet. */
  freshDatabaseMillis: 3_600_000,
  /**
   * An Available snapshot is read again this many ready polls apart: a backup never changes,
   * and its database's deletion wakes it at once (through the ManagedDatabase), so only a
   * backup deleted alone outside the operator waits this long to be reported.
   */
  snapshotRefreshPolls: 6,
  /** A NodeBalancer's statistics are first read at a random point this long after the process first sees it (at most its interval). */
  statsFirstReadSpreadMillis: 300_000,
  /**
   * How far the API's clock and the cluster's may disagree when a cloud object's creation time
   * is held against its resource's (credentials.ts): NTP keeps both within far less; more would
   * let a database made just before a forged resource pass for its own.
   */
  clockSkewMillis: 60_000,
} as const;

export const KindLimits = {
  /** How many of a database's latest backups its status lists. */
  backupsInStatus: 10,
} as const;
