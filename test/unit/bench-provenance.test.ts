// Every saved benchmark result says what produced it: the commit (dirty or not), the flags it
// was started with and the machine; results saved before these were recorded still render.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderMarkdown } from "../bench/report/markdown.ts";
import { benchLatency, latencyFlag } from "../bench/bench-latency.ts";
import { commit, flags, machine, type BenchResult } from "../bench/report/result.ts";
import { parseResult } from "../bench/report/schema.ts";

const git = async (dir: string, ...args: string[]): Promise<string> =>
  (await promisify(execFile)("git", ["-C", dir, "-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], { encoding: "utf8" })).stdout.trim();

describe("commit", () => {
  let dir = "";
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), "bench-commit-")); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it("is HEAD, with +dirty while the checkout has changes, and unknown outside a checkout", async () => {
    expect(await commit(dir)).toBe("unknown");
    await git(dir, "init", "-q");
    await writeFile(join(dir, "a.txt"), "a\n");
    await git(dir, "add", "a.txt");
    await git(dir, "commit", "-q", "-m", "a");
    const head = await git(dir, "rev-parse", "HEAD");
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(await commit(dir)).toBe(head);
    await writeFile(join(dir, "b.txt"), "untracked\n");
    expect(await commit(dir)).toBe(`${head}+dirty`);
  });
});

describe("flags and machine", () => {
  it("keeps the arguments after the script and every BENCH_* variable as set", () => {
    const env = { BENCH_API_SHARE: "0.1", BENCH_UNLIMITED: "1", PATH: "/usr/bin", HOME: "/root", OPERATOR_NODE_OPTIONS: "--max-old-space-size=128", NOT_BENCH_X: "y" };
    expect(flags(["/usr/bin/node", "test/bench/scale.ts", "200", "40", "60"], env)).toEqual({
      argv: ["200", "40", "60"], env: { BENCH_API_SHARE: "0.1", BENCH_UNLIMITED: "1", OPERATOR_NODE_OPTIONS: "--max-old-space-size=128" },
    });
    expect(flags(["/usr/bin/node", "test/bench/soak.ts"], {})).toEqual({ argv: [], env: {} });
  });

  it("records the API latency the bench's emulator answered with: 150 ms median by default, BENCH_LATENCY_MS to change or turn it off", () => {
    expect(latencyFlag(benchLatency({}))).toBe("150,600");
    expect(latencyFlag(benchLatency({ BENCH_LATENCY_MS: "100,900" }))).toBe("100,900");
    expect(latencyFlag(benchLatency({ BENCH_LATENCY_MS: "0" }))).toBe("0");
    expect(() => benchLatency({ BENCH_LATENCY_MS: "slow" })).toThrow(/--latency-ms/);
    // Recorded even when defaulted; a bench without an emulator records none.
    expect(flags(["/usr/bin/node", "test/bench/scale.ts"], {}, "150,600")).toEqual({ argv: [], env: { BENCH_LATENCY_MS: "150,600" } });
    expect(flags(["/usr/bin/node", "test/bench/scale.ts"], { BENCH_LATENCY_MS: "0" }, "0")).toEqual({ argv: [], env: { BENCH_LATENCY_MS: "0" } });
    expect(flags(["/usr/bin/node", "test/bench/first-run.ts"], {}, undefined)).toEqual({ argv: [], env: {} });
  });

  it("records the machine as data", () => {
    const m = machine();
    expect(m.cores).toBeGreaterThan(0);
    expect(m.memoryGiB).toBeGreaterThan(0);
    expect(m.cpuModel).not.toBe("");
    expect(m.node).toBe(process.version);
  });
});

describe("the page", () => {
  const base = { name: "soak", title: "Soak", command: "npm run bench:soak", ranAt: "2026-11-27T10:00:00.000Z", figures: [{ label: "x", value: 1 }] };

  it("shows each result's commit, flags and machine", () => {
    const result: BenchResult = parseResult(JSON.stringify({
      ...base, commit: "0123456789abcdef0123456789abcdef01234567+dirty",
      flags: { argv: ["1000", "200", "300", "120"], env: { BENCH_API_SHARE: "0.5" } },
      machine: { cores: 2, cpuModel: "AMD EPYC 7B13", memoryGiB: 7.8, node: "v24.21.0" },
    }), "soak.json");
    const page = renderMarkdown([result]);
    expect(page).toContain("Ran 2026-11-27 10:00 UTC on 2 cores (AMD EPYC 7B13), 7.8 GiB memory, Node v24.21.0; commit 0123456789abcdef0123456789abcdef01234567+dirty; flags BENCH\\_API\\_SHARE=0.5 1000 200 300 120:");
    const plain = renderMarkdown([parseResult(JSON.stringify({ ...base, commit: "abc", flags: { argv: [], env: {} }, machine: { cores: 2, cpuModel: "x", memoryGiB: 4, node: "v24.21.0" } }), "soak.json")]);
    expect(plain).toContain("; commit abc; no flags (the defaults):");
  });

  it("reads an older result and says what it did not record", () => {
    const old = parseResult(JSON.stringify({ ...base, machine: "2 cores, Node v24.21.0" }), "soak.json");
    expect(renderMarkdown([old])).toContain("Ran 2026-11-27 10:00 UTC on 2 cores, Node v24.21.0 (memory and CPU model not recorded); commit not recorded; flags not recorded:");
  });
});
