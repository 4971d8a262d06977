// Errors as values the reconcilers can act on. Every failure of a client call is a
// LinodeError whose `kind` says what to do next; nothing else is thrown by the client.

export type LinodeErrorKind =
  /** Bad input, bad token, forbidden, or an unexpected status: don't retry until the spec changes. */
  | "terminal"
  /** The object does not exist (404). */
  | "notFound"
  /** The object's state does not allow it yet (e.g. "must be active", busy, backup in progress): retry later. */
  | "precondition"
  /** 429 or the client-side budget is exhausted: retry after `retryAfterMs`. */
  | "rateLimited"
  /** 5xx, timeouts, connection resets, a 2xx body that does not parse: retry with backoff. */
  | "transient"
  /** The caller's AbortSignal fired (shutdown): stop, don't retry. */
  | "cancelled";

export interface ApiErrorItem {
  reason: string;
  field?: string;
}

export interface LinodeErrorInit {
  kind: LinodeErrorKind;
  method: string;
  route: string;
  retryAfterMs?: number;
  cause?: unknown;
  /** Set by the transport only when no attempt of the request can have reached the API. */
  neverSent?: boolean;
}

export class LinodeError extends Error {
  readonly kind: LinodeErrorKind;
  readonly method: string;
  /** Route template, e.g. `/databases/mysql/instances/{instanceId}`: never carries ids or secrets. */
  readonly route: string;
  readonly retryAfterMs: number | undefined;
  /**
   * No attempt of the whole request can have reached the API (the client's own budget held it,
   * it was cancelled before being sent, or every connection was refused): nothing happened
   * there. False whenever in doubt, e.g. once any attempt was sent, even one that timed out.
   */
  readonly neverSent: boolean;

  constructor(message: string, init: LinodeErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "LinodeError";
    this.kind = init.kind;
    this.method = init.method;
    this.route = init.route;
    this.retryAfterMs = init.retryAfterMs;
    this.neverSent = init.neverSent ?? false;
  }
}

/** The API answered with a non-2xx status and (usually) its `{errors: [...]}` body. */
export class LinodeApiError extends LinodeError {
  readonly status: number;
  readonly errors: ApiErrorItem[];

  constructor(status: number, errors: ApiErrorItem[], init: Omit<LinodeErrorInit, "kind"> & { kind?: LinodeErrorKind }) {
    const kind = init.kind ?? classifyStatus(status, errors);
    const detail = errors.map((e) => (e.field ? `${e.field}: ${e.reason}` : e.reason)).join("; ");
    // A route without ids cannot be "not found" at a right base URL (a typo, or /v4 twice).
    const hint = status === 404 && !init.route.includes("{") ? " (no such endpoint: check the Linode API URL, e.g. https://api.linode.com/v4)" : "";
    super(`${init.method} ${init.route} -> ${status}${detail ? `: ${detail}` : ""}${hint}`, { ...init, kind });
    this.name = "LinodeApiError";
    this.status = status;
    this.errors = errors;
  }

  get reasons(): string[] {
    return this.errors.map((e) => e.reason);
  }

  get fields(): string[] {
    return this.errors.flatMap((e) => (e.field ? [e.field] : []));
  }
}

/** No HTTP answer: connection refused/reset, connect/headers/body timeout, or cancellation. */
export class LinodeTransportError extends LinodeError {
  /** undici / Node error code, e.g. UND_ERR_HEADERS_TIMEOUT, ECONNRESET, ABORT_ERR. */
  readonly code: string;
  /** True when the request provably never reached the server (safe to resend even a create). */
  readonly notSent: boolean;

  constructor(code: string, notSent: boolean, init: LinodeErrorInit) {
    super(`${init.method} ${init.route} failed: ${code}`, init);
    this.name = "LinodeTransportError";
    this.code = code;
    this.notSent = notSent;
  }
}

/**
 * A 2xx body that is not JSON or does not match the schema. Messages name paths, never values.
 * Transient: a truncated body or a proxy's page passes, and the spec cannot fix it anyway. The
 * request did happen, so only an idempotent one is resent (retry.ts).
 */
export class LinodeResponseError extends LinodeError {
  readonly status: number;
  readonly issues: string[];

  constructor(status: number, issues: string[], init: Omit<LinodeErrorInit, "kind">) {
    super(`${init.method} ${init.route} -> ${status}: unexpected response (${issues.slice(0, 5).join("; ")})`, { ...init, kind: "transient" });
    this.name = "LinodeResponseError";
    this.status = status;
    this.issues = issues;
  }
}

