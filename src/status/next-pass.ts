// What the operator does next with an object, and when, derived from what it records: the
// conditions (reason, lastTransitionTime, observedGeneration), the paused annotation and the
// deletion timestamp, read against the runtime's cadences (src/runtime/timings.ts). The
// operator writes no "next poll" time (that would be a status write per poll, which steady
// state must not cost), so a time here is an estimate or a bound, and `basis` says which.
import { PAUSED_ANNOTATION } from "../runtime/annotations.ts";
import type { Condition } from "../runtime/condition-schema.ts";
import { ConditionReasons as R } from "../runtime/reasons.ts";
import { DEFAULT_POLL, Timings } from "../runtime/timings.ts";
import { KindTimings } from "../resources/shared/constants.ts";
import { humanDuration } from "./age.ts";

export interface NextStep {
  /** What the operator does next. */
  what: string;
  /** When, in words ("within 5m30s", "when the spec changes"). */
  when: string;
  /** The time it is due by, where one can be derived (RFC 3339). */
  by?: string;
  /** What this is derived from. */
  basis: string;
}

export interface NextInput {
  kind: string;
  metadata: { generation?: number; deletionTimestamp?: string | Date; annotations?: Record<string, string>; creationTimestamp?: string | Date };
  conditions: readonly Condition[];
  /** What each reason means, as the operator documents it (the runtime's and the kind's). */
  meanings: Readonly<Record<string, string>>;
  now: number;
}

const CADENCE_NOTE = `the operator's default cadences (--poll-pending-seconds ${String(DEFAULT_POLL.pendingMillis / 1000)}, --poll-ready-seconds ${String(DEFAULT_POLL.readyMillis / 1000)}); an install may set others`;
const withJitter = (millis: number): number => millis * (1 + Timings.jitter);
const iso = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The drift cadence of a settled object of `kind`: an Available snapshot is read several ready polls apart. */
function readyMillisOf(kind: string): number {
  return kind === "DatabaseSnapshot" ? DEFAULT_POLL.readyMillis * KindTimings.snapshotRefreshPolls : DEFAULT_POLL.readyMillis;
}

/**
 * When the queue's backoff next retries a pass that has failed ever since `since`: 1 s, then
 * doubling up to 5 min, each shortened by up to 20 % (workqueue.ts). Counted without the
 * shortening, so the time is the latest the retry is due, if every retry since has failed.
 */
export function nextBackoffRetry(since: number, now: number): number {
  let at = since;
  for (let n = 0; at <= now; n++) at += Math.min(Timings.backoffMaxMillis, Timings.backoffBaseMillis * 2 ** n);
  return at;
}

export function nextStep(input: NextInput): NextStep {
  const { metadata, conditions, now, kind } = input;
  const ready = conditions.find((c) => c.type === "Ready");
  const synced = conditions.find((c) => c.type === "Synced");
  const meaning = (reason: string): string => input.meanings[reason] ?? "";
  const pending = DEFAULT_POLL.pendingMillis;
  const readyMillis = readyMillisOf(kind);

  if (metadata.annotations?.[PAUSED_ANNOTATION] === "true") {
    return { what: "nothing: it is paused (no change in Linode or Kubernetes)", when: `when the annotation ${PAUSED_ANNOTATION} is removed`, basis: `the annotation ${PAUSED_ANNOTATION}: "true"` };
  }
  const generation = metadata.generation;
  const reported = synced?.observedGeneration ?? ready?.observedGeneration;
  if (conditions.length === 0 || (generation !== undefined && reported !== undefined && reported < generation)) {
    const age = metadata.creationTimestamp !== undefined ? now - new Date(metadata.creationTimestamp).getTime() : 0;
    const stale = age > 60_000 && conditions.length === 0 ? " (nothing reported in over a minute: is the operator running, and does it watch this namespace?)" : "";
    return {
      what: conditions.length === 0 ? `a first pass: the operator has not reported on this object yet${stale}` : `a pass for the spec's generation ${String(generation)}: the conditions describe generation ${String(reported)}`,
      when: "as soon as the operator sees the change (a watch event, within a second while it runs)",
      basis: "metadata.generation against the conditions' observedGeneration",
    };
  }
  if (metadata.deletionTimestamp !== undefined) {
    return {
      what: "the deletion: the cloud object is deleted (unless deletionPolicy is Retain) and the finalizer removed once it is gone",
      when: `every ${humanDuration(Timings.deletePollMillis)} until the cloud object is gone`,
      basis: `metadata.deletionTimestamp and Ready's reason ${ready?.reason ?? "(none)"}`,
    };
  }
  if (synced?.status === "False") return afterSyncFailure(synced, ready, { now, pending, readyMillis, meaning });
  if (ready?.status !== "True") {
    return {
      what: `looks at the cloud object again until it is Ready (Ready is ${ready?.reason ?? "not reported"}${ready?.message !== undefined ? `: ${ready.message}` : ""})`,
      when: `within ${humanDuration(withJitter(pending))} (the pending cadence, every ${humanDuration(pending)})`,
      basis: `Ready=False with Synced=True: the object is polled at the pending cadence while it settles; ${CADENCE_NOTE}`,
    };
  }
  return {
    what: synced?.reason === R.Observing ? "observes the cloud object again (managementPolicy Observe: nothing is changed)" : "a drift check: the cloud object is read and put back to the spec if it differs",
    when: `within ${humanDuration(withJitter(readyMillis))} (every ${humanDuration(readyMillis)} ±${String(Timings.jitter * 100)} %, twice that while the account's calls are contended; a change to the object, or to what it names, wakes it at once)`,
    basis: `Ready and Synced are True, so it is checked on the drift cadence; when it was last checked is not recorded (that would be a status write per poll), so this is a bound; ${CADENCE_NOTE}`,
  };
}

