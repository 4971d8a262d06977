// What every kind is built from, besides the read handles the runtime gives it.
import type { Registry } from "prom-client";
import type { CacheEntries } from "../../metrics/cache-entries.ts";
import type { KindDefinition, KindModule, Logger, PollIntervals, SettingValues } from "../../runtime/contract.ts";
import type { LinodeAccounts } from "./credentials.ts";

export interface ResourceDeps {
  /** The Linode accounts objects act in: the operator's token, and those credentialsRef names. */
  accounts: LinodeAccounts;
  poll: PollIntervals;
  /** This cluster's identity: part of every derived cloud label, so clusters sharing an account never collide. */
  clusterId: string;
  /** Where kinds register their own metrics (NodeBalancer statistics). */
  registry?: Registry;
  /** Where kinds count the per-object maps they keep (linode_operator_cache_entries); per-account ones through Account.track. */
  cacheEntries?: CacheEntries;
  log?: Logger;
  /** The kinds' own settings, parsed, by flag (each kind reads its own; absent: its default). */
  settings?: SettingValues;
  /**
   * Whether NodeBalancers in `namespace` may publish a bare port of the cluster's nodes
   * (configs[].nodesFrom.nodes; --node-port-namespaces). Absent: nowhere.
   */
  nodePortsAllowed?(namespace: string): boolean;
}

/** One of the operator's kinds: how Kubernetes sees it (its CRD) and how the runtime runs it. */
export interface OperatorKind extends KindModule<ResourceDeps> {
  definition: KindDefinition;
}
