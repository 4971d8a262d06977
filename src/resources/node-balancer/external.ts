// NodeBalancer ↔ Linode: the NodeBalancer comes from a list one sweep shares; its configs,
// nodes and firewalls are read only when something may have changed (ConfigReader). A create
// sends everything inline; afterwards each changed config converges with one atomic rebuild.
import { z } from "zod";
import { isNotFound, type LinodeClient, type NodeBalancer, type NodeBalancerCreateRequest, type NodeBalancerVpcConfig } from "../../linode/index.ts";
import {
  cachedReadAge, ConditionReasons as R, getCondition, problems, readyAtGeneration, RetryAfterError, TerminalError, type AfterObserve, type Created, type Deferral, type EventRecorder, type ExternalClient, type Managed, type Observation, type Observed,
  type Logger, type PollIntervals,
} from "../../runtime/contract.ts";

import { labelOf } from "../shared/derived-label.ts";
import { isLabelTaken, labelInUse, linodeCall, translateLinodeError } from "../shared/linode-errors.ts";
import { locateOwned } from "../shared/locate.ts";
import type { ListCache } from "../shared/list-cache.ts";
import { FIRST_TRUSTED_LOOK_MILLIS, type ConfigReader, type ReadOptions, type Recorded } from "./configs.ts";
import {
  configBody, firewallToAssign, immutableMismatches, isEmptyPlan, premiumOnlyAsks, noFirewallChange, nodeBodies, planFirewalls, planNodeBalancer, type FirewallPlan, type NodeBalancerPlan,
  type ObservedNodeBalancer,
} from "./diff.ts";
import type { NodeBalancerSpec, NodeBalancerStatus } from "./schema.ts";
import type { NodeBalancerStatsReader } from "./stats.ts";
import type { ObjectFigures } from "../shared/object-figures.ts";
import { noLockChange, planLock, type NodeBalancerLocks } from "./locks.ts";
import { tlsReference } from "./tls.ts";
import { skippedSummary, type BackendSubnet, type EffectiveSpec, type SkippedBackend } from "./backends-from.ts";
import { backendSubnetOf, findSpecSubnets, namedAccountObjects, vpcInput, type SpecSubnets, type VpcCatalog } from "./vpcs.ts";
import { NodeBalancerReasons } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import { parseApiTime } from "../shared/api-time.ts";


export type NodeBalancerObservedStatus = Omit<NodeBalancerStatus, "lastRequests">;
type ObservedNb = Observed<ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan>;

export interface NodeBalancerExternalDeps {
  linode: LinodeClient;
  cache: ListCache<NodeBalancer>;
  configs: ConfigReader;
  stats: NodeBalancerStatsReader;
  /** This month's transfer by NodeBalancer resource: a metric (it counts up with traffic: status would be written on every look). */
  transfer: ObjectFigures;
  poll: PollIntervals;
  /** How old a Ready NodeBalancer's health counts may be when its `updated` has not moved (0: read every look). */
  healthMillis: number;
  clusterId: string;
  events: EventRecorder;
  /** The spec with the backends configs[].nodesFrom finds now merged in (VPC nodes of `subnet`, when the NodeBalancer has a backend subnet). */
  backends(m: Managed<NodeBalancerSpec>, subnet?: BackendSubnet): EffectiveSpec<NodeBalancerSpec>;
  /** The account's VPCs, where spec.vpcs and spec.frontendVpc are looked for. */
  vpcs: VpcCatalog;
  /** Refuses (AdoptionNotAllowed) naming an existing account object (a VPC subnet, a reserved address) where this object may not. */
  mayName(m: Managed<NodeBalancerSpec>, doing: string): void;
  /** Where the nodes nodesFrom skips are named (status and Events only count them). */
  log?: Logger;
  /** Who may assign which existing firewall by id (spec.firewallId): the rule every id a spec names follows. */
  firewallRule: FirewallRule;
  /** spec.deletionProtection's lock, and the locks that hold a deletion. */
  locks: NodeBalancerLocks;
  /** Which resource manages a NodeBalancer (undefined: none now): a list that finds it changed wakes that resource. */
  seen(id: number, key: string | undefined): void;
}

/**
 * Naming an existing Cloud Firewall by id is naming an account object: allowed with the
 * namespace's own token (spec.credentialsRef), with the operator's shared token only where the
 * admin allows naming ids (--adopt-namespaces), and never for a firewall a NodeBalancer of
 * another namespace names or holds as its own.
 */
export interface FirewallRule {
  /** Whether resources in `namespace` may name an existing object by id with this account's token. */
  mayName(namespace: string): boolean;
  /** Whether a NodeBalancer in another namespace than `namespace` names firewall `id` (spec.firewallId) or records it as its own (status.managedFirewallIds). */
  claimedElsewhere(namespace: string, id: number): boolean;
}

// Made once: a zod schema built on every look (and for every object an index reads) costs more than its parse.
const namedFirewallSchema = z.object({ firewallId: z.int() });
const idsSchema = z.array(z.int());
const idSchema = z.int();
const textsSchema = z.array(z.string());

/** The firewall a NodeBalancer resource names, and those it holds as its own (any object of the kind's cache: parsed, never trusted). */
export function firewallsClaimedBy(obj: { spec?: unknown; status?: Record<string, unknown> | undefined }): { named?: number; held: number[] } {
  const named = namedFirewallSchema.safeParse(obj.spec);
  const held = idsSchema.safeParse(obj.status?.managedFirewallIds);
  return { ...(named.success ? { named: named.data.firewallId } : {}), held: held.success ? held.data : [] };
}

