// What each config protocol allows (spec 4.234.0's four config variants): udp has its
// own algorithms, stickiness and health-check port, no passive checks, no PROXY protocol, no TLS;
// its nodes have no mode. A config's port is unique among its tcp/http/https configs, and a udp
// config may reuse one of their ports.
//
// GUESS (nodebalancers/facts.md): the API's texts for these refusals are not recorded
// (only CCM's client-side texts are known): the reasons and fields below are guesses, in the API's envelope, naming the field the way its other 400s do.
//
// A new udp config (created, or a config switched to udp) is premium-only: Akamai's changelog of
// 2026-09-30 (CL26) says basic NodeBalancers do not support UDP, "exceptions … for pre-existing
// configurations", so a udp config a common NodeBalancer already has stays and can be changed.
// linodego's recording re-made on 2026-07-01 (F:TestNodeBalancerConfig_UDP) created a udp config
// on a common NodeBalancer and got 200: the changelog is the later word, and that earlier
// behaviour is the fault `udpOnCommon` (which is how tests make the pre-existing ones). The
// refusal's text and field are a GUESS (nodebalancers/facts.md).
// What the API answers to a udp_check_port or a node mode sent for the other family is not
// recorded either: both are taken as read-only there (the API returns 80, and no mode for udp
// nodes), so ignored rather than refused (a guess).
import type { ApiErrorItem } from "../errors.ts";
import type { ConfigRecord } from "../store.ts";
import type { ConfigInput } from "./schemas.ts";

const UDP_ALGORITHMS = ["roundrobin", "leastconn", "ring_hash"];
const TCP_ALGORITHMS = ["roundrobin", "leastconn", "source"];
const UDP_STICKINESS = ["none", "session", "source_ip"];
const TCP_STICKINESS = ["none", "table", "http_cookie"];

export const isUdp = (protocol: string): boolean => protocol === "udp";

/** Whether two configs may not share a port: udp and tcp/http/https may, two of one family not. */
export const portsClash = (a: ConfigRecord, b: ConfigRecord): boolean => a.port === b.port && isUdp(a.protocol) === isUdp(b.protocol);

/**
 * Gives `next` the defaults of its protocol where the request left a field out and the value it
 * had belongs to the other family (a new udp config starts from the http defaults; a PUT may
 * change the protocol): udp stickiness `session`, passive checks off, cipher suite `none`;
 * back to tcp/http/https: stickiness `none` (what the 2026 recording returns, not the spec's
 * `table`), passive checks on, cipher suite `recommended`. Read-only fields of udp (cipher
 * suite, and the health-check port of the other protocols, which the API returns as 80) are
 * not taken from the request.
 */
export function settleProtocolDefaults(next: ConfigRecord, before: ConfigRecord, input: ConfigInput): void {
  const udp = isUdp(next.protocol);
  const switched = udp !== isUdp(before.protocol);
  if (switched && input.stickiness == null) next.stickiness = udp ? "session" : "none";
  if (switched && input.check_passive == null) next.check_passive = !udp;
  if (udp) next.cipher_suite = "none";
  else if (switched && input.cipher_suite == null) next.cipher_suite = "recommended";
  if (!udp) next.udp_check_port = 80;
}

/** Whether `next` is a udp config a common NodeBalancer did not have as one before (`before`: the stored config, or a fresh default). */
export const becomesUdpOnCommon = (nb: { type: string }, before: ConfigRecord, next: ConfigRecord): boolean =>
  nb.type === "common" && isUdp(next.protocol) && !isUdp(before.protocol);

export const udpNeedsPremium = (prefix: string): ApiErrorItem => ({ field: `${prefix}protocol`, reason: "UDP is only available on premium NodeBalancers" });

/** The refusals of one config's protocol rules (guessed texts: see the head of this file). */
export function protocolErrors(next: ConfigRecord, prefix: string): ApiErrorItem[] {
  const errors: ApiErrorItem[] = [];
  const udp = isUdp(next.protocol);
  const name = udp ? "udp" : next.protocol;
  const algorithms = udp ? UDP_ALGORITHMS : TCP_ALGORITHMS;
  if (!algorithms.includes(next.algorithm)) {
    errors.push({ field: `${prefix}algorithm`, reason: `Must be one of ${algorithms.join(", ")} for ${name} configs` });
  }
  const stickiness = udp ? UDP_STICKINESS : TCP_STICKINESS;
  if (!stickiness.includes(next.stickiness)) {
    errors.push({ field: `${prefix}stickiness`, reason: `Must be one of ${stickiness.join(", ")} for ${name} configs` });
  }
  if (udp && next.check_passive) errors.push({ field: `${prefix}check_passive`, reason: "Must be false for udp configs" });
  if (udp && next.proxy_protocol !== "none") errors.push({ field: `${prefix}proxy_protocol`, reason: "Must be none for udp configs" });
  return errors;
}

/** A node's mode: udp nodes have none (read-only there, so a requested one is not taken); otherwise the request's, or the default. */
export function nodeModeFor(protocol: string, requested: string | null | undefined, current = "accept"): string {
  if (isUdp(protocol)) return "none";
  return requested ?? (current === "none" ? "accept" : current);
}
