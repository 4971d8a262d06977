// The NodeBalancer kind: configs and nodes inline, certificates from kubernetes.io/tls Secrets
// (a reference: a renewed certificate wakes the NodeBalancers that use it), statistics as
// metrics. The runtime does the rest.
import { MAX_PAGE_SIZE, type NodeBalancer } from "../../linode/index.ts";
import { legacyIdFromStatusId, readyAtGeneration, settingValue, type Managed, type KindParts } from "../../runtime/contract.ts";
import { nodeChanged } from "../shared/nodes.ts";
import { backendReads, withFollowedBackends, type BackendSources, type BackendSubnet, type EffectiveSpec, type NodesFrom } from "./backends-from.ts";
import { VpcCatalog } from "./vpcs.ts";
import { AccountScope, PerAccount, recordedAccount } from "../shared/credentials.ts";
import { specRefName } from "../shared/schema.ts";
import { labelOf } from "../shared/derived-label.ts";
import type { OperatorKind } from "../shared/deps.ts";
import { ListCache, SWEEP_PAGE_WAIT_MILLIS } from "../shared/list-cache.ts";
import { ListWakes } from "../shared/list-wakes.ts";
import { ConfigReader } from "./configs.ts";
import { NodeBalancerLocks } from "./locks.ts";
import type { NodeBalancerPlan, ObservedNodeBalancer } from "./diff.ts";
import { firewallsClaimedBy, NodeBalancerExternal, type FirewallRule, type NodeBalancerObservedStatus } from "./external.ts";
import { nodeBalancerSpecSchema, type NodeBalancerSpec } from "./schema.ts";
import { NodeBalancerStatsReader } from "./stats.ts";
import { ObjectFigures } from "../shared/object-figures.ts";
import { tlsReference } from "./tls.ts";
import { nodeBalancerDefinition, nodeBalancerSettings, nodeBalancerType } from "./definition.ts";
import { NodeBalancerReasons } from "./reasons.ts";
import { nodeBalancerAsSpec } from "./late-init.ts";

export { nodeBalancerDefinition, nodeBalancerType } from "./definition.ts";

