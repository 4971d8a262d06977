// Building and checking NodeBalancer, config and node records: defaults, the cross-field
// rules (check_timeout < check_interval, unique ports, https needs a cert and key that
// parse), private backend addresses, and account-wide label uniqueness.
import { findRegion } from "../catalog.ts";
import type { EmulatorContext } from "../context.ts";
import { ApiError, badRequest, type ApiErrorItem } from "../errors.ts";
import { isIPv6 } from "node:net";
import { documentationIPv4, documentationIPv6, isGlobalUnicastIPv6, isPrivateIPv4, parseIPv4 } from "../ip.ts";
import { nextId, type ConfigRecord, type NodeBalancerRecord, type NodeRecord } from "../store.ts";
import type { ConfigInput } from "./schemas.ts";
import { becomesUdpOnCommon, nodeModeFor, portsClash, protocolErrors, settleProtocolDefaults, udpNeedsPremium } from "./protocols.ts";
import { inspectCertificate, unescapePem } from "./tls.ts";

/** A node address: `ip:port`, or `[ip]:port` for IPv6 (spec 4.234.0's example `[2300:5800::f03c:93ff:fe6e:1264]:8080`). */
export function parseNodeAddress(address: string): { family: 4 | 6; ip: string; port: number } | null {
  const m = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9a-fA-F:.]+)\]):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3] ?? 0);
  if (m === null || port < 1 || port > 65535) return null;
  if (m[1] !== undefined) return parseIPv4(m[1]) === null ? null : { family: 4, ip: m[1], port };
  return isIPv6(m[2] ?? "") ? { family: 6, ip: m[2] ?? "", port } : null;
}

export function checkAddress(ctx: EmulatorContext, address: string, field: string): void {
  const parsed = parseNodeAddress(address);
  if (parsed === null) throw badRequest("Must be a private IPv4 address and a port, e.g. 192.168.210.120:80, or a public IPv6 address in brackets and a port, e.g. [2300:5800::f03c:93ff:fe6e:1264]:8080", field);
  if (parsed.family === 4 && !isPrivateIPv4(parseIPv4(parsed.ip) ?? 0)) throw badRequest("Must be a private IP address (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)", field);
  // GUESS (facts.md): the status and text of this refusal; nothing is recorded for IPv6 nodes.
  if (parsed.family === 6 && !isGlobalUnicastIPv6(parsed.ip)) throw badRequest("Must be a public IPv6 address (global unicast), not link-local, unique local, loopback or IPv4-mapped", field);
  const refused = ctx.rejectedNodeAddresses.get(parsed.ip);
  if (refused !== undefined) throw badRequest(refused, field);
}

export function nbLabelTaken(ctx: EmulatorContext, label: string, exceptId?: number): boolean {
  for (const nb of ctx.state.nodebalancers.values()) if (nb.label === label && nb.id !== exceptId) return true;
  return false;
}

export function checkRegion(region: string): void {
  const r = findRegion(region);
  if (r === undefined) throw badRequest("Region not found", "region");
  if (!r.capabilities.includes("NodeBalancers")) throw badRequest("NodeBalancers are not available in this region", "region");
}

export function defaultConfig(id: number, nodebalancerId: number): ConfigRecord {
  return {
    id, nodebalancer_id: nodebalancerId, port: 80, protocol: "http", algorithm: "roundrobin", stickiness: "none",
    check: "none", check_interval: 31, check_timeout: 30, check_attempts: 3, check_path: "", check_body: "",
    check_passive: true, cipher_suite: "recommended", proxy_protocol: "none", udp_check_port: 80,
    udp_session_timeout: 16, ssl_cert: null, ssl_key: null, ssl_commonname: "", ssl_fingerprint: "", nodes: {},
  };
}

/**
 * Merges `input` into `target` (a fresh default or the stored config) after checking the
 * rules that span fields; throws before changing anything.
 */
