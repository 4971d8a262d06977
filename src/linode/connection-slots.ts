// At most as many requests are handed to undici as its pool has connections. A request that
// waits for a connection waits here, where cancelling it provably sends nothing: once handed to
// undici's own queue, a cancelled request may or may not have been written, so a create
// cancelled there (an operator stopping mid-pass) has to be treated as possibly made, and the
// next owner of the object waits out the create grace for it.

export class ConnectionSlots {
  private free: number;
  /** Waiting requests, first come first served; each is handed a slot by `release`. */
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`connection slots: ${String(size)} is not a positive integer`);
    this.free = size;
  }

  /** Requests waiting for a connection. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with a slot, or rejects with the signal's reason (holding none) when it aborts first. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const granted = (): void => {
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = (): void => {
        const i = this.waiting.indexOf(granted);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason as Error);
      };
      this.waiting.push(granted);
      signal?.addEventListener("abort", aborted, { once: true });
    });
  }

  /** Hands the slot to the first waiting request, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.free++;
  }
}
