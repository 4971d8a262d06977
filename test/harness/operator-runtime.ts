// Builds the runtime's pieces against a test cluster, as the operator's `run` command does.
import { Registry } from "prom-client";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { createOperatorMetrics, type OperatorMetrics } from "../../src/metrics/operator-metrics.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";

export function runtimeDeps(kubeconfig: string): { kube: KubeClient; events: KubeEventRecorder; metrics: OperatorMetrics; log: ReturnType<typeof createLogger> } {
  const kube = new KubeClient(loadKubeConfigFromFile(kubeconfig), { fieldManager: "linode-operator" });
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: false });
  return {
    kube,
    log,
    metrics,
    events: new KubeEventRecorder(kube, { controller: "linode.operator.dev/linode-operator", instance: "test", log, entries: metrics.cacheEntries }),
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
