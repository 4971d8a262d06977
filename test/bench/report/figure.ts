// A figure whose data never arrived (a metric absent, a process gone, a ratio over nothing) is
// "no data": saved and shown as such and, when it has a target, not met. Decided here only, so
// no benchmark can call a target met because a count it never read defaulted to 0.
import type { Figure } from "./result.ts";

export const NO_DATA = "no data";

/** Undefined, null, NaN or ±Infinity (a ratio over nothing): a value that was never measured. */
export function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === NO_DATA || (typeof value === "number" && !Number.isFinite(value));
}

/**
 * The one place a figure's missing data becomes "no data": its value is saved as such and,
 * when it has a target, it is not met whatever the caller computed (a comparison against a
 * default 0 would say met). `met` may be a test of the value, which is then only asked of a
 * number that was measured.
 */
export function figureOf(label: string, value: number | string | undefined, unit?: string, target?: string, met?: boolean | ((value: number) => boolean)): Figure {
  const missing = isMissing(value);
  const judged = missing ? (target !== undefined ? false : undefined)
    : typeof met === "function" ? typeof value === "number" && met(value) : met;
  return {
    label, value: missing || value === undefined ? NO_DATA : value,
    ...(unit !== undefined ? { unit } : {}), ...(target !== undefined ? { target } : {}), ...(judged !== undefined ? { met: judged } : {}),
  };
}

