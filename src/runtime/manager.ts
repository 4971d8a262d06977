// Runs a set of controllers behind leader election with health, readiness and metrics
// endpoints, and shuts all of it down in order on SIGTERM: stop watches and workers (letting
// in-flight reconciles finish within the grace period), release the lease, close servers.
import { errorChain } from "../kube/errors.ts";
import type { KubeApi, OwnerReference } from "../kube/types.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import type { Controller } from "./controller.ts";
import { serveEndpoints } from "./http-endpoints.ts";
import { LeaderElector } from "./leader.ts";
import type { Logger } from "./logger.ts";
import { SHARD_RING_LABEL, shardLeaseName, type ShardMembers } from "./sharding/membership.ts";
import { HashRing } from "./sharding/ring.ts";
import type { Sharder } from "./sharding/sharder.ts";

export interface ManagerOptions {
  kube: KubeApi;
  log: Logger;
  metrics: OperatorMetrics;
  leaderElection: { enabled: boolean; namespace: string; name: string; identity: string; owner?: OwnerReference | undefined };
  healthPort: number;
  metricsPort: number;
  bindHost?: string;
  /** Called when the lease is lost: the process must stop acting at once (exit). */
  onLostLeadership: () => void;
  /**
   * Replicas share the work (--shards): each holds its shard's Lease and runs its controllers
   * on the objects labelled to it from the start; the leader also runs the sharder. Losing
   * either Lease stops the process as losing the leader's does.
   */
  sharding?: { members: ShardMembers; sharder: Sharder };
}

export class Manager {
  private readonly opts: ManagerOptions;
  private readonly controllers: Controller[] = [];
  private elector: LeaderElector | undefined;
  private shardElector: LeaderElector | undefined;
  private closers: (() => Promise<void>)[] = [];
  private started = false;
  private stopping: Promise<void> | undefined;
  healthPort = 0;
  metricsPort = 0;

  constructor(opts: ManagerOptions) {
    this.opts = opts;
  }

  add(c: Controller): this {
    this.controllers.push(c);
    return this;
  }

  get isLeader(): boolean { return this.elector?.isLeader ?? !this.opts.leaderElection.enabled; }

  async start(): Promise<void> {
    await this.opts.kube.ping();
    // A standby is ready once its caches are warm too: a rolling update then hands the lease to
    // a replica that has every object listed already.
    const readiness = [{
      name: "caches",
      check: () => (this.controllers.every((c) => c.synced) ? undefined : "informer caches not synced yet"),
    }];
    if (this.opts.healthPort >= 0) {
      const h = await serveEndpoints({ port: this.opts.healthPort, ...(this.opts.bindHost !== undefined ? { host: this.opts.bindHost } : {}), liveness: [], readiness });
      this.healthPort = h.port;
      this.closers.push(h.close);
    }
    if (this.opts.metricsPort >= 0) {
      const m = await serveEndpoints({ port: this.opts.metricsPort, ...(this.opts.bindHost !== undefined ? { host: this.opts.bindHost } : {}), registry: this.opts.metrics.registry });
      this.metricsPort = m.port;
      this.closers.push(m.close);
    }
    const le = this.opts.leaderElection;
    if (!le.enabled) {
      // The one replica there is leads (the leader alert would otherwise see none).
      this.opts.metrics.leader.set(1);
      await this.startControllers();
      return;
    }
    const sharding = this.opts.sharding;
    if (sharding !== undefined) this.startShard(sharding);
    this.elector = new LeaderElector(this.opts.kube, {
      namespace: le.namespace, name: le.name, identity: le.identity, owner: le.owner, log: this.opts.log,
      onStartedLeading: () => {
        this.opts.metrics.leader.set(1);
        const leading = sharding !== undefined ? sharding.sharder.start(sharding.members.ring ?? new HashRing([]), sharding.members.dead()) : this.startControllers();
        leading.catch((err: unknown) => {
          this.opts.log.error({ err: errorChain(err) }, sharding !== undefined ? "the sharder failed to start" : "controllers failed to start");
          this.opts.onLostLeadership();
        });
      },
      onStoppedLeading: () => {
        this.opts.metrics.leader.set(0);
        // Another replica may take over soon: nothing in flight here may finish after that.
        for (const c of this.controllers) c.abortNow("leadership lost");
        this.opts.onLostLeadership();
      },
    });
    this.opts.metrics.leader.set(0);
    this.elector.start();
    // Every shard works: there is no standby.
    if (sharding !== undefined) return;
    // The standby watches (only the leader acts): a failover starts from warm caches, not a relist.
    Promise.all(this.controllers.map(async (c) => { await c.warm(); return [c.kindName, c.list().length] as const; })).then(
      (counts) => { if (!this.started) this.opts.log.info({ objects: Object.fromEntries(counts) }, "standby caches warm"); },
      (err: unknown) => { this.opts.log.warn({ err: errorChain(err) }, "a standby cache could not be filled; it will be when this replica leads"); },
    );
  }

  /** This replica's shard: its membership Lease held, its controllers run on the objects labelled to it. */
  private startShard(sharding: NonNullable<ManagerOptions["sharding"]>): void {
    const le = this.opts.leaderElection;
    sharding.members.start();
    this.shardElector = new LeaderElector(this.opts.kube, {
      namespace: le.namespace, name: shardLeaseName(le.name, le.identity), identity: le.identity, owner: le.owner, labels: { [SHARD_RING_LABEL]: le.name }, log: this.opts.log,
      onStartedLeading: () => {
        this.startControllers().catch((err: unknown) => {
          this.opts.log.error({ err: errorChain(err) }, "controllers failed to start");
          this.opts.onLostLeadership();
        });
      },
      onStoppedLeading: () => {
        // The sharder will give this shard's objects to others once its Lease expires: nothing here may act after that.
        for (const c of this.controllers) c.abortNow("shard lease lost");
        this.opts.onLostLeadership();
      },
    });
    this.shardElector.start();
  }

  private async startControllers(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await Promise.all(this.controllers.map((c) => c.start()));
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(this.controllers.map((c) => c.stop()));
      this.opts.sharding?.members.stop();
      await this.opts.sharding?.sharder.stop();
      // Released: the others see this shard gone at once and its objects move.
      await this.shardElector?.release();
      await this.elector?.release();
      this.opts.metrics.leader.set(0);
      for (const close of this.closers) await close();
    })();
    return this.stopping;
  }
}
