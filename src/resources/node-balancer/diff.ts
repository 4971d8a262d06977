// What differs between a NodeBalancer's spec and the cloud, as a plan of the fewest calls: one
// PUT for the NodeBalancer's own fields, configs added and removed by port, and one atomic
// rebuild (config fields plus the complete node list) for each config that differs in
// anything — never one call per node.
import type {
  Firewall, NodeBalancer, NodeBalancerConfig, NodeBalancerConfigInput, NodeBalancerNode, NodeBalancerNodeInput, NodeBalancerUpdateRequest, NodeBalancerVpcConfig,
} from "../../linode/index.ts";
import { canonicalBackendAddress } from "./addresses.ts";
import { createOnlyMismatches, type SpecSubnets } from "./vpcs.ts";
import type { NodeBalancerConfigSpec, NodeBalancerSpec } from "./schema.ts";
import { noLockChange, type LockPlan } from "./locks.ts";
import { sameFingerprint, type TlsMaterial } from "./tls.ts";

/** The parts of a firewall the operator uses (what status records of one is enough after a restart). */
export type AttachedFirewall = Pick<Firewall, "id" | "label" | "status">;

/** A node with its subnet (from its vpc_config_id and the NodeBalancer's VPC configs), if a VPC node. */
export type ObservedNode = NodeBalancerNode & { subnetId?: number };

export interface ObservedConfig extends NodeBalancerConfig {
  nodes: ObservedNode[];
}

/** The cloud NodeBalancer with what hangs off it. */
export interface ObservedNodeBalancer {
  nb: NodeBalancer;
  configs: ObservedConfig[];
  firewalls: AttachedFirewall[];
  /** Its VPC configs (backend, frontend): create-only, read once. */
  vpcs: NodeBalancerVpcConfig[];
  /** The NodeBalancer's `updated` the configs, nodes and firewalls were read against (status records it: trusted after a restart while it stands). */
  readAgainst?: string;
}

/**
 * Cloud Firewall assignment. spec.firewallId is changed in place (beyond the spec's NodeBalancer
 * document, which only takes `firewall_id` at creation; see src/linode/firewalls.ts and
 * NodeBalancersApi.updateFirewalls), not refused as immutable: the real platform assigns and
 * removes a NodeBalancer's firewall at any time (Cloud Manager, linode-cli `firewalls
 * device-create` and `nodebalancers firewalls-update`, linodego's CreateFirewallDevice as the
 * Linode CCM uses it), whereas Terraform's linode_nodebalancer marks firewall_id ForceNew and
 * would replace the NodeBalancer, and with it its public addresses.
 *
 * A firewall is this resource's only if it assigned it itself: in the create (`firewall_id`),
 * or by its own assignment or swap; status.managedFirewallIds records those, and only those are
 * ever removed. One already assigned when the spec first names it (by a person, another tool)
 * is someone else's: it stays assigned when the spec stops naming it, and the spec cannot swap
 * it away (FirewallConflict, while it is enabled: a NodeBalancer takes one). A firewall lost
 * between an assignment and the status write that records it (a crash) is taken for someone
 * else's: left in place, never removed wrongly.
 */
export interface FirewallPlan {
  /** The spec's firewall, to assign: not assigned, allowed to be named here, and nothing keeps it out. */
  attach?: number;
  /**
   * Firewalls this resource assigned that the spec no longer names, still assigned: removed.
   * With `attach`, both happen in one call (`swap`).
   */
  detach: number[];
  /**
   * The NodeBalancer's firewalls after a swap: `attach` in place of `detach`, in one call that
   * replaces its whole list (the API keeps one enabled firewall per NodeBalancer, so removing
   * first would leave it without one, and assigning first is refused). Every other assigned
   * firewall is kept (read again just before the call).
   */
  swap?: number[];
  /**
   * The spec's firewall, not assigned, that this resource may not assign: none with that id in
   * its account, another namespace's NodeBalancer names or holds it, or naming it by id is not
   * allowed here. Never sent; one reason and message for all (FirewallNotFound).
   */
  refused?: number;
  /** Enabled firewalls this resource did not assign that take the one place the spec's would need. */
  blockedBy: AttachedFirewall[];
  /** The assigned firewalls this resource assigned itself (status.managedFirewallIds). */
  managed: number[];
}

export interface NodeBalancerPlan {
  update?: NodeBalancerUpdateRequest;
  firewall: FirewallPlan;
  /** spec.deletionProtection's lock to make or remove (locks.ts). */
  lock: LockPlan;
  /** Configs in the spec the cloud lacks (by port, udp apart: configKey). */
  create: NodeBalancerConfigSpec[];
  /** Configs in the cloud the spec no longer has. */
  remove: ObservedConfig[];
  /** Configs to rebuild, and what differs in each. */
  rebuild: { spec: NodeBalancerConfigSpec; config: ObservedConfig; differs: string[] }[];
  /** One line, e.g. "config 80: nodes +1 -1; add config 443" (never a certificate or key). */
  summary: string;
}

