// What hangs off a NodeBalancer costs a call each (the configs, the nodes of each config, its
// firewalls), so it is not read in full on every poll.
//
// The assumption this file makes about the Linode API (the recordings cannot show it: their times
// are sanitized): a change to a NodeBalancer's configs or nodes moves the NodeBalancer's
// `updated`, which the one shared NodeBalancer list carries; a firewall device change need not.
// So:
//  - the configs list (one call) is read every health window (--poll-health-seconds, by default
//    every drift window), or at once when `updated` moved: it carries each config's
//    `nodes_status` counts, the backend health the API updates on its own;
//  - a config's nodes are read again only when the config (or its counts) changed, when we
//    changed it, or when `updated` moved without our doing; a config whose settings changed
//    without our doing counts as `updated` moving (the list a look trusts may predate it);
//  - firewalls are read after we assigned or removed one, and on every look at a NodeBalancer
//    whose spec names one (an assignment removed outside is put back within the drift window);
//  - after a restart, what status recorded is trusted while the NodeBalancer's `updated` is the
//    one status recorded with it: the configs list is read, nodes only where counts differ;
//  - `updated` has seconds precision: a read made within its second could miss a later change in
//    that same second, so such a read is not trusted (the next look reads in full again, and
//    status records `updated` only from a trusted read). When the read was made goes by the
//    API's clock (the configs list's Date header, two whole seconds after `updated`'s, one for
//    the API servers' clocks), not this node's; an answer without one goes by this node's clock,
//    taken to agree with the API's within 2 s;
//  - the safety net, a full read a fixed period apart whatever `updated` says, is off unless
//    --nodebalancer-reread-seconds sets that period (for an API where the assumption fails);
//  - a look for the health counts alone (nothing moved) is routine: it gives way in the paginated
//    class to a look that puts drift back or reads a new NodeBalancer;
//  - a read cut short (the call budget held a nodes list back and deferred the pass, or a call
//    failed) keeps what it got for the next pass, for a budget window and while `updated` stays:
//    that pass goes on from where it stopped instead of reading the configs list and the first
//    configs' nodes again.
import type { LinodeClient, NodeBalancer, NodeBalancerConfig, NodeBalancerNode } from "../../linode/index.ts";
import type { AttachedFirewall, ObservedConfig } from "./diff.ts";
import { parseApiTime, servedSecondsAfter } from "../shared/api-time.ts";

export interface Attached {
  configs: ObservedConfig[];
  firewalls: AttachedFirewall[];
  /** The NodeBalancer's `updated` these were read against, once a later change could not share its second (status records it). */
  updated?: string;
}

/** What an earlier process recorded in status: the last read, as the API answered it. */
export interface Recorded {
  updated: string;
  configs: { id: number; nodesStatus: { up: number; down: number }; nodes: Omit<NodeBalancerNode, "configId" | "nodebalancerId">[] }[];
  firewalls: AttachedFirewall[];
}

export interface ReadOptions {
  /** How old the configs list (the health counts) may be when nothing says it changed; 0 = read it now. */
  healthMaxAgeMillis: number;
  /** Read the firewalls now, whatever happened (the spec names one, or one it named is to be removed). */
  firewallsNow: boolean;
  /** What status recorded, to start from when this process has not read the NodeBalancer yet. */
  recorded?: Recorded;
}

interface Seen extends Attached {
  /** The NodeBalancer's `updated` at the last read. */
  at: string;
  /** Whether the last read was made after `updated`'s second ended: a change since would have moved it. */
  trusted: boolean;
  /** When the configs list was last read. */
  configsAt: number;
  /** When everything is read again, whatever happened (Infinity: never, the safety net is off). */
  nextFullAt: number;
  /** We changed it since the last read: `updated` moves by our doing, and these configs' nodes are stale. */
  ours?: { configIds: Set<number> };
  /** We assigned or removed a firewall: the list is stale (a device change need not move `updated`). */
  firewallsStale?: boolean;
}

/** Same config, same health counts: its nodes as last read still stand. */
function unchanged(a: NodeBalancerConfig, b: ObservedConfig): boolean {
  return sameSettings(a, b) && a.nodesStatus.up === b.nodesStatus.up && a.nodesStatus.down === b.nodesStatus.down;
}

/** Same config settings, whatever its health counts (the API moves those on its own). */
function sameSettings(a: NodeBalancerConfig, b: ObservedConfig): boolean {
  const { nodes: _nodes, nodesStatus: _was, ...old } = b;
  const { nodesStatus: _now, ...now } = a;
  return JSON.stringify(now) === JSON.stringify(old);
}

