// Allow-list entries compare in one canonical form: the network address with its prefix,
// IPv6 compressed and lower-case (RFC 5952), a bare address as /32 or /128; anything else
// passes through for the API to judge.
import { describe, expect, it } from "vitest";
import { normalizeAllowEntry, normalizeAllowList, sameAllowList } from "../../src/resources/managed-database/allow-list.ts";

describe("normalizeAllowEntry", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7/32"],
    ["203.0.113.7/32", "203.0.113.7/32"],
    [" 203.0.113.7 ", "203.0.113.7/32"],
    ["203.0.113.7/24", "203.0.113.0/24"],
    ["203.0.113.7/024", "203.0.113.0/24"],
    ["198.51.100.255/25", "198.51.100.128/25"],
    ["10.1.2.3/8", "10.0.0.0/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["203.0.113.7/0", "0.0.0.0/0"],
    ["255.255.255.255/31", "255.255.255.254/31"],
    ["2001:db8::1", "2001:db8::1/128"],
    ["2001:0db8:0000::1", "2001:db8::1/128"],
    ["2001:DB8::1/128", "2001:db8::1/128"],
    ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1/128"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1/128"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1/128"],
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1/128"],
    ["2001:db8::abcd/32", "2001:db8::/32"],
    ["2001:db8:ffff::/36", "2001:db8:f000::/36"],
    ["2001:db8::7/127", "2001:db8::6/127"],
    ["::", "::/128"],
    ["::/0", "::/0"],
    ["::1", "::1/128"],
    ["1::", "1::/128"],
    ["::ffff:203.0.113.7", "::ffff:203.0.113.7/128"],
    ["::FFFF:cb00:7107", "::ffff:203.0.113.7/128"],
    ["::ffff:203.0.113.7/120", "::ffff:203.0.113.0/120"],
    ["2001:db8::203.0.113.7", "2001:db8::cb00:7107/128"],
  ])("%s -> %s", (entry, canonical) => {
    expect(normalizeAllowEntry(entry)).toBe(canonical);
  });

  it.each([
    "not-an-ip", "", "203.0.113.7/33", "203.0.113.256", "203.0.113.7/", "203.0.113.7/24/1", "203.0.113.7/-1",
    "203.0.113.7/ 24", "2001:db8::1/129", "2001:db8::1::2", "fe80::1%eth0", "2001:db8::/1e2", " bad ",
  ])("leaves %j as it is", (entry) => {
    expect(normalizeAllowEntry(entry)).toBe(entry);
  });
});

describe("sameAllowList", () => {
  it("equates the ways of writing one entry", () => {
    expect(sameAllowList(["2001:0db8:0000::1"], ["2001:db8::1"])).toBe(true);
    expect(sameAllowList(["2001:db8::1"], ["2001:db8::1/128"])).toBe(true);
    expect(sameAllowList(["203.0.113.7/24"], ["203.0.113.0/24"])).toBe(true);
    expect(sameAllowList(["203.0.113.1"], ["203.0.113.1/32"])).toBe(true);
  });

  it("keeps different networks, prefixes and families apart", () => {
    expect(sameAllowList(["203.0.113.7/24"], ["203.0.113.7/32"])).toBe(false);
    expect(sameAllowList(["203.0.113.0/24"], ["203.0.112.0/24"])).toBe(false);
    expect(sameAllowList(["::ffff:203.0.113.7"], ["203.0.113.7"])).toBe(false);
    expect(sameAllowList(["2001:db8::1"], ["2001:db8::2"])).toBe(false);
  });

  it("ignores order and duplicates, and compares invalid entries as written", () => {
    expect(sameAllowList(["198.51.100.0/24", "2001:DB8::1", "203.0.113.9/24"], ["2001:db8::1/128", "203.0.113.0/24", "198.51.100.0/24", "198.51.100.3/24"])).toBe(true);
    expect(sameAllowList(["bogus"], ["bogus"])).toBe(true);
    expect(sameAllowList(["bogus"], ["bogus/32"])).toBe(false);
  });
});

describe("normalizeAllowList", () => {
  it("sends the canonical entries, sorted and without duplicates, invalid ones untouched", () => {
    expect(normalizeAllowList(["203.0.113.7/24", "2001:0DB8::1", "203.0.113.0/24", "not-an-ip", "::ffff:203.0.113.7"])).toEqual([
      "2001:db8::1/128", "203.0.113.0/24", "::ffff:203.0.113.7/128", "not-an-ip",
    ]);
  });
});
