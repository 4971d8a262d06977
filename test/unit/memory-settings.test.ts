// The V8 settings that keep the operator small are the program's own: set at start when the
// process was started without them (e.g. `node dist/cli/main.js run`), left alone when the #!
// line or NODE_OPTIONS gave them, or when asked to compare against V8's defaults.
import { describe, expect, it } from "vitest";
import { applyMemorySettings } from "../../src/cli/main.ts";

describe("memory settings", () => {
  it("are applied by the program when the start did not give them", () => {
    expect(applyMemorySettings([], {})).toEqual(["--optimize-for-size", "--heap-growing-percent=10"]);
  });
  it("are left to the #! line or NODE_OPTIONS when they gave them", () => {
    expect(applyMemorySettings(["--max-semi-space-size=2", "--heap-growing-percent=10"], {})).toEqual([]);
    expect(applyMemorySettings(["--max-semi-space-size=4"], {})).toEqual(["--heap-growing-percent=10"]);
    expect(applyMemorySettings(["--optimize-for-size"], {})).toEqual(["--heap-growing-percent=10"]);
    expect(applyMemorySettings([], { NODE_OPTIONS: "--max-old-space-size=512 --max_semi_space_size=8 --heap-growing-percent=25" })).toEqual([]);
  });
  it("are not applied when asked for V8's defaults (to compare)", () => {
    expect(applyMemorySettings([], { LINODE_OPERATOR_V8_DEFAULTS: "1" })).toEqual([]);
  });
});
