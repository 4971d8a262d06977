// The kinds the operator runs. Each kind's module builds its descriptor and controller from
// the shared dependencies; the manager runs them all behind one leader election.
import type { OperatorConfig } from "../config/operator-config.ts";
import type { KubeClient } from "../kube/client.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import type { Controller } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";

export interface OperatorDeps {
  config: OperatorConfig;
  kube: KubeClient;
  events: EventRecorder;
  log: Logger;
  metrics: OperatorMetrics;
}

export function buildControllers(_deps: OperatorDeps): Controller<unknown, unknown>[] {
  // ManagedDatabase, DatabaseSnapshot and NodeBalancer controllers register here as they land.
  return [];
}