/** A config (not one we changed) differs in its settings, is new, or has gone. */
function changedOutside(listed: readonly NodeBalancerConfig[], before: readonly ObservedConfig[], ours: ReadonlySet<number>): boolean {
  const was = new Map(before.map((c) => [c.id, c]));
  const now = new Set(listed.map((c) => c.id));
  const differs = (c: NodeBalancerConfig): boolean => {
    const b = was.get(c.id);
    return b === undefined || !sameSettings(c, b);
  };
  return listed.some((c) => !ours.has(c.id) && differs(c)) || before.some((c) => !ours.has(c.id) && !now.has(c.id));
}

/** `updated` is to the second: a read this long after it by this node's clock (its second, and 2 s for clocks) saw every change that shares it. */
const TRUST_AFTER_MILLIS = 3_000;
/**
 * How long after a create its first look waits at least: one sooner is not trusted, and the
 * next look reads every config's nodes and the firewalls again (the API's answer and a second
 * of margin on top of the trust window).
 */
export const FIRST_TRUSTED_LOOK_MILLIS = TRUST_AFTER_MILLIS + 1_000;
/** How long a read cut short is kept for the next pass: a deferred pass comes back within a budget window (the API's is a minute). */
const KEEP_CUT_SHORT_MILLIS = 60_000;

/** What a read cut short got: its configs list and the nodes lists it read, against the NodeBalancer's `updated` then. */
interface CutShort {
  updated: string;
  /** When its configs list was read (this node's clock) and served (the API's, when it said). */
  at: number;
  servedAt?: number;
  listed: NodeBalancerConfig[];
  nodes: Map<number, NodeBalancerNode[]>;
}

export class ConfigReader {
  private readonly linode: LinodeClient;
  private readonly fullRefreshMillis: number;
  private readonly random: () => number;
  private readonly seen = new Map<number, Seen>();
  /** NodeBalancers we just created without a firewall: none to read at their first look. */
  private readonly createdBare = new Set<number>();
  /** Reads cut short, by NodeBalancer id, for the pass that goes on with them. */
  private readonly cutShort = new Map<number, CutShort>();

  /** `fullRefreshMillis`: the safety net's period, 0 = off. */
  constructor(linode: LinodeClient, fullRefreshMillis: number, random: () => number = Math.random) {
    this.linode = linode;
    this.fullRefreshMillis = fullRefreshMillis;
    this.random = random;
  }

  /** How many NodeBalancers this reader remembers (a gauge: back to its steady size after deletions). */
  get size(): number {
    return this.seen.size + this.createdBare.size + this.cutShort.size;
  }

  async read(nb: NodeBalancer, signal: AbortSignal, opts: ReadOptions): Promise<Attached> {
    const api = this.linode.nodeBalancers;
    const prev = this.seen.get(nb.id);
    const at = Date.now();
    const moved = prev !== undefined && prev.at !== nb.updated && prev.ours === undefined;
    const full = prev === undefined || at >= prev.nextFullAt || moved || !prev.trusted;
    if (!full && prev.ours === undefined && prev.firewallsStale !== true && at - prev.configsAt < opts.healthMaxAgeMillis) {
      if (opts.firewallsNow) prev.firewalls = await api.listAllFirewalls(nb.id, { signal });
      return prev;
    }
    // After a restart, status's record stands in for the last read while `updated` says nothing changed since.
    const recorded = prev === undefined && opts.recorded?.updated === nb.updated ? opts.recorded : undefined;
    const stale = prev?.ours?.configIds ?? new Set<number>();
    const kept = this.resume(nb, at);
    // The time of the oldest read this one is made of: what trust and the health counts' age go by.
    const readAt = kept?.at ?? at;
    // Only the health counts are due (nothing moved, nothing of ours): a routine look, which gives
    // way in the paginated class to a look that puts drift back or reads a new NodeBalancer.
    const routine = !full && prev.ours === undefined && prev.firewallsStale !== true;
    const { listed, servedAt } = kept ?? await this.configsList(nb.id, routine, signal);
    const progress: CutShort = { updated: nb.updated, at: readAt, ...(servedAt !== undefined ? { servedAt } : {}), listed, nodes: new Map(kept?.nodes) };
    try {
      // A settled look trusts a NodeBalancer list up to a window old, so `updated` may predate a
      // change the configs list shows: a config changed (or added, or gone) without our doing means
      // the NodeBalancer changed outside, its other configs' nodes perhaps with it (they move no
      // field of their config): all is read again, as when `updated` moves.
      const whole = full || changedOutside(listed, prev.configs, stale);
      const known = whole ? new Map<number, ObservedConfig>() : new Map(prev.configs.map((c) => [c.id, c]));
      const configs: ObservedConfig[] = [];
      for (const c of listed) {
        const before = known.get(c.id);
        const reuse = before !== undefined && !stale.has(c.id) && unchanged(c, before) ? before.nodes : recordedNodes(recorded, nb.id, c);
        let nodes = reuse ?? progress.nodes.get(c.id);
        if (nodes === undefined) {
          nodes = await api.listAllNodes(nb.id, c.id, { signal });
          progress.nodes.set(c.id, nodes);
        }
        configs.push({ ...c, nodes });
      }
      configs.sort((a, b) => a.port - b.port);
      const bare = this.createdBare.delete(nb.id) && prev === undefined && !opts.firewallsNow ? [] : undefined;
      const firewalls = bare ?? await this.firewalls(nb.id, prev, whole, recorded, opts.firewallsNow, signal);
      // The first read's next full one falls anywhere in the period: NodeBalancers first read
      // together (a start, a restart) are then re-read a few at a time, not all in one window.
      const period = this.fullRefreshMillis;
      const nextFullAt = period === 0 ? Infinity : prev !== undefined && !whole ? prev.nextFullAt : at + period * (prev === undefined ? this.random() : 1);
      const trusted = servedAt !== undefined ? servedSecondsAfter(servedAt, nb.updated) : readAt - parseApiTime(nb.updated) > TRUST_AFTER_MILLIS;
      const seen: Seen = { at: nb.updated, trusted, ...(trusted ? { updated: nb.updated } : {}), configsAt: readAt, nextFullAt, configs, firewalls };
      this.seen.set(nb.id, seen);
      return seen;
    } catch (err) {
      this.cutShort.set(nb.id, progress);
      throw err;
    }
  }

