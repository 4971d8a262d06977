// An operator stack for integration tests: the Linode API emulator over HTTP, the CRDs on the
// shared API server, and every kind's controller running in-process over one set of shared
// caches, as the operator runs them (so tests can read their metrics), plus a LinodeClient to
// inspect the emulator as a user would.
import { createHash } from "node:crypto";
import { Registry } from "prom-client";
import { LinodeClient } from "../../src/linode/index.ts";
import type { RetryPolicy } from "../../src/linode/retry.ts";
import { startEmulator, type EmulatorConfigInput, type RunningEmulator } from "../../src/emulator/index.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { ReferenceProtection } from "../../src/runtime/protection.ts";
import { InformerPool } from "../../src/runtime/stores.ts";
import { keepRecordedAccounts, kinds, readGates } from "../../src/resources/index.ts";
import { credentialsFlow, LinodeAccounts } from "../../src/resources/shared/credentials.ts";
import type { ResourceDeps } from "../../src/resources/shared/deps.ts";
import type { TestCluster } from "./cluster.ts";
import { installCrds } from "./crds.ts";
import { passCounter } from "./pass-counter.ts";
import { runtimeDeps } from "./operator-runtime.ts";

export interface OperatorEnv {
  emulator: RunningEmulator;
  /** A client of the emulator with the operator's token, for assertions. */
  linode: LinodeClient;
  deps: ReturnType<typeof runtimeDeps>;
  /** The ManagedDatabase controller. */
  controller: Controller<ResourceDeps>;
  /** Every kind's controller, by kind. */
  controllers: Record<string, Controller<ResourceDeps>>;
  operatorLinode: LinodeClient;
  statusWrites: () => number;
  /** Every write the operator sent to the Kubernetes API so far (status, event, secret, object), by what and by method. */
  kubeWrites: () => Record<string, number>;
  /** Each of the operator's writes so far, in order, saying what it wrote. */
  kubeWriteLog: () => string[];
  /** Reconcile passes completed so far for an object ("namespace/name") of a kind. */
  passes(kind: string, key: string): number;
  /**
   * Resolves once `count` more passes of the object have completed: how a test proves that
   * nothing was sent or written (the operator looked, and did nothing), instead of sleeping.
   */
  afterPasses(kind: string, key: string, count: number, timeoutMillis?: number): Promise<void>;
  /**
   * Enqueues the object and waits for a pass of it to complete, `count` times over (one after
   * the other): the operator looked at it that many more times, whatever its polling cadence.
   */
  repass(kind: string, key: string, count: number, timeoutMillis?: number): Promise<void>;
  /** The cluster identity the operator puts in derived labels. */
  clusterId: string;
  /** The operator's metrics registry (Linode client and kinds' own metrics). */
  registry: Registry;
  /** The Linode clients of the accounts objects act in. */
  accounts: LinodeAccounts;
  /** Stops the operator; the emulator too, unless it was another env's or `keepEmulator` (a restart on the same cloud). */
  stop(how?: { keepEmulator?: boolean }): Promise<void>;
}

export const TOKEN = "operator-test-token";