/** What status recorded of the last read of NodeBalancer `id` (configs with their nodes, firewalls), if it recorded it whole. */
const recordSchema = z.object({
  id: z.int(),
  updated: z.string(),
  configs: z.array(z.object({
    id: z.int(),
    nodesStatus: z.object({ up: z.int(), down: z.int() }),
    nodes: z.array(z.object({ id: z.int(), label: z.string(), address: z.string(), status: z.string(), mode: z.string(), weight: z.int(), vpcConfigId: z.int().optional() })).default([]),
  })).default([]),
  firewalls: z.array(z.object({ id: z.int(), label: z.string(), status: z.string() })).default([]),
});
/** The VPC configs status recorded for NodeBalancer `id` (they cannot change, so a record of them stays true). */
const recordedVpcsSchema = z.object({
  id: z.int(),
  vpcs: z.array(z.object({ id: z.int(), purpose: z.string(), subnetId: z.int(), vpcId: z.int().optional(), ipv4Range: z.string().optional(), ipv6Range: z.string().optional() })),
});
function recordedVpcs(status: Record<string, unknown> | undefined, id: number): NodeBalancerVpcConfig[] | undefined {
  const parsed = recordedVpcsSchema.safeParse(status);
  return parsed.success && parsed.data.id === id ? parsed.data.vpcs.map((v) => ({ ...v, nodebalancerId: id, vpcId: v.vpcId ?? null, ipv4Range: v.ipv4Range ?? null, ipv6Range: v.ipv6Range ?? null })) : undefined;
}

function optionalRecord(status: Record<string, unknown> | undefined, id: number): { recorded?: Recorded } {
  const parsed = recordSchema.safeParse(status);
  return parsed.success && parsed.data.id === id ? { recorded: parsed.data } : {};
}

/** The lock this resource made for spec.deletionProtection, as its status recorded it. */
const recordedLock = (m: Managed<NodeBalancerSpec>): number | undefined => {
  const parsed = idSchema.safeParse(m.obj.status?.deletionLockId);
  return parsed.success ? parsed.data : undefined;
};

/** The firewalls this resource assigned itself, as its status recorded them (written by earlier passes). */
const recordedFirewalls = (m: Managed<NodeBalancerSpec>): number[] => {
  const parsed = idsSchema.safeParse(m.obj.status?.managedFirewallIds);
  return parsed.success ? parsed.data : [];
};

export class NodeBalancerExternal implements ExternalClient<NodeBalancerSpec, ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan> {
  private readonly deps: NodeBalancerExternalDeps;
  /**
   * Firewalls this process assigned, by NodeBalancer, until its resource's status records them:
   * the observation that follows an update in the same pass (and a pass whose status write was
   * lost) knows them for its own before status says so.
   */
  private readonly assignedHere = new Map<number, Set<number>>();
  /** Each NodeBalancer's VPC configs, once read (they cannot change after the create). */
  private readonly vpcConfigs = new Map<number, NodeBalancerVpcConfig[]>();

  constructor(deps: NodeBalancerExternalDeps) {
    this.deps = deps;
  }