  private async configsList(id: number, routine: boolean, signal: AbortSignal): Promise<{ listed: NodeBalancerConfig[]; servedAt?: number }> {
    const { configs, servedAt } = await this.linode.nodeBalancers.listAllConfigsServed(id, { signal, ...(routine ? { routine } : {}) });
    return servedAt === undefined ? { listed: configs } : { listed: configs, servedAt };
  }

  /** A read cut short for this NodeBalancer that the pass may go on with (taken: it is kept again only if this one is cut short too). */
  private resume(nb: NodeBalancer, at: number): CutShort | undefined {
    // Expired ones go at every read: a NodeBalancer not read again leaves nothing behind for long.
    for (const [id, c] of this.cutShort) if (at - c.at >= KEEP_CUT_SHORT_MILLIS) this.cutShort.delete(id);
    const kept = this.cutShort.get(nb.id);
    this.cutShort.delete(nb.id);
    return kept?.updated === nb.updated ? kept : undefined;
  }

  /** Read now: when asked, when there is no earlier read (status's record after a restart stands in), after a full read or a change of ours. */
  private async firewalls(id: number, prev: Seen | undefined, full: boolean, recorded: Recorded | undefined, now: boolean, signal: AbortSignal): Promise<AttachedFirewall[]> {
    const kept = now ? undefined : prev === undefined ? recorded?.firewalls : !full && prev.firewallsStale !== true ? prev.firewalls : undefined;
    return kept ?? await this.linode.nodeBalancers.listAllFirewalls(id, { signal });
  }

  /** We created it, with no firewall: its first look need not list them. */
  createdWithoutFirewall(id: number): void {
    this.createdBare.add(id);
  }

  /** We changed the NodeBalancer (and these configs): read their nodes again, and take its new `updated` as ours. */
  changed(id: number, configIds: readonly number[]): void {
    this.cutShort.delete(id);
    const prev = this.seen.get(id);
    if (prev === undefined) return;
    const ids = prev.ours?.configIds ?? new Set<number>();
    for (const c of configIds) ids.add(c);
    prev.ours = { configIds: ids };
  }

  /** We assigned or removed a firewall: read the NodeBalancer's firewalls again next time. */
  firewallsChanged(id: number): void {
    const prev = this.seen.get(id);
    if (prev !== undefined) prev.firewallsStale = true;
  }

  /** Read everything again next time (it is gone, or we cannot tell what changed). */
  invalidate(id: number): void {
    this.seen.delete(id);
    this.createdBare.delete(id);
    this.cutShort.delete(id);
  }
}

/** A config's nodes as status recorded them, if that config's health counts are still the same (else they are read). */
function recordedNodes(recorded: Recorded | undefined, nodeBalancerId: number, c: NodeBalancerConfig): NodeBalancerNode[] | undefined {
  const r = recorded?.configs.find((x) => x.id === c.id);
  if (r === undefined || r.nodesStatus.up !== c.nodesStatus.up || r.nodesStatus.down !== c.nodesStatus.down) return undefined;
  return r.nodes.map((n) => ({ ...n, configId: c.id, nodebalancerId: nodeBalancerId }));
}
