// Wires one operator from its configuration: Kubernetes and Linode clients, metrics, events,
// every kind's controller, and the manager that runs them. `run` and `demo` both use it, so
// the demo runs exactly the operator users deploy.
import { Registry } from "prom-client";
import type { OperatorConfig } from "../config/operator-config.ts";
import type { KubeClient } from "../kube/client.ts";
import { ownerReferenceTo } from "../kube/service-account.ts";
import { LinodeClient } from "../linode/index.ts";
import { createOperatorMetrics, type OperatorMetrics } from "../metrics/operator-metrics.ts";
import { KubeEventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { lendingTurn } from "../runtime/lent-turns.ts";
import { Manager } from "../runtime/manager.ts";
import { ownershipKey } from "../runtime/ownership-key.ts";
import { buildControllers, kinds } from "../resources/index.ts";
import { ShardMembers } from "../runtime/sharding/membership.ts";
import { Sharder, SWEEP_CONCURRENCY } from "../runtime/sharding/sharder.ts";
import { AccountShardKeys } from "../resources/shard-keys.ts";
import { tokenId } from "../linode/token-id.ts";
import type { KubeObject } from "../kube/types.ts";
import { LinodeAccounts } from "../resources/shared/credentials.ts";

export interface AssembledOperator {
  manager: Manager;
  metrics: OperatorMetrics;
  /** Stops the controllers (finishing in-flight work), releases the lease, closes the clients. */
  stop(): Promise<void>;
}

/** The cluster's identity in cloud labels: configured, or the kube-system namespace's UID. */
async function clusterIdentity(config: OperatorConfig, kube: KubeClient): Promise<string> {
  if (config.clusterId !== undefined) return config.clusterId;
  try {
    return await kube.namespaceUid("kube-system");
  } catch (err) {
    throw new Error(`cannot read the kube-system namespace to identify this cluster (${(err as Error).message}): grant get on namespaces/kube-system or set --cluster-id (CLUSTER_ID)`, { cause: err });
  }
}

export async function assembleOperator(opts: { config: OperatorConfig; kube: KubeClient; log: Logger; onLostLeadership: () => void; defaultMetrics?: boolean }): Promise<AssembledOperator> {
  const { config, log, kube } = opts;
  const clusterId = await clusterIdentity(config, kube);
  const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: opts.defaultMetrics ?? true, operator: `${config.leaderElectionNamespace}/${config.leaderElectionId}` });
  const events = new KubeEventRecorder(kube, { controller: "linode.operator.dev/linode-operator", instance: config.identity, log, entries: metrics.cacheEntries });
  // With shards, every replica spends the operator's token: the classes whose answers report no
  // remaining of their own (paginated lists) are divided among the live shards (rate-limiter.ts).
  // A tenant's token serves the shard its namespace hashes to, and is not divided.
  const peers = { live: (): number => 1 };
  const client = (token: string, shared = false): LinodeClient => new LinodeClient({
    token, baseUrl: config.linodeApiUrl, registry: metrics.registry, rateLimit: { share: config.linodeApiShare, ...(shared ? { peers: () => peers.live() } : {}) },
    // The replica in the User-Agent: with several (shards, a standby taking over), the API's
    // side can tell which one sent a call.
    // A reconcile waiting out a retry lends its place to the next object of its account.
    aroundRetryWait: lendingTurn,
    logger: log.child({ component: "linode" }), userAgent: `linode-operator (${config.identity.replace(/[^\x20-\x7e]/g, "?")})`,
  });
  const linode = config.linodeToken === undefined ? undefined : client(config.linodeToken, true);
  // Beside the Lease, as its namespace is the operator's own: what proves the records it writes.
  const proofKey = await ownershipKey(kube, { namespace: config.leaderElectionNamespace, name: `${config.leaderElectionId}-ownership-key` }, log);
  const required = new Set(config.requireCredentialsRef);
  const adopting = new Set(config.adoptNamespaces);
  const accounts = new LinodeAccounts({
    ...(linode !== undefined && config.linodeToken !== undefined ? { operator: { token: config.linodeToken, client: linode } } : {}),
    clientFor: (token) => client(token),
    requireRef: (namespace) => required.has("*") || required.has(namespace),
    adoptionAllowed: (namespace) => adopting.has("*") || adopting.has(namespace),
    entries: metrics.cacheEntries,
    proofKey,
  });
  // Owned by our ServiceAccount when it lives beside the Lease: uninstalling then removes it.
  const sa = kube.serviceAccount();
  const owner = sa?.namespace === config.leaderElectionNamespace ? ownerReferenceTo(sa) : undefined;
  const sharding = config.shards ? shardingOf(config, kube, log, metrics) : undefined;
  if (sharding !== undefined) peers.live = () => sharding.members.ring?.shards.length ?? 1;
  const manager = new Manager({
    kube, log, metrics,
    leaderElection: { enabled: config.leaderElect, namespace: config.leaderElectionNamespace, name: config.leaderElectionId, identity: config.identity, owner },
    healthPort: config.healthPort, metricsPort: config.metricsPort, bindHost: config.bindAddress,
    onLostLeadership: opts.onLostLeadership,
    ...(sharding !== undefined ? { sharding } : {}),
  });
  const shard = sharding !== undefined ? {
    identity: config.identity,
    owns: async (obj: KubeObject) => sharding.members.ring?.owner(await sharding.keyOf(obj)) === config.identity,
    diedAt: (s: string) => sharding.members.diedAt(s),
  } : undefined;
  for (const c of buildControllers({ config, clusterId, kube, accounts, events, log, metrics, ...(shard !== undefined ? { shard } : {}) })) manager.add(c);
  return {
    manager,
    metrics,
    async stop() {
      await manager.stop();
      await accounts.close();
      await linode?.close();
    },
  };
}