export async function startOperatorEnv(cluster: TestCluster, opts: {
  provisionSeconds?: number; token?: string; emulatorConfig?: EmulatorConfigInput; poll?: { pendingMillis?: number; readyMillis?: number };
  /** Another env's emulator (one Linode account, two operators); it is left running on stop. */
  reuseEmulator?: RunningEmulator;
  /** Where the operator's Linode clients send their calls, when not to the emulator itself (a proxy before it). */
  linodeUrl?: string;
  /** The database response shape the emulator serves (the spec's, or today's real API). */
  platform?: "legacy" | "current";
  /** How often NodeBalancer statistics are read. */
  statsMillis?: number;
  /** How often a settled database's backups are listed (default: the operator's, a day). */
  backupsRefreshMillis?: number;
  /** Namespaces ("*": all) whose resources must name their token in spec.credentialsRef. */
  requireCredentialsRef?: string[];
  /** Namespaces ("*": all, the default here) whose resources may adopt by id with the operator's token. */
  adoptNamespaces?: string[];
  /** Namespaces ("*": all, the default here) whose NodeBalancers may publish a bare node port (configs[].nodesFrom.nodes). */
  nodePortNamespaces?: string[];
  /** More kind settings, by flag (e.g. "allow-list-interval-seconds"). */
  settings?: Record<string, unknown>;
  /** The operator may read the cluster's Nodes (the chart's rbac.readNodes). */
  readNodes?: boolean;
  /** More namespaces to watch besides the cluster's own (another team's). */
  extraNamespaces?: string[];
  /** The operator's Linode clients' retry policy (e.g. a short longest rate-limit wait). */
  clientRetry?: Partial<RetryPolicy>;
  /** How long a token's client no object records is kept after its last use (the operator's: 5 min). */
  unusedAccountReleaseMillis?: number;
  /** Reconciles in parallel per kind (default 4). */
  concurrency?: number;
  /**
   * The paginated lists' limit a minute, in the emulator and as the operator's clients budget it
   * (default here 20,000, as tests poll far faster than the product; the API documents 200).
   */
  listLimitPerMinute?: number;
} = {}): Promise<OperatorEnv> {
  // Tests poll many times faster than the product: the API's 200 lists a minute is scaled with
  // them unless a test asks for another (test/emulator and test/linode test the real class).
  opts = { listLimitPerMinute: 20_000, ...opts };
  await installCrds(cluster);
  const emulator = opts.reuseEmulator ?? await startEmulator({
    port: 0, tokens: [TOKEN], provisionSeconds: opts.provisionSeconds ?? 0.3, platform: opts.platform ?? "legacy",
    ...(opts.emulatorConfig !== undefined || opts.listLimitPerMinute !== undefined ? {
      config: {
        ...opts.emulatorConfig,
        ...(opts.listLimitPerMinute !== undefined ? { rateLimits: { ...opts.emulatorConfig?.rateLimits, paginated: { limit: opts.listLimitPerMinute, windowSeconds: 60 } } } : {}),
      },
    } : {}),
  });
  const deps = runtimeDeps(cluster.adminKubeconfig);
  const registry = new Registry();
  // Every token's client shares the registry, so the tests read one set of call counters.
  const clientFor = (token: string): LinodeClient => new LinodeClient({
    token, baseUrl: opts.linodeUrl ?? emulator.url, registry, retry: { baseDelayMs: 100, maxDelayMs: 1_000, ...opts.clientRetry },
    ...(opts.listLimitPerMinute !== undefined ? { rateLimit: { listLimitPerMinute: opts.listLimitPerMinute } } : {}),
  });
  const operatorLinode = clientFor(opts.token ?? TOKEN);
  let writes = 0;
  const counter = passCounter();
  const countPass = (kind: string) => (key: string): void => { counter.onPass(`${kind} ${key}`); };
  const passes = (kind: string, key: string): number => counter.passes(`${kind} ${key}`);
  const clusterId = `test-${cluster.namespace}`;
  const informers = new InformerPool(deps.operatorKube, { namespaces: [cluster.namespace, ...(opts.extraNamespaces ?? [])], cacheEntries: deps.metrics.cacheEntries });
  const required = new Set(opts.requireCredentialsRef ?? []);
  const adopting = new Set(opts.adoptNamespaces ?? ["*"]);
  const accounts = new LinodeAccounts({
    operator: { token: opts.token ?? TOKEN, client: operatorLinode }, clientFor,
    requireRef: (namespace) => required.has("*") || required.has(namespace),
    adoptionAllowed: (namespace) => adopting.has("*") || adopting.has(namespace),
    entries: deps.metrics.cacheEntries,
    // As an install's ownership key: one per test namespace, the same across the env's restarts.
    proofKey: createHash("sha256").update(`ownership-key/${cluster.namespace}`).digest(),
    ...(opts.unusedAccountReleaseMillis !== undefined ? { unusedReleaseMillis: opts.unusedAccountReleaseMillis } : {}),
  });
  const protection = new ReferenceProtection(deps.operatorKube, deps.log, deps.metrics.cacheEntries);
  const nodePorts = new Set(opts.nodePortNamespaces ?? ["*"]);
  const kindDeps: ResourceDeps = {
    accounts, clusterId, registry, log: deps.log, cacheEntries: deps.metrics.cacheEntries,
    nodePortsAllowed: (namespace) => nodePorts.has("*") || nodePorts.has(namespace),
    poll: { pendingMillis: opts.poll?.pendingMillis ?? 300, readyMillis: opts.poll?.readyMillis ?? 60_000 },
    // The kinds' settings as the configuration would hold them, at intervals a test can wait for.
    settings: {
      // The operator creates databases on the platform the emulator creates them on.
      "database-platform": opts.platform ?? "legacy",
      ...(opts.statsMillis !== undefined ? { "nodebalancer-stats-seconds": opts.statsMillis / 1000 } : {}),
      ...(opts.backupsRefreshMillis !== undefined ? { "backups-refresh-hours": opts.backupsRefreshMillis / 3_600_000 } : {}),
      ...opts.settings,
    },
  };
  // The workers shared fairly among accounts (flowOf), as buildControllers does.
  const controllers = Object.fromEntries(kinds.map((kind) => [kind.type.kind, new Controller(kind, {
    ...deps, kube: deps.operatorKube, informers, protection, gates: readGates({ readNodes: opts.readNodes ?? false }), onStatusWrite: () => { writes++; }, onPass: countPass(kind.type.kind), kindDeps,
  }, { concurrency: opts.concurrency ?? 4, coalesceMillis: 200, backoff: { baseMillis: 200, maxMillis: 5_000 }, flowOf: (obj) => credentialsFlow(obj) })]));
  keepRecordedAccounts(accounts, Object.values(controllers));
  await Promise.all(Object.values(controllers).map((c) => c.start()));
  const controller = controllers.ManagedDatabase;
  if (controller === undefined) throw new Error("no ManagedDatabase controller");
  const linode = new LinodeClient({ token: TOKEN, baseUrl: emulator.url, registry: new Registry(), rateLimit: false });
  const afterPasses = (kind: string, key: string, count: number, timeoutMillis?: number): Promise<void> => counter.afterPasses(`${kind} ${key}`, count, timeoutMillis);
  return {
    emulator, linode, deps, controller, controllers, operatorLinode, clusterId, registry, accounts,
    statusWrites: () => writes,
    kubeWrites: deps.kubeWrites,
    kubeWriteLog: deps.kubeWriteLog,
    passes,
    afterPasses,
    async repass(kind, key, count, timeoutMillis) {
      const c = controllers[kind];
      if (c === undefined) throw new Error(`no ${kind} controller`);
      for (let i = 0; i < count; i++) {
        const done = afterPasses(kind, key, 1, timeoutMillis);
        c.enqueue(key);
        await done;
      }
    },
    async stop(how) {
      await Promise.all(Object.values(controllers).map((c) => c.stop()));
      await accounts.close();
      await operatorLinode.close();
      await linode.close();
      if (opts.reuseEmulator === undefined && how?.keepEmulator !== true) await emulator.close();
    },
  };
}
