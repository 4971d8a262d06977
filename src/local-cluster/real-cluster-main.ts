// Starts the one-node real cluster by hand (debugging, trying a chart) and stops it cleanly on
// Ctrl-C / SIGTERM:  node src/local-cluster/real-cluster-main.ts [--emulator] [--image app.tar]...
// Prints how to reach it: only from inside its network namespace.
import { parseArgs } from "node:util";
import { startRealCluster } from "./real-node.ts";

const { values } = parseArgs({ options: { emulator: { type: "boolean" }, image: { type: "string", multiple: true }, keep: { type: "boolean" } } });
const c = await startRealCluster({ keep: values.keep === true });
for (const tar of values.image ?? []) await c.importImage(tar);
const emu = values.emulator === true ? await c.startEmulator(["--token", "dev-token"]) : undefined;
const ns = `nsenter --net=/run/netns/${c.netns}`;
process.stdout.write([
  `cluster up: control plane ${c.timings.controlPlaneMillis} ms, node Ready ${c.timings.nodeReadyMillis} ms`,
  `  kubectl: ${ns} ${c.binDir}/kubectl --kubeconfig ${c.kubeconfig} get nodes`,
  `  helm:    ${ns} ${c.binDir}/helm --kubeconfig ${c.kubeconfig} list -A`,
  `  apiserver for hostNetwork pods: KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=${c.apiPort}`,
  ...(emu === undefined ? [] : [`  emulator (inside the netns): ${emu.url} token dev-token`]),
  `  logs: ${c.dir}`,
  "Ctrl-C stops it and removes everything.",
  "",
].join("\n"));
await new Promise<void>((resolve) => {
  process.once("SIGINT", () => { resolve(); });
  process.once("SIGTERM", () => { resolve(); });
});
await c.stop();