/** Replicas sharing the work: who is alive (the shards' Leases beside the leader's), and the sharder the leader runs. */
function shardingOf(config: OperatorConfig, kube: KubeClient, log: Logger, metrics: OperatorMetrics): { members: ShardMembers; sharder: Sharder; keyOf: (obj: KubeObject) => Promise<string> } {
  if (!config.leaderElect) throw new Error("--shards needs leader election (--leader-elect true): the shards' Leases and the sharder's leader are how replicas agree");
  // By account: the sharder and this replica's controllers read one token's id alike (shard-keys.ts).
  const accountKeys = config.shardBy === "account" ? new AccountShardKeys(kube, config.linodeToken !== undefined ? { operatorTokenId: tokenId(config.linodeToken) } : {}) : undefined;
  if (accountKeys !== undefined) metrics.cacheEntries.track("shards.accountKeys", () => accountKeys.size);
  const keyOf = accountKeys !== undefined ? (obj: KubeObject) => accountKeys.keyOf(obj) : (obj: KubeObject) => Promise.resolve(obj.metadata.namespace ?? "");
  // Its own connections: handing a dead shard's thousands of objects over is a burst of label
  // writes that would otherwise queue behind this replica's passes, and hold them up.
  const sharder = new Sharder(kube.withOwnPool(SWEEP_CONCURRENCY), {
    types: kinds.map((k) => k.type), namespaces: config.namespaces, log: log.child({ component: "sharder" }), onMove: (action) => { metrics.shards.moved(action); },
    ...(accountKeys !== undefined ? { keyOf } : {}),
    afterSweep: () => members.pruneDead(),
  });
  const members = new ShardMembers(kube, {
    namespace: config.leaderElectionNamespace, ring: config.leaderElectionId, log: log.child({ component: "shards" }),
    onChange: (ring) => { metrics.shards.alive(ring.shards.length); sharder.setRing(ring); },
  });
  return { members, sharder, keyOf };
}
