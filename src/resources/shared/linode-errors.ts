// Linode client failures → the runtime's outcomes: terminal input/permission errors become
// a condition with the API's reason (no retry until the spec changes), state preconditions
// and rate limits become a timed wait, and transient failures go to the queue's backoff.
import { classifyError, LinodeApiError, wasNeverSent } from "../../linode/index.ts";
import { ConditionReasons, NotSentError, RetryAfterError, TerminalError } from "../../runtime/contract.ts";
import { KindTimings } from "./constants.ts";
import { SharedReasons } from "./reasons.ts";

/**
 * A 401 is an unknown, expired or revoked token (CredentialsInvalid: retried when the credentials
 * Secret changes), unless it names a missing OAuth scope, which is a permission (Forbidden).
 */
function terminalReason(status: number | undefined, message: string): string {
  if (status === 401) return /not authorized|scope/i.test(message) ? ConditionReasons.Forbidden : SharedReasons.CredentialsInvalid;
  return status === 403 ? ConditionReasons.Forbidden : ConditionReasons.ApiRejected;
}

export function translateLinodeError(err: unknown, doing: string): unknown {
  const c = classifyError(err);
  const what = `${doing}: ${c.reason ?? c.message}`;
  switch (c.kind) {
    case "terminal":
      return new TerminalError(terminalReason(c.status, c.message), `${doing}: ${c.message}`);
    case "precondition":
      return new RetryAfterError(ConditionReasons.Waiting, what, KindTimings.preconditionWaitMillis);
    case "rateLimited":
      // No HTTP status: the client's own budget held the call back (it was never sent), not a 429.
      return c.status === undefined && wasNeverSent(err)
        ? new RetryAfterError(ConditionReasons.RateLimited, `${doing}: waiting for the operator's share of the Linode API rate limit`, Math.max(KindTimings.rateLimitMinMillis, c.retryAfterMs ?? KindTimings.rateLimitDefaultMillis), { unsent: true })
        : new RetryAfterError(ConditionReasons.RateLimited, `${doing}: rate limited by the Linode API`, Math.max(KindTimings.rateLimitMinMillis, c.retryAfterMs ?? KindTimings.rateLimitDefaultMillis));
    case "cancelled":
      return wasNeverSent(err) ? new NotSentError(`${doing}: cancelled before it was sent`, { cause: err }) : err;
    default:
      return err;
  }
}

/** Runs a Linode call and rethrows its failure as a runtime outcome. */
export async function linodeCall<T>(doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateLinodeError(err, doing);
  }
}

/** The API's answer to a create or update whose label another object of the account has. */
export function isLabelTaken(err: unknown): boolean {
  return err instanceof LinodeApiError && err.status === 400 && err.errors.some((e) => e.field === "label" && /unique|already|taken|in use/i.test(e.reason));
}

/**
 * A label taken by a cloud object this resource did not create: never adopted, never changed.
 * `what` names the kind of object ("database"), `idField` the spec field that adopts one on purpose.
 */
export function labelInUse(what: string, idField: string, label: string, id?: number): TerminalError {
  const which = id !== undefined ? ` (id ${String(id)})` : "";
  return new TerminalError(SharedReasons.LabelInUse, `a ${what} labelled ${label} already exists in this Linode account${which} and this resource did not create it; it is neither adopted nor changed: set spec.${idField}${id !== undefined ? `: ${String(id)}` : ""} to manage it on purpose, or choose another spec.label`);
}
