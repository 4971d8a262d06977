// The kinds the operator runs: one line each, the one list everything about kinds is built from
// (their CRDs, the chart's RBAC, the controllers). Every kind becomes a controller of the
// generic runtime over one set of shared caches, behind one leader election.
import type { OperatorConfig } from "../config/operator-config.ts";
import type { KubeApi } from "../kube/types.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import { Controller, type ControllerOptions } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ManagedObject } from "../runtime/managed.ts";
import { API_GROUP, type KindDefinition } from "../runtime/kind-definition.ts";
import { ReferenceProtection } from "../runtime/protection.ts";
import { InformerPool } from "../runtime/stores.ts";
import { databaseConnectionPoolKind } from "./database-connection-pool/index.ts";
import { databaseSnapshotKind } from "./database-snapshot/index.ts";
import { managedDatabaseKind } from "./managed-database/index.ts";
import { nodeBalancerKind } from "./node-balancer/index.ts";
import { readGates } from "./read-gates.ts";
import { accountsRecordedBy, credentialsFlow, type LinodeAccounts } from "./shared/credentials.ts";
import type { OperatorKind, ResourceDeps } from "./shared/deps.ts";

export const kinds: OperatorKind[] = [
  managedDatabaseKind,
  databaseSnapshotKind,
  nodeBalancerKind,
  databaseConnectionPoolKind,
];

export { readGates } from "./read-gates.ts";

export const kindDefinitions: KindDefinition[] = kinds.map((k) => k.definition);

export interface OperatorDeps {
  config: OperatorConfig;
  clusterId: string;
  kube: KubeApi;
  accounts: LinodeAccounts;
  events: EventRecorder;
  log: Logger;
  metrics: OperatorMetrics;
  /** This replica's shard when replicas share the work (--shards): its caches and passes are its objects only. */
  shard?: ControllerOptions["shard"];
}

export function buildControllers(deps: OperatorDeps): Controller<ResourceDeps>[] {
  const informers = new InformerPool(deps.kube, {
    namespaces: deps.config.namespaces,
    ...(deps.shard !== undefined ? { shard: { group: API_GROUP, identity: deps.shard.identity } } : {}),
    informer: { logger: deps.log },
    onRestart: (informer, reason) => deps.metrics.informerRestarts.inc({ informer, reason }),
    onUnexpectedError: (where) => { deps.metrics.unexpectedErrors.inc({ where }); },
    cacheEntries: deps.metrics.cacheEntries,
  });
  // One protection for every kind: a token Secret several kinds use carries one finalizer.
  const protection = new ReferenceProtection(deps.kube, deps.log, deps.metrics.cacheEntries);
  // Each kind's workers are shared fairly among the accounts its objects act in (one answering
  // late or with 429s cannot hold them all); a kind that inherits its account says so itself.
  const opts = { concurrency: deps.config.concurrency, shutdownGraceMillis: deps.config.shutdownGraceSeconds * 1000, flowOf: (obj: ManagedObject) => credentialsFlow(obj), ...(deps.shard !== undefined ? { shard: deps.shard } : {}) };
  const poll = { pendingMillis: deps.config.pollPendingSeconds * 1000, readyMillis: deps.config.pollReadySeconds * 1000 };
  const nodePorts = new Set(deps.config.nodePortNamespaces);
  const kindDeps: ResourceDeps = {
    accounts: deps.accounts, poll, clusterId: deps.clusterId, registry: deps.metrics.registry, cacheEntries: deps.metrics.cacheEntries, log: deps.log, settings: deps.config.kindSettings,
    nodePortsAllowed: (namespace) => nodePorts.has("*") || nodePorts.has(namespace),
  };
  const controllers = kinds.map((kind) => new Controller(kind, { kube: deps.kube, events: deps.events, log: deps.log, metrics: deps.metrics, informers, protection, gates: readGates(deps.config), kindDeps }, opts));
  keepRecordedAccounts(deps.accounts, controllers);
  return controllers;
}

/**
 * The accounts the controllers' objects record are in use, whenever those objects were last
 * looked at: only the others (a rotated-away token, a team gone) are released once unused.
 */
export function keepRecordedAccounts(accounts: LinodeAccounts, controllers: readonly Pick<Controller<ResourceDeps>, "list">[]): void {
  accounts.usedBy(() => accountsRecordedBy(controllers.flatMap((c) => c.list())));
}
