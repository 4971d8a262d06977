// linode_operator_build_info says which build runs: package.json's version, and the commit the
// bundle was built from (unknown from source).
import { readFile } from "node:fs/promises";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createOperatorMetrics } from "../../src/metrics/operator-metrics.ts";

describe("linode_operator_build_info", () => {
  it("is 1, labelled with package.json's version and the commit", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const registry = new Registry();
    createOperatorMetrics(registry, { defaultMetrics: false });
    const values = (await registry.getSingleMetric("linode_operator_build_info")?.get())?.values ?? [];
    expect(values).toEqual([{ labels: { version: pkg.version, commit: process.env.LINODE_OPERATOR_COMMIT ?? "unknown" }, value: 1 }]);
  });
});
