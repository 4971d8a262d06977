// The operator's real kinds, run as the operator runs them (one set of shared caches, every
// kind's controller in-process), against the in-memory Kubernetes API and the Linode API
// emulator over HTTP: for what the API server would refuse before the operator ever saw it
// (MemoryKube validates nothing), so the operator's own defences are what is tested.
import { Registry } from "prom-client";
import { startEmulator, type EmulatorConfigInput, type RunningEmulator } from "../../src/emulator/index.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { createOperatorMetrics, type OperatorMetrics } from "../../src/metrics/operator-metrics.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { ReferenceProtection } from "../../src/runtime/protection.ts";
import { InformerPool } from "../../src/runtime/stores.ts";
import { keepRecordedAccounts, kinds, readGates } from "../../src/resources/index.ts";
import { credentialsFlow, LinodeAccounts } from "../../src/resources/shared/credentials.ts";
import type { ResourceDeps } from "../../src/resources/shared/deps.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { startAnswerProxy, type AnswerProxy } from "./answer-proxy.ts";
import { passCounter } from "./pass-counter.ts";

export const MEMORY_TOKEN = "memory-operator-token";

export interface MemoryOperatorEnv {
  kube: MemoryKube;
  emulator: RunningEmulator;
  /** Between the operator and the emulator, when answers are rewritten. */
  proxy: AnswerProxy | undefined;
  metrics: OperatorMetrics;
  controllers: Record<string, Controller<ResourceDeps>>;
  passes(kind: string, key: string): number;
  /** Resolves once `count` more passes of the object ("namespace/name") have completed. */
  afterPasses(kind: string, key: string, count: number, timeoutMillis?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startMemoryOperatorEnv(opts: {
  namespaces: string[];
  platform?: "legacy" | "current";
  readNodes?: boolean;
  emulatorConfig?: EmulatorConfigInput;
  concurrency?: number;
  /** Rewrites the emulator's 2xx JSON answers before the operator reads them (see answer-proxy.ts). */
  rewriteAnswers?: (method: string, path: string, body: unknown) => string | undefined;
}): Promise<MemoryOperatorEnv> {
  const kube = new MemoryKube();
  const emulator = await startEmulator({
    port: 0, tokens: [MEMORY_TOKEN], provisionSeconds: 0.2, platform: opts.platform ?? "legacy", rateLimits: false,
    ...(opts.emulatorConfig !== undefined ? { config: opts.emulatorConfig } : {}),
  });
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: false });
  const events = new KubeEventRecorder(kube, { controller: "linode.operator.dev/linode-operator", instance: "memory", log, entries: metrics.cacheEntries });
  const registry = new Registry();
  const proxy = opts.rewriteAnswers !== undefined ? await startAnswerProxy(emulator.url, opts.rewriteAnswers) : undefined;
  const clientFor = (token: string): LinodeClient => new LinodeClient({ token, baseUrl: proxy?.url ?? emulator.url, registry, rateLimit: false, retry: { baseDelayMs: 50, maxDelayMs: 500 } });
  const operatorLinode = clientFor(MEMORY_TOKEN);
  const accounts = new LinodeAccounts({
    operator: { token: MEMORY_TOKEN, client: operatorLinode }, clientFor,
    requireRef: () => false, adoptionAllowed: () => true, entries: metrics.cacheEntries,
  });
  const informers = new InformerPool(kube, {
    namespaces: opts.namespaces, cacheEntries: metrics.cacheEntries,
    onUnexpectedError: (where) => { metrics.unexpectedErrors.inc({ where }); },
  });
  const protection = new ReferenceProtection(kube, log, metrics.cacheEntries);
  const kindDeps: ResourceDeps = {
    accounts, clusterId: "memory", registry, log, cacheEntries: metrics.cacheEntries,
    nodePortsAllowed: () => true,
    poll: { pendingMillis: 200, readyMillis: 60_000 },
    settings: { "database-platform": opts.platform ?? "legacy" },
  };
  const counter = passCounter();
  const controllers = Object.fromEntries(kinds.map((kind) => [kind.type.kind, new Controller(kind, {
    kube, events, log, metrics, informers, protection, gates: readGates({ readNodes: opts.readNodes ?? false }), kindDeps,
    onPass: (key) => { counter.onPass(`${kind.type.kind} ${key}`); },
  }, { concurrency: opts.concurrency ?? 4, coalesceMillis: 50, backoff: { baseMillis: 200, maxMillis: 5_000 }, flowOf: (obj) => credentialsFlow(obj) })]));
  keepRecordedAccounts(accounts, Object.values(controllers));
  await Promise.all(Object.values(controllers).map((c) => c.start()));
  return {
    kube, emulator, proxy, metrics, controllers,
    passes: (kind, key) => counter.passes(`${kind} ${key}`),
    afterPasses: (kind, key, count, timeoutMillis) => counter.afterPasses(`${kind} ${key}`, count, timeoutMillis),
    async stop() {
      await Promise.all(Object.values(controllers).map((c) => c.stop()));
      await accounts.close();
      await operatorLinode.close();
      await proxy?.close();
      await emulator.close();
    },
  };
}
