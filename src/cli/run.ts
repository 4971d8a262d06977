// `linode-operator run`: the operator process.
import { loadOperatorConfig, runHelp } from "../config/operator-config.ts";
import { connectKube } from "../kube/config.ts";
import { waitForApiServer } from "../kube/wait-for-api-server.ts";
import { kindDefinitions } from "../resources/index.ts";
import { serveEndpoints } from "../runtime/http-endpoints.ts";
import { createLogger } from "../runtime/logger.ts";
import { guardProcess } from "../runtime/process-guard.ts";
import { assembleOperator } from "./assemble-operator.ts";

/** Each kind's own flags, from the one list of kinds. */
const kindSettings = kindDefinitions.map((d) => ({ kind: d.kind, settings: Object.values(d.settings ?? {}) }));

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${runHelp(kindSettings)}\n`);
    return 0;
  }
  const config = loadOperatorConfig(argv, process.env, kindSettings.flatMap((k) => k.settings));
  const log = createLogger({ level: config.logLevel });
  const kube = connectKube();
  // Restarted during an API server outage (e.g. after giving up its lease), wait rather than exit
  // again, alive to the kubelet's liveness probe but not ready.
  await waitForApiServer(() => kube.ping(), log, config.healthPort < 0 ? {} : {
    whileWaiting: () => serveEndpoints({
      port: config.healthPort, host: config.bindAddress, liveness: [],
      readiness: [{ name: "kubernetes", check: () => "waiting for the Kubernetes API server" }],
    }),
  });
  const operator = await assembleOperator({
    config, log, kube,
    onLostLeadership: () => {
      // Another replica may already be acting: stop at once rather than finish anything.
      log.error({}, "leadership lost; exiting");
      process.exit(1);
    },
  });
  const { manager } = operator;
  guardProcess({ log, count: () => { operator.metrics.unexpectedErrors.inc({ where: "process" }); } });
  let exiting = false;

  const done = new Promise<number>((resolve) => {
    const shutdown = (signal: string): void => {
      if (exiting) return;
      exiting = true;
      log.info({ signal }, "shutting down");
      const force = setTimeout(() => { log.error({}, "shutdown took too long; exiting"); resolve(1); }, (config.shutdownGraceSeconds + 5) * 1000);
      operator.stop().then(() => { clearTimeout(force); log.info({}, "stopped"); resolve(0); }, (err: unknown) => {
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
