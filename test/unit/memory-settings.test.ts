// The V8 settings that keep the operator small are the program's own: set at start when the
// process was started without them (e.g. `node dist/cli/main.js run`), left alone when the #!
// line or NODE_OPTIONS gave them, or when asked to compare against V8's defaults.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { applyMemorySettings, MEMORY_FLAGS, relaunchFor } from "../../src/cli/main.ts";

describe("memory settings", () => {
  it("are applied by the program when the start did not give them", () => {
    expect(applyMemorySettings([], {})).toEqual(["--optimize-for-size", "--heap-growing-percent=10"]);
  });
  it("are left to the #! line or NODE_OPTIONS when they gave them", () => {
    expect(applyMemorySettings(["--optimize-for-size", "--heap-growing-percent=10"], {})).toEqual([]);
    expect(applyMemorySettings(["--max-semi-space-size=2", "--heap-growing-percent=10"], {})).toEqual([]);
    expect(applyMemorySettings(["--max-semi-space-size=4"], {})).toEqual(["--heap-growing-percent=10"]);
    expect(applyMemorySettings(["--optimize-for-size"], {})).toEqual(["--heap-growing-percent=10"]);
    expect(applyMemorySettings([], { NODE_OPTIONS: "--max-old-space-size=512 --max_semi_space_size=8 --heap-growing-percent=25" })).toEqual([]);
  });
  it("are not applied when asked for V8's defaults (to compare)", () => {
    expect(applyMemorySettings([], { LINODE_OPERATOR_V8_DEFAULTS: "1" })).toEqual([]);
  });
});

describe("a start without the #! line's settings", () => {
  it("starts again with the flags and arenas it lacks, marked so that it does not again", () => {
    const again = relaunchFor(["--max-old-space-size=400"], { PATH: "/bin" });
    expect(again?.nodeArgs).toEqual(["--optimize-for-size", "--heap-growing-percent=10", "--max-old-space-size=400"]);
    expect(again?.env).toEqual({ PATH: "/bin", MALLOC_ARENA_MAX: "2", LINODE_OPERATOR_RELAUNCHED: "1" });
    expect(relaunchFor(again?.nodeArgs ?? [], again?.env ?? {})).toBeUndefined();
  });
  it("adds only what is missing: a user's arenas and young generation stand", () => {
    expect(relaunchFor(["--max-semi-space-size=8"], { MALLOC_ARENA_MAX: "4" })?.nodeArgs).toEqual(["--heap-growing-percent=10", "--max-semi-space-size=8"]);
    expect(relaunchFor(["--optimize-for-size", "--heap-growing-percent=25"], {})?.env.MALLOC_ARENA_MAX).toBe("2");
    expect(relaunchFor([], { MALLOC_ARENA_MAX: "2", NODE_OPTIONS: "--max_semi_space_size=4 --heap-growing-percent=10" })).toBeUndefined();
  });
  it("adds what the #! line gives: the same flags and arenas", async () => {
    const line = (await readFile(new URL("../../src/cli/main.ts", import.meta.url), "utf8")).split("\n")[0] ?? "";
    expect(line.split(/\s+/)).toEqual(expect.arrayContaining(["MALLOC_ARENA_MAX=2", ...MEMORY_FLAGS]));
    expect(relaunchFor([], {})?.env.MALLOC_ARENA_MAX).toBe("2");
  });
  it("does not start again as the #! line started it, under an inspector, or when asked for V8's defaults", () => {
    expect(relaunchFor(["--inspect=127.0.0.1:0"], {})).toBeUndefined();
    expect(relaunchFor([], { NODE_OPTIONS: "--inspect-brk" })).toBeUndefined();
    expect(relaunchFor([...MEMORY_FLAGS], { MALLOC_ARENA_MAX: "2" })).toBeUndefined();
    expect(relaunchFor([], { LINODE_OPERATOR_V8_DEFAULTS: "1" })).toBeUndefined();
  });
});
