// The pieces every plot shares: the document around it, axes with gridlines, the legend, and
// text that fits. Text widths are estimates (no font metrics without a browser): generous
// enough that labels do not collide in the fonts GitHub renders with.
import { tickLabels, type Axis } from "./ticks.ts";

export const WIDTH = 720;
export const HEIGHT = 360;
/**
 * Okabe & Ito's colour-blind safe palette, yellow last: it is the faintest on white, so only an
 * eighth series gets it. Series past eight repeat the colours, dashed.
 */
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"] as const;
const INK = "#333333";
const GRID = "#e3e3e3";

export interface Frame { left: number; right: number; top: number; bottom: number }
export interface LegendItem { name: string; color: string; dashed: boolean }

export function colorOf(i: number): { color: string; dashed: boolean } {
  return { color: PALETTE[i % PALETTE.length] ?? INK, dashed: i >= PALETTE.length };
}

/** Escapes for text and attribute values, dropping the control characters XML 1.0 forbids. */
export function escapeXml(s: string): string {
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x20 && ch !== "\t" && ch !== "\n" && ch !== "\r") continue;
    out += ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : ch === "'" ? "&apos;" : ch;
  }
  return out;
}

/** Coordinates to a tenth of a pixel: smaller files and no float noise in the output. */
export function px(n: number): string {
  return String(Math.round(n * 10) / 10 + 0);
}

export function textWidth(s: string, fontSize: number): number {
  return [...s].length * fontSize * 0.6;
}

/** Cuts text to `maxWidth` with an ellipsis. */
export function fit(s: string, maxWidth: number, fontSize: number): string {
  const chars = [...s];
  const max = Math.max(1, Math.floor(maxWidth / (fontSize * 0.6)));
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join("")}…`;
}

export function text(x: number, y: number, s: string, attrs = ""): string {
  return `<text x="${px(x)}" y="${px(y)}"${attrs === "" ? "" : ` ${attrs}`}>${escapeXml(s)}</text>`;
}

/** The opening (white background, so it reads the same on GitHub's dark theme) and the title. */
export function documentStart(title: string): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${String(WIDTH)}" height="${String(HEIGHT)}" viewBox="0 0 ${String(WIDTH)} ${String(HEIGHT)}" role="img" aria-label="${escapeXml(title)}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="${INK}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${String(WIDTH)}" height="${String(HEIGHT)}" fill="#ffffff"/>`,
    text(WIDTH / 2, 24, fit(title, WIDTH - 32, 15), `text-anchor="middle" font-size="15" font-weight="600" fill="#111111"`),
  ];
}

/** Room for the widest y tick label and the rotated axis label beside it. */
export function leftMargin(y: Axis): number {
  return Math.max(56, 34 + Math.max(...tickLabels(y).map((l) => textWidth(l, 11))));
}

/** Legend rows under the title, wrapped to the plot's width; returns the height they take. */
export function legend(items: LegendItem[], left: number, right: number, swatch: "line" | "box"): { svg: string[]; height: number } {
  if (items.length < 2) return { svg: [], height: 0 };
  const svg: string[] = [];
  let x = left;
  let row = 0;
  for (const item of items) {
    const name = fit(item.name, 220, 12);
    const w = 22 + textWidth(name, 12) + 16;
    if (x > left && x + w > right) { x = left; row++; }
    const y = 46 + row * 18;
    svg.push(swatch === "line"
      ? `<line x1="${px(x)}" y1="${px(y - 4)}" x2="${px(x + 16)}" y2="${px(y - 4)}" stroke="${item.color}" stroke-width="2.5"${item.dashed ? ` stroke-dasharray="5 3"` : ""}/>`
      : `<rect x="${px(x + 3)}" y="${px(y - 9)}" width="10" height="10" fill="${item.color}"/>`);
    svg.push(text(x + 22, y, name));
    x += w;
  }
  return { svg, height: (row + 1) * 18 };
}

/** Horizontal gridlines, tick labels and the rotated label of the y axis. */
export function yAxis(axis: Axis, f: Frame, label: string, y: (v: number) => number): string[] {
  const labels = tickLabels(axis);
  const out = axis.ticks.map((t, i) => [
    `<line x1="${px(f.left)}" y1="${px(y(t))}" x2="${px(f.right)}" y2="${px(y(t))}" stroke="${t === 0 ? "#9a9a9a" : GRID}" stroke-width="1"/>`,
    text(f.left - 6, y(t) + 4, labels[i] ?? "", `text-anchor="end" font-size="11"`),
  ].join(""));
  const cy = (f.top + f.bottom) / 2;
  out.push(text(18, cy, fit(label, f.bottom - f.top, 12), `text-anchor="middle" transform="rotate(-90 18 ${px(cy)})"`));
  return out;
}

/** Vertical gridlines, tick labels and the label of a numeric x axis. */
export function xAxis(axis: Axis, f: Frame, label: string, x: (v: number) => number): string[] {
  const labels = tickLabels(axis);
  const out = axis.ticks.map((t, i) => [
    `<line x1="${px(x(t))}" y1="${px(f.top)}" x2="${px(x(t))}" y2="${px(f.bottom)}" stroke="${GRID}" stroke-width="1"/>`,
    text(x(t), f.bottom + 16, labels[i] ?? "", `text-anchor="middle" font-size="11"`),
  ].join(""));
  out.push(text((f.left + f.right) / 2, f.bottom + 38, fit(label, f.right - f.left, 12), `text-anchor="middle"`));
  return out;
}

/** The axis lines, drawn last so gridlines never cover them. */
export function axisLines(f: Frame): string {
  return `<path d="M${px(f.left)} ${px(f.top)}V${px(f.bottom)}H${px(f.right)}" fill="none" stroke="#666666" stroke-width="1"/>`;
}

export function noData(f: Frame): string {
  return text((f.left + f.right) / 2, (f.top + f.bottom) / 2, "no data", `text-anchor="middle" font-size="14" fill="#888888"`);
}
