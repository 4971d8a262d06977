// The kinds the operator runs. Each kind's module builds its controller from the shared
// dependencies; the manager runs them all behind one leader election.
import type { OperatorConfig } from "../config/operator-config.ts";
import type { KubeClient } from "../kube/client.ts";
import type { LinodeClient } from "../linode/index.ts";
import type { OperatorMetrics } from "../metrics/operator-metrics.ts";
import type { Controller } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { managedDatabaseController } from "./managed-database/index.ts";

export interface OperatorDeps {
  config: OperatorConfig;
  kube: KubeClient;
  linode: LinodeClient;
  events: EventRecorder;
  log: Logger;
  metrics: OperatorMetrics;
}

export function buildControllers(deps: OperatorDeps): Controller<unknown, unknown>[] {
  const opts = { concurrency: deps.config.concurrency, namespaces: deps.config.namespaces, shutdownGraceMillis: deps.config.shutdownGraceSeconds * 1000 };
  return [
    managedDatabaseController(deps, opts),
  ];
}
