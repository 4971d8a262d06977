// The API returns a bare address as a /32 (IPv6: /128) CIDR and sorts the list, and an entry
// may be written in more than one way (`2001:DB8:0::1`, `203.0.113.7/24`), so entries compare
// in one canonical form or the diff never settles: the network address (host bits zeroed)
// with its prefix length, IPv6 compressed and lower-case as RFC 5952 has it.
import { isIPv4, isIPv6 } from "node:net";

/** The canonical form of an entry; one that is not an address or CIDR is left for the API to judge. */
export function normalizeAllowEntry(entry: string): string {
  const [addr = "", bits, extra] = entry.trim().split("/");
  if (extra !== undefined || (bits !== undefined && !/^\d{1,3}$/.test(bits))) return entry;
  if (isIPv4(addr)) {
    const prefix = bits === undefined ? 32 : Number(bits);
    return prefix > 32 ? entry : `${formatIPv4(ipv4Value(addr) & ipv4Mask(prefix))}/${String(prefix)}`;
  }
  // A zone (`fe80::1%eth0`) names an interface of one host, never a network the API allows.
  if (isIPv6(addr) && !addr.includes("%")) {
    const prefix = bits === undefined ? 128 : Number(bits);
    return prefix > 128 ? entry : `${formatIPv6(maskGroups(ipv6Groups(addr), prefix))}/${String(prefix)}`;
  }
  return entry;
}

export function normalizeAllowList(list: readonly string[]): string[] {
  return [...new Set(list.map(normalizeAllowEntry))].sort();
}

export function sameAllowList(a: readonly string[], b: readonly string[]): boolean {
  const x = normalizeAllowList(a);
  const y = normalizeAllowList(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function ipv4Value(addr: string): number {
  return addr.split(".").reduce((v, octet) => ((v << 8) | Number(octet)) >>> 0, 0);
}

function ipv4Mask(prefix: number): number {
  return prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
}

function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => String((value >>> shift) & 0xff)).join(".");
}

/** The eight 16-bit groups of an address `isIPv6` accepts (`::` expanded, a dotted tail as two groups). */
function ipv6Groups(addr: string): number[] {
  let text = addr;
  const tail = text.lastIndexOf(":");
  if (text.includes(".", tail)) {
    const v4 = ipv4Value(text.slice(tail + 1));
    text = `${text.slice(0, tail + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const parse = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function maskGroups(groups: number[], prefix: number): number[] {
  return groups.map((g, i) => {
    const keep = Math.min(16, Math.max(0, prefix - 16 * i));
    return keep === 0 ? 0 : g & ((0xffff << (16 - keep)) & 0xffff);
  });
}

/** RFC 5952: lower-case hex, the first longest run of two or more zero groups as `::`. */
function formatIPv6(groups: number[]): string {
  // An IPv4-mapped address keeps its usual dotted form (RFC 5952 § 5), never becoming plain IPv4.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const v4 = (((groups[6] ?? 0) << 16) | (groups[7] ?? 0)) >>> 0;
    return `::ffff:${formatIPv4(v4)}`;
  }
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = (part: number[]): string => part.map((g) => g.toString(16)).join(":");
  if (best.at < 0) return hex(groups);
  return `${hex(groups.slice(0, best.at))}::${hex(groups.slice(best.at + best.len))}`;
}
