// Idle means no Kubernetes writes: one settled object of each kind (a ManagedDatabase on each
// platform, a DatabaseSnapshot, a DatabaseConnectionPool, a NodeBalancer), the cloud changing
// only by itself (the NodeBalancer's transfer and statistics counting up, the databases' restore
// window sliding, the emulator's clock days ahead), every periodic read forced to run (the
// statistics, the backups lists) and many passes of each: not one status write, Event, Secret
// write or metadata write. What moves by itself is a metric, not status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseConnectionPoolType as poolType } from "../../src/resources/database-connection-pool/index.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { mysql } from "../harness/database-helpers.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const DAY_MS = 86_400_000;

describe("an idle hour", () => {
  const cluster = useTestCluster("idle-writes");
  let env: OperatorEnv;
  // Where the cloud's clock jumps to: nine days ahead, at 06:00 UTC (no automatic backup is due
  // for 18 hours). The NodeBalancer's first statistics and transfer come 10 minutes after.
  const jump = (Math.floor(Date.now() / DAY_MS) + 9) * DAY_MS + 6 * 3_600_000;
  // The periodic reads at intervals a test sees several times over: statistics every 0.5 s, each
  // database's backups listed every second (the operator's defaults: 15 min, a day).
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, {
      platform: "legacy", provisionSeconds: 0.3, poll: { pendingMillis: 300, readyMillis: 1_000 },
      statsMillis: 500, backupsRefreshMillis: 1_000, emulatorConfig: { statsDelaySeconds: Math.round((jump - Date.now()) / 1000) + 600 },
    });
  });
  afterAll(async () => { await env.stop(); });
  const ns = (): string => cluster.namespace;
  const create = (type: ResourceType, name: string, spec: Record<string, unknown>): Promise<ManagedObject> =>
    env.deps.kube.createCustom(type, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: type.kind, metadata: { name }, spec });
  const get = (type: ResourceType, name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(type, { namespace: ns(), name });
  const settled = (type: ResourceType, name: string, extra: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject> => waitFor(`${type.kind} ${name} settled`, async () => {
    const o = await get(type, name);
    const ok = ["Ready", "Synced"].every((t) => o.status?.conditions?.some((c) => c.type === t && c.status === "True" && c.observedGeneration === o.metadata.generation) === true);
    return ok && o.status?.observedGeneration === o.metadata.generation && extra(o) ? o : undefined;
  }, 60_000, 100);
  const seed = async (body: unknown): Promise<{ databases?: { first_id: number } }> => {
    const res = await fetch(`${new URL(env.emulator.url).origin}/_emulator/seed`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return (await res.json()) as { databases?: { first_id: number } };
  };
  /** GETs of a route (the emulator counts by route: one object of each here). */
  const requests = (route: string): number => env.emulator.requestCounts()[`GET ${route}`] ?? 0;
  const backups = "/databases/mysql/instances/{instanceId}/backups";
  const stats = "/nodebalancers/{nodeBalancerId}/stats";
  /** The objects to look at: one of each kind. */
  const objects: [ResourceType, string][] = [[mdbType, "orders"], [mdbType, "ledger"], [snapType, "orders-s1"], [poolType, "ledger-pool"], [nbType, "web"]];
  const passAll = async (): Promise<void> => {
    for (const [type, name] of objects) await env.repass(type.kind, `${ns()}/${name}`, 1);
  };

  it("costs no Kubernetes write, while counters move, restore windows slide and every periodic read runs", async () => {
    // A legacy database the operator creates (with its Secret) and a snapshot of it; a current-platform
    // PostgreSQL database adopted by id and a pool in it.
    const ledgerId = (await seed({ databases: { count: 1, engine: "postgresql", platform: "current", labelPrefix: "idle-ledger" } })).databases?.first_id ?? 0;
    await create(mdbType, "orders", mysql);
    await create(mdbType, "ledger", { engine: "postgresql", version: "16", region: "us-east", type: "g6-nanode-1", databaseId: ledgerId, allowList: ["203.0.113.7"] });
    await settled(mdbType, "orders");
    await settled(mdbType, "ledger");
    await create(snapType, "orders-s1", { databaseRef: { name: "orders" } });
    await create(poolType, "ledger-pool", { databaseRef: { name: "ledger" }, database: "defaultdb", mode: "transaction", size: 10 });
    await settled(snapType, "orders-s1");
    await settled(poolType, "ledger-pool");

    // A NodeBalancer with a backend UP.
    await create(nbType, "web", { region: "us-east", configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "web-1", address: "192.168.210.1:80" }] }] });
    const nbId = Number((await settled(nbType, "web", (o) => typeof o.status?.updated === "string")).status?.id);

    // Nine days go by in the cloud: the current database is older than its seven days of
    // restore points, so its oldest one slides with the clock from here on. What the days
    // brought (automatic backups) is news, written once.
    const clock = `${new URL(env.emulator.url).origin}/_emulator/clock`;
    await fetch(clock, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ now: jump }) });
    const listed = requests(backups);
    await waitFor("the backups listed after the days", async () => { await passAll(); return requests(backups) > listed ? true : undefined; }, 30_000, 200);
    await passAll();
    await passAll();
    expect((await env.linode.nodeBalancers.get(nbId)).transfer.total).toBeNull();

    const stats0 = requests(stats);
    const backups0 = requests(backups);
    const before = env.kubeWrites();
    const logged = env.kubeWriteLog().length;
    const statusBefore = env.statusWrites();
    const passes0 = objects.map(([type, name]) => env.passes(type.kind, `${ns()}/${name}`));
    // An idle hour, compressed: every pass of each object three minutes of the cloud's clock
    // after the last, 20 passes of each; every fifth round, passes until the periodic reads
    // (backups every second, statistics every half second, in the operator's time) have run
    // again, so they are due again and again.
    for (let i = 0; i < 20; i++) {
      env.emulator.advance(180);
      const [statsAt, backupsAt] = [requests(stats), requests(backups)];
      await passAll();
      if (i % 5 === 4) await waitFor("the periodic reads run again", async () => (requests(stats) > statsAt && requests(backups) > backupsAt ? true : (await passAll(), undefined)), 30_000, 100);
    }
    await passAll();

    // The cloud moved and the operator looked: the counters count, the periodic reads ran.
    const transfer = (await env.linode.nodeBalancers.get(nbId)).transfer.total ?? 0;
    expect(transfer).toBeGreaterThan(0);
    expect(requests(stats)).toBeGreaterThan(stats0);
    expect(requests(backups)).toBeGreaterThan(backups0 + 2);
    objects.forEach(([type, name], i) => { expect(env.passes(type.kind, `${ns()}/${name}`)).toBeGreaterThanOrEqual((passes0[i] ?? 0) + 21); });
    // ... and wrote nothing to Kubernetes: no status, no Event, no Secret, no metadata.
    const written = Object.fromEntries(Object.entries(env.kubeWrites()).map(([k, v]): [string, number] => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));
    expect(written, env.kubeWriteLog().slice(logged).join("\n")).toEqual({});
    expect(env.statusWrites()).toBe(statusBefore);

    // What moved is in the metrics: this month's transfer (read from the list the looks share),
    // the statistics, the restore window.
    const metric = async (name: string, labels: Record<string, string>): Promise<number | undefined> =>
      (await env.registry.getSingleMetric(name)?.get())?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
    expect(await metric("linode_nodebalancer_transfer_megabytes", { name: "web", direction: "total" })).toBeGreaterThan(0);
    expect(await metric("linode_nodebalancer_connections", { name: "web" })).toBeGreaterThan(0);
    const oldest = await metric("linode_database_oldest_restore_time_seconds", { name: "ledger" }) ?? 0;
    expect(oldest * 1000).toBeGreaterThan(jump - 7 * DAY_MS);
    expect((await get(nbType, "web")).status?.transfer).toBeUndefined();
    expect((await get(mdbType, "ledger")).status?.oldestRestoreTime).toBeUndefined();
  }, 240_000);
});
