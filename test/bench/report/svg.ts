// The report's plots as standalone SVG, written by hand: a chart library would be a dependency
// for two kinds of plot, and hand-written output is byte-stable, so an unchanged result leaves
// an unchanged file in the diff.
import type { Chart } from "./result.ts";
import {
  HEIGHT, WIDTH, axisLines, colorOf, documentStart, escapeXml, fit, leftMargin, legend, noData, px, text, xAxis, yAxis,
  type Frame,
} from "./svg-parts.ts";
import { extent, formatNumber, niceAxis, type Axis } from "./ticks.ts";

type LineChart = Extract<Chart, { kind: "line" }>;
type BarChart = Extract<Chart, { kind: "bar" }>;
type Point = [number, number];

/** Past this many points a series' markers would merge into a thick line, so it gets none. */
const MARKERS_UP_TO = 40;
const RIGHT_MARGIN = 24;
const MAX_LABELLED_BARS = 20;

export function renderChart(chart: Chart): string {
  const body = chart.kind === "line" ? lineChart(chart) : barChart(chart);
  return [...documentStart(chart.title), ...body, "</svg>", ""].join("\n");
}

function lineChart(c: LineChart): string[] {
  const all = c.series.flatMap((s) => s.points).filter(isFinitePoint);
  const xs = niceAxis(...extent(all.map((p) => p[0]), false), 6);
  const ys = niceAxis(...extent(all.map((p) => p[1]), true));
  const { f, head } = frame(ys, c.series.map((s) => s.name), "line", HEIGHT - 50);
  const x = scale(xs, f.left, f.right);
  const y = scale(ys, f.bottom, f.top);
  const out = [...head, ...yAxis(ys, f, c.yLabel, y), ...xAxis(xs, f, c.xLabel, x), axisLines(f)];
  if (all.length === 0) out.push(noData(f));
  c.series.forEach((s, i) => {
    const { color, dashed } = colorOf(i);
    // A point JSON could not carry (NaN is saved as null) breaks the line rather than joining across it.
    const runs = splitRuns(s.points);
    const markers = runs.flat().length <= MARKERS_UP_TO;
    for (const run of runs) {
      if (run.length > 1) {
        const points = run.map(([px0, py0]) => `${px(x(px0))},${px(y(py0))}`).join(" ");
        out.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round"${dashed ? ` stroke-dasharray="6 3"` : ""}/>`);
      }
      if (markers || run.length === 1) {
        for (const [vx, vy] of run) {
          out.push(`<circle cx="${px(x(vx))}" cy="${px(y(vy))}" r="3" fill="${color}"><title>${escapeXml(`${s.name}: ${String(vx)}, ${String(vy)}`)}</title></circle>`);
        }
      }
    }
  });
  return out;
}

function barChart(c: BarChart): string[] {
  const n = c.categories.length;
  const values = c.series.flatMap((s) => s.values.slice(0, n));
  // Values printed on the bars while they fit (a bar about 25 px wide), with headroom above
  // the tallest for its label; the tooltips always have them.
  const labelled = n * c.series.length <= MAX_LABELLED_BARS;
  const ys = niceAxis(...extent(labelled ? [...values, Math.max(0, ...values.filter(Number.isFinite)) * 1.08] : values, true));
  const { f, head } = frame(ys, c.series.map((s) => s.name), "box", HEIGHT - 36);
  const y = scale(ys, f.bottom, f.top);
  const out = [...head, ...yAxis(ys, f, c.yLabel, y), axisLines(f)];
  if (!values.some((v) => Number.isFinite(v))) out.push(noData(f));
  const group = (f.right - f.left) / Math.max(1, n);
  const bar = (group * 0.8) / Math.max(1, c.series.length);
  c.categories.forEach((category, k) => {
    out.push(text(f.left + group * (k + 0.5), f.bottom + 16, fit(category, group - 4, 11), `text-anchor="middle" font-size="11"`));
    c.series.forEach((s, j) => {
      const v = s.values[k];
      if (v === undefined || !Number.isFinite(v)) return;
      const x0 = f.left + group * (k + 0.1) + bar * j;
      const top = Math.min(y(v), y(0));
      const what = c.series.length > 1 ? `${s.name}, ${category}` : category;
      out.push(`<rect x="${px(x0)}" y="${px(top)}" width="${px(bar)}" height="${px(Math.abs(y(v) - y(0)))}" fill="${colorOf(j).color}"><title>${escapeXml(`${what}: ${String(v)}`)}</title></rect>`);
      if (labelled) out.push(text(x0 + bar / 2, v < 0 ? y(v) + 13 : y(v) - 4, formatNumber(v), `text-anchor="middle" font-size="10"`));
    });
  });
  return out;
}

/** The plot area under the title and legend, right of the y tick labels. */
function frame(ys: Axis, names: string[], swatch: "line" | "box", bottom: number): { f: Frame; head: string[] } {
  const left = leftMargin(ys);
  const right = WIDTH - RIGHT_MARGIN;
  const lg = legend(names.map((name, i) => ({ name, ...colorOf(i) })), left, right, swatch);
  return { f: { left, right, top: lg.height > 0 ? 44 + lg.height : 44, bottom }, head: lg.svg };
}

function scale(axis: Axis, from: number, to: number): (v: number) => number {
  return (v) => from + ((v - axis.lo) / (axis.hi - axis.lo)) * (to - from);
}

function isFinitePoint(p: Point): boolean {
  return Number.isFinite(p[0]) && Number.isFinite(p[1]);
}

function splitRuns(points: Point[]): Point[][] {
  const runs: Point[][] = [[]];
  for (const p of points) {
    if (isFinitePoint(p)) runs[runs.length - 1]?.push(p);
    else runs.push([]);
  }
  return runs.filter((r) => r.length > 0);
}
