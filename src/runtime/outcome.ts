// How a reconcile pass ended, and the one place Ready and Synced are derived from it (as ACK's
// ensureConditions derives them once from the reconcile's result): stages say what they found
// and did, never which condition to write.
import type { ConditionInput } from "./conditions.ts";
import type { AfterObserve, Deferral, Observed } from "./managed.ts";
import { combined } from "./problems.ts";
import { ConditionReasons as R } from "./reasons.ts";

export type Outcome =
  /** The paused annotation: nothing is done, and Synced says why. */
  | { type: "paused"; deleting: boolean }
  | { type: "invalidSpec"; message: string }
  /**
   * Nothing may be done until something changes (a reference unresolved, the object claimed
   * by another resource, out of reach, or gone): Ready and Synced both say why. `warn`: the
   * change to this reason is news (a Warning Event).
   */
  | { type: "held"; reason: string; message: string; warn: boolean; poll: boolean }
  /** Observe only, and nothing to observe. */
  | { type: "absent" }
  /** A create that waits (an API limit, a create possibly in flight). */
  | { type: "waiting"; deferral: Deferral }
  | { type: "created"; lookAfterMillis?: number | undefined }
  /** The cloud object was observed (and perhaps updated): the findings say the rest. */
  | { type: "observed" }
  /** Seen gone right after an update: looked at again soon, nothing written. */
  | { type: "recheck" }
  /** A delete was sent and the cloud object is still there. */
  | { type: "deleting" }
  /**
   * The pass failed. `quiet`: a re-check held back by the operator's own call budget before
   * anything was sent, of an object that was in sync: Synced is left as it was.
   */
  | { type: "failed"; reason: string; message: string; quiet: boolean };

/** What the pass found before it ended, whatever the outcome. */
export interface Findings {
  observeOnly: boolean;
  /** The latest observation of the existing cloud object. */
  observed?: Observed<unknown, unknown>;
  after?: AfterObserve;
  /** The connection Secret is not in place, and why. */
  unpublished?: { reason: string; message: string };
}

const ready = (status: "True" | "False", reason: string, message = ""): ConditionInput => ({ type: "Ready", status, reason, message });
const synced = (status: "True" | "False", reason: string, message = ""): ConditionInput => ({ type: "Synced", status, reason, message });

/** Ready as the findings show it: the observation, what afterObserve did, and the connection Secret. */
export function readyOf(found: Findings): ConditionInput | undefined {
  const { observed, after, unpublished } = found;
  if (observed === undefined) return undefined;
  if (after?.notReady !== undefined) return ready("False", after.notReady.reason, after.notReady.message);
  if (!observed.ready) return ready("False", observed.readyReason ?? R.Unavailable, observed.readyMessage ?? "");
  // Ready promises a usable Secret.
  if (unpublished !== undefined) return ready("False", unpublished.reason, unpublished.message);
  return ready("True", R.Available);
}

/** Synced for an observed object: in step, observed only, unfixable, or what afterObserve could not do. */
function syncedOf(found: Findings & { observed: Observed<unknown, unknown> }): ConditionInput {
  const { observed, after, observeOnly } = found;
  if (after?.notSynced !== undefined) return synced("False", after.notSynced.reason, after.notSynced.message);
  const unfixable = combined(observed.unfixable);
  if (observeOnly) {
    const differences = [observed.upToDate ? undefined : observed.diff, unfixable?.message].filter((d) => d !== undefined && d !== "");
    return synced("True", R.Observing, differences.length > 0 ? `differs from the spec (not changed: managementPolicy is Observe): ${differences.join("; ")}` : "");
  }
  if (unfixable !== undefined) return synced("False", unfixable.reason, unfixable.message);
  return synced("True", R.ReconcileSuccess);
}

/** The conditions to write for `outcome` (none to change: an empty list). */
export function conditionsOf(outcome: Outcome, found: Findings): ConditionInput[] {
  switch (outcome.type) {
    case "paused":
      return [synced("False", R.Paused, `reconciliation is paused by the annotation linode.operator.dev/paused: "true": nothing is created, changed or deleted in Linode or in Kubernetes${outcome.deleting ? " (the finalizer stays, so the resource is not deleted)" : ""} until it is removed`)];
    case "invalidSpec":
      return [synced("False", R.InvalidSpec, outcome.message)];
    case "held":
      return [ready("False", outcome.reason, outcome.message), synced("False", outcome.reason, outcome.message)];
    case "absent":
      return [ready("False", R.NotFound, "the cloud object to observe does not exist"), synced("False", R.NotFound, "managementPolicy is Observe and nothing was found to observe")];
    case "waiting":
      return [ready("False", outcome.deferral.reason, outcome.deferral.message), synced("True", R.ReconcileSuccess)];
    case "created":
      return [ready("False", R.Creating, "the cloud object is being created"), synced("True", R.ReconcileSuccess)];
    case "observed": {
      const { observed } = found;
      if (observed === undefined) throw new Error("an observed outcome without an observation");
      return [readyOf(found) ?? ready("False", R.Unavailable), syncedOf({ ...found, observed })];
    }
    case "recheck":
      return [];
    case "deleting":
      return [ready("False", R.Deleting, "waiting for the cloud object to be deleted")];
    case "failed": {
      // What the pass observed before it failed is the truth about the cloud object: written too.
      const observedReady = readyOf(found);
      const prior = observedReady !== undefined ? [observedReady] : [];
      return outcome.quiet ? prior : [...prior, synced("False", outcome.reason, outcome.message)];
    }
  }
}

/** Settled: nothing left this operator can do (an unfixable difference waits for the spec). */
export function settled(outcome: Outcome, found: Findings): boolean {
  if (outcome.type !== "observed" || found.observed === undefined) return false;
  const [r, s] = conditionsOf(outcome, found);
  return r?.status === "True" && found.observed.upToDate && (s?.status === "True" || combined(found.observed.unfixable) !== undefined);
}
