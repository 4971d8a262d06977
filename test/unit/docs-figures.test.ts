// Every figure README.md and CHANGELOG.md cite is one a saved benchmark result backs (issue 45):
// a number with a measurement unit stands in a sentence that links its result's section of
// docs/benchmarks.md (docs/benchmarks/results/<name>.json, rendered there under <a id="name">),
// or it is a setting, a limit or a bench's workload, listed below with why. In a released
// CHANGELOG section a figure may instead name the commit it was measured at ("at 1a2b3c4"), as
// its saved result may since have been replaced. Links go to a section, never to a figure's row,
// so they survive reruns; each linked section must exist.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** Units of what a run measures: times, memory, throughput, counts of calls and the like, ratios. */
const UNIT = String.raw`(?:ms|s|seconds?|min|minutes?|h|hours?|[KMG]iB(?:\/h)?|[KMG]B|(?:req|requests)\/s|×|x|%|(?:(?:status|Kubernetes|Linode|API|backup) )?(?:calls|lists|reads|writes|updates|POSTs|tests))`;
/**
 * A number (1,469 or 2.98) and a unit right after it; not part of a version, an address or a
 * name, and not an HTTP status in the plural ("429s": the prose writes seconds as "429 s").
 */
const FIGURE = new RegExp(String.raw`(?<![\w.,/:-])(?![1-5]\d\ds\b)\d[\d,]*(?:\.\d+)?\s?${UNIT}(?![\w/])`, "g");
/** A link to a section of the benchmark report. */
const SECTION_LINK = /\]\(docs\/benchmarks\.md#[\w-]+\)/;

interface NotMeasured { file: "README.md" | "CHANGELOG.md"; text: string; why: string }
/**
 * Numbers with a unit that no run measured. `text` is the phrase as it reads (line breaks as
 * spaces); each must still occur, so an entry goes when its phrase does.
 */
const NOT_MEASURED: NotMeasured[] = [
  { file: "README.md", text: "at most 100 lists a minute per token", why: "the API's documented paginated limit at the default share, a limit" },
  { file: "README.md", text: "(at most 64 KiB)", why: "the size limit of an allow-list ConfigMap the operator reads" },
  { file: "README.md", text: "(its token, at most 4 KiB;", why: "the size limit of a token Secret the operator reads" },
  { file: "README.md", text: "a token at most 4 KiB, a certificate and key 64 KiB, an allow list 64 KiB", why: "the size limits of what the operator reads by name" },
  { file: "README.md", text: "(at most 512 KiB;", why: "the size limit of a connection Secret the operator keeps" },
  { file: "CHANGELOG.md", text: "a token larger than 4 KiB, a certificate and key over 64 KiB, or an allow list over 64 KiB", why: "the size limits of what the operator reads by name" },
  { file: "README.md", text: "a window other than 4 hours", why: "the current platform's only maintenance window length (the API's)" },
  { file: "CHANGELOG.md", text: "a window other than 4 hours", why: "the current platform's only maintenance window length (the API's)" },
  { file: "README.md", text: "weekly, 4 hours only", why: "the current platform's only maintenance window (the API's)" },
  { file: "README.md", text: "weekly/4 hours", why: "the current platform's only maintenance window (the API's)" },
  { file: "README.md", text: "(30 min by default)", why: "6 drift polls at the default drift window, a setting" },
  { file: "README.md", text: "spread over 5 minutes", why: "how the operator spreads its first statistics reads, a setting" },
  { file: "CHANGELOG.md", text: "spread over 5 minutes", why: "how the operator spreads its first statistics reads, a setting" },
  { file: "CHANGELOG.md", text: "(was every 5 minutes;", why: "the statistics interval's old default, a setting" },
  { file: "README.md", text: "released 5 minutes after its last use", why: "when an unused token's client is released, a setting" },
  { file: "CHANGELOG.md", text: "abandoned after 60 s and never sent a second time within 120 s", why: "the create's timeout and its no-resend window, settings" },
  { file: "README.md", text: "(p99 4 × the median by default;", why: "the emulator's --latency-ms default tail, a setting" },
  { file: "README.md", text: "run at a 150 ms median", why: "the benchmarks' default API latency (BENCH_LATENCY_MS), a setting" },
  { file: "CHANGELOG.md", text: "run at a 150 ms median", why: "the benchmarks' default API latency (BENCH_LATENCY_MS), a setting" },
  { file: "CHANGELOG.md", text: "the Leases of shards dead for more than 10 minutes", why: "how long the leader keeps a dead shard's Lease (DEAD_LEASE_KEPT_MILLIS), a setting" },
  { file: "CHANGELOG.md", text: "listed by every replica every 2 s", why: "the leases' retry period, a setting" },
  { file: "CHANGELOG.md", text: "at most 100 items or 4 ms at a time", why: "how much of a page the reader reads between two turns of the event loop (ITEMS_PER_SLICE, SLICE_MILLIS), settings" },
  { file: "README.md", text: "by more than 20 MiB (50 MiB after a restart among them)", why: "the bounds test/integration/tenant-memory.test.ts asserts on every run, not a measurement" },
];

/** A CHANGELOG section's heading for a release already made: "## 0.1.0", not "## 0.2.0 (unreleased)". */
const RELEASED = /^## \d+\.\d+\.\d+(?!.*unreleased)/;
/** A sentence naming the commit its figure was measured at. */
const AT_COMMIT = /\bat (?=[0-9]*[a-f])[0-9a-f]{7,40}\b/;

interface Sentence { text: string; line: number; released: boolean }

/**
 * The file as the units a figure and its link must share: a sentence of a paragraph or list item
 * (its lines joined), a table row, a heading, a line of a code block.
 */
function sentences(markdown: string): Sentence[] {
  const out: Sentence[] = [];
  let paragraph: string[] = [];
  let start = 0;
  let released = false;
  let fenced = false;
  const flush = (): void => {
    if (paragraph.length > 0) out.push(...splitSentences(paragraph.join(" ")).map((text) => ({ text, line: start, released })));
    paragraph = [];
  };
  for (const [i, raw] of markdown.split("\n").entries()) {
    const line = raw.trim();
    if (line.startsWith("```")) { flush(); fenced = !fenced; continue; }
    if (fenced || line.startsWith("|") || line.startsWith("#")) {
      flush();
      if (line.startsWith("## ")) released = RELEASED.test(line);
      out.push({ text: line, line: i + 1, released });
      continue;
    }
    if (line === "" || /^(?:[-*]|\d+\.)\s/.test(line)) flush();
    if (line === "") continue;
    if (paragraph.length === 0) start = i + 1;
    paragraph.push(line);
  }
  flush();
  return out;
}

/** Splits at a sentence's end (". " before a capital, a backtick, a bracket), not after "e.g.". */
function splitSentences(text: string): string[] {
  const pieces = text.split(/(?<=[.!?])\s+(?=[A-Z`*[(])/);
  const merged: string[] = [];
  for (const piece of pieces) {
    const last = merged.at(-1);
    if (last !== undefined && /\b(?:e\.g|i\.e|etc|vs|cf)\.$/.test(last)) merged[merged.length - 1] = `${last} ${piece}`;
    else merged.push(piece);
  }
  return merged;
}

interface Unbacked { line: number; figure: string; sentence: string }

/** The figures of `file` that no section link, commit or NOT_MEASURED entry accounts for; and the entries never used. */
function unbackedFigures(file: NotMeasured["file"], markdown: string): { unbacked: Unbacked[]; unused: NotMeasured[] } {
  const entries = NOT_MEASURED.filter((e) => e.file === file);
  const used = new Set<NotMeasured>();
  const unbacked: Unbacked[] = [];
  for (const s of sentences(markdown)) {
    if (SECTION_LINK.test(s.text)) continue;
    if (file === "CHANGELOG.md" && s.released && AT_COMMIT.test(s.text)) continue;
    // Blank out what is not a measurement, keeping offsets, so a figure beside it still counts.
    let rest = s.text;
    for (const e of entries) {
      rest = rest.replaceAll(e.text, (m) => { used.add(e); return " ".repeat(m.length); });
    }
    for (const m of rest.matchAll(FIGURE)) unbacked.push({ line: s.line, figure: m[0], sentence: s.text });
  }
  return { unbacked, unused: entries.filter((e) => !used.has(e)) };
}

const report = read("docs/benchmarks.md");
const anchors = new Set([...report.matchAll(/<a id="([\w-]+)"><\/a>/g)].map((m) => m[1]));

describe.each(["README.md", "CHANGELOG.md"] as const)("%s", (file) => {
  const markdown = read(file);

  it("cites a measured figure only in a sentence that links its saved result's section of docs/benchmarks.md", () => {
    const { unbacked } = unbackedFigures(file, markdown);
    expect(unbacked.map((u) => `${file}:${String(u.line)}: "${u.figure}" in: ${u.sentence}`)).toEqual([]);
  });

  it("lists as not measured only phrases it still has", () => {
    expect(unbackedFigures(file, markdown).unused.map((e) => e.text)).toEqual([]);
  });

  it("links only sections docs/benchmarks.md has, each a saved result's", () => {
    const linked = [...new Set([...markdown.matchAll(/docs\/benchmarks\.md#([\w-]+)/g)].map((m) => m[1] ?? ""))];
    expect(linked.filter((name) => !anchors.has(name))).toEqual([]);
    expect(linked.filter((name) => !existsSync(new URL(`../../docs/benchmarks/results/${name}.json`, import.meta.url)))).toEqual([]);
  });
});

describe("what the figures check finds", () => {
  const check = (text: string): string[] => unbackedFigures("README.md", text).unbacked.map((u) => u.figure);

  it("a figure with its unit, unless its sentence links a section of the report", () => {
    expect(check("It holds about 90 MiB at rest and answers 1,969 req/s.\n")).toEqual(["90 MiB", "1,969 req/s"]);
    expect(check("Converged at 1.03× the floor, 2.98 MiB/h, 9.5 minutes, 36 %, 35 status writes, 20 × 429.\n"))
      .toEqual(["1.03×", "2.98 MiB/h", "9.5 minutes", "36 %", "35 status writes", "20 ×"]);
    expect(check("It holds 93 MiB at rest ([measured](docs/benchmarks.md#scale-three-kinds)).\n")).toEqual([]);
    expect(check("It holds 93 MiB at rest. Read [the report](docs/benchmarks.md#scale-three-kinds).\n")).toEqual(["93 MiB"]);
  });

  it("a figure on the line before its link, in one sentence, is backed; in a paragraph of its own it is not", () => {
    expect(check("Setting up takes about 24 minutes,\nmost of it building ([docs/benchmarks.md](docs/benchmarks.md#first-run)).\n")).toEqual([]);
    expect(check("Setting up takes about 24 minutes.\n\nMost of it is building ([docs/benchmarks.md](docs/benchmarks.md#first-run)).\n")).toEqual(["24 minutes"]);
  });

  it("versions, addresses, ids, flags without a unit and status codes in the plural are not figures", () => {
    expect(check("Node.js ≥ 22.19 on x86-64, 2xx and 5xx answers, 429s, 10.0.0.21:53, Kubernetes 1.31, --poll-ready-seconds 300.\n")).toEqual([]);
  });

  it("a released CHANGELOG section may name the commit a figure was measured at; an unreleased one may not", () => {
    const changelog = (heading: string): string[] => unbackedFigures("CHANGELOG.md", `${heading}\n\n- Restarts cost 513 calls at 4d6d6b1.\n`).unbacked.map((u) => u.figure);
    expect(changelog("## 0.1.0")).toEqual([]);
    expect(changelog("## 0.2.0 (unreleased)")).toEqual(["513 calls"]);
    expect(unbackedFigures("README.md", "## 0.1.0\n\nRestarts cost 513 calls at 4d6d6b1.\n").unbacked.map((u) => u.figure)).toEqual(["513 calls"]);
  });
});
