import { describe, expect, it } from "vitest";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { normalizeAllowList, sameAllowList } from "../../src/resources/managed-database/allow-list.ts";

const owner = (namespace: string, name: string, clusterId = "cluster-1"): { clusterId: string; namespace: string; name: string } => ({ clusterId, namespace, name });

describe("derivedLabel", () => {
  it("is deterministic, within the limit, and readable", () => {
    const a = derivedLabel(owner("team-a", "orders"));
    expect(a).toBe(derivedLabel(owner("team-a", "orders")));
    expect(a).toMatch(/^team-a-orders-[0-9a-f]{8}$/);
    expect(a.length).toBeLessThanOrEqual(32);
  });

  it("never collides across namespaces, even when the joined names are equal", () => {
    expect(derivedLabel(owner("a-b", "c"))).not.toBe(derivedLabel(owner("a", "b-c")));
  });

  it("never collides across clusters sharing one account", () => {
    expect(derivedLabel(owner("team-a", "orders", "cluster-1"))).not.toBe(derivedLabel(owner("team-a", "orders", "cluster-2")));
  });

  it("truncates long names and keeps the hash", () => {
    const l = derivedLabel(owner("a-very-long-namespace-name", "an-even-longer-resource-name.with.dots"));
    expect(l.length).toBeLessThanOrEqual(32);
    expect(l).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9-]*-[0-9a-f]{8}$/);
  });

  it("honours a charset and a shorter limit (snapshot labels: letters and digits, 30)", () => {
    const l = derivedLabel(owner("ns", "my-snap.1"), { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" });
    expect(l).toMatch(/^[a-zA-Z0-9]{1,30}$/);
  });

  it("snapshot labels stay unique for long namespace/name pairs that share their first 30 letters", () => {
    const snap = (ns: string, name: string): string => derivedLabel(owner(ns, name), { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" });
    const ns = "payments-production-eu-west-primary";
    const labels = [snap(ns, "orders-before-migration-2026-11-23"), snap(ns, "orders-before-migration-2026-11-24"), snap(`${ns}x`, "orders-before-migration-2026-11-23"), snap("a", "b-c"), snap("a-b", "c")];
    for (const l of labels) expect(l).toMatch(/^[a-zA-Z0-9]{1,30}$/);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe("allow list normalization", () => {
  it("treats a bare IP as /32 (and /128) and ignores order and duplicates", () => {
    expect(normalizeAllowList(["203.0.113.1", "198.51.100.0/24", "203.0.113.1/32", "2001:DB8::1"])).toEqual([
      "198.51.100.0/24", "2001:db8::1/128", "203.0.113.1/32",
    ]);
    expect(sameAllowList(["203.0.113.1"], ["203.0.113.1/32"])).toBe(true);
    expect(sameAllowList(["0.0.0.0/0"], ["0.0.0.0/0"])).toBe(true);
    expect(sameAllowList(["203.0.113.1"], ["203.0.113.2/32"])).toBe(false);
  });
});
