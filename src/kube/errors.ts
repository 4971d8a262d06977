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

/** Turns whatever client-node threw into a KubeApiError when it carries an HTTP status. */
export function toKubeError(err: unknown): unknown {
  if (err instanceof KubeApiError) return err;
  // client-node's Watch reports a refused watch as an Error with `statusCode` (and no body).
  const raw = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  const e = typeof raw.code !== "number" && typeof raw.statusCode === "number" ? { ...raw, code: raw.statusCode, message: raw.message } : raw;
  if (typeof e.code !== "number") return err;
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

export async function kubeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toKubeError(err);
  }
}
