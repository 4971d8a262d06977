import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inline, renderMarkdown } from "../bench/report/markdown.ts";
import { renderReport } from "../bench/report/render.ts";
import type { BenchResult, Chart } from "../bench/report/result.ts";
import { renderChart } from "../bench/report/svg.ts";
import { formatNumber, niceAxis, tickLabels } from "../bench/report/ticks.ts";

/**
 * A small well-formedness check, enough for what renderChart writes: one root, balanced tags,
 * quoted and unique attributes, only the predefined or numeric entities, no stray `<` or `&`.
 * Returns the root element's name and attributes.
 */
function parseXml(xml: string): { root: string; attrs: Map<string, string> } {
  const stack: string[] = [];
  let i = 0;
  let root: { root: string; attrs: Map<string, string> } | undefined;
  const fail = (why: string): never => { throw new Error(`${why} at ${String(i)}: ${xml.slice(i, i + 60)}`); };
  const nameChar = (c: string | undefined): boolean => c !== undefined && (c === ":" || c === "_" || c === "-" || c === "." || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9"));
  const space = (c: string | undefined): boolean => c === " " || c === "\n" || c === "\t" || c === "\r";
  const readName = (): string => {
    const start = i;
    while (nameChar(xml[i])) i++;
    return i > start ? xml.slice(start, i) : fail("expected a name");
  };
  const checkText = (t: string): void => {
    for (let k = t.indexOf("&"); k !== -1; k = t.indexOf("&", k + 1)) {
      const end = t.indexOf(";", k);
      const entity = end === -1 ? "" : t.slice(k + 1, end);
      const numeric = entity.startsWith("#x") ? /^#x[0-9a-fA-F]+$/ : /^#[0-9]+$/;
      if (!["amp", "lt", "gt", "quot", "apos"].includes(entity) && !numeric.test(entity)) fail(`bad entity &${entity}`);
    }
    if (t.includes("<")) fail("raw < in text");
  };
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const text = xml.slice(i, lt === -1 ? xml.length : lt);
    checkText(text);
    if (stack.length === 0 && text.trim() !== "") fail("text outside the root");
    if (lt === -1) break;
    i = lt + 1;
    if (xml[i] === "/") {
      i++;
      const name = readName();
      while (space(xml[i])) i++;
      if (xml[i] !== ">") fail("unterminated end tag");
      if (stack.pop() !== name) fail(`</${name}> closes nothing open`);
      i++;
      continue;
    }
    const name = readName();
    const attrs = new Map<string, string>();
    for (;;) {
      const hadSpace = space(xml[i]);
      while (space(xml[i])) i++;
      if (xml[i] === ">" || xml.startsWith("/>", i)) break;
      if (!hadSpace) fail("attributes must be separated by space");
      const attr = readName();
      if (xml[i] !== "=") fail("attribute without a value");
      const quote = xml[i + 1];
      if (quote !== '"' && quote !== "'") fail("unquoted attribute");
      const end = xml.indexOf(quote ?? "", i + 2);
      if (end === -1) fail("unterminated attribute");
      const value = xml.slice(i + 2, end);
      checkText(value);
      if (attrs.has(attr)) fail(`duplicate attribute ${attr}`);
      attrs.set(attr, value);
      i = end + 1;
    }
    if (stack.length === 0) {
      if (root !== undefined) fail("second root element");
      root = { root: name, attrs };
    }
    if (xml[i] === ">") stack.push(name);
    i += xml[i] === ">" ? 1 : 2;
  }
  if (stack.length > 0) fail(`unclosed <${stack.join("> <")}>`);
  return root ?? fail("no root element");
}

const count = (s: string, sub: string): number => s.split(sub).length - 1;

describe("parseXml", () => {
  it("rejects what an XML parser would", () => {
    for (const bad of ["<a><b></a>", "<a>x & y</a>", "<a b=1/>", '<a b="1" b="2"/>', "<a/><b/>", "<a>", "text<a/>", '<a b="<"/>']) {
      expect(() => parseXml(bad), bad).toThrow();
    }
    expect(parseXml('<a x="&amp;&#38;"><b/>t &lt; &#x3c;</a>').root).toBe("a");
  });
});

