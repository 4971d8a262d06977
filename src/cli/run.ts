// `linode-operator run`: the operator process.
import { loadOperatorConfig, runHelp, type OperatorConfig } from "../config/operator-config.ts";
import type { KubeClient } from "../kube/client.ts";
import { connectKube } from "../kube/config.ts";
import { waitForApiServer } from "../kube/wait-for-api-server.ts";
import { LinodeClient } from "../linode/index.ts";
import { kindDefinitions } from "../resources/index.ts";
import { KubeEventRecorder } from "../runtime/events.ts";
import { serveEndpoints } from "../runtime/http-endpoints.ts";
import { createLogger, type Logger } from "../runtime/logger.ts";
import { guardProcess } from "../runtime/process-guard.ts";
import { waitForUsableToken } from "../doctor/token-gate.ts";
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
  const linodeToken = await checkOwnToken(config, kube, log);
  const operator = await assembleOperator({
    config: { ...config, linodeToken }, log, kube,
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
  log.info({ identity: config.identity, namespaces: config.namespaces.length > 0 ? config.namespaces : "all", healthPort: manager.healthPort, metricsPort: manager.metricsPort, linodeApiUrl: config.linodeApiUrl,
    // How Node runs it: the memory settings (src/cli/main.ts) show here however it was started.
    node: { pid: process.pid, flags: process.execArgv, mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? "glibc's default" } }, "operator started");
  const code = await done;
  process.exit(code);
}

/**
 * The operator's own token must be able to work before it leads anything (doctor/token-gate.ts);
 * meanwhile its probes answer: alive, and not Ready with the reason. Without a token of its own
 * (every resource names one) there is nothing to check.
 */
async function checkOwnToken(config: OperatorConfig, kube: KubeClient, log: Logger): Promise<string | undefined> {
  if (config.linodeToken === undefined && config.linodeTokenSecret === undefined) return undefined;
  let notReady: string | undefined = "checking the operator's Linode token";
  const endpoints = config.healthPort < 0 ? undefined : await serveEndpoints({
    port: config.healthPort, host: config.bindAddress, liveness: [],
    readiness: [{ name: "linode-token", check: () => notReady }],
  });
  try {
    return await waitForUsableToken({
      settings: config, kube, log,
      events: new KubeEventRecorder(kube, { controller: "linode.operator.dev/linode-operator", instance: config.identity, log }),
      kinds: kindDefinitions.map((d) => d.kind),
      clientFor: (token) => new LinodeClient({ token, baseUrl: config.linodeApiUrl, userAgent: "linode-operator", rateLimit: false }),
      setNotReady: (why) => { notReady = why; },
      recheckMillis: config.tokenRecheckSeconds * 1000,
    });
  } finally {
    await endpoints?.close();
  }
}
