// Linode client failures → the runtime's outcomes: terminal input/permission errors become
// a condition with the API's reason (no retry until the spec changes), state preconditions
// and rate limits become a timed wait, and transient failures go to the queue's backoff.
import { classifyError } from "../../linode/index.ts";
import { Reasons } from "../../runtime/conditions.ts";
import { RetryAfterError, TerminalError } from "../../runtime/errors.ts";

const PRECONDITION_WAIT_MILLIS = 10_000;

export function translateLinodeError(err: unknown, doing: string): unknown {
  const c = classifyError(err);
  const what = `${doing}: ${c.reason ?? c.message}`;
  switch (c.kind) {
    case "terminal":
      return new TerminalError(c.status === 401 || c.status === 403 ? Reasons.Forbidden : Reasons.ApiRejected, `${doing}: ${c.message}`);
    case "precondition":
      return new RetryAfterError(Reasons.Waiting, what, PRECONDITION_WAIT_MILLIS);
    case "rateLimited":
      return new RetryAfterError(Reasons.RateLimited, `${doing}: rate limited by the Linode API`, Math.max(1_000, c.retryAfterMs ?? 5_000));
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
