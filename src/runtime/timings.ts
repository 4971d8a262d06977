// Every interval the generic runtime uses, in one place; kinds and the CLI take the poll
// defaults from here rather than spelling them again.

export interface PollIntervals {
  /** While the cloud object settles (provisioning, updating) or differs from the spec. */
  pendingMillis: number;
  /** Once it is ready and up to date: the drift-detection cadence. */
  readyMillis: number;
}

export const DEFAULT_POLL: PollIntervals = { pendingMillis: 5_000, readyMillis: 5 * 60_000 };

export const Timings = {
  /** While waiting for the cloud object to be gone after a delete call. */
  deletePollMillis: 3_000,
  /** First look after a create: no sooner than the pending poll, no later than this. */
  afterCreateMaxMillis: 2_000,
  /**
   * A create call is abandoned after this long, whatever it waits for (the call budget, a 429's
   * Retry-After, retries, a slow answer): no create is ever sent later than this after it was
   * announced.
   */
  createDeadlineMillis: 60_000,
  /**
   * A create announced this recently whose object is not to be seen may still be in flight
   * (sent by a process that died, or whose answer was lost): it is not sent again before this
   * has passed. Twice the create deadline, so clocks of two replicas may differ by a minute.
   */
  createGraceMillis: 120_000,
  /** After an update the observation did not see yet (the object vanished meanwhile). */
  afterUpdateMillis: 1_000,
  /** `managementPolicy: Observe` with nothing to observe: look again this many pending polls later. */
  observeMissingFactor: 6,
  /** A Kubernetes write conflict: read again soon, not with backoff. */
  conflictRetryMillis: 200,
  /** Events within this window coalesce into one reconcile. */
  coalesceMillis: 300,
  /** Every cached object is reconciled this often (jittered), in case an event was missed. */
  resyncMillis: 10 * 60_000,
  /** How long a shutdown waits for in-flight reconciles before aborting them. */
  shutdownGraceMillis: 20_000,
  /** Polls and resyncs are spread by ±this fraction so many objects never arrive in lockstep. */
  jitter: 0.1,
  /** Per-key backoff after an error: from the base, doubling, up to the max, randomised by this fraction. */
  backoffBaseMillis: 1_000,
  backoffMaxMillis: 300_000,
  backoffJitter: 0.2,
  /** Leader election on a Lease, client-go's defaults. */
  leaseDurationMillis: 15_000,
  renewDeadlineMillis: 10_000,
  retryPeriodMillis: 2_000,
} as const;

/** `millis` spread uniformly by ±Timings.jitter. */
export function jittered(millis: number, random: () => number = Math.random): number {
  return Math.round(millis * (1 - Timings.jitter + 2 * Timings.jitter * random()));
}
