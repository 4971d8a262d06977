// Backend addresses: `ip:port` and `[ipv6]:port` read, one spelling for IPv6, public (global
// unicast) IPv6 only, and the spec's zod check agreeing with the CRD's CEL rules' intent.
import { describe, expect, it } from "vitest";
import { backendAddressProblem, canonicalBackendAddress, isGlobalUnicastIPv6, joinBackendAddress, parseBackendAddress } from "../../src/resources/node-balancer/addresses.ts";
import { nodeBalancerNodeSchema } from "../../src/resources/node-balancer/schema.ts";

describe("backend addresses", () => {
  it("reads ip:port and [ipv6]:port, IPv6 in its RFC 5952 spelling", () => {
    expect(parseBackendAddress("192.168.210.120:443")).toEqual({ family: 4, ip: "192.168.210.120", port: 443 });
    expect(parseBackendAddress("[2300:5800::f03c:93ff:fe6e:1264]:8080")).toEqual({ family: 6, ip: "2300:5800::f03c:93ff:fe6e:1264", port: 8080 });
    expect(parseBackendAddress("[2600:3C03:0:0::0:1]:80")).toEqual({ family: 6, ip: "2600:3c03::1", port: 80 });
  });

  it.each(["2600:3c03::1:80", "[2600:3c03::1]", "[2600:3c03::1]:0", "[2600:3c03::1]:65536", "[fe80::1%eth0]:80", "[2600:3c03::/64]:80", "300.1.1.1:80", "[2600::zz]:80", "[192.168.0.1]:80", "host:80"])("refuses %s as no address", (a) => {
    expect(parseBackendAddress(a)).toBeUndefined();
    expect(backendAddressProblem(a)).toBeDefined();
  });

  it("joins and compares in one spelling", () => {
    expect(joinBackendAddress("2600:3C03:0000::1", 30080)).toBe("[2600:3c03::1]:30080");
    expect(joinBackendAddress("10.0.0.1", 80)).toBe("10.0.0.1:80");
    expect(canonicalBackendAddress("[2600:3c03:0::0:1]:80")).toBe(canonicalBackendAddress("[2600:3C03::1]:80"));
    expect(canonicalBackendAddress("10.0.0.1:80")).toBe("10.0.0.1:80");
  });

  it.each([
    ["2600:3c03::f03c:91ff:fe24:3a2f", true], ["2a01:7e00::1", true], ["2001:db8::1", true],
    ["fe80::1", false], ["fd12:3456::1", false], ["fc00::1", false], ["::1", false], ["::", false], ["::ffff:192.0.2.1", false], ["::ffff:c000:201", false], ["ff02::1", false], ["64:ff9b::1", false], ["192.0.2.1", false],
  ])("%s is public (global unicast) IPv6: %s", (ip, yes) => {
    expect(isGlobalUnicastIPv6(ip)).toBe(yes);
    if (ip.includes(":")) expect(backendAddressProblem(`[${ip}]:80`) === undefined).toBe(yes);
  });

  it("a private IPv4 or public IPv6 backend passes the spec's schema; a public IPv4 or non-public IPv6 one does not", () => {
    const ok = (address: string): boolean => nodeBalancerNodeSchema.safeParse({ label: "node-1", address }).success;
    expect(ok("192.168.1.1:80")).toBe(true);
    expect(ok("[2600:3c03::1]:80")).toBe(true);
    expect(ok("203.0.113.1:80")).toBe(false);
    expect(ok("[fd00::1]:80")).toBe(false);
    expect(ok("[fe80::1]:80")).toBe(false);
  });
});