describe("renderChart", () => {
  it("draws a line chart as well-formed SVG with escaped text, a legend and round ticks", () => {
    const svg = renderChart({
      kind: "line", title: `Latency <p99> & "tail"`, xLabel: "seconds", yLabel: "calls",
      series: [
        { name: "create", points: [[0, 0], [100, 4_000], [200, 9_000], [290, 11_500]] },
        { name: "delete & retry", points: [[0, 10], [150, 2_000], [300, 500]] },
      ],
    });
    const { root, attrs } = parseXml(svg);
    expect(root).toBe("svg");
    expect(attrs.get("xmlns")).toBe("http://www.w3.org/2000/svg");
    expect(attrs.get("viewBox")).toBe("0 0 720 360");
    expect(svg).toContain('fill="#ffffff"');
    expect(svg).toContain("Latency &lt;p99&gt; &amp; &quot;tail&quot;");
    expect(svg).not.toContain("<p99>");
    expect(svg).toContain(">create</text>");
    expect(svg).toContain(">delete &amp; retry</text>");
    for (const tick of ["0", "2k", "6k", "12k", "100", "300"]) expect(svg).toContain(`>${tick}</text>`);
    expect(svg).toContain(">seconds</text>");
    expect(count(svg, "<polyline")).toBe(2);
    expect(count(svg, "<circle")).toBe(7);
  });

  it("draws a bar chart grouped per category", () => {
    const svg = renderChart({
      kind: "bar", title: "Calls by class", yLabel: "calls", categories: ["list", "read", "write"],
      series: [{ name: "converge", values: [1_200_000, 1_500_000, 30_000] }, { name: "steady", values: [400, 0, 0] }],
    });
    expect(parseXml(svg).root).toBe("svg");
    expect(count(svg, "</rect>")).toBe(6);
    for (const s of [">converge</text>", ">steady</text>", ">list</text>", ">write</text>", ">1.2M</text>", ">500k</text>", ">1.5M</text>", ">2M</text>"]) expect(svg).toContain(s);
  });

  it("stays well-formed and finite on degenerate data", () => {
    const charts: Chart[] = [
      { kind: "line", title: "none", xLabel: "x", yLabel: "y", series: [] },
      { kind: "line", title: "empty", xLabel: "x", yLabel: "y", series: [{ name: "a", points: [] }] },
      { kind: "line", title: "one point", xLabel: "x", yLabel: "y", series: [{ name: "a", points: [[5, 7]] }] },
      { kind: "line", title: "zeros", xLabel: "x", yLabel: "y", series: [{ name: "a", points: [[0, 0], [1, 0]] }] },
      { kind: "line", title: "a gap", xLabel: "x", yLabel: "y", series: [{ name: "a", points: [[0, 1], [1, Number.NaN], [2, 3]] }] },
      { kind: "bar", title: "no categories", yLabel: "y", categories: [], series: [] },
      { kind: "bar", title: "zeros", yLabel: "y", categories: ["a", "b"], series: [{ name: "s", values: [0, 0] }] },
      { kind: "bar", title: "negative", yLabel: "y", categories: ["a", "b"], series: [{ name: "s", values: [-3, 17] }] },
      { kind: "line", title: "ten series", xLabel: "x", yLabel: "y", series: Array.from({ length: 10 }, (_, k) => ({ name: `s${String(k)}`, points: [[0, k], [1, k + 1]] as [number, number][] })) },
    ];
    for (const chart of charts) {
      const svg = renderChart(chart);
      expect(parseXml(svg).root, chart.title).toBe("svg");
      expect(svg, chart.title).not.toMatch(/NaN|Infinity/);
    }
    expect(renderChart(charts[0] as Chart)).toContain(">no data</text>");
    expect(count(renderChart(charts[2] as Chart), "<circle")).toBe(1);
    expect(count(renderChart(charts[4] as Chart), "<circle")).toBe(2);
    expect(renderChart(charts[7] as Chart)).toContain(">-5</text>");
  });
});

