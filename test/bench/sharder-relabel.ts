// How fast the sharder hands a dead shard's objects to the live ones (issue 46: a takeover
// within 30 s), alone on a real API server: no operator, no Linode. N ManagedDatabases with the
// finalizer and a connection Secret each, over K namespaces, labelled to a shard whose Lease is
// gone; the sharder, given a ring without it, labels each Secret, then its object, to its new
// shard (two writes an object). Each round hands every object to a new pair of shards, at the
// sweep concurrency the round names, on a client with as many connections (the operator gives
// its sharder a pool of SWEEP_CONCURRENCY of its own). Saved: each sweep's time and label writes
// a second. The default size is the replica the 10,000-database shards bench killed (4,400
// objects over 44 namespaces); the target is the 30 s takeover less the Lease's 15 s.
//   npm run bench:sharder -- [N=4400] [K=44] [concurrencies=8,4,16]
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { FINALIZER } from "../../src/runtime/annotations.ts";
import { labelValueFor, MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL } from "../../src/runtime/connection-secrets.ts";
import { SHARD_LABEL } from "../../src/runtime/sharding/assignment.ts";
import { HashRing } from "../../src/runtime/sharding/ring.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { eachLimited, Sharder, SWEEP_CONCURRENCY, TOOK_OVER } from "../../src/runtime/sharding/sharder.ts";
import { startControlPlane } from "../harness/control-plane.ts";
import { crdFiles } from "../harness/crds.ts";
import { kubectl, say, secs } from "./common.ts";
import { resultCollector, saveResult } from "./report/result.ts";

const N = Number(process.argv[2] ?? 4400);
const K = Number(process.argv[3] ?? 44);
const concurrencies = (process.argv[4] ?? `${String(SWEEP_CONCURRENCY)},4,16`).split(",").map(Number);
if (![N, K, ...concurrencies].every((n) => Number.isInteger(n) && n > 0)) throw new Error("usage: node test/bench/sharder-relabel.ts [objects=4400] [namespaces=44] [concurrencies=8,4,16]");
const { figures, notes, figure } = resultCollector(say);

const cp = await startControlPlane({ controllerManager: false });
try {
  const files = await crdFiles();
  await kubectl(cp, ["apply", "--server-side", ...files.flatMap((f) => ["-f", f])]);
  await kubectl(cp, ["wait", "--for=condition=Established", ...files.flatMap((f) => ["-f", f])]);
  const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
  const namespaces = Array.from({ length: K }, (_, i) => `tenant-${String(i)}`);
  for (const ns of namespaces) await kubectl(cp, ["create", "namespace", ns]);
  const t0 = Date.now();
  await eachLimited(Array.from({ length: N }, (_, i) => i), 16, async (i) => {
    const namespace = namespaces[i % K] ?? "";
    const name = `db-${String(i)}`;
    const o = await kube.createCustom<KubeObject>(mdbType, namespace, {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase",
      metadata: { name, labels: { [SHARD_LABEL]: "gone" }, finalizers: [FINALIZER] },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] },
    });
    await kube.createSecret({
      type: "Opaque",
      metadata: {
        namespace, name: `${name}-conn`,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: labelValueFor(name), [SHARD_LABEL]: "gone" },
        ownerReferences: [{ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", name, uid: o.metadata.uid ?? "", controller: true }],
      },
      data: { password: Buffer.from("not-a-secret").toString("base64") },
    });
  });
  say(`${String(N)} objects and their Secrets made in ${String((Date.now() - t0) / 1000)} s`);
  for (const [round, concurrency] of concurrencies.entries()) {
    const own = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench", connections: concurrency });
    let tookOver: (line: Record<string, unknown>) => void = () => undefined;
    const log = createLogger({ level: "info" }, { write: (text: string) => { const l = JSON.parse(text) as Record<string, unknown>; if (l.msg === TOOK_OVER) tookOver(l); } });
    const sharder = new Sharder(own, { types: [mdbType], namespaces: [], concurrency, log });
    const ring = new HashRing([`r${String(round)}-a`, `r${String(round)}-b`]);
    // The sharder as a leader finds it: "gone" was a shard (its first sweep has nothing to do),
    // then its Lease expires and the ring loses it: the takeover timed is the one a death starts.
    const took = new Promise<Record<string, unknown>>((resolve) => { tookOver = resolve; });
    await sharder.start(new HashRing(["gone"]));
    const t = Date.now();
    sharder.setRing(ring);
    // A takeover that fails logs no such line: the bench fails, not hangs.
    await Promise.race([took, new Promise((_resolve, reject) => setTimeout(() => { reject(new Error(`no "${TOOK_OVER}" within 10 min`)); }, 600_000).unref())]);
    const millis = Date.now() - t;
    await sharder.stop();
    let moved = 0;
    let continueToken: string | undefined;
    do {
      const page = await kube.list<KubeObject>(mdbType, { metadataOnly: true, limit: 500, labelSelector: `${SHARD_LABEL} in (r${String(round)}-a,r${String(round)}-b)`, ...(continueToken !== undefined ? { continueToken } : {}) });
      moved += page.items.length;
      continueToken = page.continueToken;
    } while (continueToken !== undefined);
    const product = concurrency === SWEEP_CONCURRENCY ? " (the product's)" : "";
    figure(`concurrency ${String(concurrency)}${product}: objects moved`, moved, undefined, String(N), moved === N);
    figure(`concurrency ${String(concurrency)}${product}: the sweep took`, secs(millis), "s", product !== "" ? "≤ 15 s (the 30 s takeover less the Lease's 15 s)" : undefined, product !== "" ? millis <= 15_000 : undefined);
    figure(`concurrency ${String(concurrency)}${product}: label writes a second (a Secret and its object each)`, Math.round((2 * moved) / (millis / 1000)));
  }
  notes.push(`A real API server and etcd alone on the machine: no operator, no Linode, nothing else writing. ${String(N)} ManagedDatabases over ${String(K)} namespaces, each with the finalizer and one connection Secret, labelled to a shard whose Lease is gone; each round starts a sharder that knew that shard, then takes it out of the ring, and times the takeover the sharder runs at a death (the log line "${TOOK_OVER}"): the shard's objects listed by their label, each assigned after its Secret is labelled. What this leaves out, the bench:shards run has: the survivors taking the objects up on the same cores, and the replicas' own calls.`);
  await saveResult({
    name: "sharder-relabel", title: `The sharder handing ${String(N)} objects of a dead shard over, alone on the API server`,
    command: `npm run bench:sharder -- ${String(N)} ${String(K)} ${concurrencies.join(",")}`, figures, tables: [], charts: [], notes,
  });
} finally {
  await cp.stop();
}
