// Emulated time. Every timestamp and every state transition reads this clock, never
// Date.now(), so tests can run a 30-minute provisioning in milliseconds (timeScale) or
// freeze time (timeScale 0) and step it through the admin endpoint.
export interface ClockState {
  now: number;
  timeScale: number;
}

export class Clock {
  #anchorEmulated: number;
  #anchorReal: number;
  #scale: number;

  constructor(opts: { start?: number; timeScale?: number } = {}) {
    this.#anchorReal = Date.now();
    this.#anchorEmulated = opts.start ?? this.#anchorReal;
    this.#scale = opts.timeScale ?? 1;
  }

  now(): number {
    return Math.floor(this.#anchorEmulated + (Date.now() - this.#anchorReal) * this.#scale);
  }

  get timeScale(): number {
    return this.#scale;
  }

  /** Moves emulated time forward; negative values are refused so transitions never un-happen. */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError("cannot move the clock backwards");
    this.#rebase();
    this.#anchorEmulated += ms;
    return this.now();
  }

  setTimeScale(scale: number): void {
    if (!(scale >= 0)) throw new RangeError("timeScale must be >= 0");
    this.#rebase();
    this.#scale = scale;
  }

  set(ms: number): void {
    if (ms < this.now()) throw new RangeError("cannot move the clock backwards");
    this.#rebase();
    this.#anchorEmulated = ms;
  }

  state(): ClockState {
    return { now: this.now(), timeScale: this.#scale };
  }

  #rebase(): void {
    const now = this.now();
    this.#anchorReal = Date.now();
    this.#anchorEmulated = now;
  }
}

/** The API's timestamp format: UTC, seconds precision, no zone suffix. */
export function apiTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

export const DAY_MS = 86_400_000;