/** Certificates by TLS Secret name. */
export type TlsBySecret = ReadonlyMap<string, TlsMaterial>;

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

/**
 * `label` is the spec's label, if it names one: a NodeBalancer keeps the label it has (created
 * or adopted with) unless the spec says otherwise.
 */
export function planNodeBalancer(
  spec: NodeBalancerSpec, label: string | undefined, observed: ObservedNodeBalancer, tls: TlsBySecret,
  firewall: FirewallPlan = planFirewalls(spec.firewallId, [], observed.firewalls, false), lock: LockPlan = noLockChange,
): NodeBalancerPlan {
  const { nb } = observed;
  const update: NodeBalancerUpdateRequest = {};
  const parts: string[] = [];
  if (label !== undefined && nb.label !== label) {
    update.label = label;
    parts.push(`label ${nb.label} → ${label}`);
  }
  if (nb.clientConnThrottle !== spec.clientConnThrottle) {
    update.clientConnThrottle = spec.clientConnThrottle;
    parts.push(`clientConnThrottle ${String(nb.clientConnThrottle)} → ${String(spec.clientConnThrottle)}`);
  }
  if (!sameSet(nb.tags, spec.tags)) {
    update.tags = spec.tags;
    parts.push("tags");
  }
  // Compared only where the API reports it (not every account has it, LG says).
  if (nb.clientUdpSessThrottle != null && nb.clientUdpSessThrottle !== spec.clientUdpSessThrottle) {
    update.clientUdpSessThrottle = spec.clientUdpSessThrottle;
    parts.push(`clientUdpSessThrottle ${String(nb.clientUdpSessThrottle)} → ${String(spec.clientUdpSessThrottle)}`);
  }
  const byKey = new Map(observed.configs.map((c) => [configKey(c), c]));
  const wanted = new Set(spec.configs.map(configKey));
  const create = spec.configs.filter((c) => !byKey.has(configKey(c)));
  const remove = observed.configs.filter((c) => !wanted.has(configKey(c)));
  const rebuild: NodeBalancerPlan["rebuild"] = [];
  for (const c of spec.configs) {
    const config = byKey.get(configKey(c));
    if (config === undefined) continue;
    const differs = configDifferences(c, config, tls);
    if (differs.length > 0) rebuild.push({ spec: c, config, differs });
  }
  for (const r of rebuild) parts.push(`config ${configName(r.spec)}: ${r.differs.join(", ")}`);
  for (const c of create) parts.push(`add config ${configName(c)}`);
  for (const c of remove) parts.push(`remove config ${configName(c)}`);
  if (lock.make) parts.push("lock against deletion (spec.deletionProtection)");
  if (lock.remove !== undefined) parts.push(`remove lock ${String(lock.remove)} (spec.deletionProtection is false)`);
  if (firewall.swap !== undefined) parts.push(`replace firewall ${firewall.detach.map(String).join(", ")} with ${String(firewall.attach)}`);
  else {
    for (const id of firewall.detach) parts.push(`remove firewall ${String(id)}`);
    if (firewall.attach !== undefined) parts.push(`assign firewall ${String(firewall.attach)}`);
  }
  return { ...(Object.keys(update).length > 0 ? { update } : {}), firewall, lock, create, remove, rebuild, summary: parts.join("; ") };
}

/** The assigned firewalls this resource assigned itself: recorded as its own, and still assigned. */
function ownAssigned(recorded: readonly number[], attached: readonly AttachedFirewall[]): number[] {
  const have = new Set(attached.map((f) => f.id));
  return [...new Set(recorded)].filter((id) => have.has(id));
}

/** Enabled firewalls this resource did not assign, assigned now: the API would refuse the spec's beside them. */
function blockers(recorded: readonly number[], attached: readonly AttachedFirewall[]): AttachedFirewall[] {
  const own = new Set(ownAssigned(recorded, attached));
  return attached.filter((f) => f.status === "enabled" && !own.has(f.id));
}

/**
 * The firewall an assignment would be sent for now, if any: the spec's, when it is not
 * assigned and nothing keeps it out. Only this one is checked (it exists, it may be named
 * here): an unchanged NodeBalancer costs no check, and a conflict is reported whatever the
 * spec names (so it says nothing about that firewall).
 */
export function firewallToAssign(want: number | undefined, recorded: readonly number[], attached: readonly AttachedFirewall[]): number | undefined {
  if (want === undefined || attached.some((f) => f.id === want)) return undefined;
  return blockers(recorded, attached).length === 0 ? want : undefined;
}

