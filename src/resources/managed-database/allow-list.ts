// The API returns a bare address as a /32 (IPv6: /128) CIDR and sorts the list, so a spec
// that says `203.0.113.1` must compare equal to `203.0.113.1/32` or the diff never settles.
import { isIPv6 } from "node:net";

export function normalizeAllowEntry(entry: string): string {
  const e = entry.trim();
  if (e.includes("/")) {
    const [addr = "", bits = ""] = e.split("/");
    return `${isIPv6(addr) ? addr.toLowerCase() : addr}/${String(Number(bits))}`;
  }
  return isIPv6(e) ? `${e.toLowerCase()}/128` : `${e}/32`;
}

export function normalizeAllowList(list: readonly string[]): string[] {
  return [...new Set(list.map(normalizeAllowEntry))].sort();
}

export function sameAllowList(a: readonly string[], b: readonly string[]): boolean {
  const x = normalizeAllowList(a);
  const y = normalizeAllowList(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
