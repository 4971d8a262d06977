// What hangs off a NodeBalancer costs a call each (the configs, the nodes of each config, its
// firewalls), so it is not read in full on every poll. The configs list (one call) is read on
// every observe: it carries each config's `nodes_status` counts, the health the API updates on
// its own. The nodes of a config are read again only when the config (or its counts) changed,
// when we changed it, or when the NodeBalancer's `updated` moved without our doing; firewalls
// after we assigned or removed one; firewalls and every config's nodes are also read again a
// few ready polls apart, whatever happened (the window in which a firewall removed outside is
// noticed and put back).
import type { Firewall, LinodeClient, NodeBalancer, NodeBalancerConfig } from "../../linode/index.ts";
import type { ObservedConfig } from "./diff.ts";

export interface Attached {
  configs: ObservedConfig[];
  firewalls: Firewall[];
}

interface Seen extends Attached {
  updated: string;
  /** When everything is read again, whatever happened. */
  nextFullAt: number;
  /** We changed it since the last read: `updated` moves by our doing, and these configs' nodes are stale. */
  ours?: { configIds: Set<number> };
  /** We assigned or removed a firewall: the list is stale (a device change need not move `updated`). */
  firewallsStale?: boolean;
}

/** Same config, same health counts: its nodes as last read still stand. */
function unchanged(a: NodeBalancerConfig, b: ObservedConfig): boolean {
  const { nodes: _nodes, ...old } = b;
  return JSON.stringify(a) === JSON.stringify(old);
}

export class ConfigReader {
  private readonly linode: LinodeClient;
  private readonly fullRefreshMillis: number;
  private readonly random: () => number;
  private readonly seen = new Map<number, Seen>();

  constructor(linode: LinodeClient, fullRefreshMillis: number, random: () => number = Math.random) {
    this.linode = linode;
    this.fullRefreshMillis = fullRefreshMillis;
    this.random = random;
  }

  async read(nb: NodeBalancer, signal: AbortSignal): Promise<Attached> {
    const api = this.linode.nodeBalancers;
    const prev = this.seen.get(nb.id);
    const at = Date.now();
    const full = prev === undefined || at >= prev.nextFullAt || (prev.updated !== nb.updated && prev.ours === undefined);
    const known = full ? new Map<number, ObservedConfig>() : new Map(prev.configs.map((c) => [c.id, c]));
    const stale = prev?.ours?.configIds ?? new Set<number>();
    const configs: ObservedConfig[] = [];
    for (const c of await api.listAllConfigs(nb.id, { signal })) {
      const before = known.get(c.id);
      const reuse = before !== undefined && !stale.has(c.id) && unchanged(c, before);
      configs.push(reuse ? { ...c, nodes: before.nodes } : { ...c, nodes: await api.listAllNodes(nb.id, c.id, { signal }) });
    }
    configs.sort((a, b) => a.port - b.port);
    const firewalls = full || prev.firewallsStale === true ? await api.listAllFirewalls(nb.id, { signal }) : prev.firewalls;
    // The first read's next full one falls anywhere in the period: NodeBalancers first read
    // together (a start, a restart) are then re-read a few at a time, not all in one window.
    const nextFullAt = !full ? prev.nextFullAt : at + this.fullRefreshMillis * (prev === undefined ? this.random() : 1);
    const seen: Seen = { updated: nb.updated, nextFullAt, configs, firewalls };
    this.seen.set(nb.id, seen);
    return seen;
  }

  /** We changed the NodeBalancer (and these configs): read their nodes again, and take its new `updated` as ours. */
  changed(id: number, configIds: readonly number[]): void {
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
  }
}