// Reasons the API gives when an operation is refused only because of the object's current
// state (spec status preconditions, "Linode busy.", snapshot limits that clear once older
// backups finish or are deleted). Everything else in a 400 is the caller's input.
const preconditionReasons: RegExp[] = [
  /\bmust be (?:in )?(?:an? )?(?:active|failed|degraded|running|ready|one of)/i,
  /\bstatus\b.*\b(?:must|required|not allowed|does not allow|cannot)\b/i,
  /\b(?:is|are) (?:currently )?(?:provisioning|updating|restoring|resuming|suspending|suspended|backing[ _]up|resizing|busy|not active|not ready)\b/i,
  /\bbusy\b/i,
  /\bcannot \w+(?: \w+)? while\b/i,
  /\bin progress\b/i,
  /\banother (?:backup|snapshot|operation)\b/i,
  /\b(?:maximum|at most|limit|no more than)(?: of)? \d+ (?:\w+ )?(?:snapshot|backup)s?\b/i,
  /\b(?:snapshot|backup)s?\b.*\b(?:limit|maximum)\b/i,
  /\bnot (?:yet )?(?:available|ready)\b/i,
  /\bunavailable at this time\b/i,
  /\btry again later\b/i,
];

export function isPreconditionReason(reason: string): boolean {
  return preconditionReasons.some((re) => re.test(reason));
}

export function classifyStatus(status: number, errors: ApiErrorItem[] = []): LinodeErrorKind {
  if (status === 404) return "notFound";
  if (status === 429) return "rateLimited";
  if (status === 408 || status >= 500) return "transient";
  if (status === 409) return "precondition";
  if (status === 400 || status === 422) {
    return errors.length > 0 && errors.every((e) => isPreconditionReason(e.reason)) ? "precondition" : "terminal";
  }
  return "terminal";
}

const notSentCodes = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const transientCodes = new Set([
  ...notSentCodes, "ECONNRESET", "EPIPE", "ETIMEDOUT", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED",
  "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_RESPONSE_STATUS_CODE", "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "UND_ERR_INFO",
]);

/** Where a request stood when an error arrived, which decides `neverSent`. */
export interface SendProgress {
  /** An earlier attempt of the same request may have reached the API. */
  sentBefore: boolean;
  /** This attempt was handed to the connection pool. */
  dispatched: boolean;
}

// Unknown progress claims nothing: an error is never-sent only when the transport knows.
const unknownProgress: SendProgress = { sentBefore: true, dispatched: true };

/** Wraps whatever undici threw into a LinodeTransportError (or rethrows our own errors unchanged). */
export function transportError(err: unknown, method: string, route: string, signal?: AbortSignal, progress = unknownProgress): LinodeError {
  if (err instanceof LinodeError) return err;
  const code = errorCode(err);
  if (signal?.aborted === true || code === "ABORT_ERR" || code === "UND_ERR_ABORTED" || isAbortName(err)) {
    // Cancelled once handed to the pool, it may already be on the wire.
    const notSent = !progress.dispatched;
    return new LinodeTransportError("ABORT_ERR", notSent, { kind: "cancelled", method, route, cause: err, neverSent: notSent && !progress.sentBefore });
  }
  const kind: LinodeErrorKind = transientCodes.has(code) || code === "UNKNOWN" ? "transient" : "terminal";
  const notSent = !progress.dispatched || notSentCodes.has(code);
  return new LinodeTransportError(code, notSent, { kind, method, route, cause: err, neverSent: notSent && !progress.sentBefore });
}

function isAbortName(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");
}

function errorCode(err: unknown): string {
  if (err !== null && typeof err === "object") {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const cause = (err as { cause?: unknown }).cause;
    if (cause !== undefined && cause !== err) return errorCode(cause);
  }
  return "UNKNOWN";
}

export interface ErrorClassification {
  kind: LinodeErrorKind;
  /** How long to wait before trying again, when the API said so (429) or the client knows. */
  retryAfterMs?: number;
  status?: number;
  /** First API reason, for a condition message; never secret material. */
  reason?: string;
  message: string;
}

/** Classifies anything a client call may throw, for reconcilers that catch `unknown`. */
export function classifyError(err: unknown): ErrorClassification {
  if (err instanceof LinodeApiError) {
    return withoutUndefined({ kind: err.kind, retryAfterMs: err.retryAfterMs, status: err.status, reason: err.errors[0]?.reason, message: err.message });
  }
  if (err instanceof LinodeResponseError) return { kind: err.kind, status: err.status, message: err.message };
  if (err instanceof LinodeError) return withoutUndefined({ kind: err.kind, retryAfterMs: err.retryAfterMs, message: err.message });
  const wrapped = transportError(err, "?", "?");
  return { kind: wrapped.kind === "terminal" ? "transient" : wrapped.kind, message: err instanceof Error ? err.message : String(err) };
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export const isNotFound = (err: unknown): boolean => err instanceof LinodeError && err.kind === "notFound";
export const isPrecondition = (err: unknown): boolean => err instanceof LinodeError && err.kind === "precondition";
export const isRateLimited = (err: unknown): boolean => err instanceof LinodeError && err.kind === "rateLimited";
export const isTransient = (err: unknown): boolean => err instanceof LinodeError && err.kind === "transient";
export const isTerminal = (err: unknown): boolean => err instanceof LinodeError && err.kind === "terminal";
export const isCancelled = (err: unknown): boolean => err instanceof LinodeError && err.kind === "cancelled";

/** True only when the API never saw any attempt of the failed request: nothing there changed. */
export const wasNeverSent = (err: unknown): boolean => err instanceof LinodeError && err.neverSent;