  /**
   * Finds the NodeBalancer this resource manages, and only that one: the id the user named
   * (spec.nodeBalancerId) or the one recorded as created by it; by label only after a create
   * that may have been lost (create-pending). An explicit label taken by another is LabelInUse.
   */
  async observe(m: Managed<NodeBalancerSpec>, signal: AbortSignal): Promise<Observation<ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan>> {
    const deleting = m.obj.metadata.deletionTimestamp !== undefined;
    const settled = readyAtGeneration(m.obj);
    // One NodeBalancer list per poll interval serves every look (our own changes invalidate it); a
    // list that finds a NodeBalancer's `updated` moved wakes its resource at once, so a change
    // made just after a list is seen at the next list, not at the look after it (two windows).
    const maxAge = cachedReadAge(m, settled ? this.deps.poll.readyMillis : this.deps.poll.pendingMillis);
    const api = this.deps.linode.nodeBalancers;
    const nb = await locateOwned(m, {
      kind: "NodeBalancer", what: "NodeBalancer", idField: "nodeBalancerId", named: m.spec.nodeBalancerId, mismatchReason: NodeBalancerReasons.NodeBalancerIdMismatch,
      label: labelOf(m, this.deps.clusterId),
      byId: (id) => this.deps.cache.get(id, maxAge, signal),
      byLabel: (label) => api.findByLabel(label, { signal }),
    });
    if (nb === undefined) {
      if (m.externalId !== undefined) this.deps.seen(Number(m.externalId), undefined);
      return { exists: false };
    }
    this.deps.seen(nb.id, `${m.key.namespace}/${m.key.name}`);
    if (deleting) {
      // Only its existence matters now: no config reads.
      const external = { nb, configs: [], firewalls: [], vpcs: [] };
      return { exists: true, external, externalId: String(nb.id), status: { id: nb.id }, ready: false, readyReason: R.Deleting, upToDate: true, delta: { firewall: noFirewallChange, lock: noLockChange, create: [], remove: [], rebuild: [], summary: "" } };
    }
    const found = nb;
    this.deps.transfer.set(m.key.namespace, m.key.name, nb.id, nb.transfer);
    // Health counts may be a health window old only while Ready and settled; otherwise each look reads them.
    const healthy = settled && this.deps.healthMillis > 0;
    const readOptions: ReadOptions = {
      healthMaxAgeMillis: healthy ? this.deps.healthMillis - this.deps.poll.readyMillis / 2 : 0,
      firewallsNow: m.spec.firewallId !== undefined || recordedFirewalls(m).length > 0 || this.assignedHere.has(nb.id),
      ...optionalRecord(m.obj.status, nb.id),
    };
    const attached = await linodeCall("reading the configs and nodes", () => this.deps.configs.read(found, signal, readOptions));
    const vpcs = await this.vpcConfigsOf(m, nb, attached.configs.some((c) => c.nodes.some((n) => n.vpcConfigId != null)), signal);
    // Each node's subnet: the VPC config serving it.
    const subnetOf = new Map(vpcs.map((v) => [v.id, v.subnetId]));
    const configs = attached.configs.map((c) => ({ ...c, nodes: c.nodes.map((n) => { const subnet = n.vpcConfigId != null ? subnetOf.get(n.vpcConfigId) : undefined; return subnet !== undefined ? { ...n, subnetId: subnet } : n; }) }));
    const external: ObservedNodeBalancer = { nb, configs, firewalls: attached.firewalls, vpcs, ...(attached.updated !== undefined ? { readAgainst: attached.updated } : {}) };
    const observing = m.spec.managementPolicy === "Observe";
    // The subnets the spec names by label are looked up (by id, taken as named), to compare; a following config needs the backend subnet's range.
    const named = observing ? { problems: [] } : await this.specSubnets(m, this.deps.poll.readyMillis, signal, true);
    // The nodes are in the NodeBalancer's own backend subnet (it cannot change), whatever the spec says now.
    const inSubnet = backendSubnetOf(vpcs, null);
    const following = m.spec.configs.some((c) => c.nodesFrom !== undefined);
    const range = inSubnet !== undefined && following ? await linodeCall("listing the VPCs", () => this.deps.vpcs.rangeOf(inSubnet.id, this.deps.poll.readyMillis, signal)) : null;
    const effective = this.deps.backends(m, inSubnet !== undefined ? { id: inSubnet.id, range } : undefined);
    // Held: nothing about backends is planned from a source that cannot be read (the spec's own nodes only, and nothing is sent).
    const spec = effective.spec;
    const want = m.spec.firewallId;
    const own = this.ownFirewalls(m, nb.id, external.firewalls);
    // Checked only when an assignment would be sent: one refused is reported, never sent.
    const candidate = m.spec.managementPolicy !== "Observe" ? firewallToAssign(want, own, external.firewalls) : undefined;
    const refused = candidate !== undefined && !(await this.mayAssign(m, candidate, signal));
    const firewall = planFirewalls(want, own, external.firewalls, refused);
    const recordedLockId = recordedLock(m);
    const lockTypes = await this.deps.locks.types(nb, m.spec.deletionProtection || recordedLockId !== undefined, signal);
    const ownLock = this.deps.locks.own(nb.id, recordedLockId, lockTypes);
    const lock = m.spec.managementPolicy !== "Observe" ? planLock(m.spec.deletionProtection, lockTypes, ownLock) : noLockChange;
    const plan = planNodeBalancer(spec, m.spec.label, external, tlsReference.values(m), firewall, lock);
    this.announceSkipped(m, effective.skipped);
    // Observe never sends anything: what only a create could set is not compared there (its spec need not say it).
    const mismatches = immutableMismatches(m.spec, external, observing ? undefined : named);
    const premiumOnly = observing ? [] : premiumOnlyAsks(nb, plan);
    const health = this.health(external);
    const upToDate = isEmptyPlan(plan);
    return {
      exists: true,
      external,
      externalId: String(nb.id),
      status: {
        ...statusOf(external, firewall.managed), ...RETIRED, managedFirewallIds: firewall.managed.length > 0 ? firewall.managed : undefined,
        skippedBackends: effective.skipped.length > 0 ? skippedSummary(effective.skipped) : undefined, locks: lockTypes, deletionLockId: ownLock,
      },
      ready: health === undefined,
      ...(health !== undefined ? { readyReason: health.reason, readyMessage: health.message } : {}),
      upToDate,
      diff: plan.summary,
      delta: plan,
      // Every problem found: the first one's reason is the one Synced shows.
      unfixable: problems(
        mismatches.length > 0 && { reason: SharedReasons.ImmutableFieldMismatch, message: `the NodeBalancer differs from the spec in what cannot change, so nothing is sent: ${mismatches.join("; ")}` },
        premiumOnly.length > 0 && { reason: NodeBalancerReasons.PremiumOnly, message: `the spec asks the common NodeBalancer for what only premium types take, so nothing is sent: ${premiumOnly.join("; ")}` },
        m.spec.managementPolicy !== "Observe" && effective.held,
      ),
      ...(!upToDate ? { pollMillis: this.deps.poll.pendingMillis } : health !== undefined ? { pollMillis: health.pollMillis } : {}),
    };
  }

