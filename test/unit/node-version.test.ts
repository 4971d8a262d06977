// The command refuses an older Node.js in one line (exit 2) instead of failing deep inside a
// dependency; the oldest it accepts is what package.json's engines say.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { MIN_NODE, nodeAtLeast } from "../../src/cli/main.ts";

describe("the Node.js version check", () => {
  it("agrees with package.json's engines", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { engines: { node: string } };
    expect(`>=${MIN_NODE.replace(/\.0$/, "")}`).toBe(pkg.engines.node);
  });

  it("compares versions numerically, part by part", () => {
    expect(nodeAtLeast("v22.19.0")).toBe(true);
    expect(nodeAtLeast("v22.20.1")).toBe(true);
    expect(nodeAtLeast("v24.0.0")).toBe(true);
    expect(nodeAtLeast("v22.18.9")).toBe(false);
    expect(nodeAtLeast("v20.20.2")).toBe(false);
    expect(nodeAtLeast("v9.99.0")).toBe(false);
    expect(nodeAtLeast(process.version)).toBe(true);
  });
});
