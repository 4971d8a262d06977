// Kubernetes API failures as values: classified by HTTP status, never by message text.

export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.name = "KubeApiError";
    this.code = code;
    this.reason = reason;
  }
}

/**
 * Only an HTTP status makes an answer. A DOMException has a numeric `code` too: 23 for the
 * request's timeout, 20 for an abort. Read as a status, a timed-out request became a refusal,
 * and a waiting operator gave up on a slow API server instead of waiting for it.
 */
const isHttpStatus = (code: unknown): code is number => typeof code === "number" && code >= 100 && code <= 599;

/** Turns whatever client-node threw into a KubeApiError when it carries an HTTP status. */
export function toKubeError(err: unknown): unknown {
  if (err instanceof KubeApiError) return err;
  // client-node's Watch reports a refused watch as an Error with `statusCode` (and no body).
  const raw = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  const e = !isHttpStatus(raw.code) && isHttpStatus(raw.statusCode) ? { ...raw, code: raw.statusCode, message: raw.message } : raw;
  if (!isHttpStatus(e.code)) return err;
  let reason = "";
  let message = typeof e.message === "string" ? e.message : `HTTP ${e.code}`;
  if (typeof e.body === "string") {
    try {
      const status = JSON.parse(e.body) as { reason?: string; message?: string };
      reason = status.reason ?? "";
      message = status.message ?? message;
    } catch { /* not a Status body */ }
  }
  return new KubeApiError(e.code, reason, message);
}

/**
 * An error's message with its causes ("fetch failed: connect ECONNREFUSED 127.0.0.1:6443"), for
 * logs: undici and Node wrap the reason a connection failed in `cause`, and the outer message
 * alone says nothing. At most five levels; a cause that repeats its parent's message is skipped.
 */
export function errorChain(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const message = e instanceof KubeApiError ? `${String(e.code)} ${e.reason}: ${e.message}` : e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e);
    if (message !== "" && parts.at(-1) !== message) parts.push(message);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ");
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.code === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409;
/** The API server refused the object as invalid (its schema or a CEL rule of its CRD). */
export const isInvalid = (err: unknown): boolean => err instanceof KubeApiError && err.code === 422;
export const isGone = (err: unknown): boolean => err instanceof KubeApiError && err.code === 410;
export const isTooManyRequests = (err: unknown): boolean => err instanceof KubeApiError && err.code === 429;

/** No answer by a call's deadline: a transport failure (no HTTP status), as a timeout is. */
export class KubeCallDeadlineError extends Error {
  constructor(deadlineMillis: number) {
    super(`no answer from the Kubernetes API server in ${String(deadlineMillis / 1000)} s (the request's own timeout did not end it)`);
    this.name = "TimeoutError";
  }
}

/**
 * A request's abort signal ends it at the client's timeout; the deadline here is for a path that
 * signal does not reach, which left a list pending for 14 minutes in a bench. The caller gets an
 * error and goes on; the request itself is left to its signal.
 */
export async function kubeCall<T>(fn: () => Promise<T>, deadlineMillis: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new KubeCallDeadlineError(deadlineMillis)); }, deadlineMillis);
  });
  try {
    return await Promise.race([fn(), deadline]);
  } catch (err) {
    throw toKubeError(err);
  } finally {
    clearTimeout(timer);
  }
}