  /**
   * Backends nodesFrom cannot find now hold the create (a config is created with its nodes,
   * never empty). A firewall this resource may not assign holds it too: a NodeBalancer whose
   * spec asks for a firewall is never made without one (looked at again at the drift cadence,
   * so one created meanwhile, or a spec that names another, lets it go ahead).
   */
  async readyToCreate(m: Managed<NodeBalancerSpec>, signal: AbortSignal): Promise<Deferral | undefined> {
    const effective = this.deps.backends(m, await this.createSubnet(m, signal));
    this.announceSkipped(m, effective.skipped);
    // Naming a VPC subnet or a reserved address is naming an account object: the one rule, before anything is looked up.
    const naming = namedAccountObjects(m.spec);
    if (naming !== undefined) this.deps.mayName(m, naming);
    const subnets = await this.specSubnets(m, this.deps.poll.pendingMillis, signal);
    if (subnets.problems.length > 0) throw new RetryAfterError(NodeBalancerReasons.VPCNotFound, `${subnets.problems.join("; ")}: nothing is created until it is there (a NodeBalancer's VPC cannot change once it is made)`, this.deps.poll.readyMillis);
    if (effective.held === undefined) {
      const want = m.spec.firewallId;
      if (want !== undefined && !(await this.mayAssign(m, want, signal))) {
        throw new RetryAfterError(NodeBalancerReasons.FirewallNotFound, refusedMessage(want, m.key.namespace), this.deps.poll.readyMillis);
      }
      return undefined;
    }
    // The operator's rights and the admin's flags change only with a restart; a Service, EndpointSlice or Node changing wakes it.
    if (effective.held.reason === SharedReasons.NodesNotReadable || effective.held.reason === NodeBalancerReasons.NodePortsNotAllowed) throw new TerminalError(effective.held.reason, `${effective.held.message}; nothing was created`);
    return { reason: effective.held.reason, message: `${effective.held.message}; the NodeBalancer is created once every config has a backend`, retryAfterMillis: this.deps.poll.readyMillis };
  }

  /**
   * Nodes skipped as backends are news once: status has what was already said. The Event counts
   * them; which nodes, at which addresses, goes to the operator's log only.
   */
  private announceSkipped(m: Managed<NodeBalancerSpec>, skipped: SkippedBackend[]): void {
    const said = textsSchema.safeParse(m.obj.status?.skippedBackends);
    const news = skippedSummary(skipped).filter((s) => !(said.success && said.data.includes(s)));
    if (news.length === 0) return;
    for (const s of news) this.deps.events.warning(m.obj, "BackendSkipped", "Reconcile", `${s} (the operator's log names them)`);
    this.deps.log?.warn({ kind: "NodeBalancer", namespace: m.key.namespace, name: m.key.name, skipped }, "nodesFrom: nodes skipped as backends (no private IPv4 InternalIP)");
  }

  /** The label a create about to be sent carries: a lost one is looked for by exactly that. */
  intent(m: Managed<NodeBalancerSpec>): Record<string, string> {
    return { label: labelOf(m, this.deps.clusterId) };
  }

  async create(m: Managed<NodeBalancerSpec>, signal: AbortSignal): Promise<Created> {
    const naming = namedAccountObjects(m.spec);
    if (naming !== undefined) this.deps.mayName(m, naming);
    const subnets = await this.specSubnets(m, this.deps.poll.pendingMillis, signal);
    if (subnets.problems.length > 0) throw new RetryAfterError(NodeBalancerReasons.VPCNotFound, subnets.problems.join("; "), this.deps.poll.readyMillis);
    const effective = this.deps.backends(m, subnets.backend !== undefined ? { id: subnets.backend.id, range: subnets.backend.range } : undefined);
    if (effective.held !== undefined) throw new RetryAfterError(effective.held.reason, effective.held.message, this.deps.poll.pendingMillis);
    const s = effective.spec;
    const tls = tlsReference.values(m);
    const label = labelOf(m, this.deps.clusterId);
    const backendRef = s.vpcs?.[0];
    // The type, the VPCs and the reserved address go in every create (requests.recreate too: the address is kept).
    const req: NodeBalancerCreateRequest = {
      region: s.region, label, clientConnThrottle: s.clientConnThrottle, tags: s.tags, type: s.type,
      // Not sent at its default: the API may not offer it to every account (LG).
      ...(s.clientUdpSessThrottle !== 0 ? { clientUdpSessThrottle: s.clientUdpSessThrottle } : {}),
      ...(subnets.backend !== undefined && backendRef !== undefined ? { vpcs: [vpcInput(subnets.backend, backendRef)] } : {}),
      ...(subnets.frontend !== undefined && s.frontendVpc !== undefined ? { frontendVpcs: [vpcInput(subnets.frontend, s.frontendVpc)] } : {}),
      ...(s.ipv4 !== undefined ? { ipv4: s.ipv4 } : {}),
      ...(s.firewallId !== undefined ? { firewallId: s.firewallId } : {}),
      configs: s.configs.map((c) => ({ ...configBody(c, tls), nodes: nodeBodies(c) })),
    };
    let nb: NodeBalancer;
    try {
      nb = await this.deps.linode.nodeBalancers.create(req, { signal });
    } catch (err) {
      if (isLabelTaken(err)) throw labelInUse("NodeBalancer", "nodeBalancerId", label);
      throw translateLinodeError(err, "creating the NodeBalancer");
    }
    this.deps.cache.put(nb);
    this.vpcConfigs.delete(nb.id);
    if (s.firewallId === undefined) this.deps.configs.createdWithoutFirewall(nb.id);
    else this.noteAssigned(nb.id, s.firewallId);
    // Ready waits for a backend UP in each checked config, which no look sees before its first
    // check; and a look within `updated`'s trust window would be repeated in full (configs.ts).
    const firstCheck = Math.max(0, ...s.configs.filter((c) => c.check !== "none" && c.nodes.length > 0).map((c) => c.checkInterval * 1000));
    const firstLook = firstCheck > 0 ? Math.max(firstCheck, FIRST_TRUSTED_LOOK_MILLIS) : 0;
    // Assigned in the create itself: this resource's own.
    const own = s.firewallId !== undefined ? { managedFirewallIds: [s.firewallId] } : {};
    return { externalId: String(nb.id), status: { id: nb.id, ...own }, ...(firstLook > 0 ? { lookAfterMillis: Math.min(firstLook, this.deps.poll.readyMillis) } : {}) };
  }

