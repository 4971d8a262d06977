// Builds the runtime's pieces against a test cluster, as the operator's `run` command does.
import { Registry } from "prom-client";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { createOperatorMetrics, type OperatorMetrics } from "../../src/metrics/operator-metrics.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { KubeApi } from "../../src/kube/types.ts";
import { countingKube } from "./kube-writes.ts";

export function runtimeDeps(kubeconfig: string): {
  /** The test's own client. */
  kube: KubeClient;
  /** The operator's: the same, with its writes counted (kubeWrites). */
  operatorKube: KubeApi;
  /** The operator's writes so far (its Events included), by what they write and by method. */
  kubeWrites: () => Record<string, number>;
  /** Each of the operator's writes so far, in order, saying what it wrote (kube-writes.ts). */
  kubeWriteLog: () => string[];
  events: KubeEventRecorder; metrics: OperatorMetrics; log: ReturnType<typeof createLogger>;
} {
  const kube = new KubeClient(loadKubeConfigFromFile(kubeconfig), { fieldManager: "linode-operator" });
  const counted = countingKube(kube);
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: false });
  return {
    kube,
    operatorKube: counted.kube,
    kubeWrites: () => counted.counts(),
    kubeWriteLog: () => counted.log(),
    log,
    metrics,
    events: new KubeEventRecorder(counted.kube, { controller: "linode.operator.dev/linode-operator", instance: "test", log, entries: metrics.cacheEntries }),
  };
}

export async function metricValue(metrics: OperatorMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMillis = 30_000, everyMillis = 100): Promise<T> {
  const end = Date.now() + timeoutMillis;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMillis} ms waiting for ${what}${last !== undefined ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMillis));
  }
}