describe("ticks", () => {
  it("steps by 1, 2 or 5 × 10^k and labels compactly", () => {
    expect(niceAxis(0, 287).ticks).toEqual([0, 50, 100, 150, 200, 250, 300]);
    expect(niceAxis(0, 0.3).ticks).toEqual([0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]);
    expect(tickLabels(niceAxis(10_000, 10_200))).toEqual(["10k", "10.05k", "10.1k", "10.15k", "10.2k"]);
    expect([12_000, 1_234_567, 999.9, 0.5, -1_500].map((n) => formatNumber(n))).toEqual(["12k", "1.23M", "1k", "0.5", "-1.5k"]);
  });
});

const result = (name: string, over: Partial<BenchResult> = {}): BenchResult => ({
  name, title: `Title of ${name}`, command: `npm run bench:${name}`, ranAt: "2025-06-01T12:34:56.789Z", machine: "2 cores, Node v24.21.0",
  figures: [
    { label: "peak RSS", value: 166, unit: "MiB", target: "≤ 250 MiB", met: true },
    { label: "429 answers", value: 3, target: "0", met: false },
    { label: "all Ready after", value: 12.34567, unit: "s" },
  ],
  ...over,
});

describe("renderReport", () => {
  let dir = "";
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), "bench-report-")); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  const save = async (r: BenchResult): Promise<void> => {
    await mkdir(join(dir, "results"), { recursive: true });
    await writeFile(join(dir, "results", `${r.name}.json`), JSON.stringify(r, null, 2));
  };
  const snapshot = async (): Promise<Map<string, string>> => {
    const files = ["benchmarks.md", ...(await readdir(join(dir, "benchmarks"))).filter((f) => f.endsWith(".svg")).map((f) => `benchmarks/${f}`)];
    return new Map(await Promise.all(files.map(async (f): Promise<[string, string]> => [f, await readFile(join(dir, f), "utf8")])));
  };

  it("writes the page and the charts, in a fixed order, byte-identically on a second run", async () => {
    await save(result("node-balancer-calls", { notes: ["MALLOC_ARENA_MAX=2 and *stars*", "- not a nested list"] }));
    await save(result("scale-three-kinds", {
      tables: [{ title: "Calls | by kind", columns: ["kind", "calls"], rows: [["ManagedDatabase", 1234], ["NodeBalancer", 5]] }],
      charts: [
        { kind: "line", title: "RSS", xLabel: "s", yLabel: "MiB", series: [{ name: "RSS", points: [[0, 80], [10, 140]] }] },
        { kind: "bar", title: "Calls", yLabel: "calls", categories: ["list"], series: [{ name: "a", values: [3] }, { name: "b", values: [4] }] },
      ],
    }));
    await mkdir(join(dir, "benchmarks"), { recursive: true });
    await writeFile(join(dir, "benchmarks", "scale-three-kinds-7.svg"), "stale");

    const rendered = await renderReport(join(dir, "results"), dir);
    expect(rendered.charts).toEqual(["benchmarks/scale-three-kinds-0.svg", "benchmarks/scale-three-kinds-1.svg"]);
    const first = await snapshot();
    expect([...first.keys()].sort()).toEqual(["benchmarks.md", ...rendered.charts]);
    const md = first.get("benchmarks.md") ?? "";

    expect(md).toContain("real `linode-operator run` process");
    expect(md.indexOf("## Title of scale-three-kinds")).toBeLessThan(md.indexOf("## Title of node-balancer-calls"));
    expect(md).toContain("Ran 2025-06-01 12:34 UTC on 2 cores, Node v24.21.0");
    expect(md).toContain("```sh\nnpm run bench:scale-three-kinds\n```");
    expect(md).toContain("| Figure | Value | Target | Met? |");
    expect(md).toContain("| peak RSS | 166 MiB | ≤ 250 MiB | ✅ |");
    expect(md).toContain("| 429 answers | 3 | 0 | ❌ |");
    expect(md).toContain("| all Ready after | 12.346 s | — | — |");
    expect(md).toContain("### Calls \\| by kind");
    expect(md).toContain("| ManagedDatabase | 1,234 |");
    expect(md).toContain("![RSS](benchmarks/scale-three-kinds-0.svg)");
    expect(md).toContain("![Calls](benchmarks/scale-three-kinds-1.svg)");
    expect(md).toContain("- MALLOC\\_ARENA\\_MAX=2 and \\*stars\\*");
    expect(md).toContain("- \\- not a nested list");
    for (const f of rendered.charts) expect(parseXml(first.get(f) ?? "").root).toBe("svg");

    await renderReport(join(dir, "results"), dir);
    expect(await snapshot()).toEqual(first);
  });

  it("sums up every result's targets at the top: met, not met (missing data too) and the commit it ran at", () => {
    const md = renderMarkdown([
      result("scale-10k", { commit: "0123456789abcdef0123456789abcdef01234567" }),
      result("soak", { figures: [{ label: "RSS trend", value: "no data", unit: "MiB/h", target: "≤ 5", met: true }, { label: "lag", value: 3, target: "≤ 50", met: true }] }),
      result("emulator", { figures: [{ label: "requests", value: 10 }, { label: "an expectation", value: 3, target: "a few" }] }),
    ]);
    const glance = md.slice(md.indexOf("## Targets at a glance"), md.indexOf("<a id="));
    expect(glance).toContain("| [Title of scale-10k](#scale-10k) | 2025-06-01 12:34 UTC, 0123456 | 1 of 2 | 429 answers |");
    // A figure saved as met whose data is missing is not met.
    expect(glance).toContain("| [Title of soak](#soak) | 2025-06-01 12:34 UTC, not recorded | 1 of 2 | RSS trend |");
    // No target judged (an expectation with no verdict is not one): not listed.
    expect(glance).not.toContain("emulator");
  });

  it("puts unknown names after the known ones, alphabetically", () => {
    const md = renderMarkdown(["zeta", "alpha", "chaos-kill", "scale-10k"].map((n) => result(n)));
    const at = (n: string): number => md.indexOf(`## Title of ${n}`);
    const positions = ["scale-10k", "chaos-kill", "alpha", "zeta"].map(at);
    expect(positions[0]).toBeGreaterThan(-1);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it("names the file and the problem of a result it cannot read", async () => {
    await save(result("ok"));
    await writeFile(join(dir, "results", "bad.json"), JSON.stringify({ ...result("bad"), figures: [{ label: "x" }] }));
    await expect(renderReport(join(dir, "results"), dir)).rejects.toThrow(/bad\.json: not a benchmark result[\s\S]*figures/);
    await writeFile(join(dir, "results", "bad.json"), JSON.stringify(result("other")));
    await expect(renderReport(join(dir, "results"), dir)).rejects.toThrow(/bad\.json: its name is "other"/);
  });

  it("reads a NaN the JSON saved as null as a gap, not an error", async () => {
    const withNaN = result("scale-10k", {
      figures: [{ label: "p99", value: Number.NaN, unit: "s" }],
      charts: [{ kind: "line", title: "gap", xLabel: "x", yLabel: "y", series: [{ name: "a", points: [[0, 1], [1, Number.NaN], [2, 3]] }] }],
    });
    await save(withNaN);
    await renderReport(join(dir, "results"), dir);
    expect(await readFile(join(dir, "benchmarks.md"), "utf8")).toContain("| p99 | no data | — | — |");
    const svg = await readFile(join(dir, "benchmarks", "scale-10k-0.svg"), "utf8");
    expect(svg).toBe(renderChart(withNaN.charts?.[0] as Chart));
  });

  it("renders an empty report when there are no results yet", async () => {
    await renderReport(join(dir, "missing"), dir);
    expect(await readFile(join(dir, "benchmarks.md"), "utf8")).toContain("No results yet.");
  });

  it("escapes Markdown in plain text", () => {
    expect(inline("a|b <c> *d* `e` $f line\nbreak")).toBe("a\\|b \\<c\\> \\*d\\* \\`e\\` \\$f line break");
  });
});
