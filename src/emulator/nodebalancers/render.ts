// Response shapes of NodeBalancers, configs, nodes and statistics (firewalls: firewalls.ts).
import { apiTime } from "../clock.ts";
import type { ConfigRecord, NodeBalancerRecord, NodeRecord } from "../store.ts";
import { frontendOf, vpcFieldsOf } from "./vpcs.ts";

/**
 * This month's transfer (MB) at emulated time `now`: NodeBalancers carry traffic, so the
 * counters grow from the first statistics on, each at a rate of its own (derived from its id,
 * so runs repeat), as the real API's do with traffic. null until the first statistics.
 */
export function transferOf(nb: NodeBalancerRecord, now: number, statsReadyAt: number): { in: number | null; out: number | null; total: number | null } {
  if (now < statsReadyAt) return { in: null, out: null, total: null };
  const seconds = (now - statsReadyAt) / 1000;
  const round = (mb: number): number => Math.round(mb * 1000) / 1000;
  const rate = trafficRate(nb);
  const inbound = round(seconds * rate.in);
  const outbound = round(seconds * rate.out);
  return { in: inbound, out: outbound, total: round(inbound + outbound) };
}

/** The NodeBalancer's traffic in MB a second by direction: its own, from its id (so runs repeat). */
function trafficRate(nb: NodeBalancerRecord): { in: number; out: number } {
  return { in: (((nb.id * 7919) % 50) + 1) / 1000, out: (((nb.id * 104729) % 80) + 1) / 1000 };
}

export function renderNodeBalancer(nb: NodeBalancerRecord, now: number, statsReadyAt: number): Record<string, unknown> {
  return {
    id: nb.id,
    label: nb.label,
    region: nb.region,
    type: nb.type,
    // A frontend in a VPC has no public host name (recorded "").
    hostname: frontendOf(nb) !== undefined ? "" : `${nb.ipv4.replaceAll(".", "-")}.ip.linodeusercontent.com`,
    ipv4: nb.ipv4,
    ipv6: nb.ipv6,
    created: apiTime(nb.created),
    updated: apiTime(nb.updated),
    client_conn_throttle: nb.client_conn_throttle,
    client_udp_sess_throttle: nb.client_udp_sess_throttle ?? 0,
    lke_cluster: null,
    ...vpcFieldsOf(nb),
    tags: [...nb.tags],
    // The lock types (linodego reads this field on v4beta only; the emulator serves it on both versions).
    locks: (nb.locks ?? []).map((l) => l.lock_type),
    // The live API reports null transfer until the first statistics exist, then counts up with traffic.
    transfer: transferOf(nb, now, statsReadyAt),
  };
}

export function renderConfig(c: ConfigRecord): Record<string, unknown> {
  const nodes = Object.values(c.nodes);
  const up = nodes.filter((n) => nodeStatus(n) === "UP").length;
  return {
    id: c.id,
    port: c.port,
    protocol: c.protocol,
    algorithm: c.algorithm,
    stickiness: c.stickiness,
    check: c.check,
    check_interval: c.check_interval,
    check_timeout: c.check_timeout,
    check_attempts: c.check_attempts,
    check_path: c.check_path,
    check_body: c.check_body,
    check_passive: c.check_passive,
    proxy_protocol: c.proxy_protocol,
    cipher_suite: c.cipher_suite,
    nodebalancer_id: c.nodebalancer_id,
    ssl_commonname: c.ssl_commonname,
    ssl_fingerprint: c.ssl_fingerprint,
    ssl_cert: c.ssl_cert === null ? null : "<REDACTED>",
    ssl_key: c.ssl_key === null ? null : "<REDACTED>",
    nodes_status: { up, down: nodes.length - up },
    udp_check_port: c.udp_check_port,
    udp_session_timeout: c.udp_session_timeout,
  };
}

export function nodeStatus(n: NodeRecord): string {
  return n.status;
}

export function renderNode(n: NodeRecord): Record<string, unknown> {
  return {
    id: n.id,
    address: n.address,
    label: n.label,
    status: nodeStatus(n),
    weight: n.weight,
    mode: n.mode,
    config_id: n.config_id,
    nodebalancer_id: n.nodebalancer_id,
    vpc_config_id: n.vpc_config_id ?? null,
  };
}

export function renderStats(nb: NodeBalancerRecord, now: number, statsReadyAt: number): Record<string, unknown> {
  // Five-minute samples over the last day (or since the interval of its creation: once the
  // API serves statistics at all, there is a sample). The traffic is the one transferOf counts
  // (in bits a second, taking MB as 10^6 bytes: the API does not say), from the first statistics
  // on; connections vary from one sample to the next, so the latest moves with time.
  const step = 300_000;
  const start = Math.max(nb.created, now - 86_400_000);
  const rate = trafficRate(nb);
  const times: number[] = [];
  for (let t = Math.floor(start / step) * step; t <= now; t += step) times.push(t);
  const sample = (perSecond: (t: number) => number) => times.map((t): [number, number] => [t, t < statsReadyAt ? 0 : perSecond(t)]);
  return {
    data: {
      connections: sample((t) => ((nb.id + t / step) % 7) + 1),
      traffic: { in: sample(() => Math.round(rate.in * 8e6)), out: sample(() => Math.round(rate.out * 8e6)) },
    },
    title: `${nb.label} (${nb.id}) - day (5 min avg)`,
  };
}
