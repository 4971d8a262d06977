// IPv4 parsing for allow lists and node addresses; and the documentation ranges every
// invented public address comes from, so nothing the emulator hands out reaches a real host.
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

/** `a.b.c.d` or `a.b.c.d/n`; a bare address becomes `/32` as the real API returns it. */
export function normalizeCidr(text: string): string | null {
  const [addr, prefix, extra] = text.split("/");
  if (addr === undefined || extra !== undefined || parseIPv4(addr) === null) return null;
  if (prefix === undefined) return `${addr}/32`;
  if (!/^\d{1,2}$/.test(prefix) || Number(prefix) > 32) return null;
  return `${addr}/${Number(prefix)}`;
}

function inRange(value: number, base: string, bits: number): boolean {
  const start = parseIPv4(base) ?? 0;
  const size = 2 ** (32 - bits);
  return value >= start && value < start + size;
}

/** Linode's private network is 192.168.128.0/17; backends must live there. */
export function isLinodePrivate(value: number): boolean {
  return inRange(value, "192.168.128.0", 17);
}

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
