// Which shards are alive: each replica holds a Lease of its own (the membership: a LeaderElector
// on "<ring>-shard-<identity>", which only that replica ever holds, so it stops acting at its
// renew deadline as a leader does), labelled with the ring's name; every replica lists the
// ring's Leases each retry period. A shard is alive while its Lease is held and has changed
// within its duration, judged by the local clock since its resourceVersion last changed (as the
// leader elector judges expiry, never by the holder's clock). A shard that stopped renewing
// stopped acting at its renew deadline (10 s), before its Lease expires (15 s): when the others
// see it dead, it is not acting. A shard that shut down cleanly clears its holder: dead at once.
import type { KubeApi, LeaseObject } from "../../kube/types.ts";
import { errorChain, isConflict, isNotFound } from "../../kube/errors.ts";
import type { Logger } from "../logger.ts";
import { labelValueFor } from "../connection-secrets.ts";
import { Timings } from "../timings.ts";
import { HashRing } from "./ring.ts";

/** The label on a shard's membership Lease: the ring (the release) it belongs to. */
export const SHARD_RING_LABEL = "linode.operator.dev/shard-ring";

/** The name of `identity`'s membership Lease in `ring` (a Lease name: at most 253 characters, DNS subdomain). */
export const shardLeaseName = (ring: string, identity: string): string => `${ring}-shard-${identity}`;

interface Seen { resourceVersion: string | undefined; at: number }

/** A shard's Lease not renewed for this long past its duration is deleted by the leader (its objects long taken over). */
export const DEAD_LEASE_KEPT_MILLIS = 10 * 60_000;

/** How long a shard's death is remembered: the sharder hands its objects over within a sweep or two (a minute each). */
const DEATHS_KEPT_MILLIS = 10 * 60_000;

export interface ShardMembersOptions {
  namespace: string;
  ring: string;
  /** How often the Leases are listed (the lease's retry period by default). */
  pollMillis?: number;
  /** Called with the ring whenever the set of alive shards changes (and once, first). */
  onChange: (ring: HashRing) => void;
  log?: Logger;
  now?: () => number;
}

export class ShardMembers {
  private readonly kube: KubeApi;
  private readonly opts: ShardMembersOptions;
  private readonly seen = new Map<string, Seen>();
  /** Shards this replica saw alive and then dead, with when it first saw each dead (pruned after DEATHS_KEPT_MILLIS). */
  private readonly deaths = new Map<string, number>();
  private alive: string[] | undefined;
  /** The shards' Leases that were not alive at the last list: the version listed, and how long past its duration each had been unchanged. */
  private deadLeases: { name: string; identity: string; resourceVersion: string | undefined; deadForMillis: number }[] = [];
  private current: HashRing | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(kube: KubeApi, opts: ShardMembersOptions) {
    this.kube = kube;
    this.opts = opts;
  }

  /** The alive shards as last listed (undefined before the first list). */
  get shards(): readonly string[] | undefined {
    return this.alive;
  }

  /**
   * When this replica first saw `shard` dead after seeing it alive, if it did within the last
   * ten minutes. A dead shard stopped acting (at its renew deadline) before its Lease expired,
   * so before this moment: a read of the cloud begun after it holds everything that shard did.
   */
  diedAt(shard: string): number | undefined {
    return this.deaths.get(shard);
  }

  /**
   * The shards whose Leases are there but not alive as last listed (dead, or shut down): those a
   * replica that starts leading never saw leave, whose objects it takes over first.
   */
  dead(): string[] {
    // Only names a shard label can carry: the takeover selects their objects by it.
    return this.deadLeases.map((d) => d.identity).filter((identity) => labelValueFor(identity) === identity);
  }

  /**
   * Deletes the Leases of shards dead for longer than DEAD_LEASE_KEPT_MILLIS (the leader's
   * housekeeping: a Deployment's replicas have new names after every rollout, and each left a
   * Lease behind). Each only if it is still the version listed: a replica that comes back
   * renews it first, or makes a new one and joins. Returns how many were deleted.
   */
  async pruneDead(): Promise<number> {
    let deleted = 0;
    for (const { name, resourceVersion, deadForMillis } of this.deadLeases) {
      if (deadForMillis <= DEAD_LEASE_KEPT_MILLIS || resourceVersion === undefined) continue;
      try {
        await this.kube.deleteLease({ namespace: this.opts.namespace, name }, resourceVersion);
        deleted++;
        this.seen.delete(name);
      } catch (err) {
        // Renewed or gone meanwhile: the next list says which.
        if (!isConflict(err) && !isNotFound(err)) this.opts.log?.warn({ err: errorChain(err), lease: name }, "could not delete a dead shard's Lease");
      }
    }
    if (deleted > 0) this.opts.log?.info({ deleted, deadForMoreThanMillis: DEAD_LEASE_KEPT_MILLIS }, "deleted the Leases of long-dead shards");
    this.deadLeases = this.deadLeases.filter((d) => this.seen.has(d.name));
    return deleted;
  }

  /** The ring of the alive shards as last listed (undefined before the first list). */
  get ring(): HashRing | undefined {
    return this.current;
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      void this.refresh().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMillis ?? Timings.retryPeriodMillis);
      });
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Lists the ring's Leases once; calls onChange when the alive set differs from the last. */
  async refresh(): Promise<void> {
    let leases: LeaseObject[];
    try {
      leases = await this.kube.listLeases(this.opts.namespace, `${SHARD_RING_LABEL}=${this.opts.ring}`);
    } catch (err) {
      // Nothing is concluded from a failed list: the shards alive stay as they were seen.
      this.opts.log?.warn({ err: errorChain(err) }, "could not list the shards' Leases");
      return;
    }
    const now = (this.opts.now ?? Date.now)();
    const names = new Set<string>();
    const alive: string[] = [];
    const dead: typeof this.deadLeases = [];
    const prefix = shardLeaseName(this.opts.ring, "");
    for (const lease of leases) {
      const name = lease.metadata?.name ?? "";
      names.add(name);
      const rv = lease.metadata?.resourceVersion;
      const before = this.seen.get(name);
      const seen = before !== undefined && before.resourceVersion === rv ? before : { resourceVersion: rv, at: now };
      this.seen.set(name, seen);
      const holder = lease.spec?.holderIdentity ?? "";
      const duration = (lease.spec?.leaseDurationSeconds ?? Timings.leaseDurationMillis / 1000) * 1000;
      // Only its own replica holds a shard's Lease: a holder of another name is not a member.
      if (holder === "" || name !== shardLeaseName(this.opts.ring, holder) || now - seen.at > duration) {
        if (name.startsWith(prefix) && name.length > prefix.length) dead.push({ name, identity: name.slice(prefix.length), resourceVersion: rv, deadForMillis: now - seen.at - duration });
        continue;
      }
      alive.push(holder);
    }
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
    this.deadLeases = dead;
    alive.sort();
    for (const shard of this.alive ?? []) if (!alive.includes(shard) && !this.deaths.has(shard)) this.deaths.set(shard, now);
    for (const [shard, at] of this.deaths) if (alive.includes(shard) || now - at > DEATHS_KEPT_MILLIS) this.deaths.delete(shard);
    if (this.alive !== undefined && this.alive.length === alive.length && this.alive.every((s, i) => s === alive[i])) return;
    this.opts.log?.info({ shards: alive, before: this.alive ?? [] }, "shards changed");
    this.alive = alive;
    this.current = new HashRing(alive);
    this.opts.onChange(this.current);
  }
}
