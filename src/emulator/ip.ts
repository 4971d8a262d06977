// IP parsing for allow lists and node addresses; and the documentation ranges every invented
// public address comes from, so nothing the emulator hands out reaches a real host.
import { BlockList, isIPv6 } from "node:net";
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/**
 * An address or CIDR range, IPv4 or IPv6 (spec: "Each item is a single IP address or a CIDR
 * range"); a bare address becomes `/32` (`/128`) as the real API returns it.
 */
export function normalizeCidr(text: string): string | null {
  const [addr, prefix, extra] = text.split("/");
  if (addr === undefined || extra !== undefined) return null;
  const v6 = isIPv6(addr);
  if (!v6 && parseIPv4(addr) === null) return null;
  const max = v6 ? 128 : 32;
  if (prefix === undefined) return `${v6 ? addr.toLowerCase() : addr}/${String(max)}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return null;
  return `${v6 ? addr.toLowerCase() : addr}/${String(Number(prefix))}`;
}

function inRange(value: number, base: string, bits: number): boolean {
  const start = parseIPv4(base) ?? 0;
  const size = 2 ** (32 - bits);
  return value >= start && value < start + size;
}

/**
 * A private IPv4 address (RFC 1918): the spec says only "Private IP address of the backend",
 * and the real API takes Linode's private network (192.168.128.0/17) and VPC addresses alike.
 */
export function isPrivateIPv4(value: number): boolean {
  return inRange(value, "10.0.0.0", 8) || inRange(value, "172.16.0.0", 12) || inRange(value, "192.168.0.0", 16);
}

// GUESS (facts.md): "public IPv6" (CL26, spec 4.234.0) read as the global unicast block
// 2000::/3, which leaves out loopback, link-local, unique local (fc00::/7), multicast and
// IPv4-mapped addresses.
const globalUnicast = new BlockList();
globalUnicast.addSubnet("2000::", 3, "ipv6");

export const isGlobalUnicastIPv6 = (text: string): boolean => isIPv6(text) && !text.includes("%") && globalUnicast.check(text, "ipv6");

const PUBLIC_POOLS = ["203.0.113.0", "198.51.100.0"];

/** The n-th public address from 203.0.113.0/24 then 198.51.100.0/24 (hosts .1-.254). */
export function documentationIPv4(n: number): string {
  const slot = n % (PUBLIC_POOLS.length * 254);
  const base = parseIPv4(PUBLIC_POOLS[Math.floor(slot / 254)] ?? "203.0.113.0") ?? 0;
  return formatIPv4(base + (slot % 254) + 1);
}

/** An address in 2001:db8::/32 shaped like Linode's SLAAC addresses. */
export function documentationIPv6(n: number): string {
  const hi = (n >>> 16) & 0xffff;
  const lo = n & 0xffff;
  return `2001:db8::f03c:93ff:fe${(hi & 0xff).toString(16).padStart(2, "0")}:${lo.toString(16)}`;
}

/** An IPv4 CIDR as its first address and size; null unless it is one with its host bits clear. */
export function parseCidr4(text: string): { start: number; size: number } | null {
  const [addr, prefix, extra] = text.split("/");
  if (addr === undefined || prefix === undefined || extra !== undefined || !/^\d{1,2}$/.test(prefix) || Number(prefix) > 32) return null;
  const start = parseIPv4(addr);
  const size = 2 ** (32 - Number(prefix));
  return start === null || start % size !== 0 ? null : { start, size };
}

export const cidrContains = (outer: { start: number; size: number }, inner: { start: number; size: number }): boolean =>
  inner.start >= outer.start && inner.start + inner.size <= outer.start + outer.size;

export const cidrsOverlap = (a: { start: number; size: number }, b: { start: number; size: number }): boolean =>
  a.start < b.start + b.size && b.start < a.start + a.size;