/**
 * `recorded`: the firewalls this resource assigned itself (status.managedFirewallIds, and any
 * it assigned since). `refused`: the spec's firewall may not be assigned by this resource
 * (firewallToAssign named it and the check said no).
 */
export function planFirewalls(want: number | undefined, recorded: readonly number[], attached: readonly AttachedFirewall[], refused: boolean): FirewallPlan {
  const managed = ownAssigned(recorded, attached);
  const needed = want !== undefined && !attached.some((f) => f.id === want);
  const blockedBy = needed ? blockers(recorded, attached) : [];
  const assign = needed && blockedBy.length === 0 && !refused ? want : undefined;
  // While the spec names a firewall that cannot be assigned, the one this resource assigned
  // before stays: a NodeBalancer whose spec asks for a firewall never loses the one it has.
  const detach = needed && assign === undefined ? [] : managed.filter((id) => id !== want);
  const swap = assign !== undefined && detach.length > 0 ? [assign, ...attached.map((f) => f.id).filter((id) => !detach.includes(id))] : undefined;
  return {
    ...(assign !== undefined ? { attach: assign } : {}),
    detach,
    ...(swap !== undefined ? { swap } : {}),
    ...(needed && refused && blockedBy.length === 0 ? { refused: want } : {}),
    blockedBy,
    managed,
  };
}

export const noFirewallChange: FirewallPlan = { detach: [], blockedBy: [], managed: [] };

export const isEmptyPlan = (p: NodeBalancerPlan): boolean =>
  p.update === undefined && p.create.length === 0 && p.remove.length === 0 && p.rebuild.length === 0 && p.firewall.attach === undefined && p.firewall.detach.length === 0
  && !p.lock.make && p.lock.remove === undefined;

/**
 * A config's identity: its port, with udp apart (a udp config may share its port with a
 * tcp/http/https one, spec 4.234.0), as the spec's list is keyed by port and protocol. A change
 * between http, https and tcp on a port is a rebuild; to or from udp, a remove and a create.
 */
export const configKey = (c: { port: number; protocol: string }): string => `${String(c.port)}/${c.protocol === "udp" ? "udp" : "tcp"}`;

/** How the summary and messages name a config: its port, and /udp for a udp one. */
export const configName = (c: { port: number; protocol: string }): string => (c.protocol === "udp" ? `${String(c.port)}/udp` : String(c.port));

/** Passive checks as the API will have them: the spec's, else on, except for udp (which has none). */
const checkPassiveOf = (c: NodeBalancerConfigSpec): boolean => c.checkPassive ?? c.protocol !== "udp";

/** Node modes count except on udp, whose nodes the API gives none (nodesFrom's drain included). */
const modeCounts = (c: NodeBalancerConfigSpec): boolean => c.protocol !== "udp";

/** What differs in one config (its fields, its certificate, its nodes), named for the summary. */
function configDifferences(spec: NodeBalancerConfigSpec, config: ObservedConfig, tls: TlsBySecret): string[] {
  const out: string[] = [];
  const fields: [string, unknown, unknown][] = [
    ["protocol", spec.protocol, config.protocol],
    ["algorithm", spec.algorithm, config.algorithm],
    ["stickiness", spec.stickiness, config.stickiness],
    ["check", spec.check, config.check],
    ["checkInterval", spec.checkInterval, config.checkInterval],
    ["checkTimeout", spec.checkTimeout, config.checkTimeout],
    ["checkAttempts", spec.checkAttempts, config.checkAttempts],
    ["checkPath", spec.checkPath ?? "", config.checkPath],
    ["checkBody", spec.checkBody ?? "", config.checkBody],
    ["checkPassive", checkPassiveOf(spec), config.checkPassive],
    ["proxyProtocol", spec.proxyProtocol, config.proxyProtocol],
  ];
  if (spec.protocol === "udp") fields.push(["udpCheckPort", spec.udpCheckPort ?? 80, config.udpCheckPort ?? 80]);
  // The API keeps a cipher suite only where it serves TLS.
  if (spec.protocol === "https") fields.push(["cipherSuite", spec.cipherSuite, config.cipherSuite]);
  for (const [name, want, have] of fields) if (want !== have) out.push(name);
  if (spec.protocol === "https") {
    const material = spec.tlsSecretRef !== undefined ? tls.get(spec.tlsSecretRef.name) : undefined;
    if (material !== undefined && !sameFingerprint(material.fingerprint, config.sslFingerprint)) out.push("certificate");
  }
  const nodes = nodeDifferences(spec, config);
  if (nodes !== undefined) out.push(nodes);
  return out;
}

