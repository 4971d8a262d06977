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
    createOperatorMetrics(registry, { defaultMetrics: false, operator: "ops/linode-operator" });
    const values = (await registry.getSingleMetric("linode_operator_build_info")?.get())?.values ?? [];
    expect(values).toEqual([{ labels: { version: pkg.version, commit: process.env.LINODE_OPERATOR_COMMIT ?? "unknown", operator: "ops/linode-operator" }, value: 1 }]);
  });

  it("the standard process and Node.js metrics keep their standard names, and the leader gauge names its install", async () => {
    const registry = new Registry();
    const metrics = createOperatorMetrics(registry, { operator: "ops/linode-operator" });
    metrics.leader.set(1);
    const text = await registry.metrics();
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
    expect(text).not.toContain("linode_operator_process_");
    expect(text).toContain('linode_operator_leader{operator="ops/linode-operator"} 1');
  });
});
