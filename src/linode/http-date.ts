// The API's Date header: when it served an answer, on the API's clock (one-second resolution),
// which a caller compares with a record's `updated` instead of its own clock.

/** An HTTP Date header's time; undefined when absent, repeated or not a date. */
export function httpDate(v: string | string[] | undefined): number | undefined {
  if (typeof v !== "string") return undefined;
  const at = Date.parse(v);
  return Number.isFinite(at) ? at : undefined;
}