/** "nodes +1 -2 ~1" when the node set differs (added, removed, changed), by address. */
function nodeDifferences(spec: NodeBalancerConfigSpec, config: ObservedConfig): string | undefined {
  // The API's spelling of an IPv6 address may not be the one sent (addresses.ts): compared in one.
  const have = new Map(config.nodes.map((n) => [canonicalBackendAddress(n.address), n]));
  const want = new Set(spec.nodes.map((n) => canonicalBackendAddress(n.address)));
  let added = 0;
  let changed = 0;
  for (const n of spec.nodes) {
    const h = have.get(canonicalBackendAddress(n.address));
    if (h === undefined) added++;
    else if (h.label !== n.label || (n.weight !== undefined && h.weight !== n.weight) || (modeCounts(spec) && n.mode !== undefined && h.mode !== n.mode) || h.subnetId !== n.subnetId) changed++;
  }
  const removed = config.nodes.filter((n) => !want.has(canonicalBackendAddress(n.address))).length;
  if (added + removed + changed === 0) return undefined;
  return `nodes${added > 0 ? ` +${String(added)}` : ""}${removed > 0 ? ` -${String(removed)}` : ""}${changed > 0 ? ` ~${String(changed)}` : ""}`;
}

/** The config's writable fields as the API takes them (with the certificate and key for https). */
export function configBody(c: NodeBalancerConfigSpec, tls: TlsBySecret): NodeBalancerConfigInput {
  const body: NodeBalancerConfigInput = {
    port: c.port, protocol: c.protocol, algorithm: c.algorithm, stickiness: c.stickiness,
    check: c.check, checkInterval: c.checkInterval, checkTimeout: c.checkTimeout, checkAttempts: c.checkAttempts,
    checkPath: c.checkPath ?? "", checkBody: c.checkBody ?? "", checkPassive: checkPassiveOf(c),
    proxyProtocol: c.proxyProtocol,
    // udp's cipher suite is read-only (none); its check port is udp's alone.
    ...(c.protocol === "udp" ? (c.udpCheckPort !== undefined ? { udpCheckPort: c.udpCheckPort } : {}) : { cipherSuite: c.cipherSuite }),
  };
  if (c.protocol === "https" && c.tlsSecretRef !== undefined) {
    const material = tls.get(c.tlsSecretRef.name);
    if (material === undefined) throw new Error(`no certificate for config ${String(c.port)} (Secret ${c.tlsSecretRef.name})`);
    body.sslCert = material.certPem;
    body.sslKey = material.keyPem;
  }
  return body;
}

/** The complete node list of a rebuild: nodes already there (same address) keep their id. */
export function nodeBodies(c: NodeBalancerConfigSpec, existing?: ObservedConfig): (NodeBalancerNodeInput & { id?: number })[] {
  const ids = new Map((existing?.nodes ?? []).map((n) => [canonicalBackendAddress(n.address), n.id]));
  return c.nodes.map((n) => {
    const id = ids.get(canonicalBackendAddress(n.address));
    return {
      address: n.address, label: n.label,
      ...(n.weight !== undefined ? { weight: n.weight } : {}),
      ...(n.mode !== undefined && modeCounts(c) ? { mode: n.mode } : {}),
      ...(n.subnetId !== undefined ? { subnetId: n.subnetId } : {}),
      ...(id !== undefined ? { id } : {}),
    };
  });
}

/**
 * What the plan would ask of a common NodeBalancer that only premium types take: a udp config it
 * has not (CL26, 2026-09-30: basic NodeBalancers take no new UDP configs; the udp configs one
 * already has stay, and can be changed). A NodeBalancer whose type the API does not report is
 * taken for common. Nothing is sent for these: the API would refuse them.
 */
export function premiumOnlyAsks(nb: Pick<NodeBalancer, "type">, plan: Pick<NodeBalancerPlan, "create">): string[] {
  if ((nb.type ?? "common") !== "common") return [];
  return plan.create.filter((c) => c.protocol === "udp").map((c) => `add config ${configName(c)} (a new udp config)`);
}

/**
 * What differs that the API cannot change (region; the type, VPCs and reserved address, which
 * only a create sets): named so the user can fix the spec of an adopted or drifted NodeBalancer;
 * nothing is sent for these.
 */
export function immutableMismatches(spec: NodeBalancerSpec, observed: ObservedNodeBalancer, found?: SpecSubnets): string[] {
  const out: string[] = [];
  if (observed.nb.region !== spec.region) out.push(`region (spec ${spec.region}, NodeBalancer ${observed.nb.region})`);
  // `found`: what the spec names was looked up, so the create-only fields are compared too (not in Observe, which sends nothing).
  return found === undefined ? out : [...out, ...createOnlyMismatches(spec, observed, found)];
}
