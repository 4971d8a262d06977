// Leader election on a coordination.k8s.io Lease with client-go's algorithm and timings
// (15 s lease, 10 s renew deadline, 2 s retry). Expiry is judged by local time since the
// lease's resourceVersion last changed, never by the holder's clock. A leader that has not
// renewed within the renew deadline (counted from when its last successful renew was sent)
// stops leading at that moment, even while a renew request hangs: every request is bounded by
// the deadline, and a timer fires at it. Another replica can take the lease only a lease
// duration after it last saw it change, so the two never act at once. release() hands over on
// shutdown.
import { microTime } from "../kube/client.ts";
import type { KubeApi, LeaseObject, OwnerReference } from "../kube/types.ts";
import { errorChain, isConflict, isNotFound } from "../kube/errors.ts";
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
  /** Labels the Lease is created with (a shard's membership Lease: which ring it belongs to). */
  labels?: Record<string, string>;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: Logger;
}

export class LeaderElector {
  private readonly kube: KubeApi;
  private readonly opts: Required<Omit<LeaderElectionOptions, "log" | "owner" | "labels">> & Pick<LeaderElectionOptions, "log" | "owner" | "labels">;
  private observedRv: string | undefined;
  private observedAt = 0;
  /** When the last successful renew was sent. */
  private lastRenew = 0;
  private leading = false;
  /** Once lost, this elector never leads again (the process is expected to exit). */
  private lost = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
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
        if (!this.stopped && !this.lost) this.timer = setTimeout(tick, this.opts.retryPeriodMillis * (this.leading ? 1 : 1 + 0.2 * Math.random()));
      });
    };
    tick();
  }

  /** Stops trying; if leading, clears the holder so another replica takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.deadline !== undefined) clearTimeout(this.deadline);
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
      this.opts.log?.warn({ err: errorChain(err) }, "could not release the leader lease");
    }
  }

  private async step(): Promise<void> {
    const sentAt = Date.now();
    // No attempt outlives the renew deadline (a leader's) or a retry period's worth of it (a candidate's).
    const bound = this.leading ? this.lastRenew + this.opts.renewDeadlineMillis - sentAt : this.opts.renewDeadlineMillis;
    const ok = await this.tryAcquireOrRenew(AbortSignal.timeout(Math.max(1, bound))).catch((err: unknown) => {
      this.opts.log?.debug({ err: errorChain(err) }, "lease update failed");
      return false;
    });
    if (this.lost || this.stopped) return;
    if (ok) {
      this.lastRenew = sentAt;
      this.armDeadline();
      if (!this.leading) {
        this.leading = true;
        this.opts.log?.info({ identity: this.opts.identity, lease: `${this.opts.namespace}/${this.opts.name}` }, "became leader");
        this.opts.onStartedLeading();
      }
    }
  }

  /** Stops leading at lastRenew + renewDeadline unless a renew lands first. */
  private armDeadline(): void {
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      if (!this.leading || this.stopped) return;
      this.leading = false;
      this.lost = true;
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.opts.log?.error({ identity: this.opts.identity, renewDeadlineMillis: this.opts.renewDeadlineMillis }, "lost the leader lease: not renewed within the renew deadline");
      this.opts.onStoppedLeading();
    }, Math.max(0, this.lastRenew + this.opts.renewDeadlineMillis - Date.now()));
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const key = { namespace: this.opts.namespace, name: this.opts.name };
    const call = { signal };
    const now = microTime();
    const durationSeconds = Math.round(this.opts.leaseDurationMillis / 1000);
    let lease: LeaseObject;
    try {
      lease = await this.kube.getLease(key, call);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.kube.createLease(this.opts.namespace, {
          metadata: { name: this.opts.name, namespace: this.opts.namespace, ...(this.opts.owner !== undefined ? { ownerReferences: [this.opts.owner] } : {}), ...(this.opts.labels !== undefined ? { labels: this.opts.labels } : {}) },
          spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        }, call);
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
      const updated = await this.kube.replaceLease(key, lease, call);
      this.observedRv = updated.metadata?.resourceVersion;
      this.observedAt = Date.now();
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
