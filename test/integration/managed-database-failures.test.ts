// ManagedDatabase failure paths: what the API refuses becomes a condition (not a crash or a
// hot loop), a lost create response never makes a second database, faults still converge.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };

interface Cond { reason: string; message?: string }

/**
 * Waits for the state a test asserts (a condition with this reason), not for the first
 * condition of its type: a transient error may come first on a busy machine. What came on the
 * way is printed, so it is known, not hidden.
 */
async function waitForReason(name: string, read: () => Promise<Cond | undefined>, reason: string): Promise<Cond> {
  const seen = new Set<string>();
  try {
    return await waitFor(`${name}: ${reason}`, async () => {
      const c = await read();
      if (c !== undefined && c.reason !== reason) seen.add(`${c.reason}: ${c.message ?? ""}`);
      return c?.reason === reason ? c : undefined;
    }, 30_000, 50);
  } finally {
    if (seen.size > 0) process.stdout.write(`${name}: on the way to ${reason}, also saw ${[...seen].join(" | ")}\n`);
  }
}

describe("ManagedDatabase failure paths", () => {
  const cluster = useTestCluster("mdbfail");
  let env: OperatorEnv;
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, {
      // The operator's own token can read but not create: a second env below has full rights.
      emulatorConfig: { tokens: [{ token: "read-only-token", scopes: "databases:read_only" }] },
    });
  });
  afterAll(async () => { await env.stop(); });

  const create = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> => env.deps.kube.createCustom(mdb, cluster.namespace, {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec,
  });
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name });
  const cond = async (name: string, type: string, status: string): Promise<Cond | undefined> => {
    const o = await get(name);
    return o.status?.conditions?.find((c) => c.type === type && c.status === status);
  };

  const condWithReason = (name: string, type: string, status: string, reason: string): Promise<Cond> => waitForReason(name, () => cond(name, type, status), reason);

  it("says NotFound for a databaseId that does not exist, and still lets the resource be deleted", async () => {
    await create("ghost", { ...base, databaseId: 987654 });
    const c = await condWithReason("ghost", "Synced", "False", "NotFound");
    expect(c.message).toContain("987654");
    await env.deps.kube.deleteCustom(mdb, { namespace: cluster.namespace, name: "ghost" });
    await waitFor("ghost gone", async () => get("ghost").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 30_000, 200);
  });

  it("converges on the retry after a create whose response was lost, with no second database", async () => {
    env.emulator.setFaults({ dropRate: 1, routes: ["POST /databases/mysql/instances"] });
    try {
      await create("dropped", base);
      const o = await waitFor("dropped Ready", async () => {
        const x = await get("dropped");
        return x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? x : undefined;
      }, 60_000, 200);
      const label = derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: "dropped" });
      const all = await env.linode.databases.engine("mysql").listAll();
      expect(all.filter((d) => d.label === label)).toHaveLength(1);
      expect(o.status?.id).toBe(all.find((d) => d.label === label)?.id);
    } finally {
      env.emulator.setFaults({ dropRate: 0, routes: [] });
    }
  });

  it("converges with a 20% API error rate and creates no duplicates", async () => {
    env.emulator.setFaults({ errorRate: 0.2, errorStatus: 503, seed: 7 });
    try {
      const names = ["f1", "f2", "f3", "f4", "f5"];
      for (const n of names) await create(n, base);
      await waitFor("all Ready", async () => {
        const ok = await Promise.all(names.map(async (n) => (await cond(n, "Ready", "True")) !== undefined));
        return ok.every(Boolean) ? true : undefined;
      }, 90_000, 500);
      const labels = (await env.linode.databases.engine("mysql").listAll()).map((d) => d.label);
      for (const n of names) expect(labels.filter((l) => l === derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: n }))).toHaveLength(1);
    } finally {
      env.emulator.setFaults({ errorRate: 0 });
    }
  });

  it("deletes a database that is still provisioning as soon as its status allows", async () => {
    env.emulator.setTimeScale(0.1); // provisioning now takes ~3 s of wall time
    try {
      await create("early", base);
      const id = await waitFor("early has an id", async () => (await get("early")).metadata.annotations?.["linode.operator.dev/external-id"]);
      await env.deps.kube.deleteCustom(mdb, { namespace: cluster.namespace, name: "early" });
      const waiting = await condWithReason("early", "Synced", "False", "Waiting");
      expect(waiting.message).toMatch(/provisioning/);
      await waitFor("early gone", async () => get("early").then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 200);
      await expect(env.linode.databases.engine("mysql").get(Number(id))).rejects.toMatchObject({ kind: "notFound" });
    } finally {
      env.emulator.setTimeScale(1);
    }
  });
});

