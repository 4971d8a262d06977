// Bounded retries with full-jitter exponential backoff. Which failures are retried is
// decided here in one place so every endpoint behaves the same.
import { LinodeError, LinodeTransportError } from "./errors.ts";

export interface RetryPolicy {
  /** Total attempts including the first (1 = no retries). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking for a longer wait than this is handed back to the caller instead of slept on. */
  maxRateLimitWaitMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRateLimitWaitMs: 30_000,
};

/** Full jitter (AWS architecture blog): uniform in [0, min(max, base * 2^attempt)]. */
export function backoffDelay(attempt: number, policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Whether a failed attempt may be sent again. `idempotent` requests (GET, PUT, DELETE) may
 * be resent after any transient failure. A create or action (POST) is resent only when the
 * server provably did not act on it: a 429 refusal, or a connection that never opened.
 * A POST whose response was lost may have happened, and one answered 2xx with a body that
 * does not parse (a LinodeResponseError) did happen: the caller decides.
 */
export function isRetryable(err: LinodeError, idempotent: boolean): boolean {
  if (err.kind === "rateLimited") return true;
  if (err.kind !== "transient") return false;
  if (idempotent) return true;
  return err instanceof LinodeTransportError && err.notSent;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}
