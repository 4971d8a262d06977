// The API's timestamps: UTC without a zone designator (`2024-10-03 20:48:05` or with a T).
export const parseApiTime = (s: string): number => Date.parse(/([zZ]|[+-]\d\d:\d\d)$/.test(s) ? s : `${s.replace(" ", "T")}Z`);

/** Whole seconds between a record's `updated` second and a read's for that read to have seen every change up to `updated` (one of them for the API servers' clocks). */
const CLOCK_MARGIN_SECONDS = 2;

/**
 * Whether the API served a read (its Date header's time) at least CLOCK_MARGIN_SECONDS whole
 * seconds after the second of a record's `updated`: then a change that read missed would have
 * moved `updated` to a later second. Both times are the API's own; the margin allows for its
 * servers' clocks to differ by up to a second. A read with no Date header is never served after.
 */
export function servedSecondsAfter(servedAt: number | undefined, updated: string): boolean {
  if (servedAt === undefined) return false;
  const updatedAt = parseApiTime(updated);
  if (!Number.isFinite(updatedAt)) return false;
  return Math.floor(servedAt / 1000) - Math.floor(updatedAt / 1000) >= CLOCK_MARGIN_SECONDS;
}
