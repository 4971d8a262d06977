// The entry point reconcilers hold: one per API token, shared by all controllers.
import { ConnectionPoolsApi } from "./connection-pools.ts";
import { DatabasesApi } from "./databases.ts";
import { FirewallsApi } from "./firewalls.ts";
import { HttpTransport, type LinodeClientOptions } from "./http.ts";
import { LocksApi } from "./locks.ts";
import type { LinodeClientMetrics } from "./metrics.ts";
import { NodeBalancersApi } from "./nodebalancers.ts";
import { ProfileApi } from "./profile.ts";
import { VpcsApi } from "./vpcs.ts";

export class LinodeClient {
  readonly databases: DatabasesApi;
  /** PostgreSQL connection pools of current-platform databases. */
  readonly connectionPools: ConnectionPoolsApi;
  readonly nodeBalancers: NodeBalancersApi;
  readonly firewalls: FirewallsApi;
  readonly locks: LocksApi;
  readonly profile: ProfileApi;
  readonly vpcs: VpcsApi;
  readonly metrics: LinodeClientMetrics;
  private readonly transport: HttpTransport;

  constructor(opts: LinodeClientOptions) {
    this.transport = new HttpTransport(opts);
    this.metrics = this.transport.metrics;
    this.databases = new DatabasesApi(this.transport);
    this.connectionPools = new ConnectionPoolsApi(this.transport);
    this.nodeBalancers = new NodeBalancersApi(this.transport);
    this.firewalls = new FirewallsApi(this.transport);
    this.locks = new LocksApi(this.transport);
    this.profile = new ProfileApi(this.transport);
    this.vpcs = new VpcsApi(this.transport);
  }

  /** Calls begun and not settled yet (waiting for the rate-limit budget included). */
  get inFlight(): number {
    return this.transport.inFlight;
  }

  /** Whether this token's call budget is nearly spent (calls wait for it, or soon will). */
  budgetNearlySpent(): boolean {
    return this.transport.budgetNearlySpent();
  }

  /** How long a sweep would be held for the paginated class while a GET could go at once (see HttpTransport). */
  sweepHeldMillis(): number {
    return this.transport.sweepHeldMillis();
  }

  /** Closes the keep-alive pool (waits for in-flight calls; abort them first via their signals). */
  close(): Promise<void> {
    return this.transport.close();
  }
}
