// Scale benchmark: N ManagedDatabases (default 200) against the emulator, with the operator as
// a real `linode-operator run` process on a real API server. Prints the time until all are
// Ready, Linode calls per database during convergence and per database per hour in steady
// state, Kubernetes writes per hour in steady state, and the operator's peak RSS.
//   node test/bench/managed-database-scale.ts [N] [steadyMinutes]
import { readFile } from "node:fs/promises";
import { Agent, fetch } from "undici";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startBench } from "./bench-setup.ts";

const n = Number(process.argv[2] ?? 200);
const steadyMinutes = Number(process.argv[3] ?? 6);
const say = (s: string): void => { process.stdout.write(`${s}\n`); };

const bench = await startBench({ provisionSeconds: 5 });
const { cp, emulator } = bench;
try {
  const { proc: op, metricsUrl } = await bench.operator(["--concurrency", "8"], {
    // e.g. OPERATOR_NODE_OPTIONS=--max-old-space-size=128 to see how small a heap suffices.
    ...(process.env.OPERATOR_NODE_OPTIONS !== undefined ? { NODE_OPTIONS: process.env.OPERATOR_NODE_OPTIONS } : {}),
  });
  const opMetric = async (name: string, filter = ""): Promise<number> => {
    const text = await (await fetch(metricsUrl)).text();
    return text.split("\n").filter((l) => l.startsWith(name) && l.includes(filter) && !l.startsWith("#")).reduce((s, l) => s + Number(l.split(" ").pop()), 0);
  };
  const ca = await readFile(cp.caFile, "utf8");
  const dispatcher = new Agent({ connect: { ca } });
  const apiserverWrites = async (): Promise<number> => {
    const text = await (await fetch(`${cp.server}/metrics`, { headers: { authorization: `Bearer ${cp.adminToken}` }, dispatcher })).text();
    // Writes to what the operator manages; the apiserver's own lease renewals are left out.
    return text.split("\n").filter((l) => l.startsWith("apiserver_request_total{") && /verb="(POST|PUT|PATCH|DELETE|APPLY)"/.test(l) && /resource="(manageddatabases|secrets|events)"/.test(l))
      .reduce((s, l) => s + Number(l.split(" ").pop()), 0);
  };

  const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    await kube.createCustom(mdb, "bench", {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: `db-${String(i)}` },
      spec: { engine: i % 2 === 0 ? "mysql" : "postgresql", version: i % 2 === 0 ? "8" : "16", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] },
    });
  }
  const createdMillis = Date.now() - t0;
  let ready = 0;
  while (ready < n) {
    await new Promise((r) => setTimeout(r, 1_000));
    let token: string | undefined;
    ready = 0;
    do {
      const page = await kube.list<ManagedObject>(mdb, { namespace: "bench", ...(token !== undefined ? { continueToken: token } : {}) });
      ready += page.items.filter((o) => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length;
      token = page.continueToken;
    } while (token !== undefined);
    if (Date.now() - t0 > 30 * 60_000) throw new Error(`only ${String(ready)}/${String(n)} Ready after 30 min`);
  }
  const convergeMillis = Date.now() - t0;
  const convergeCalls = await opMetric("linode_api_requests_total");
  const emulatorDbs = emulator.dump().databases.length;
  say(`${String(n)} ManagedDatabases: created in ${String(createdMillis)} ms, all Ready ${String(convergeMillis)} ms after the first create (emulator provisioning 5 s)`);
  say(`convergence: ${String(convergeCalls)} Linode calls, ${(convergeCalls / n).toFixed(2)} per database; emulator holds ${String(emulatorDbs)} databases`);

  // Let in-flight follow-ups settle, then measure a steady window.
  await new Promise((r) => setTimeout(r, 10_000));
  const calls0 = await opMetric("linode_api_requests_total");
  const mutations0 = await opMetric("linode_api_requests_total", 'method="P') + await opMetric("linode_api_requests_total", 'method="DELETE"');
  const writes0 = await apiserverWrites();
  const w0 = Date.now();
  await new Promise((r) => setTimeout(r, steadyMinutes * 60_000));
  const hours = (Date.now() - w0) / 3_600_000;
  const calls = await opMetric("linode_api_requests_total") - calls0;
  const mutations = await opMetric("linode_api_requests_total", 'method="P') + await opMetric("linode_api_requests_total", 'method="DELETE"') - mutations0;
  const writes = await apiserverWrites() - writes0;
  say(`steady state over ${String(steadyMinutes)} min: ${String(calls)} Linode calls (${(calls / n / hours).toFixed(2)} per database per hour, ${String(mutations)} mutations), ${String(writes)} Kubernetes writes (${(writes / hours).toFixed(1)} per hour)`);
  const status = await readFile(`/proc/${String(op.child.pid)}/status`, "utf8");
  say(`operator peak RSS: ${status.match(/VmHWM:\s+(\d+) kB/)?.[1] ?? "?"} kB; current RSS ${status.match(/VmRSS:\s+(\d+) kB/)?.[1] ?? "?"} kB`);
  await dispatcher.close();
} finally {
  await bench.stop();
}
