// Snapshot queue benchmark: one ManagedDatabase, N DatabaseSnapshots of it (default 4) applied
// at once, with the operator as a real `linode-operator run` process on a real API server and
// the emulator taking each backup in S seconds (default 5). The API allows 3 snapshots per
// database and one backup at a time, so they go one after the other; once 3 are Available the
// oldest is deleted, and so on until every one has been Available. Prints when each became
// Available, the total, and the Linode calls made (by route) per snapshot.
//   node test/bench/database-snapshot-queue.ts [N] [backupSeconds]
import { fetch } from "undici";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { databaseSnapshotType as dbsnap } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { startBench } from "./bench-setup.ts";

const n = Number(process.argv[2] ?? 4);
const backupSeconds = Number(process.argv[3] ?? 5);
const say = (s: string): void => { process.stdout.write(`${s}\n`); };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const bench = await startBench({ provisionSeconds: backupSeconds });
const { cp, emulator } = bench;
try {
  const { metricsUrl } = await bench.operator([]);
  const callsByRoute = async (): Promise<Map<string, number>> => {
    const text = await (await fetch(metricsUrl)).text();
    const out = new Map<string, number>();
    for (const l of text.split("\n")) {
      const m = /^linode_api_requests_total\{(.*)\} (\S+)$/.exec(l);
      if (m === null) continue;
      const labels: Record<string, string | undefined> = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1] ?? "", x[2]]));
      const key = `${labels.method ?? "?"} ${labels.route ?? "?"} ${labels.status ?? "?"}`;
      out.set(key, (out.get(key) ?? 0) + Number(m[2]));
    }
    return out;
  };

  const kube = new KubeClient(loadKubeConfigFromFile(cp.adminKubeconfig), { fieldManager: "bench" });
  const ready = (o: ManagedObject | undefined): boolean => o?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  await kube.createCustom(mdb, "bench", {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders" },
    spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] },
  });
  while (!ready(await kube.getCustom<ManagedObject>(mdb, { namespace: "bench", name: "orders" }))) await sleep(200);
  await sleep(1_000);

  const before = await callsByRoute();
  const t0 = Date.now();
  const names = Array.from({ length: n }, (_, i) => `snap-${String(i + 1)}`);
  for (const name of names) {
    await kube.createCustom(dbsnap, "bench", {
      apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name },
      spec: { databaseRef: { name: "orders" } },
    });
  }
  const availableAt = new Map<string, number>();
  const waitingReasons = new Map<string, Set<string>>();
  const deleted: string[] = [];
  while (availableAt.size < n) {
    if (Date.now() - t0 > 10 * 60_000) throw new Error(`only ${String(availableAt.size)}/${String(n)} Available after 10 min`);
    await sleep(100);
    const items = (await kube.list<ManagedObject>(dbsnap, { namespace: "bench" })).items;
    for (const o of items) {
      const name = o.metadata.name;
      if (o.status?.phase === "Available" && !availableAt.has(name)) availableAt.set(name, Date.now() - t0);
      const reason = o.status?.conditions?.find((c) => c.type === "Ready" && c.status === "False")?.reason;
      if (reason !== undefined) waitingReasons.set(name, (waitingReasons.get(name) ?? new Set()).add(reason));
    }
    // The API's limit: with 3 Available and more to take, delete the oldest to free a slot.
    const live = names.filter((x) => availableAt.has(x) && !deleted.includes(x));
    const first = live[0];
    if (live.length >= 3 && availableAt.size < n && first !== undefined) {
      deleted.push(first);
      await kube.deleteCustom(dbsnap, { namespace: "bench", name: first });
      say(`${String(Date.now() - t0).padStart(6)} ms  deleted ${first} to free a slot`);
    }
  }
  const total = Date.now() - t0;
  await sleep(1_000);
  const after = await callsByRoute();

  for (const name of names) say(`${String(availableAt.get(name)).padStart(6)} ms  ${name} Available (waited: ${[...(waitingReasons.get(name) ?? [])].join(", ") || "-"})`);
  say(`${String(n)} snapshots of one database all Available ${String(total)} ms after they were applied (emulated backup time ${String(backupSeconds)} s each, one at a time)`);
  let sum = 0;
  const rows: string[] = [];
  for (const [key, v] of after) {
    const d = v - (before.get(key) ?? 0);
    if (d === 0) continue;
    sum += d;
    rows.push(`  ${String(d).padStart(4)}  ${key}`);
  }
  say(`Linode calls while they ran (the database's own polling included): ${String(sum)}, ${(sum / n).toFixed(1)} per snapshot`);
  for (const r of rows.sort()) say(r);
  const seen = new Map<string, number>();
  for (const x of emulator.mutations()) if (x.receivedAt >= t0) seen.set(`${x.method} ${x.route} ${String(x.status)}`, (seen.get(`${x.method} ${x.route} ${String(x.status)}`) ?? 0) + 1);
  say(`snapshot requests sent at: ${emulator.mutations().filter((x) => x.receivedAt >= t0 && x.method === "POST").map((x) => `${String(x.receivedAt - t0)} ms`).join(", ")}`);
  say(`mutations the emulator received meanwhile: ${[...seen].map(([k, v]) => `${String(v)}× ${k}`).join("; ")}`);
} finally {
  await bench.stop();
}
