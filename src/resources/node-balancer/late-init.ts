// An adopted NodeBalancer as the spec fields a user may leave unset (the runtime writes them
// once, lateInit): its own fields and every config with its nodes, as the spec writes them.
// What the schema refuses (a value out of its enums or ranges) the runtime finds itself; what
// no field can say is named here. A udp config is written with udp's own fields: its check
// port, and its nodes without a mode (the API gives them none).
import type { LateInit } from "../../runtime/contract.ts";
import type { ObservedConfig, ObservedNodeBalancer } from "./diff.ts";
import { vpcsAsSpec, vpcsInexpressible } from "./vpcs.ts";

export function nodeBalancerAsSpec(o: ObservedNodeBalancer): LateInit {
  const inexpressible = o.configs.flatMap((c) => [
    ...(c.protocol === "https" ? [`config ${String(c.port)} serves https with a certificate only Linode holds (the API never returns its key), so no tlsSecretRef can name it`] : []),
    ...(c.nodes.length === 0 ? [`config ${String(c.port)} has no nodes, and a config in the spec needs one (or nodesFrom)`] : []),
  ]);
  return {
    // Its type and VPCs too (only a create sets them: the spec must say what it has, never a default that differs).
    fields: {
      clientConnThrottle: o.nb.clientConnThrottle, tags: [...o.nb.tags], configs: o.configs.map(configAsSpec), ...vpcsAsSpec(o),
      // Only where the API reports it (not every account has it): otherwise the default stands, and is not compared.
      ...(o.nb.clientUdpSessThrottle != null ? { clientUdpSessThrottle: o.nb.clientUdpSessThrottle } : {}),
    },
    inexpressible: { ...(inexpressible.length > 0 ? { configs: inexpressible.join("; ") } : {}), ...vpcsInexpressible(o) },
  };
}

/** Every field the spec compares (the cipher suite only for https, which is refused above). */
function configAsSpec(c: ObservedConfig): Record<string, unknown> {
  const udp = c.protocol === "udp";
  return {
    port: c.port, protocol: c.protocol, algorithm: c.algorithm, stickiness: c.stickiness,
    check: c.check, checkInterval: c.checkInterval, checkTimeout: c.checkTimeout, checkAttempts: c.checkAttempts,
    ...(c.checkPath !== "" ? { checkPath: c.checkPath } : {}),
    ...(c.checkBody !== "" ? { checkBody: c.checkBody } : {}),
    checkPassive: c.checkPassive, proxyProtocol: c.proxyProtocol,
    ...(udp ? { udpCheckPort: c.udpCheckPort ?? 80 } : {}),
    // A VPC node keeps its subnet: a rebuild never sends it without one.
    nodes: c.nodes.map((n) => ({ label: n.label, address: n.address, weight: n.weight, ...(udp ? {} : { mode: n.mode }), ...(n.subnetId !== undefined ? { subnetId: n.subnetId } : {}) })),
  };
}
