// NodeBalancer ↔ Linode: the NodeBalancer comes from a list one sweep shares; its configs,
// nodes and firewalls are read only when something may have changed (ConfigReader). A create
// sends everything inline; afterwards each changed config converges with one atomic rebuild.
import { z } from "zod";
import { isNotFound, type LinodeClient, type NodeBalancer, type NodeBalancerCreateRequest } from "../../linode/index.ts";
import {
  ConditionReasons as R, getCondition, isTrue, RetryAfterError, TerminalError, type AfterObserve, type Created, type Deferral, type EventRecorder, type ExternalClient, type Managed, type Observation, type Observed,
  type Logger, type PollIntervals,
} from "../../runtime/contract.ts";

import { KindTimings } from "../shared/constants.ts";
import { labelOf } from "../shared/derived-label.ts";
import { isLabelTaken, labelInUse, linodeCall, translateLinodeError } from "../shared/linode-errors.ts";
import { locateOwned } from "../shared/locate.ts";
import type { ListCache } from "../shared/list-cache.ts";
import type { ConfigReader, ReadOptions, Recorded } from "./configs.ts";
import {
  configBody, immutableMismatches, isEmptyPlan, noFirewallChange, nodeBodies, planFirewalls, planNodeBalancer, type FirewallPlan, type NodeBalancerPlan,
  type ObservedNodeBalancer,
} from "./diff.ts";
import type { NodeBalancerSpec, NodeBalancerStatus } from "./schema.ts";
import type { NodeBalancerStatsReader } from "./stats.ts";
import { tlsReference } from "./tls.ts";
import { skippedSummary, type EffectiveSpec, type SkippedBackend } from "./backends-from.ts";
import { NodeBalancerReasons } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import { parseApiTime } from "../shared/api-time.ts";


export type NodeBalancerObservedStatus = Omit<NodeBalancerStatus, "conditions" | "observedGeneration" | "lastRequests">;
type ObservedNb = Observed<ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan>;

export interface NodeBalancerExternalDeps {
  linode: LinodeClient;
  cache: ListCache<NodeBalancer>;
  configs: ConfigReader;
  stats: NodeBalancerStatsReader;
  poll: PollIntervals;
  /** How old a Ready NodeBalancer's health counts may be when its `updated` has not moved (0: read every look). */
  healthMillis: number;
  clusterId: string;
  events: EventRecorder;
  /** The spec with the backends configs[].nodesFrom finds now merged in. */
  backends(m: Managed<NodeBalancerSpec>): EffectiveSpec<NodeBalancerSpec>;
  /** Where the nodes nodesFrom skips are named (status and Events only count them). */
  log?: Logger;
}

/** What status recorded of the last read of NodeBalancer `id` (configs with their nodes, firewalls), if it recorded it whole. */
const recordSchema = z.object({
  id: z.int(),
  updated: z.string(),
  configs: z.array(z.object({
    id: z.int(),
    nodesStatus: z.object({ up: z.int(), down: z.int() }),
    nodes: z.array(z.object({ id: z.int(), label: z.string(), address: z.string(), status: z.string(), mode: z.string(), weight: z.int() })).default([]),
  })).default([]),
  firewalls: z.array(z.object({ id: z.int(), label: z.string(), status: z.string() })).default([]),
});
function optionalRecord(status: Record<string, unknown> | undefined, id: number): { recorded?: Recorded } {
  const parsed = recordSchema.safeParse(status);
  return parsed.success && parsed.data.id === id ? { recorded: parsed.data } : {};
}

/** What this resource answered for when last observed (its own status, written by earlier passes). */
const recordedFirewalls = (m: Managed<NodeBalancerSpec>): number[] => {
  const parsed = z.array(z.int()).safeParse(m.obj.status?.managedFirewallIds);
  return parsed.success ? parsed.data : [];
};

