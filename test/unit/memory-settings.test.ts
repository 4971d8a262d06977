// The V8 setting that keeps the operator small is the program's own: set at start when the
// process was started without it (e.g. `node dist/cli/main.js run`), left alone when the #!
// line or NODE_OPTIONS gave it, or when asked to compare against V8's defaults.
import { describe, expect, it } from "vitest";
import { applyMemorySettings } from "../../src/cli/main.ts";

describe("memory settings", () => {
  it("are applied by the program when the start did not give them", () => {
    expect(applyMemorySettings([], {})).toBe(true);
  });
  it("are left to the #! line or NODE_OPTIONS when they gave them", () => {
    expect(applyMemorySettings(["--optimize-for-size"], {})).toBe(false);
    expect(applyMemorySettings([], { NODE_OPTIONS: "--max-old-space-size=512 --optimize-for-size" })).toBe(false);
  });
  it("are not applied when asked for V8's defaults (to compare)", () => {
    expect(applyMemorySettings([], { LINODE_OPERATOR_V8_DEFAULTS: "1" })).toBe(false);
  });
});
