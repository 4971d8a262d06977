// Runs a set of controllers behind leader election with health, readiness and metrics
// endpoints, and shuts all of it down in order on SIGTERM: stop watches and workers (letting
// in-flight reconciles finish within the grace period), release the lease, close servers.
import type { V1OwnerReference } from "@kubernetes/client-node";
import type { KubeClient } from "../kube/client.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import type { Controller } from "./controller.ts";
import { serveEndpoints } from "./http-endpoints.ts";
import { LeaderElector } from "./leader.ts";
import type { Logger } from "./logger.ts";

export interface ManagerOptions {
  kube: KubeClient;
  log: Logger;
  metrics: OperatorMetrics;
  leaderElection: { enabled: boolean; namespace: string; name: string; identity: string; owner?: V1OwnerReference };
  healthPort: number;
  metricsPort: number;
  bindHost?: string;
  /** Called when the lease is lost: the process must stop acting at once (exit). */
  onLostLeadership: () => void;
}

export class Manager {
  private readonly o: ManagerOptions;
  private readonly controllers: Controller<unknown, unknown>[] = [];
  private elector: LeaderElector | undefined;
  private closers: (() => Promise<void>)[] = [];
  private started = false;
  private stopping: Promise<void> | undefined;
  healthPort = 0;
  metricsPort = 0;

  constructor(opts: ManagerOptions) {
    this.o = opts;
  }

  add<S, T>(c: Controller<S, T>): this {
    this.controllers.push(c);
    return this;
  }

  get isLeader(): boolean { return this.elector?.isLeader ?? !this.o.leaderElection.enabled; }

  async start(): Promise<void> {
    await this.o.kube.ping();
    const readiness = [{
      name: "caches",
      check: () => (!this.started || this.controllers.every((c) => c.synced) ? undefined : "informer caches not synced yet"),
    }];
    if (this.o.healthPort >= 0) {
      const h = await serveEndpoints({ port: this.o.healthPort, ...(this.o.bindHost !== undefined ? { host: this.o.bindHost } : {}), liveness: [], readiness });
      this.healthPort = h.port;
      this.closers.push(h.close);
    }
    if (this.o.metricsPort >= 0) {
      const m = await serveEndpoints({ port: this.o.metricsPort, ...(this.o.bindHost !== undefined ? { host: this.o.bindHost } : {}), registry: this.o.metrics.registry });
      this.metricsPort = m.port;
      this.closers.push(m.close);
    }
    const le = this.o.leaderElection;
    if (!le.enabled) {
      await this.startControllers();
      return;
    }
    this.elector = new LeaderElector(this.o.kube, {
      namespace: le.namespace, name: le.name, identity: le.identity, owner: le.owner, log: this.o.log,
      onStartedLeading: () => {
        this.o.metrics.leader.set(1);
        this.startControllers().catch((err: unknown) => {
          this.o.log.error({ err: (err as Error).message }, "controllers failed to start");
          this.o.onLostLeadership();
        });
      },
      onStoppedLeading: () => {
        this.o.metrics.leader.set(0);
        this.o.onLostLeadership();
      },
    });
    this.o.metrics.leader.set(0);
    this.elector.start();
  }

  private async startControllers(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await Promise.all(this.controllers.map((c) => c.start()));
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(this.controllers.map((c) => c.stop()));
      await this.elector?.release();
      this.o.metrics.leader.set(0);
      for (const close of this.closers) await close();
    })();
    return this.stopping;
  }
}
