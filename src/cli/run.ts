// `linode-operator run`: the operator process.
import { Registry } from "prom-client";
import { loadOperatorConfig, runHelp } from "../config/operator-config.ts";
import { KubeClient } from "../kube/client.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { createOperatorMetrics } from "../metrics/operator-metrics.ts";
import { KubeEventRecorder } from "../runtime/events.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager } from "../runtime/manager.ts";
import { LinodeClient } from "../linode/index.ts";
import { buildControllers } from "../resources/index.ts";


export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${runHelp()}\n`);
    return 0;
  }
  const config = loadOperatorConfig(argv);
  const log = createLogger({ level: config.logLevel });
  const kc = loadKubeConfig();
  const kube = new KubeClient(kc, { fieldManager: "linode-operator" });
  const metrics = createOperatorMetrics(new Registry());
  const events = new KubeEventRecorder(kube, { controller: "linode.operator.dev/linode-operator", instance: config.identity, log });

  let exiting = false;
  const manager = new Manager({
    kube, log, metrics,
    leaderElection: { enabled: config.leaderElect, namespace: config.leaderElectionNamespace, name: config.leaderElectionId, identity: config.identity },
    healthPort: config.healthPort, metricsPort: config.metricsPort, bindHost: config.bindAddress,
    onLostLeadership: () => {
      // Another replica may already be acting: stop at once rather than finish anything.
      log.error({}, "leadership lost; exiting");
      process.exit(1);
    },
  });
  const linode = new LinodeClient({
    token: config.linodeToken, baseUrl: config.linodeApiUrl, registry: metrics.registry,
    logger: log.child({ component: "linode" }), userAgent: "linode-operator",
  });
  for (const c of buildControllers({ config, kube, linode, events, log, metrics })) manager.add(c);

  const done = new Promise<number>((resolve) => {
    const shutdown = (signal: string): void => {
      if (exiting) return;
      exiting = true;
      log.info({ signal }, "shutting down");
      const force = setTimeout(() => { log.error({}, "shutdown took too long; exiting"); resolve(1); }, (config.shutdownGraceSeconds + 5) * 1000);
      manager.stop().then(() => linode.close()).then(() => { clearTimeout(force); log.info({}, "stopped"); resolve(0); }, (err: unknown) => {
        clearTimeout(force);
        log.error({ err: (err as Error).message }, "shutdown failed");
        resolve(1);
      });
    };
    process.once("SIGTERM", () => { shutdown("SIGTERM"); });
    process.once("SIGINT", () => { shutdown("SIGINT"); });
  });
  await manager.start();
  log.info({ identity: config.identity, namespaces: config.namespaces.length > 0 ? config.namespaces : "all", healthPort: manager.healthPort, metricsPort: manager.metricsPort, linodeApiUrl: config.linodeApiUrl }, "operator started");
  const code = await done;
  process.exit(code);
}