export class NodeBalancerExternal implements ExternalClient<NodeBalancerSpec, ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan> {
  private readonly deps: NodeBalancerExternalDeps;

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
    const settled = isTrue(m.obj.status?.conditions, "Ready") && m.obj.status?.observedGeneration === m.obj.metadata.generation;
    // One NodeBalancer list per poll interval serves every look (our own changes invalidate it).
    const maxAge = settled ? this.deps.poll.readyMillis : this.deps.poll.pendingMillis;
    const api = this.deps.linode.nodeBalancers;
    const nb = await locateOwned(m, {
      kind: "NodeBalancer", what: "NodeBalancer", idField: "nodeBalancerId", named: m.spec.nodeBalancerId, mismatchReason: NodeBalancerReasons.NodeBalancerIdMismatch,
      label: labelOf(m, this.deps.clusterId),
      byId: (id) => this.deps.cache.get(id, maxAge, signal),
      byLabel: (label) => api.findByLabel(label, { signal }),
    });
    if (nb === undefined) return { exists: false };
    if (deleting) {
      // Only its existence matters now: no config reads.
      const external = { nb, configs: [], firewalls: [] };
      return { exists: true, external, externalId: String(nb.id), status: { id: nb.id }, ready: false, readyReason: R.Deleting, upToDate: true, delta: { firewall: noFirewallChange, create: [], remove: [], rebuild: [], summary: "" } };
    }
    const found = nb;
    const effective = this.deps.backends(m);
    // Held: nothing about backends is planned from a source that cannot be read (the spec's own nodes only, and nothing is sent).
    const spec = effective.spec;
    // Health counts may be a health window old only while Ready and settled; otherwise each look reads them.
    const healthy = settled && this.deps.healthMillis > 0;
    const readOptions: ReadOptions = {
      healthMaxAgeMillis: healthy ? this.deps.healthMillis - this.deps.poll.readyMillis / 2 : 0,
      firewallsNow: m.spec.firewallId !== undefined || recordedFirewalls(m).length > 0,
      ...optionalRecord(m.obj.status, nb.id),
    };
    const attached = await linodeCall("reading the configs and nodes", () => this.deps.configs.read(found, signal, readOptions));
    const external: ObservedNodeBalancer = { nb, configs: attached.configs, firewalls: attached.firewalls, ...(attached.updated !== undefined ? { readAgainst: attached.updated } : {}) };
    const want = m.spec.firewallId;
    // Only a firewall about to be assigned is looked up: a deleted one is reported, never sent.
    const missing = want !== undefined && m.spec.managementPolicy !== "Observe" && !external.firewalls.some((f) => f.id === want) && !(await this.firewallExists(want, signal));
    const firewall = planFirewalls(want, recordedFirewalls(m), external.firewalls, missing);
    const plan = planNodeBalancer(spec, m.spec.label, external, tlsReference.values(m), firewall);
    this.announceSkipped(m, effective.skipped);
    const mismatches = immutableMismatches(m.spec, external);
    const health = this.health(external);
    const upToDate = isEmptyPlan(plan);
    return {
      exists: true,
      external,
      externalId: String(nb.id),
      status: { ...statusOf(external, m.obj.status?.transfer), managedFirewallIds: firewall.managed.length > 0 ? firewall.managed : undefined, skippedBackends: effective.skipped.length > 0 ? skippedSummary(effective.skipped) : undefined },
      ready: health === undefined,
      ...(health !== undefined ? { readyReason: health.reason, readyMessage: health.message } : {}),
      upToDate,
      diff: plan.summary,
      delta: plan,
      ...(effective.held !== undefined && m.spec.managementPolicy !== "Observe" ? { unfixable: effective.held } : {}),
      ...(mismatches.length > 0 ? { unfixable: { reason: SharedReasons.ImmutableFieldMismatch, message: `the NodeBalancer differs from the spec in what cannot change, so nothing is sent: ${mismatches.join("; ")}` } } : {}),
      ...(!upToDate ? { pollMillis: this.deps.poll.pendingMillis } : health !== undefined ? { pollMillis: health.pollMillis } : {}),
    };
  }

  /** Backends nodesFrom cannot find now hold the create (a config is created with its nodes, never empty). */
  readyToCreate(m: Managed<NodeBalancerSpec>): Promise<Deferral | undefined> {
    const effective = this.deps.backends(m);
    this.announceSkipped(m, effective.skipped);
    if (effective.held === undefined) return Promise.resolve(undefined);
    // The operator's rights and the admin's flags change only with a restart; a Service, EndpointSlice or Node changing wakes it.
    if (effective.held.reason === SharedReasons.NodesNotReadable || effective.held.reason === NodeBalancerReasons.NodePortsNotAllowed) return Promise.reject(new TerminalError(effective.held.reason, `${effective.held.message}; nothing was created`));
    return Promise.resolve({ reason: effective.held.reason, message: `${effective.held.message}; the NodeBalancer is created once every config has a backend`, retryAfterMillis: this.deps.poll.readyMillis });
  }

  /**
   * Nodes skipped as backends are news once: status has what was already said. The Event counts
   * them; which nodes, at which addresses, goes to the operator's log only.
   */
  private announceSkipped(m: Managed<NodeBalancerSpec>, skipped: SkippedBackend[]): void {
    const said = z.array(z.string()).safeParse(m.obj.status?.skippedBackends);
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
    const effective = this.deps.backends(m);
    if (effective.held !== undefined) throw new RetryAfterError(effective.held.reason, effective.held.message, this.deps.poll.pendingMillis);
    const s = effective.spec;
    const tls = tlsReference.values(m);
    const label = labelOf(m, this.deps.clusterId);
    const req: NodeBalancerCreateRequest = {
      region: s.region, label, clientConnThrottle: s.clientConnThrottle, tags: s.tags,
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
    if (s.firewallId === undefined) this.deps.configs.createdWithoutFirewall(nb.id);
    // Ready waits for a backend UP in each checked config, which no look sees before its first check.
    const firstCheck = Math.max(0, ...s.configs.filter((c) => c.check !== "none" && c.nodes.length > 0).map((c) => c.checkInterval * 1000));
    return { externalId: String(nb.id), status: { id: nb.id }, ...(firstCheck > 0 ? { lookAfterMillis: Math.min(firstCheck, this.deps.poll.readyMillis) } : {}) };
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
  }

  async delete(m: Managed<NodeBalancerSpec>, observed: ObservedNb, signal: AbortSignal): Promise<{ gone: boolean }> {
    const id = observed.external.nb.id;
    this.deps.stats.forget(m.key.namespace, m.key.name);
    try {
      await linodeCall("deleting the NodeBalancer", () => this.deps.linode.nodeBalancers.delete(id, { signal }));
    } catch (err) {
      if (isNotFound(err)) return { gone: true };
      throw err;
    } finally {
      this.deps.cache.invalidate(id);
      this.deps.configs.invalidate(id);
    }
    return { gone: false };
  }

  async afterObserve(m: Managed<NodeBalancerSpec>, observed: ObservedNb, signal: AbortSignal): Promise<AfterObserve | undefined> {
    await this.deps.stats.refresh(this.deps.linode, m.key.namespace, m.key.name, observed.external.nb.id, signal, parseApiTime(observed.external.nb.created));
    if (m.spec.managementPolicy === "Observe") return undefined;
    const problem = firewallProblem(observed.delta.firewall);
    if (problem === undefined) return undefined;
    // News once, not on every look: the condition already saying so is the record.
    if (getCondition(m.obj.status?.conditions, "Synced")?.reason !== problem.reason) this.deps.events.warning(m.obj, problem.reason, "Reconcile", problem.message);
    // Only a change of the spec or one made outside fixes it: the drift poll, no faster.
    return { notSynced: problem, pollMillis: this.deps.poll.readyMillis };
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
   * Removes what the spec no longer names, then assigns what it does: in that order, as the
   * API keeps one enabled firewall per NodeBalancer (an assign after a failed removal would only
   * be refused, so it is not sent). Gone already is done.
   */
  private async changeFirewalls(
    nodeBalancerId: number, plan: FirewallPlan, attempt: (doing: string, fn: () => Promise<unknown>) => Promise<void>, failures: unknown[], signal: AbortSignal,
  ): Promise<void> {
    const api = this.deps.linode.firewalls;
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
    const attach = plan.attach;
    if (attach === undefined || failures.length > before) return;
    await attempt(`assigning firewall ${String(attach)}`, async () => {
      try {
        await api.createDevice(attach, { id: nodeBalancerId, type: "nodebalancer" }, { signal });
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

/** Why the spec's firewall is not assigned, when only a change of the spec (or outside) can fix it. */
function firewallProblem(plan: FirewallPlan): { reason: string; message: string } | undefined {
  if (plan.missing !== undefined) {
    return {
      reason: NodeBalancerReasons.FirewallNotFound,
      message: `spec.firewallId ${String(plan.missing)} names a Cloud Firewall that no longer exists (deleted outside the operator): the NodeBalancer has no firewall from this resource until spec.firewallId names an existing one or is removed`,
    };
  }
  if (plan.blockedBy.length > 0) {
    const ids = plan.blockedBy.map((f) => `${String(f.id)} (${f.label})`).join(", ");
    return {
      reason: NodeBalancerReasons.FirewallConflict,
      message: `spec.firewallId cannot be assigned: the NodeBalancer takes one enabled firewall and has firewall ${ids}, assigned outside the operator and never named in spec.firewallId; it is not removed by the operator. Remove it, or name it in spec.firewallId`,
    };
  }
  return undefined;
}

/** The transfer status shows now: the API's, unless the figures status has are under an hour old (then none: status keeps them). */
function transferStatus(nb: ObservedNodeBalancer["nb"], shown: unknown): NodeBalancerObservedStatus["transfer"] | undefined {
  const figures = Object.fromEntries(Object.entries(nb.transfer).filter(([, v]) => v !== null)) as { in?: number; out?: number; total?: number };
  if (Object.keys(figures).length === 0) return undefined;
  const at = z.object({ at: z.string() }).safeParse(shown);
  if (at.success && Date.now() - Date.parse(at.data.at) < KindTimings.transferRefreshMillis) return undefined;
  return { ...figures, at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") };
}

function statusOf(o: ObservedNodeBalancer, shownTransfer: unknown): NodeBalancerObservedStatus {
  const { nb } = o;
  const transfer = transferStatus(nb, shownTransfer);
  return {
    id: nb.id,
    label: nb.label,
    ...(nb.hostname !== null && nb.hostname !== "" ? { hostname: nb.hostname } : {}),
    ...(nb.ipv4 !== null ? { ipv4: nb.ipv4 } : {}),
    ...(nb.ipv6 !== null ? { ipv6: nb.ipv6 } : {}),
    ...(transfer !== undefined ? { transfer } : {}),
    ...(o.readAgainst !== undefined ? { updated: o.readAgainst } : {}),
    ports: o.configs.map((c) => String(c.port)).join(","),
    configs: o.configs.map((c) => ({
      port: c.port,
      id: c.id,
      protocol: c.protocol,
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
      nodes: c.nodes.map((n) => ({ label: n.label, address: n.address, id: n.id, status: n.status, mode: n.mode, weight: n.weight })),
    })),
    firewalls: o.firewalls.map((f) => ({ id: f.id, label: f.label, status: f.status })),
  };
}
