// Leader election on a coordination.k8s.io Lease with client-go's algorithm and timings
// (15 s lease, 10 s renew deadline, 2 s retry). Expiry is judged by local time since the
// lease's resourceVersion last changed, never by the holder's clock. A leader that cannot
// renew within the deadline stops leading at once; release() hands over on shutdown.
import { microTime } from "../kube/client.ts";
import type { KubeApi, LeaseObject, OwnerReference } from "../kube/types.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import type { Logger } from "./logger.ts";
import { Timings } from "./timings.ts";

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMillis?: number;
  renewDeadlineMillis?: number;
  retryPeriodMillis?: number;
  /** Set on the Lease when this replica creates or takes it (e.g. its ServiceAccount). */
  owner?: OwnerReference | undefined;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: Logger;
}

export class LeaderElector {
  private readonly kube: KubeApi;
  private readonly opts: Required<Omit<LeaderElectionOptions, "log" | "owner">> & Pick<LeaderElectionOptions, "log" | "owner">;
  private observedRv: string | undefined;
  private observedAt = 0;
  private lastRenew = 0;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> = Promise.resolve();

  constructor(kube: KubeApi, opts: LeaderElectionOptions) {
    this.kube = kube;
    this.opts = { leaseDurationMillis: Timings.leaseDurationMillis, renewDeadlineMillis: Timings.renewDeadlineMillis, retryPeriodMillis: Timings.retryPeriodMillis, ...opts };
  }

  get isLeader(): boolean { return this.leading; }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.current = this.step().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.retryPeriodMillis * (this.leading ? 1 : 1 + 0.2 * Math.random()));
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
      const lease = await this.kube.getLease({ namespace: this.opts.namespace, name: this.opts.name });
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      lease.spec.holderIdentity = undefined;
      lease.spec.leaseDurationSeconds = 1;
      lease.spec.renewTime = microTime();
      await this.kube.replaceLease({ namespace: this.opts.namespace, name: this.opts.name }, lease);
      this.opts.log?.info({ lease: this.opts.name }, "released the leader lease");
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error).message }, "could not release the leader lease");
    }
  }

  private async step(): Promise<void> {
    const ok = await this.tryAcquireOrRenew().catch((err: unknown) => {
      this.opts.log?.debug({ err: (err as Error).message }, "lease update failed");
      return false;
    });
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.opts.log?.info({ identity: this.opts.identity, lease: `${this.opts.namespace}/${this.opts.name}` }, "became leader");
        this.opts.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew > this.opts.renewDeadlineMillis) {
      this.leading = false;
      this.opts.log?.error({ identity: this.opts.identity }, "lost the leader lease");
      this.opts.onStoppedLeading();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const key = { namespace: this.opts.namespace, name: this.opts.name };
    const now = microTime();
    const durationSeconds = Math.round(this.opts.leaseDurationMillis / 1000);
    let lease: LeaseObject;
    try {
      lease = await this.kube.getLease(key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.kube.createLease(this.opts.namespace, {
          metadata: { name: this.opts.name, namespace: this.opts.namespace, ...(this.opts.owner !== undefined ? { ownerReferences: [this.opts.owner] } : {}) },
          spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
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
    const iHold = holder === this.opts.identity;
    const duration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    const expired = holder === "" || Date.now() - this.observedAt > duration;
    if (!iHold && !expired) return false;
    if (!iHold && this.opts.owner !== undefined) lease.metadata = { ...lease.metadata, ownerReferences: [this.opts.owner] };
    lease.spec = {
      ...spec,
      holderIdentity: this.opts.identity,
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
