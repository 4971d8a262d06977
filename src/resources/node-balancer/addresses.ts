// Backend node addresses as the API writes them (spec 4.234.0's description and examples):
// `ip:port` for a private or VPC IPv4 address, `[ip]:port` for a public IPv6 address
// (`[2300:5800::f03c:93ff:fe6e:1264]:8080`; the cloud controller manager joins them with Go's
// net.JoinHostPort, which brackets IPv6 alike).
// ASSUMPTION (unknown: no recording has an IPv6 node): whether the API answers an
// IPv6 address as sent or in another spelling. The operator sends the RFC 5952 form (lower case,
// zeros compressed) and compares addresses in that form on both sides, so a respelled answer is
// never a difference that rebuilds the config.
import { BlockList, isIPv4, isIPv6 } from "node:net";

export interface BackendAddress {
  family: 4 | 6;
  /** The address alone, IPv6 in its RFC 5952 form. */
  ip: string;
  port: number;
}

// "Public IPv6" (CL26; CCM takes the node's public IPv6): the global unicast block 2000::/3 that
// IANA allocates from. It leaves out loopback, link-local (fe80::/10), unique local (fc00::/7),
// multicast, IPv4-mapped (::ffff:0:0/96) and every other special block below 2000::.
const globalUnicast = new BlockList();
globalUnicast.addSubnet("2000::", 3, "ipv6");

/** An IPv6 `ip` in the RFC 5952 form (the WHATWG URL serializer writes exactly that); anything else as given. */
export function canonicalIP(ip: string): string {
  if (!isIPv6(ip) || ip.includes("%")) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

export const isGlobalUnicastIPv6 = (ip: string): boolean => isIPv6(ip) && !ip.includes("%") && globalUnicast.check(ip, "ipv6");

/** `ip:port` or `[ip]:port` read; undefined when it is neither (a zone or a prefix is neither). */
export function parseBackendAddress(address: string): BackendAddress | undefined {
  const m = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9a-fA-F:.]+)\]):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (m === null || port < 1 || port > 65535) return undefined;
  if (m[1] !== undefined) return isIPv4(m[1]) ? { family: 4, ip: m[1], port } : undefined;
  const v6 = m[2] ?? "";
  return isIPv6(v6) ? { family: 6, ip: canonicalIP(v6), port } : undefined;
}

/** The address as the API takes it: `ip:port`, or `[ip]:port` for IPv6. */
export const joinBackendAddress = (ip: string, port: number): string => (isIPv6(ip) ? `[${canonicalIP(ip)}]:${String(port)}` : `${ip}:${String(port)}`);

/** The one spelling of a backend address, for comparing the spec's with the API's; as given when unreadable. */
export function canonicalBackendAddress(address: string): string {
  const parsed = parseBackendAddress(address);
  return parsed === undefined ? address : joinBackendAddress(parsed.ip, parsed.port);
}

/** Linode's private network and VPCs alike: the NodeBalancer reaches IPv4 backends on RFC 1918 addresses only. */
export function isPrivateIPv4(ip: string): boolean {
  if (!isIPv4(ip)) return false;
  const [a = 0, b = 0] = ip.split(".").map(Number);
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

/** Why `address` cannot be a backend (the CRD's CEL rules, said once more for zod); undefined when it can. */
export function backendAddressProblem(address: string): string | undefined {
  const parsed = parseBackendAddress(address);
  if (parsed === undefined) return "is neither ip:port nor [ipv6]:port with a port 1..65535";
  if (parsed.family === 4) return isPrivateIPv4(parsed.ip) ? undefined : "is not a private IPv4 address (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)";
  return ipv6BackendProblem(address);
}

/** Why `address` cannot be an IPv6 backend (not global unicast); undefined when it can be, or is IPv4. */
export function ipv6BackendProblem(address: string): string | undefined {
  const parsed = parseBackendAddress(address);
  if (parsed?.family !== 6 || isGlobalUnicastIPv6(parsed.ip)) return undefined;
  return `${parsed.ip} is not a public (global unicast, 2000::/3) IPv6 address: a NodeBalancer takes IPv6 backends at their public addresses only, not link-local, unique local (fc00::/7), loopback or IPv4-mapped ones`;
}