describe("ManagedDatabase refused by the API", () => {
  const cluster = useTestCluster("mdbrefused");
  let env: OperatorEnv;
  // A settled database is looked at every second here: a ticker, to show the operator's time
  // going by while a refused resource waits for a change (a pass of it would be a retry).
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 1_000 } }); });
  afterAll(async () => { await env.stop(); });
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const create = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> => env.deps.kube.createCustom(mdb, cluster.namespace, {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec,
  });
  const cond = async (name: string, type: string, status: string): Promise<Cond | undefined> =>
    (await env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name })).status?.conditions?.find((c) => c.type === type && c.status === status);

  it("reports a region the API rejects as Synced=False with the API's reason, and does not retry", async () => {
    await create("ticker", base);
    await waitFor("ticker Ready", () => cond("ticker", "Ready", "True"), 30_000, 100);
    await create("badregion", { ...base, region: "mars-north" });
    const c = await waitForReason("badregion", () => cond("badregion", "Synced", "False"), "ApiRejected");
    expect(c.message).toMatch(/region/i);
    const events = await waitFor("warning event", async () => {
      const list = await env.deps.kube.kc.makeApiClient((await import("@kubernetes/client-node")).EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
      return list.items.find((e) => e.regarding?.name === "badregion" && e.type === "Warning");
    });
    expect(events.reason).toBe("ApiRejected");
    const posts = await linodeCalls(env.operatorLinode, { method: "POST" });
    const passes = env.passes("ManagedDatabase", key("badregion"));
    await env.afterPasses("ManagedDatabase", key("ticker"), 3);
    expect(await linodeCalls(env.operatorLinode, { method: "POST" })).toBe(posts);
    // At most the pass that wrote ApiRejected, if it had not ended yet: no retry of its own.
    expect(env.passes("ManagedDatabase", key("badregion")) - passes).toBeLessThanOrEqual(1);
  });
});

describe("ManagedDatabase with a token that may not create databases", () => {
  const cluster = useTestCluster("mdbro");
  let env: OperatorEnv;
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, { token: "read-only-token", emulatorConfig: { tokens: [{ token: "read-only-token", scopes: "databases:read_only" }] } });
  });
  afterAll(async () => { await env.stop(); });

  it("says Forbidden in a condition", async () => {
    await env.deps.kube.createCustom(mdb, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "ro" }, spec: base });
    const c = await waitForReason("ro", async () => {
      const o = await env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name: "ro" });
      return o.status?.conditions?.find((x) => x.type === "Synced" && x.status === "False");
    }, "Forbidden");
    expect(c.message).toMatch(/not authorized|forbidden/i);
  });
});

describe("ManagedDatabase drift", () => {
  const cluster = useTestCluster("mdbdrift");
  let env: OperatorEnv;
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });

  it("puts back an allowList changed behind its back", async () => {
    await env.deps.kube.createCustom(mdb, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "drift" }, spec: { ...base, allowList: ["203.0.113.7"] } });
    const o = await waitFor("drift Ready", async () => {
      const x = await env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name: "drift" });
      return x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? x : undefined;
    }, 30_000, 200);
    const id = Number(o.status?.id);
    await waitFor("active", async () => ((await env.linode.databases.engine("mysql").get(id)).status === "active" ? true : undefined));
    await env.linode.databases.engine("mysql").update(id, { allowList: ["0.0.0.0/0"] });
    const fixed = await waitFor("allowList restored", async () => {
      const db = await env.linode.databases.engine("mysql").get(id);
      return db.allowList.length === 1 && db.allowList[0] === "203.0.113.7/32" ? db : undefined;
    }, 30_000, 200);
    expect(fixed.allowList).toEqual(["203.0.113.7/32"]);
  });
});