export const nodeBalancerKind: OperatorKind = {
  definition: nodeBalancerDefinition,
  type: nodeBalancerType,
  build: ({ deps, stores, events, wake }) => {
    const namedId = (spec: NodeBalancerSpec): string | undefined => (spec.nodeBalancerId !== undefined ? String(spec.nodeBalancerId) : undefined);
    const scope = new AccountScope<NodeBalancerSpec>({
      accounts: deps.accounts, wanted: (m) => m.spec, namedId, what: "NodeBalancer", idField: "spec.nodeBalancerId",
      identify: (m, observed) => {
        const { nb } = observed as ObservedNodeBalancer;
        return { label: nb.label, created: nb.created, labels: [labelOf(m, deps.clusterId), labelOf({ key: m.key, spec: {} }, deps.clusterId)] };
      },
    });
    const stats = new NodeBalancerStatsReader({
      intervalMillis: settingValue(nodeBalancerSettings.statsSeconds, deps.settings) * 1000,
      exists: (namespace, name) => stores.self.get(namespace, name) !== undefined,
      ...(deps.registry !== undefined ? { registry: deps.registry } : {}),
      ...(deps.log !== undefined ? { log: deps.log } : {}),
    });
    deps.cacheEntries?.track("NodeBalancer.stats.samples", () => stats.size);
    // Read from the list every look shares: no call of its own, whatever the statistics setting.
    const transfer = new ObjectFigures((namespace, name) => stores.self.get(namespace, name) !== undefined);
    if (deps.registry !== undefined) {
      // In megabytes as the API reports them: whether its MB is 10^6 or 2^20 bytes it does not say.
      transfer.gaugeBy(deps.registry, "linode_nodebalancer_transfer_megabytes", "Transfer through the NodeBalancer this month by direction (in, out, total), in MB as the API reports it (it counts up with traffic: a metric, never status).", "direction", { in: "in", out: "out", total: "total" });
    }
    deps.cacheEntries?.track("NodeBalancer.transfer", () => transfer.size);
    const sources: BackendSources = { nodes: stores.read(backendReads.nodes), services: stores.read(backendReads.services), endpointSlices: stores.read(backendReads.endpointSlices) };
    const backends = (m: Managed<NodeBalancerSpec>, subnet?: BackendSubnet): EffectiveSpec<NodeBalancerSpec> =>
      withFollowedBackends(m.spec, m.key.namespace, sources, deps.nodePortsAllowed?.(m.key.namespace) ?? false, subnet);
    /** The NodeBalancers whose nodesFrom may be concerned by a change in `namespace` (any, for a Node). */
    const following = (test: (from: NodesFrom, namespace: string) => boolean) => (): string[] => stores.self.list().flatMap((o) => {
      const parsed = nodeBalancerSpecSchema.shape.configs.safeParse((o.spec as { configs?: unknown } | undefined)?.configs);
      const namespace = o.metadata.namespace ?? "";
      return parsed.success && parsed.data.some((c) => c.nodesFrom !== undefined && test(c.nodesFrom, namespace)) ? [`${namespace}/${o.metadata.name}`] : [];
    });
    // Which resource manages each NodeBalancer: a list that finds one changed wakes it. Only a
    // settled one: one still on its way is looked at every pending poll anyway, and each such look reads the configs.
    const wakes = new ListWakes(wake, (key) => {
      const [namespace = "", name = ""] = key.split("/");
      const obj = stores.self.get(namespace, name);
      return obj !== undefined && readyAtGeneration(obj);
    });
    const { seen, changed } = wakes;
    deps.cacheEntries?.track("NodeBalancer.keyOf", () => wakes.size);
    // The list cache and what is read per NodeBalancer are per account: one account's list never answers for another's.
    const clients = new PerAccount((account) => {
      const { linode } = account;
      const api = linode.nodeBalancers;
      // The month's transfer counts up with traffic and moves nothing else: a list finding only that changed wakes no one.
      const cache = new ListCache<NodeBalancer>({ listAll: (signal, sent) => api.listAll({ signal, sweep: true, onSent: sent, retry: { maxRateLimitWaitMs: SWEEP_PAGE_WAIT_MILLIS } }), get: (id, signal) => api.get(id, { signal }), onChange: changed, pageSize: MAX_PAGE_SIZE, differs: (a, b) => JSON.stringify({ ...a, transfer: null }) !== JSON.stringify({ ...b, transfer: null }) });
      cache.keepFresh(deps.poll.readyMillis, account.released);
      const configs = new ConfigReader(linode, settingValue(nodeBalancerSettings.rereadSeconds, deps.settings) * 1000);
      account.track("NodeBalancer.listCache", () => cache.size);
      account.track("NodeBalancer.listCache.invalidated", () => cache.invalidations);
      account.track("NodeBalancer.configs.seen", () => configs.size);
      const healthMillis = settingValue(nodeBalancerSettings.healthSeconds, deps.settings) * 1000;
      // spec.firewallId names an account object: the one rule (credentials.ts) for naming ids by this account's token.
      const mayName = (namespace: string): boolean => !account.operator || deps.accounts.adoptionAllowed(namespace);
      const firewallRule: FirewallRule = {
        mayName,
        // Another namespace's NodeBalancer in this account that holds the firewall, or names it
        // where it may name ids (of two namespaces that name one, the later is refused). A
        // namespace that may not name ids on this account cannot keep a firewall from others by
        // naming it: its spec is refused anyway.
        claimedElsewhere: (namespace, id) => stores.self.list().some((o) => {
          const there = o.metadata.namespace ?? "";
          if (there === namespace) return false;
          const recorded = recordedAccount(o)?.id;
          const ownToken = specRefName(o, "credentialsRef") !== undefined;
          const inAccount = recorded !== undefined ? recorded === account.id : !ownToken && account.operator;
          if (!inAccount) return false;
          const claims = firewallsClaimedBy(o);
          return claims.held.includes(id) || (claims.named === id && (ownToken || mayName(there)));
        }),
      };
      const vpcs = new VpcCatalog((signal) => linode.vpcs.listAll({ signal }));
      const mayNameHere = (m: Managed<NodeBalancerSpec>, doing: string): void => { scope.mayName(m, doing); };
      const locks = new NodeBalancerLocks(linode, deps.poll);
      account.track("NodeBalancer.locks", () => locks.size);
      const external = new NodeBalancerExternal({ linode, cache, configs, stats, transfer, poll: deps.poll, healthMillis, clusterId: deps.clusterId, events, backends, vpcs, mayName: mayNameHere, firewallRule, locks, seen, ...(deps.log !== undefined ? { log: deps.log } : {}) });
      account.track("NodeBalancer.firewallsAssignedUnrecorded", () => external.assignedUnrecorded);
      return external;
    });
    const kind: KindParts<NodeBalancerSpec, ObservedNodeBalancer, NodeBalancerObservedStatus, NodeBalancerPlan> = {
      type: nodeBalancerType,
      external: scope.external((a) => clients.get(a)),
      poll: deps.poll,
      namedId,
      lateInit: nodeBalancerAsSpec,
      idMismatchReason: NodeBalancerReasons.NodeBalancerIdMismatch,
      legacyId: legacyIdFromStatusId,
      references: [scope.credentials, tlsReference],
      forget: (obj, externalId) => {
        stats.forget(obj.metadata.namespace ?? "", obj.metadata.name);
        transfer.forget(obj.metadata.namespace ?? "", obj.metadata.name);
        if (externalId === undefined) return;
        const id = Number(externalId);
        wakes.forget(id, `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`);
        clients.peek(deps.accounts.recordedBy(obj))?.forget(id);
      },
      watches: [
        // Any Node may be a Service's backend (Cluster policy) or selected: every follower looks again (coalesced by the queue).
        { target: backendReads.nodes, map: following(() => true), changed: nodeChanged },
        { target: backendReads.services, map: (svc) => following((f, ns) => f.serviceRef?.name === svc.metadata.name && ns === svc.metadata.namespace)() },
        { target: backendReads.endpointSlices, map: (slice) => following((f, ns) => f.serviceRef?.name === slice.metadata.labels?.["kubernetes.io/service-name"] && ns === slice.metadata.namespace)() },
      ],
    };
    return kind;
  },
};
