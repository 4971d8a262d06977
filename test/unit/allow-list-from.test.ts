// The pure parts of allowListFrom: label selectors as apimachinery matches them, and a
// ConfigMap value's entries (whitespace, commas, comments; anything else named, never sent).
import { describe, expect, it } from "vitest";
import { parseCidrs } from "../../src/resources/managed-database/allow-list-from.ts";
import { matchesSelector, selectorText } from "../../src/resources/shared/label-selector.ts";

describe("label selectors", () => {
  const labels = { pool: "web", zone: "a" };
  it.each([
    [{}, true],
    [{ matchLabels: { pool: "web" } }, true],
    [{ matchLabels: { pool: "db" } }, false],
    [{ matchExpressions: [{ key: "pool", operator: "In" as const, values: ["web", "db"] }] }, true],
    [{ matchExpressions: [{ key: "pool", operator: "NotIn" as const, values: ["web"] }] }, false],
    [{ matchExpressions: [{ key: "gpu", operator: "NotIn" as const, values: ["yes"] }] }, true],
    [{ matchExpressions: [{ key: "zone", operator: "Exists" as const }] }, true],
    [{ matchExpressions: [{ key: "zone", operator: "DoesNotExist" as const }] }, false],
    [{ matchLabels: { pool: "web" }, matchExpressions: [{ key: "zone", operator: "In" as const, values: ["b"] }] }, false],
  ])("%j matches %s", (selector, want) => {
    expect(matchesSelector(labels, selector)).toBe(want);
  });
  it("is written as kubectl -l writes it, keys sorted", () => {
    expect(selectorText({ matchLabels: { zone: "a", pool: "web" }, matchExpressions: [{ key: "gpu", operator: "DoesNotExist" }] })).toBe("pool=web,zone=a,!gpu");
    expect(selectorText({})).toBe("every node");
  });
});

describe("a ConfigMap value's entries", () => {
  it("takes addresses and ranges separated by whitespace or commas, skipping comments", () => {
    expect(parseCidrs("# gateways\n198.51.100.1, 198.51.100.0/24\n\t2001:db8::/32 # v6\n")).toEqual({ entries: ["198.51.100.1", "198.51.100.0/24", "2001:db8::/32"], invalid: [] });
  });
  it("names what is not an address or range", () => {
    expect(parseCidrs("198.51.100.1 host.example 10.0.0.0/33 ::1/129 1.2.3.4/8/9").invalid).toEqual(["host.example", "10.0.0.0/33", "::1/129", "1.2.3.4/8/9"]);
    expect(parseCidrs("")).toEqual({ entries: [], invalid: [] });
  });
});
