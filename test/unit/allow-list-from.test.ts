// The pure parts of allowListFrom: label selectors as apimachinery matches them, a ConfigMap
// value's entries (whitespace, commas, comments; anything else named, never sent), and which of
// a Node's addresses may be an entry (one host's unicast address only; the rest skipped, said once).
import { describe, expect, it } from "vitest";
import { desiredAllowList, parseCidrs, SkippedAnnouncer, skippedText, type AllowListSources } from "../../src/resources/managed-database/allow-list-from.ts";
import type { ManagedDatabaseSpec } from "../../src/resources/managed-database/schema.ts";
import { hostAddressProblem } from "../../src/resources/shared/nodes.ts";
import type { NodeObject } from "../../src/runtime/contract.ts";
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

describe("a Node's address as an allow-list entry", () => {
  const node = (name: string, addresses: [string, string][], labels: Record<string, string> = { pool: "db" }): NodeObject => ({
    apiVersion: "v1", kind: "Node", metadata: { name, labels }, status: { addresses: addresses.map(([type, address]) => ({ type, address })) },
  });
  const nodes = (items: NodeObject[]): AllowListSources => ({
    nodes: { get: (_ns, name) => items.find((n) => n.metadata.name === name), list: () => items, byIndex: () => [] },
    configMap: () => undefined,
  });
  const spec = (over: Partial<Pick<ManagedDatabaseSpec, "allowList" | "allowEmpty">> = {}): Pick<ManagedDatabaseSpec, "allowList" | "allowListFrom" | "allowEmpty"> =>
    ({ allowList: [], allowEmpty: false, allowListFrom: [{ nodes: { selector: { matchLabels: { pool: "db" } }, addressType: "ExternalIP" } }], ...over });

  it.each([
    ["0.0.0.0/0", "is a CIDR range, not a host address"],
    ["0.0.0.0/32", "is a CIDR range, not a host address"],
    ["198.51.100.1/32", "is a CIDR range, not a host address"],
    ["0.0.0.0", "is unspecified (any address), not a host's"],
    ["::", "is unspecified (any address), not a host's"],
    ["::ffff:0.0.0.0", "is unspecified (any address), not a host's"],
    ["0.1.2.3", "is in 0.0.0.0/8 (this network), never a host's address"],
    ["127.0.0.1", "is a loopback address"],
    ["::1", "is a loopback address"],
    ["::ffff:127.0.0.1", "is a loopback address"],
    ["169.254.169.254", "is a link-local address"],
    ["fe80::1", "is a link-local address"],
    ["fe80::1%eth0", "has a zone (an interface of one host), not a routable host address"],
    ["224.0.0.1", "is a multicast address"],
    ["239.255.255.250", "is a multicast address"],
    ["ff02::1", "is a multicast address"],
    ["255.255.255.255", "is the broadcast address"],
    ["240.0.0.1", "is reserved (240.0.0.0/4), not a host's"],
    ["::1.2.3.4", "is an IPv4-compatible IPv6 address (deprecated), not a host's"],
    ["node-a.example", "is not an IP address"],
    [" 198.51.100.1", "is not an IP address"],
    ["", "is not an IP address"],
  ])("%j is refused: %s", (address, why) => {
    expect(hostAddressProblem(address)).toBe(why);
  });
  it.each(["198.51.100.1", "10.0.0.1", "192.168.130.1", "2001:db8::10", "::ffff:198.51.100.1"])("%j is one host's address", (address) => {
    expect(hostAddressProblem(address)).toBeUndefined();
  });

  it("skips what is not one host's address, keeps the rest, and says which Node and why", () => {
    const r = desiredAllowList(spec(), nodes([
      node("good", [["ExternalIP", "198.51.100.1"], ["InternalIP", "0.0.0.0/0"]]),
      node("wide", [["ExternalIP", "0.0.0.0/0"]]),
      node("lo", [["ExternalIP", "127.0.0.1"]]),
    ]));
    expect("entries" in r && r.entries).toEqual(["198.51.100.1/32"]);
    expect("skipped" in r && r.skipped?.map(skippedText)).toEqual([
      "node wide: its ExternalIP \"0.0.0.0/0\" is a CIDR range, not a host address, so it is not allowed",
      "node lo: its ExternalIP \"127.0.0.1\" is a loopback address, so it is not allowed",
    ]);
  });

  it("only skipped candidates and nothing else to allow: held as AllowListWouldBeEmpty (never an empty list), naming them; allowEmpty lets it be empty", () => {
    const hostile = nodes([node("wide", [["ExternalIP", "0.0.0.0/0"]]), node("any", [["ExternalIP", "::"]])]);
    const r = desiredAllowList(spec(), hostile);
    expect("held" in r && r.held.reason).toBe("AllowListWouldBeEmpty");
    expect("held" in r && r.held.message).toContain("node wide: its ExternalIP \"0.0.0.0/0\" is a CIDR range");
    expect("held" in r && r.held.message).toContain("node any: its ExternalIP \"::\" is unspecified");
    expect(r.skipped).toHaveLength(2);
    const allowed = desiredAllowList(spec({ allowEmpty: true }), hostile);
    expect("entries" in allowed && { entries: allowed.entries, empty: allowed.empty }).toEqual({ entries: [], empty: true });
    // A static entry is something to allow: the skipped ones are just not in it.
    const withStatic = desiredAllowList(spec({ allowList: ["203.0.113.7"] }), hostile);
    expect("entries" in withStatic && withStatic.entries).toEqual(["203.0.113.7/32"]);
  });

  it("a Warning per skipped address, once: not again on later passes, again after it was fixed and came back; a list held for another reason changes nothing", () => {
    const said: string[] = [];
    const announcer = new SkippedAnnouncer((_obj, note) => { said.push(note); });
    const db = { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "db", namespace: "team" } };
    const wide = node("wide", [["ExternalIP", "0.0.0.0/0"]]);
    const good = node("good", [["ExternalIP", "198.51.100.1"]]);
    const pass = (items: NodeObject[]): void => { announcer.announce("team/db", db, desiredAllowList(spec(), nodes(items))); };
    pass([good, wide]);
    pass([good, wide]);
    pass([wide]);
    expect(said).toEqual(["node wide: its ExternalIP \"0.0.0.0/0\" is a CIDR range, not a host address, so it is not allowed"]);
    announcer.announce("team/db", db, { held: { reason: "AllowListSourceNotFound", message: "no ConfigMap" } });
    pass([good, wide]);
    expect(said).toHaveLength(1);
    pass([good]);
    expect(announcer.size).toBe(0);
    pass([good, wide]);
    expect(said).toHaveLength(2);
    announcer.forget("team/db");
    expect(announcer.size).toBe(0);
  });
});
