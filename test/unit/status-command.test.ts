// `status`'s command line as kubectl reads its own, the kinds' names as the CRDs give them, ages
// as kubectl prints them, and colour only for a terminal.
import { readFile } from "node:fs/promises";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { kindDefinitions } from "../../src/resources/index.ts";
import { humanDuration } from "../../src/status/age.ts";
import { parseStatusArgs } from "../../src/status/args.ts";
import { resolveKind } from "../../src/status/kind-names.ts";
import { paintFor, renderObject, table } from "../../src/status/render-text.ts";
import { crdFiles } from "../harness/crds.ts";

describe("status command line", () => {
  it("reads <kind>/<name> or <kind> <name> with kubectl's flags", () => {
    expect(parseStatusArgs(["linodedb/orders", "-n", "team-a", "-o", "json"])).toMatchObject({ target: { kind: "linodedb", name: "orders" }, namespace: "team-a", output: "json", allNamespaces: false });
    expect(parseStatusArgs(["nb", "web", "--namespace=x", "--context", "kind-dev", "--kubeconfig", "/k"])).toMatchObject({ target: { kind: "nb", name: "web" }, namespace: "x", context: "kind-dev", kubeconfig: "/k" });
    expect(parseStatusArgs(["-A"])).toMatchObject({ allNamespaces: true, output: "text", events: 10 });
    expect(parseStatusArgs([]).target).toBeUndefined();
  });

  it("refuses what kubectl would refuse, saying what is wrong", () => {
    expect(() => parseStatusArgs(["orders"])).toThrow(/<kind>\/<name>/);
    expect(() => parseStatusArgs(["a", "b", "c"])).toThrow(/one object at a time/);
    expect(() => parseStatusArgs(["linodedb/Orders"])).toThrow(/not an object name/);
    expect(() => parseStatusArgs(["-o", "yaml"])).toThrow(/--output/);
    expect(() => parseStatusArgs(["linodedb/x", "-A"])).toThrow(/-A lists/);
    expect(() => parseStatusArgs(["--bogus"])).toThrow();
  });

  it("every name the CRDs give a kind resolves to it, as do the hyphenated kind and the kind with its group", async () => {
    const files = await crdFiles();
    expect(files.length).toBe(kindDefinitions.length);
    for (const file of files) {
      const crd = parse(await readFile(file, "utf8")) as { spec: { group: string; names: { kind: string; plural: string; singular: string; shortNames: string[] } } };
      const { kind, plural, singular, shortNames } = crd.spec.names;
      for (const name of [kind, kind.toUpperCase(), plural, singular, ...shortNames, `${plural}.${crd.spec.group}`]) expect(resolveKind(name, kindDefinitions)?.kind, name).toBe(kind);
    }
    expect(resolveKind("managed-database", kindDefinitions)?.kind).toBe("ManagedDatabase");
    expect(resolveKind("node-balancer", kindDefinitions)?.kind).toBe("NodeBalancer");
    expect(resolveKind("pods", kindDefinitions)).toBeUndefined();
  });
});

describe("ages as kubectl prints them (apimachinery's HumanDuration)", () => {
  it.each([
    [-2, "<invalid>"], [-1, "0s"], [0, "0s"], [59, "59s"], [119, "119s"], [120, "2m"], [125, "2m5s"], [600, "10m"], [179 * 60, "179m"],
    [3 * 3600, "3h"], [3 * 3600 + 300, "3h5m"], [8 * 3600, "8h"], [47 * 3600, "47h"], [48 * 3600, "2d"], [50 * 3600, "2d2h"], [8 * 86400, "8d"],
    [2 * 365 * 86400, "2y"], [(2 * 365 + 3) * 86400, "2y3d"], [8 * 365 * 86400, "8y"],
  ])("%i s is %s", (seconds, printed) => {
    expect(humanDuration(seconds * 1000)).toBe(printed);
  });
});

describe("text output", () => {
  it("colours only a terminal, and never with NO_COLOR or TERM=dumb", () => {
    expect(paintFor({ isTTY: true }, {}).good("True")).toBe("\u001b[32mTrue\u001b[0m");
    expect(paintFor({ isTTY: false }, {}).good("True")).toBe("True");
    expect(paintFor({}, {}).bad("False")).toBe("False");
    expect(paintFor({ isTTY: true }, { NO_COLOR: "1" }).good("True")).toBe("True");
    expect(paintFor({ isTTY: true }, { TERM: "dumb" }).good("True")).toBe("True");
  });

  it("aligns columns by what shows, not by colour codes", () => {
    const p = paintFor({ isTTY: true }, {});
    expect(table([["A", "B"], [p.good("True"), "x"], ["False", "y"]], "").map((l) => stripVTControlCharacters(l))).toEqual(["A      B", "True   x", "False  y"]);
  });

  it("names the shard that owns an object, and says when it is moving", () => {
    const report = {
      kind: "ManagedDatabase", namespace: "team-a", name: "db", age: "5m", deleting: false, conditions: [], events: [],
      cloud: { state: "none" as const, why: "nothing recorded" }, next: { what: "a look", when: "soon", basis: "poll" },
    };
    expect(renderObject(report)).not.toContain("Shard:");
    expect(renderObject({ ...report, shard: { name: "op-1", draining: false } })).toContain("Shard: op-1 (the operator replica that works on it)");
    expect(renderObject({ ...report, shard: { name: "op-1", draining: true } })).toContain("Shard: op-1 (draining");
  });
});