  /**
   * Converges in the fewest calls: the NodeBalancer's own fields, configs removed and added by
   * port, one rebuild per changed config. Every part is tried; the first failure is reported
   * (a node address the API rejects is the API's reason in a condition, never a loop).
   */
  async update(m: Managed<NodeBalancerSpec>, observed: ObservedNb, signal: AbortSignal): Promise<void> {
    const tls = tlsReference.values(m);
    const plan = observed.delta;
    const api = this.deps.linode.nodeBalancers;
    const id = observed.external.nb.id;
    const failures: unknown[] = [];
    const touched: number[] = [];
    const attempt = async (doing: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await linodeCall(doing, fn);
      } catch (err) {
        failures.push(err);
      }
    };
    try {
      const update = plan.update;
      if (update !== undefined) await attempt("updating the NodeBalancer", () => api.update(id, update, { signal }));
      for (const c of plan.remove) {
        // Ours too: the next read must not take its absence for a change made outside.
        touched.push(c.id);
        await attempt(`removing config ${String(c.port)}`, () => api.deleteConfig(id, c.id, { signal }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        }));
      }
      for (const c of plan.create) {
        await attempt(`adding config ${String(c.port)}`, async () => {
          const body = configBody(c, tls);
          const made = await api.createConfig(id, body, { signal });
          touched.push(made.id);
          await api.rebuildConfig(id, made.id, { ...body, nodes: nodeBodies(c) }, { signal });
        });
      }
      for (const r of plan.rebuild) {
        touched.push(r.config.id);
        await attempt(`rebuilding config ${String(r.spec.port)}`, () => api.rebuildConfig(id, r.config.id, { ...configBody(r.spec, tls), nodes: nodeBodies(r.spec, r.config) }, { signal }));
      }
      await this.changeFirewalls(id, plan.firewall, attempt, failures, signal);
      if (plan.lock.make) await attempt("locking the NodeBalancer", () => this.deps.locks.make(id, signal));
      const unlock = plan.lock.remove;
      if (unlock !== undefined) await attempt(`removing lock ${String(unlock)}`, () => this.deps.locks.remove(id, unlock, signal));
    } finally {
      // What we changed is read again; after a failure, everything (a call may have half-happened).
      if (failures.length > 0 || signal.aborted) this.deps.configs.invalidate(id);
      else this.deps.configs.changed(id, touched);
      if (plan.firewall.attach !== undefined || plan.firewall.detach.length > 0) this.deps.configs.firewallsChanged(id);
      this.deps.cache.invalidate(id);
    }
    if (failures.length > 0) throw failures[0];
  }

  /** Its resource is gone and the NodeBalancer stays (Retain, Observe): what was read of its configs is held no longer. */
  forget(id: number): void {
    this.deps.configs.invalidate(id);
    this.vpcConfigs.delete(id);
    this.assignedHere.delete(id);
    this.deps.locks.forget(id);
  }

  /** How many NodeBalancers have firewalls assigned by this process that status has not recorded yet (a gauge: back to 0). */
  get assignedUnrecorded(): number {
    return this.assignedHere.size;
  }

  /**
   * Deletes the NodeBalancer, unless a lock forbids it: then the deletion waits (Locked, with
   * backoff: locks.ts) and no DELETE is sent while the NodeBalancer shows the lock. The lock
   * spec.deletionProtection made is removed first once that field is false.
   */
  async delete(m: Managed<NodeBalancerSpec>, observed: ObservedNb, signal: AbortSignal): Promise<{ gone: boolean }> {
    const id = observed.external.nb.id;
    this.deps.stats.forget(m.key.namespace, m.key.name);
    this.deps.transfer.forget(m.key.namespace, m.key.name);
    const locks = this.deps.locks;
    const ownLock = recordedLock(m);
    try {
      // Read afresh: the shared list may be a poll interval old, from before a lock was made.
      const nb = await linodeCall("reading the NodeBalancer", () => this.deps.linode.nodeBalancers.get(id, { signal }));
      // Its own lock goes first; holdDeletion then reads the locks afresh and finds it gone.
      if (!m.spec.deletionProtection && ownLock !== undefined && (nb.locks === undefined || nb.locks.includes("cannot_delete"))) await locks.remove(id, ownLock, signal);
      await locks.holdDeletion(nb, ownLock, signal);
      try {
        await this.deps.linode.nodeBalancers.delete(id, { signal });
      } catch (err) {
        // A refusal a lock explains is Locked; anything else is the API's answer, as ever.
        const why = await locks.explainRefusal(id, err, ownLock, signal);
        throw why === err ? translateLinodeError(err, "deleting the NodeBalancer") : why;
      }
      locks.forget(id);
    } catch (err) {
      if (isNotFound(err)) {
        locks.forget(id);
        return { gone: true };
      }
      throw err;
    } finally {
      this.deps.cache.invalidate(id);
      this.deps.configs.invalidate(id);
      this.assignedHere.delete(id);
      this.vpcConfigs.delete(id);
    }
    return { gone: false };
  }

  async afterObserve(m: Managed<NodeBalancerSpec>, observed: ObservedNb, signal: AbortSignal): Promise<AfterObserve | undefined> {
    await this.deps.stats.refresh(this.deps.linode, m.key.namespace, m.key.name, observed.external.nb.id, signal, parseApiTime(observed.external.nb.created));
    if (m.spec.managementPolicy === "Observe") return undefined;
    const problem = firewallProblem(observed.delta.firewall, m.key.namespace);
    if (problem === undefined) return undefined;
    // News once, not on every look: the condition already saying so is the record.
    if (getCondition(m.obj.status?.conditions, "Synced")?.reason !== problem.reason) this.deps.events.warning(m.obj, problem.reason, "Reconcile", problem.message);
    // Only a change of the spec or one made outside fixes it: the drift poll, no faster.
    return { notSynced: problem, pollMillis: this.deps.poll.readyMillis };
  }

  /** The subnets the spec names, as the account has them (`labelsOnly`: refs by id taken as named, unread). */
  private async specSubnets(m: Managed<NodeBalancerSpec>, maxAgeMillis: number, signal: AbortSignal, labelsOnly = false): Promise<SpecSubnets> {
    if (m.spec.vpcs === undefined && m.spec.frontendVpc === undefined) return { problems: [] };
    return linodeCall("listing the VPCs", () => findSpecSubnets(m.spec, this.deps.vpcs, maxAgeMillis, this.deps.poll.pendingMillis, signal, labelsOnly));
  }

  /** The backend subnet a create puts the nodes in (refusals come from create's own look). */
  private async createSubnet(m: Managed<NodeBalancerSpec>, signal: AbortSignal): Promise<BackendSubnet | undefined> {
    if (m.spec.vpcs === undefined) return undefined;
    const found = (await this.specSubnets(m, this.deps.poll.pendingMillis, signal)).backend;
    return found !== undefined ? { id: found.id, range: found.range } : undefined;
  }

  /**
   * The NodeBalancer's VPC configs: read once (create-only, they cannot change), or as status
   * recorded them; only where it may have any (the API says its frontend or backends are in a
   * VPC, a node is a VPC node, or the spec names a VPC).
   */
  private async vpcConfigsOf(m: Managed<NodeBalancerSpec>, nb: NodeBalancer, vpcNodes: boolean, signal: AbortSignal): Promise<NodeBalancerVpcConfig[]> {
    const known = this.vpcConfigs.get(nb.id) ?? recordedVpcs(m.obj.status, nb.id);
    if (known !== undefined && (known.length > 0 || !vpcNodes)) {
      this.vpcConfigs.set(nb.id, known);
      return known;
    }
    const may = nb.backendConnectivity === "vpc" || nb.frontendAddressType === "vpc" || vpcNodes || m.spec.vpcs !== undefined || m.spec.frontendVpc !== undefined;
    if (!may) return [];
    const read = await linodeCall("reading the VPC configs", () => this.deps.linode.nodeBalancers.listAllVpcConfigs(nb.id, { signal }));
    this.vpcConfigs.set(nb.id, read);
    return read;
  }

  /**
   * Whether this resource may assign firewall `firewallId`: naming an id is allowed here (its
   * own token, or the admin allows it on the operator's), the firewall exists in its account,
   * and no NodeBalancer of another namespace names it or holds it. One answer, whatever the
   * reason: the refusal reads the same (refusedMessage). Where naming is allowed, the look-up
   * is made before the other namespaces are asked, so a refusal takes the same calls either way.
   */
  private async mayAssign(m: Managed<NodeBalancerSpec>, firewallId: number, signal: AbortSignal): Promise<boolean> {
    const namespace = m.key.namespace;
    if (!this.deps.firewallRule.mayName(namespace)) return false;
    const exists = await this.firewallExists(firewallId, signal);
    return exists && !this.deps.firewallRule.claimedElsewhere(namespace, firewallId);
  }

  /** Whether the firewall exists (a 404 says it does not; any other failure is the pass's). */
  private async firewallExists(firewallId: number, signal: AbortSignal): Promise<boolean> {
    try {
      await linodeCall(`looking up firewall ${String(firewallId)}`, () => this.deps.linode.firewalls.get(firewallId, { signal }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * The firewalls this resource assigned itself: what status records, and what this process
   * assigned since (forgotten here once status records it, or once it is no longer assigned).
   */
  private ownFirewalls(m: Managed<NodeBalancerSpec>, nodeBalancerId: number, attached: readonly { id: number }[]): number[] {
    const recorded = recordedFirewalls(m);
    const here = this.assignedHere.get(nodeBalancerId);
    if (here === undefined) return recorded;
    const own = [...new Set([...recorded, ...here])];
    for (const id of here) if (recorded.includes(id) || !attached.some((f) => f.id === id)) here.delete(id);
    if (here.size === 0) this.assignedHere.delete(nodeBalancerId);
    return own;
  }

  private noteAssigned(nodeBalancerId: number, firewallId: number): void {
    const here = this.assignedHere.get(nodeBalancerId) ?? new Set<number>();
    here.add(firewallId);
    this.assignedHere.set(nodeBalancerId, here);
  }

  /**
   * Applies the firewall plan in the fewest calls, never leaving a NodeBalancer without a
   * firewall its spec asks for:
   *  - a swap (this resource's firewall for the spec's new one) is one call that replaces the
   *    NodeBalancer's firewalls (PUT .../firewalls): the API keeps one enabled firewall per
   *    NodeBalancer, so a removal first would leave it without one and an assignment first is
   *    refused. The list is read just before, and every firewall assigned by someone else is
   *    sent back in it (the API offers no conditional replace: one assigned elsewhere in the
   *    instant between the read and the call would be dropped, so the PUT is used for a swap
   *    only);
   *  - a first assignment and a removal keep the firewall's device routes: each touches that
   *    one assignment and nothing else someone else may be changing meanwhile.
   * A firewall gone already is done; one deleted since it was looked up is reported by the next
   * observation (FirewallNotFound).
   */
  private async changeFirewalls(
    nodeBalancerId: number, plan: FirewallPlan, attempt: (doing: string, fn: () => Promise<unknown>) => Promise<void>, failures: unknown[], signal: AbortSignal,
  ): Promise<void> {
    const api = this.deps.linode.firewalls;
    const attach = plan.attach;
    if (attach !== undefined && plan.swap !== undefined) {
      const away = plan.detach;
      await attempt(`replacing firewall ${away.map(String).join(", ")} with ${String(attach)}`, async () => {
        const now = await this.deps.linode.nodeBalancers.listAllFirewalls(nodeBalancerId, { signal });
        const kept = now.map((f) => f.id).filter((id) => id !== attach && !away.includes(id));
        await this.deps.linode.nodeBalancers.updateFirewalls(nodeBalancerId, { firewallIds: [attach, ...kept] }, { signal });
        this.noteAssigned(nodeBalancerId, attach);
      });
      return;
    }
    const before = failures.length;
    for (const firewallId of plan.detach) {
      await attempt(`removing firewall ${String(firewallId)}`, async () => {
        try {
          const devices = await api.listAllDevices(firewallId, { signal });
          const device = devices.find((d) => d.entity.type === "nodebalancer" && d.entity.id === nodeBalancerId);
          if (device !== undefined) await api.deleteDevice(firewallId, device.id, { signal });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      });
    }
    if (attach === undefined || failures.length > before) return;
    await attempt(`assigning firewall ${String(attach)}`, async () => {
      try {
        await api.createDevice(attach, { id: nodeBalancerId, type: "nodebalancer" }, { signal });
        this.noteAssigned(nodeBalancerId, attach);
      } catch (err) {
        // Deleted since it was looked up: the next observation reports it (FirewallNotFound).
        if (!isNotFound(err)) throw err;
      }
    });
  }

  /**
   * Why it does not serve (yet): no configs at all, a config without nodes (its port serves
   * nothing), or a config with health checks and no backend UP. The reason is the most basic
   * of these; the message names every config concerned.
   */
  private health(external: ObservedNodeBalancer): { reason: string; message: string; pollMillis: number } | undefined {
    // Only a change of the spec or one made outside fixes these: the drift poll is soon enough.
    if (external.configs.length === 0) {
      return {
        reason: NodeBalancerReasons.NoConfigs,
        message: "the NodeBalancer has no configs: it serves nothing until spec.configs has a port with at least one node",
        pollMillis: this.deps.poll.readyMillis,
      };
    }
    const empty = external.configs.filter((c) => c.nodes.length === 0);
    const down = external.configs.filter((c) => c.nodes.length > 0 && c.check !== "none" && !c.nodes.some((n) => n.status === "UP"));
    if (empty.length === 0 && down.length === 0) return undefined;
    const messages = [
      ...empty.map((c) => `config ${String(c.port)}: no nodes, nothing serves port ${String(c.port)}`),
      ...down.map((c) => {
        const counts = new Map<string, number>();
        for (const n of c.nodes) counts.set(n.status, (counts.get(n.status) ?? 0) + 1);
        return `config ${String(c.port)}: no backend UP (${[...counts].map(([s, k]) => `${String(k)} ${s}`).join(", ")})`;
      }),
    ];
    // Health changes no faster than the checks run: look again one check interval later.
    const interval = Math.min(...down.map((c) => c.checkInterval * 1000));
    const pollMillis = down.length === 0 ? this.deps.poll.readyMillis : Math.min(Math.max(interval, this.deps.poll.pendingMillis), this.deps.poll.readyMillis);
    return { reason: empty.length > 0 ? NodeBalancerReasons.NoNodes : NodeBalancerReasons.NoBackendUp, message: messages.join("; "), pollMillis };
  }
}

/**
 * Why the spec's firewall may not be assigned by this resource: one message whatever the case
 * (none with that id in its account, another namespace's NodeBalancer names or holds it, or
 * naming an id is not allowed here), so it tells nothing of what exists elsewhere.
 */
function refusedMessage(firewallId: number, namespace: string): string {
  return `spec.firewallId ${String(firewallId)} names no Cloud Firewall this resource may assign, so nothing is sent for it: there is none with that id in the Linode account it acts in, or a NodeBalancer of another namespace uses it, or naming a firewall by id with the operator's shared token is not allowed in namespace ${namespace} (with spec.credentialsRef, a token of the namespace's own, it is; on the shared token the operator's admin allows it with --adopt-namespaces, chart value adoptNamespaces). Until spec.firewallId names one it may assign, or is removed, no NodeBalancer is created without it and a firewall this resource assigned before stays`;
}

/** Why the spec's firewall is not assigned, when only a change of the spec (or outside) can fix it. */
function firewallProblem(plan: FirewallPlan, namespace: string): { reason: string; message: string } | undefined {
  if (plan.refused !== undefined) return { reason: NodeBalancerReasons.FirewallNotFound, message: refusedMessage(plan.refused, namespace) };
  if (plan.blockedBy.length > 0) {
    const ids = plan.blockedBy.map((f) => `${String(f.id)} (${f.label})`).join(", ");
    return {
      reason: NodeBalancerReasons.FirewallConflict,
      message: `spec.firewallId cannot be assigned: the NodeBalancer takes one enabled firewall and has firewall ${ids}, which this resource did not assign (someone else did, or it was assigned before spec.firewallId named it); the operator never removes it, so nothing is sent. Remove it from the NodeBalancer outside the operator, or name it in spec.firewallId`,
    };
  }
  return undefined;
}

/**
 * Status fields no longer written, removed (once) where a CRD of before still keeps them:
 * transfer counts up with traffic, so it is a metric (linode_nodebalancer_transfer_megabytes).
 */
const RETIRED = { transfer: undefined } as Partial<NodeBalancerObservedStatus>;

/** `own`: the assigned firewalls this resource assigned itself. */
function statusOf(o: ObservedNodeBalancer, own: readonly number[]): NodeBalancerObservedStatus {
  const { nb } = o;
  return {
    id: nb.id,
    label: nb.label,
    ...(nb.type !== undefined ? { type: nb.type } : {}),
    ...(nb.frontendAddressType !== null && nb.frontendAddressType !== undefined ? { frontendAddressType: nb.frontendAddressType } : {}),
    // Recorded even when empty: a later process (a restart) then knows there are none without asking.
    vpcs: o.vpcs.map((v) => ({
      id: v.id, purpose: v.purpose, subnetId: v.subnetId,
      ...(v.vpcId !== null && v.vpcId !== undefined ? { vpcId: v.vpcId } : {}),
      ...(v.ipv4Range !== null && v.ipv4Range !== undefined ? { ipv4Range: v.ipv4Range } : {}),
      ...(v.ipv6Range !== null && v.ipv6Range !== undefined ? { ipv6Range: v.ipv6Range } : {}),
    })),
    ...(nb.hostname !== null && nb.hostname !== "" ? { hostname: nb.hostname } : {}),
    ...(nb.ipv4 !== null ? { ipv4: nb.ipv4 } : {}),
    ...(nb.ipv6 !== null ? { ipv6: nb.ipv6 } : {}),
    ...(o.readAgainst !== undefined ? { updated: o.readAgainst } : {}),
    ports: o.configs.map((c) => String(c.port)).join(","),
    configs: o.configs.map((c) => ({
      port: c.port,
      id: c.id,
      protocol: c.protocol,
      ...(c.protocol === "udp" && c.udpCheckPort != null ? { udpCheckPort: c.udpCheckPort } : {}),
      ...(c.protocol === "udp" && c.udpSessionTimeout != null ? { udpSessionTimeout: c.udpSessionTimeout } : {}),
      algorithm: c.algorithm,
      stickiness: c.stickiness,
      check: c.check,
      checkInterval: c.checkInterval,
      checkTimeout: c.checkTimeout,
      checkAttempts: c.checkAttempts,
      ...(c.checkPath !== "" ? { checkPath: c.checkPath } : {}),
      ...(c.checkBody !== "" ? { checkBody: c.checkBody } : {}),
      checkPassive: c.checkPassive,
      cipherSuite: c.cipherSuite,
      proxyProtocol: c.proxyProtocol,
      nodesStatus: { up: c.nodesStatus.up, down: c.nodesStatus.down },
      ...(c.sslCommonname !== "" ? { sslCommonName: c.sslCommonname } : {}),
      ...(c.sslFingerprint !== "" ? { sslFingerprint: c.sslFingerprint } : {}),
      nodes: c.nodes.map((n) => ({
        label: n.label, address: n.address, id: n.id, status: n.status, mode: n.mode, weight: n.weight,
        ...(n.subnetId !== undefined ? { subnetId: n.subnetId } : {}),
        ...(n.vpcConfigId !== null && n.vpcConfigId !== undefined ? { vpcConfigId: n.vpcConfigId } : {}),
      })),
    })),
    firewalls: o.firewalls.map((f) => ({ id: f.id, label: f.label, status: f.status, assignedBy: own.includes(f.id) ? "ThisResource" : "Other" })),
  };
}
