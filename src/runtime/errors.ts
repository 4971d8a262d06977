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
  constructor(reason: string, message: string, delayMillis: number) {
    super(message);
    this.name = "RetryAfterError";
    this.reason = reason;
    this.delayMillis = delayMillis;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