function afterSyncFailure(synced: Condition, ready: Condition | undefined, c: { now: number; pending: number; readyMillis: number; meaning: (reason: string) => string }): NextStep {
  const since = Date.parse(synced.lastTransitionTime);
  const reason = synced.reason;
  switch (reason) {
    case R.RateLimited: {
      const budget = /operator's share/.test(synced.message ?? "");
      return {
        what: budget ? "the same pass again, once the operator's call budget for this Linode account has a call to spare (objects not Ready go first)" : "the same pass again, after the wait the Linode API asked for (429 Retry-After)",
        when: `in about ${humanDuration(KindTimings.rateLimitDefaultMillis)} (the API's Retry-After when it gives one; at least ${humanDuration(KindTimings.rateLimitMinMillis)})`,
        basis: `Synced=False, RateLimited: ${synced.message ?? ""}`,
      };
    }
    case R.ReconcileError: {
      const due = Number.isFinite(since) ? nextBackoffRetry(since, c.now) : undefined;
      return {
        what: "the same pass again (a passing failure: a timeout, a 5xx, an unexpected answer)",
        when: due !== undefined ? `by ${iso(due)} (in ${humanDuration(due - c.now)}) at the latest` : "after the backoff (1 s doubling to 5m)",
        ...(due !== undefined ? { by: iso(due) } : {}),
        basis: `Synced=False, ReconcileError since ${synced.lastTransitionTime}: the runtime's backoff (1s, doubling to ${humanDuration(Timings.backoffMaxMillis)}, each up to 20 % shorter) counted from then, as if every retry since failed; a success resets it`,
      };
    }
    case R.Waiting:
      return {
        what: `the change again, once the cloud object's state allows it: ${synced.message ?? ""}`,
        when: `within about ${humanDuration(KindTimings.preconditionWaitMillis)} (or the pending cadence, ${humanDuration(c.pending)})`,
        basis: "Synced=False, Waiting: the API refused the change for the object's current state, which is retried after a short wait",
      };
    default:
      break;
  }
  if (ready !== undefined && ready.status === "False" && ready.reason === reason && ready.message === synced.message) {
    if (reason === R.ReferenceNotFound || reason === R.ReferenceNotReady) {
      return { what: "nothing until the object it refers to exists and is Ready", when: "as soon as that object changes (it wakes this one)", basis: `Ready and Synced are both ${reason}: ${c.meaning(reason)}` };
    }
    return {
      what: `nothing is changed; it looks again in case it was passing (${reason})`,
      when: `within ${humanDuration(withJitter(c.readyMillis))} (the drift cadence), or at once when the spec or what it names changes`,
      basis: `Ready and Synced are both ${reason} (the object is held): ${c.meaning(reason)}`,
    };
  }
  const documented = c.meaning(reason);
  return {
    what: `nothing until it can be done: ${documented !== "" ? documented : `Synced=False, ${reason}`}`,
    when: "when the spec, or an object it names (a Secret, a referenced resource), changes: that wakes it at once; no retry time is recorded for this reason",
    basis: `Synced=False, ${reason} since ${synced.lastTransitionTime}${synced.message !== undefined ? `: ${synced.message}` : ""}`,
  };
}
