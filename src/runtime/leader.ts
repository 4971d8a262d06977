// Leader election on a coordination.k8s.io Lease with client-go's algorithm and timings
// (15 s lease, 10 s renew deadline, 2 s retry). Expiry is judged by local time since the
// lease's resourceVersion last changed, never by the holder's clock. A leader that cannot
// renew within the deadline stops leading at once; release() hands over on shutdown.
import type { V1Lease, V1OwnerReference } from "@kubernetes/client-node";
import type { KubeClient } from "../kube/client.ts";
import { microTime } from "../kube/client.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import type { Logger } from "./logger.ts";

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMillis?: number;
  renewDeadlineMillis?: number;
  retryPeriodMillis?: number;
  /** Set on the Lease when this replica creates or takes it (e.g. its ServiceAccount). */
  owner?: V1OwnerReference;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: Logger;
}

export class LeaderElector {
  private readonly kube: KubeClient;
  private readonly o: Required<Omit<LeaderElectionOptions, "log" | "owner">> & Pick<LeaderElectionOptions, "log" | "owner">;
  private observedRv: string | undefined;
  private observedAt = 0;
  private lastRenew = 0;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> = Promise.resolve();

  constructor(kube: KubeClient, opts: LeaderElectionOptions) {
    this.kube = kube;
    this.o = { leaseDurationMillis: 15_000, renewDeadlineMillis: 10_000, retryPeriodMillis: 2_000, ...opts };
  }

  get isLeader(): boolean { return this.leading; }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.current = this.step().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.o.retryPeriodMillis * (this.leading ? 1 : 1 + 0.2 * Math.random()));
      });
    };
    tick();
  }

  /** Stops trying; if leading, clears the holder so another replica takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.current;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.kube.getLease({ namespace: this.o.namespace, name: this.o.name });
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      lease.spec.holderIdentity = undefined;
      lease.spec.leaseDurationSeconds = 1;
      lease.spec.renewTime = microTime();
      await this.kube.replaceLease({ namespace: this.o.namespace, name: this.o.name }, lease);
      this.o.log?.info({ lease: this.o.name }, "released the leader lease");
    } catch (err) {
      this.o.log?.warn({ err: (err as Error).message }, "could not release the leader lease");
    }
  }

  private async step(): Promise<void> {
    const ok = await this.tryAcquireOrRenew().catch((err: unknown) => {
      this.o.log?.debug({ err: (err as Error).message }, "lease update failed");
      return false;
    });
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.o.log?.info({ identity: this.o.identity, lease: `${this.o.namespace}/${this.o.name}` }, "became leader");
        this.o.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew > this.o.renewDeadlineMillis) {
      this.leading = false;
      this.o.log?.error({ identity: this.o.identity }, "lost the leader lease");
      this.o.onStoppedLeading();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const key = { namespace: this.o.namespace, name: this.o.name };
    const now = microTime();
    const durationSeconds = Math.round(this.o.leaseDurationMillis / 1000);
    let lease: V1Lease;
    try {
      lease = await this.kube.getLease(key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.kube.createLease(this.o.namespace, {
          metadata: { name: this.o.name, namespace: this.o.namespace, ...(this.o.owner !== undefined ? { ownerReferences: [this.o.owner] } : {}) },
          spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        });
        return true;
      } catch (e) {
        if (isConflict(e)) return false;
        throw e;
      }
    }
    const rv = lease.metadata?.resourceVersion;
    if (rv !== this.observedRv) {
      this.observedRv = rv;
      this.observedAt = Date.now();
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const iHold = holder === this.o.identity;
    const duration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    const expired = holder === "" || Date.now() - this.observedAt > duration;
    if (!iHold && !expired) return false;
    if (!iHold && this.o.owner !== undefined) lease.metadata = { ...lease.metadata, ownerReferences: [this.o.owner] };
    lease.spec = {
      ...spec,
      holderIdentity: this.o.identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: now,
      ...(iHold ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    };
    try {
      const updated = await this.kube.replaceLease(key, lease);
      this.observedRv = updated.metadata?.resourceVersion;
      this.observedAt = Date.now();
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
