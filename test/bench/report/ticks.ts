// Axis arithmetic for the plots: a domain that holds the data, ticks on 1/2/5 × 10^k, and
// compact labels (12k, 1.2M) that stay distinct from one tick to the next.

export interface Axis { lo: number; hi: number; ticks: number[]; step: number }

/** Smallest and largest finite value; a flat or empty set is widened so the axis has a length. */
export function extent(values: number[], includeZero: boolean): [number, number] {
  const finite = values.filter((v) => Number.isFinite(v));
  let lo = finite.length > 0 ? Math.min(...finite) : 0;
  let hi = finite.length > 0 ? Math.max(...finite) : 0;
  if (includeZero) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
  if (lo === hi) {
    if (lo === 0) return [0, 1];
    // Centre a lone value, but never push a non-negative axis below zero.
    const half = Math.abs(lo) / 2;
    return [lo >= 0 ? Math.max(0, lo - half) : lo - half, hi + half];
  }
  return [lo, hi];
}

/** Ticks covering [lo, hi], about `target` of them, on a 1, 2 or 5 step (the d3 thresholds). */
export function niceAxis(lo: number, hi: number, target = 5): Axis {
  if (!(hi > lo)) [lo, hi] = extent([lo, hi], false);
  const rough = (hi - lo) / target;
  const mag = 10 ** Math.floor(Math.log10(rough));
  const r = rough / mag;
  const step = (r >= Math.sqrt(50) ? 10 : r >= Math.sqrt(10) ? 5 : r >= Math.sqrt(2) ? 2 : 1) * mag;
  // Rounded to the step's decimals: 0.1 * 3 must print as 0.3, not 0.30000000000000004.
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const round = (v: number): number => Number(v.toFixed(decimals)) + 0;
  const first = Math.floor(lo / step);
  const last = Math.ceil(hi / step);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(round(i * step));
  return { lo: ticks[0] ?? lo, hi: ticks[ticks.length - 1] ?? hi, ticks, step };
}

const units: [number, string][] = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

/**
 * 12000 → "12k", 1234567 → "1.23M". With `step` (the tick spacing) the decimals follow the
 * step instead, so neighbouring ticks never print alike (10k, 10.05k, 10.1k).
 */
export function formatNumber(n: number, step?: number): string {
  if (!Number.isFinite(n)) return String(n);
  // Rounded before the unit is picked, so 999.9 becomes "1k" rather than "1000".
  const v = step === undefined ? Number(n.toPrecision(3)) : n;
  const [div, suffix] = units.find(([d]) => Math.abs(v) >= d) ?? [1, ""];
  const text = step === undefined
    ? String(Number((v / div).toPrecision(3)))
    : (v / div).toFixed(Math.min(20, Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9))));
  return `${trimZeros(text)}${suffix}`;
}

export function tickLabels(axis: Axis): string[] {
  return axis.ticks.map((t) => formatNumber(t, axis.step));
}

function trimZeros(s: string): string {
  const t = s.includes(".") && !s.includes("e") ? s.replace(/\.?0+$/, "") : s;
  return t === "-0" ? "0" : t;
}
