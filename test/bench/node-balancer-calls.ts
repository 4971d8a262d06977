// NodeBalancer call budget: one NodeBalancer with C configs × N nodes (default 4 × 10; the
// first https from a TLS Secret), with the operator as a real `linode-operator run` process.
// Prints the Linode calls (by route) to converge from scratch to Ready, after one node
// changes, in a quiet minute, and the time from a TLS Secret change to the new fingerprint in
// the API.
//   node test/bench/node-balancer-calls.ts [configs] [nodes]
import { X509Certificate } from "node:crypto";
import { fetch } from "undici";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startBench } from "./bench-setup.ts";

const configs = Number(process.argv[2] ?? 4);
const nodes = Number(process.argv[3] ?? 10);
const say = (s: string): void => { process.stdout.write(`${s}\n`); };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const bench = await startBench({ provisionSeconds: 1 });
const { cp, emulator } = bench;
try {
  const { metricsUrl } = await bench.operator(["--poll-pending-seconds", "1", "--poll-ready-seconds", "10"]);
  const calls = async (): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const l of (await (await fetch(metricsUrl)).text()).split("\n")) {
      const m = /^linode_api_requests_total\{(.*)\} (\S+)$/.exec(l);
      if (m === null) continue;
      const labels: Record<string, string | undefined> = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1] ?? "", x[2]]));
      const key = `${labels.method ?? "?"} ${labels.route ?? "?"}`;
      out.set(key, (out.get(key) ?? 0) + Number(m[2]));
    }
    return out;
  };
  const report = (what: string, before: Map<string, number>, after: Map<string, number>): void => {
    const rows: string[] = [];
    let sum = 0;
    for (const [k, v] of after) {
      const d = v - (before.get(k) ?? 0);
      if (d > 0) { sum += d; rows.push(`    ${String(d).padStart(4)}  ${k}`); }
    }
    say(`${what}: ${String(sum)} Linode calls`);
    for (const r of rows.sort()) say(r);
  };

  const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
  const linode = new LinodeClient({ token: "bench-token", baseUrl: emulator.url, rateLimit: false });
  const secret = (cert: { certPem: string; keyPem: string }) => kube.applySecret({
    metadata: { name: "bench-tls", namespace: "bench" }, type: "kubernetes.io/tls",
    data: { "tls.crt": Buffer.from(cert.certPem).toString("base64"), "tls.key": Buffer.from(cert.keyPem).toString("base64") },
  });
  await secret(generateCertificate({ commonName: "bench.example.com" }));
  const spec = (changed = false): Record<string, unknown> => ({
    region: "us-east",
    configs: Array.from({ length: configs }, (_, c) => ({
      port: 8000 + c, check: "connection", checkInterval: 2, checkTimeout: 1,
      ...(c === 0 ? { port: 443, protocol: "https", tlsSecretRef: { name: "bench-tls" } } : { protocol: "tcp" }),
      nodes: Array.from({ length: nodes }, (_, n) => ({
        label: changed && c === 1 && n === 0 ? "changed-node" : `node-${String(c)}-${String(n)}`,
        address: `192.168.${String(100 + c)}.${String(10 + n)}:80`,
      })),
    })),
  });
  const ready = async (check: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject> => {
    for (;;) {
      const o = await kube.getCustom<ManagedObject>(nbType, { namespace: "bench", name: "lb" });
      const c = (t: string): boolean => o.status?.conditions?.some((x) => x.type === t && x.status === "True") === true;
      if (c("Ready") && c("Synced") && o.status?.observedGeneration === o.metadata.generation && check(o)) return o;
      await sleep(100);
    }
  };

  const c0 = await calls();
  const t0 = Date.now();
  await kube.createCustom(nbType, "bench", { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "lb" }, spec: spec() });
  const o = await ready();
  const id = Number(o.status?.id);
  say(`${String(configs)} configs × ${String(nodes)} nodes: Ready ${String(Date.now() - t0)} ms after the apply (backends UP one 2 s check interval after they appear)`);
  await sleep(500);
  const c1 = await calls();
  report("from scratch to Ready (the polls while the backends come UP included)", c0, c1);

  const t1 = Date.now();
  await kube.mergePatchCustom(nbType, { namespace: "bench", name: "lb" }, { spec: spec(true) });
  await ready((x) => JSON.stringify(x.status).includes("changed-node"));
  say(`one node changed: Synced and Ready again ${String(Date.now() - t1)} ms after the patch`);
  await sleep(500);
  const c2 = await calls();
  report("one node label changed", c1, c2);

  const renewed = generateCertificate({ commonName: "bench.example.com" });
  const want = new X509Certificate(renewed.certPem).fingerprint;
  const t2 = Date.now();
  await secret(renewed);
  for (;;) {
    const c = (await linode.nodeBalancers.listAllConfigs(id)).find((x) => x.port === 443);
    if (c?.sslFingerprint === want) break;
    await sleep(20);
  }
  say(`TLS Secret changed → new fingerprint in the API after ${String(Date.now() - t2)} ms`);
  await ready((x) => JSON.stringify(x.status).includes(want));
  const c3 = await calls();
  report("the certificate renewal", c2, c3);

  await sleep(60_000);
  report("a quiet minute after (ready poll 10 s)", c3, await calls());
  await linode.close();
} finally {
  await bench.stop();
}
