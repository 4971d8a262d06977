// Every request the API routes (GETs too), newest last, in a fixed ring: when a figure is slow
// (a drift put back late), what the operator asked for and when shows where the time went. The
// mutation log keeps writes only, with who sent them; this keeps the order of everything.

export interface RequestRecord {
  /** Wall-clock milliseconds when it arrived and when it was answered. */
  receivedAt: number;
  answeredAt: number;
  method: string;
  /** As asked, with its query (a list's page). */
  path: string;
  status: number;
  userAgent: string;
}

/** The request log keeps this many entries (the oldest go first). */
export const REQUEST_LOG_SIZE = 20_000;

export class RequestLog {
  private readonly ring: (RequestRecord | undefined)[];
  private next = 0;
  private count = 0;

  constructor(size = REQUEST_LOG_SIZE) {
    this.ring = new Array<RequestRecord | undefined>(size);
  }

  add(r: RequestRecord): void {
    this.ring[this.next] = r;
    this.next = (this.next + 1) % this.ring.length;
    this.count = Math.min(this.count + 1, this.ring.length);
  }

  /** Oldest first. */
  entries(): RequestRecord[] {
    const out: RequestRecord[] = [];
    const start = (this.next - this.count + this.ring.length) % this.ring.length;
    for (let i = 0; i < this.count; i++) {
      const r = this.ring[(start + i) % this.ring.length];
      if (r !== undefined) out.push(r);
    }
    return out;
  }
}
