// Outcomes a kind's external client reports to the generic reconciler. Resource modules
// translate Linode API errors into these, so the runtime never needs to know about Linode.

/** Bad input or a permanent refusal: report it, don't retry until the spec changes. */
export class TerminalError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = "TerminalError";
    this.reason = reason;
  }
}

/** Not possible yet (a state precondition, a rate limit): retry after the given delay, not an error. */
export class RetryAfterError extends Error {
  readonly reason: string;
  readonly delayMillis: number;
  /**
   * Nothing was sent: the client's own call budget had no call to spare in time. The cloud
   * object is as it was, so for an object with nothing waiting this is no news to report.
   */
  readonly unsent: boolean;
  constructor(reason: string, message: string, delayMillis: number, opts: { unsent?: boolean } = {}) {
    super(message);
    this.name = "RetryAfterError";
    this.reason = reason;
    this.delayMillis = delayMillis;
    this.unsent = opts.unsent ?? false;
  }
}

/**
 * The call was cancelled (the operator stopping, a deadline) before anything of it left the
 * process: the cloud object is as it was, so no one need wait for the call to land.
 */
export class NotSentError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.name = "NotSentError";
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
