// Figures that move by themselves (a NodeBalancer's transfer, a database's restore window) as
// gauges per resource: unknown figures are not exported, a resource gone takes its series with it.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ObjectFigures } from "../../src/resources/shared/object-figures.ts";

describe("ObjectFigures", () => {
  it("exports each resource's known figures, one gauge per figure or by a label; forgets the gone", async () => {
    const existing = new Set(["ns/web", "ns/api"]);
    const figures = new ObjectFigures((namespace, name) => existing.has(`${namespace}/${name}`));
    const registry = new Registry();
    figures.gaugeBy(registry, "t_transfer", "transfer", "direction", { in: "in", total: "all" });
    figures.gauge(registry, "t_oldest", "oldest", "oldest");
    figures.set("ns", "web", 7, { in: 1.5, total: 4, oldest: null });
    figures.set("ns", "api", 8, { in: undefined, total: Number.NaN, oldest: 1_700_000_000 });
    figures.set("ns", "none", 9, { in: null });
    expect(figures.size).toBe(2);
    let text = await registry.metrics();
    expect(text).toContain('t_transfer{namespace="ns",name="web",id="7",direction="in"} 1.5');
    expect(text).toContain('t_transfer{namespace="ns",name="web",id="7",direction="all"} 4');
    expect(text).not.toContain('name="api",id="8",direction');
    expect(text).toContain('t_oldest{namespace="ns",name="api",id="8"} 1700000000');
    expect(text).not.toContain('t_oldest{namespace="ns",name="web"');
    // The figures of the moment replace the last ones; a resource gone (Retain, Observe) disappears at the next scrape.
    figures.set("ns", "web", 7, { in: 2, total: 5 });
    existing.delete("ns/api");
    text = await registry.metrics();
    expect(text).toContain('t_transfer{namespace="ns",name="web",id="7",direction="in"} 2');
    expect(text).not.toContain('name="api"');
    expect(figures.size).toBe(1);
    figures.forget("ns", "web");
    expect(figures.size).toBe(0);
    expect(await registry.metrics()).not.toContain('name="web"');
  });
});