export function applyConfig(nb: NodeBalancerRecord, target: ConfigRecord, input: ConfigInput, prefix = "", udpOnCommon = false): void {
  const next: ConfigRecord = { ...target };
  for (const [key, value] of Object.entries(input)) {
    if (value == null || key === "ssl_cert" || key === "ssl_key" || key === "nodes" || !(key in target)) continue;
    (next as unknown as Record<string, unknown>)[key] = value;
  }
  if (input.ssl_cert !== undefined) next.ssl_cert = input.ssl_cert === null ? null : unescapePem(input.ssl_cert);
  if (input.ssl_key !== undefined) next.ssl_key = input.ssl_key === null ? null : unescapePem(input.ssl_key);
  settleProtocolDefaults(next, target, input);
  const errors: ApiErrorItem[] = protocolErrors(next, prefix);
  if (becomesUdpOnCommon(nb, target, next) && !udpOnCommon) errors.push(udpNeedsPremium(prefix));
  if (next.check_timeout >= next.check_interval) {
    errors.push({ field: `${prefix}check_timeout`, reason: "check_timeout must be less than check_interval" });
  }
  const clash = Object.values(nb.configs).find((c) => portsClash(c, next) && c.id !== next.id);
  if (clash !== undefined) errors.push({ field: `${prefix}port`, reason: `Port ${next.port} is already configured on this NodeBalancer` });
  if (next.protocol === "https") {
    if (next.ssl_cert === null) errors.push({ field: `${prefix}ssl_cert`, reason: "ssl_cert is required for https" });
    if (next.ssl_key === null) errors.push({ field: `${prefix}ssl_key`, reason: "ssl_key is required for https" });
  }
  if (errors.length > 0) throw new ApiError(400, errors);
  if (next.protocol === "https" && next.ssl_cert !== null && next.ssl_key !== null) {
    const info = inspectCertificate(next.ssl_cert, next.ssl_key, prefix);
    next.ssl_commonname = info.commonName;
    next.ssl_fingerprint = info.fingerprint;
  } else {
    next.ssl_cert = null;
    next.ssl_key = null;
    next.ssl_commonname = "";
    next.ssl_fingerprint = "";
  }
  if (target.protocol !== next.protocol) for (const n of Object.values(next.nodes)) n.mode = nodeModeFor(next.protocol, null, n.mode);
  Object.assign(target, next);
}

export interface NodeInput {
  address: string;
  label: string;
  weight?: number | null | undefined;
  mode?: string | null | undefined;
}

export function makeNode(ctx: EmulatorContext, config: ConfigRecord, input: NodeInput, prefix = ""): NodeRecord {
  checkAddress(ctx, input.address, `${prefix}address`);
  return {
    id: nextId(ctx.state, "node"),
    config_id: config.id,
    nodebalancer_id: config.nodebalancer_id,
    address: input.address,
    label: input.label,
    weight: input.weight ?? 50,
    mode: nodeModeFor(config.protocol, input.mode),
    status: "unknown",
    checkFrom: ctx.clock.now(),
    forced: false,
  };
}

/** A node whose address changed is unknown again until its next check. */
export function recheck(ctx: EmulatorContext, n: NodeRecord): void {
  if (n.forced === true) return;
  n.status = "unknown";
  n.checkFrom = ctx.clock.now();
}

/** Settles the health checks due by now (lazily, against the emulated clock, as databases settle). */
export function settleChecks(ctx: EmulatorContext, nb: NodeBalancerRecord): void {
  const now = ctx.clock.now();
  for (const c of Object.values(nb.configs)) {
    for (const n of Object.values(c.nodes)) {
      if (n.forced !== true && n.status === "unknown" && now >= (n.checkFrom ?? 0) + c.check_interval * 1000) n.status = "UP";
    }
  }
}

export function newNodeBalancer(ctx: EmulatorContext, region: string, owner?: string): NodeBalancerRecord {
  const now = ctx.clock.now();
  const id = nextId(ctx.state, "nodebalancer");
  const n = nextId(ctx.state, "address");
  return {
    id, label: `nodebalancer${id}`, region, type: "common", client_conn_throttle: 0, tags: [],
    ipv4: documentationIPv4(n), ipv6: documentationIPv6(n), created: now, updated: now, configs: {}, owner,
  };
}

export function findNodeBalancer(ctx: EmulatorContext, id: number): NodeBalancerRecord {
  const nb = ctx.state.nodebalancers.get(id);
  if (nb === undefined) throw new ApiError(404, [{ reason: "Not found" }]);
  return nb;
}
