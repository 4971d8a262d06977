// A tenant cannot fill the operator's memory (issue 41, 8). Anyone who may create Secrets and
// ConfigMaps in a namespace the operator watches can give them the labels (or the type) the
// operator selects its caches by: the credentials label, the label of the Secrets it publishes,
// kubernetes.io/tls, the allow-list label. None of them is named by any resource here, so none
// may cost more than its name: a real `linode-operator run` process, its resident memory
// (VmRSS) once it has settled, then 100 such Secrets and 100 such ConfigMaps of about 0.5 MiB
// each, seen by its caches (the cache-entries metric counts them), and its memory again. Then a
// restart among them: its first lists read them all, a page at a time.
// On 455b2b9 (every such object cached whole): 141 → 362 MiB.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const COUNT = 100;
const GROWTH_LIMIT_MIB = 20;
/**
 * A restart reads every one of them (200 objects: 75 MiB of data, 25 MiB of annotations) in
 * list pages, and the allocator keeps part of what those pages took (+17 to +29 MiB measured
 * here). Keeping them, as 455b2b9 did, costs over 200 MiB.
 */
const RESTART_LIMIT_MIB = 50;

/** The process's resident memory, in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${String(pid)}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const peakMiB = async (pid: number): Promise<number> => Number(/VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${String(pid)}/status`, "utf8"))?.[1] ?? 0) / 1024;

/**
 * Resident memory once it stops moving: sampled every half second until the last 40 samples
 * (20 s: long enough for V8's memory reducer, which collects an idle process's garbage some
 * seconds after it goes quiet) lie within 1 MiB, at most `timeoutMillis` (then the last sample).
 * Nothing is forced: what the process does not give back by itself counts.
 */
async function settledRss(pid: number, timeoutMillis = 90_000): Promise<{ rss: number; samples: number }> {
  const samples: number[] = [];
  const end = Date.now() + timeoutMillis;
  for (;;) {
    samples.push(await rssMiB(pid));
    const last = samples.slice(-40);
    if ((last.length === 40 && Math.max(...last) - Math.min(...last) <= 1) || Date.now() > end) return { rss: samples.at(-1) ?? Number.NaN, samples: samples.length };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** linode_operator_cache_entries{map} as the process reports it now. */
async function cacheEntries(metricsPort: number, map: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`linode_operator_cache_entries{map="${map}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** Random (incompressible) bytes as a Secret or ConfigMap value of `bytes` characters. */
const filler = (bytes: number): string => randomBytes(Math.ceil((bytes * 3) / 4)).toString("base64").slice(0, bytes);

describe("a tenant's labelled Secrets and ConfigMaps", () => {
  const cluster = useTestCluster("memory");
  let p: OperatorProcess | undefined;
  afterAll(() => { p?.child.kill("SIGKILL"); });

  it(`${String(COUNT)} labelled ~0.5 MiB Secrets (credentials label, the operator's own label, kubernetes.io/tls) and ${String(COUNT)} allow-list ConfigMaps raise the operator's RSS by at most ${String(GROWTH_LIMIT_MIB)} MiB; a restart among them keeps none`, async () => {
    await installCrds(cluster);
    const start = (): OperatorProcess => startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "memory-token", LINODE_API_URL: "http://127.0.0.1:9/v4",
      WATCH_NAMESPACES: cluster.namespace, LEADER_ELECT: "false",
      POD_NAMESPACE: cluster.namespace, POD_NAME: "memory", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    p = start();
    const started = await p.waitForLog((l) => l.msg === "operator started");
    await p.waitForLog((l) => l.msg === "cache synced; starting workers");
    const pid = p.child.pid ?? 0;
    const metricsPort = Number(started.metricsPort);
    const before = await settledRss(pid);

    // Each about 0.5 MiB: 384 KiB of data and a 128 KiB annotation (metadata a cache could keep too).
    const labels = { "linode.operator.dev/credentials": "true", "app.kubernetes.io/managed-by": "linode-operator", "linode.operator.dev/allow-list": "true" };
    const make = async (i: number): Promise<void> => {
      const name = `bulk-${String(i)}`;
      const annotations = { "tenant.example/notes": filler(128 * 1024) };
      await cluster.core.createNamespacedSecret({
        namespace: cluster.namespace,
        body: { metadata: { name, labels, annotations }, type: "kubernetes.io/tls", data: { "tls.crt": filler(192 * 1024), "tls.key": filler(192 * 1024) } },
      });
      await cluster.core.createNamespacedConfigMap({
        namespace: cluster.namespace,
        body: { metadata: { name, labels, annotations }, data: { addresses: filler(384 * 1024) } },
      });
    };
    for (let i = 0; i < COUNT; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => make(i + j)));

    // Settled: every cache that selects them has seen all of them.
    const maps = ["informer.secrets{linode.operator.dev/credentials=true}", "informer.secrets{type=kubernetes.io/tls}", "informer.configmaps{linode.operator.dev/allow-list=true}"];
    await waitFor("the operator's caches to see every Secret and ConfigMap", async () => {
      const seen = await Promise.all(maps.map((m) => cacheEntries(metricsPort, m)));
      return seen.every((n) => n >= COUNT) ? seen : undefined;
    }, 120_000, 250);
    const after = await settledRss(pid);
    const growth = after.rss - before.rss;
    process.stdout.write(`tenant memory: RSS ${before.rss.toFixed(1)} MiB before, ${after.rss.toFixed(1)} MiB after ${String(COUNT)} Secrets and ${String(COUNT)} ConfigMaps of ~0.5 MiB (growth ${growth.toFixed(1)} MiB, limit ${String(GROWTH_LIMIT_MIB)}); peak ${(await peakMiB(pid)).toFixed(1)} MiB; settled after ${String(before.samples)} and ${String(after.samples)} samples\n`);
    expect(p.child.exitCode).toBeNull();
    expect(growth).toBeLessThanOrEqual(GROWTH_LIMIT_MIB);

    // A restart among them: its first lists read every one, a page at a time; none is kept.
    p.child.kill("SIGKILL");
    await p.exited;
    p = start();
    await p.waitForLog((l) => l.msg === "cache synced; starting workers");
    const pid2 = p.child.pid ?? 0;
    const restarted = await settledRss(pid2);
    const overFirst = restarted.rss - before.rss;
    process.stdout.write(`tenant memory: restarted among them, RSS settles at ${restarted.rss.toFixed(1)} MiB (${overFirst.toFixed(1)} MiB over the first start without them, limit ${String(RESTART_LIMIT_MIB)}); peak ${(await peakMiB(pid2)).toFixed(1)} MiB\n`);
    expect(p.child.exitCode).toBeNull();
    expect(overFirst).toBeLessThanOrEqual(RESTART_LIMIT_MIB);
  }, 420_000);
});
