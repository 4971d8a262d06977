// A tenant cannot stop the operator or reach past its namespace, on a real API server and the
// emulator over HTTP (Linode's current platform). One case per finding of the issue "A tenant
// cannot stop the operator or reach past its namespace", numbered as there. A status written by
// a tenant is made here with the test's own (admin) rights, as a Role with `*/status` would; the
// chart's admission policy, which refuses that, is tested in test/e2e/status-policy.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenId } from "../../src/linode/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { KindTimings } from "../../src/resources/shared/constants.ts";
import { IN_USE_FINALIZER } from "../../src/runtime/protection.ts";
import { kit } from "../harness/boundary-kit.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
const OPERATOR_ACCOUNT = { id: tokenId(TOKEN) };

describe("a tenant cannot stop the operator or reach past its namespace", () => {
  const cluster = useTestCluster("tenant");
  let env: OperatorEnv;
  const k = kit(cluster, () => env);
  // A and B may adopt by id with the operator's token; C may not; R must bring its own token.
  const A = (): string => cluster.namespace;
  const B = (): string => `${cluster.namespace}-b`;
  const C = (): string => `${cluster.namespace}-c`;
  const R = (): string => `${cluster.namespace}-r`;
  const mysql = () => k.as().databases.engine("mysql");
  const path = (id: number): string => `/databases/mysql/instances/${String(id)}`;
  /**
   * What a Role that may write `*‍/status` can do without the chart's admission policy. Returns
   * once the operator's cache holds the forged status: a status-only change does not wake the
   * operator, so a pass asked for sooner may still see the status before it.
   */
  const forgeStatus = async (namespace: string, name: string, status: Record<string, unknown>): Promise<void> => {
    const forged = await env.deps.kube.patchCustomStatus(mdb, { namespace, name }, status);
    const version = Number(forged.metadata.resourceVersion);
    await waitFor(`${name}'s forged status in the operator's cache`, () => (Number(env.controller.get(`${namespace}/${name}`)?.metadata.resourceVersion ?? 0) >= version ? true : undefined), 30_000, 20);
  };
  const message = async (namespace: string, name: string, type: string, reason: string): Promise<string> => (await k.condWith(mdb, namespace, name, type, reason)).message ?? "";

  /** A database made outside the operator, a little longer ago than the clocks may disagree. */
  const outside = async (label: string) => {
    const db = await mysql().create({ ...base, label, allowList: ["198.51.100.1/32"] });
    const made = Date.parse(`${db.created}Z`);
    // Both clocks show whole seconds: one more second for each.
    await waitFor("older than the clock skew", () => (Date.now() > made + 2_000 + KindTimings.clockSkewMillis + 50 ? true : undefined), 10_000, 20);
    return db;
  };
  const skew = KindTimings.clockSkewMillis;
  beforeAll(async () => {
    // The operator tolerates a minute between the API's clock and the cluster's; here both are this machine's.
    (KindTimings as { clockSkewMillis: number }).clockSkewMillis = 500;
    for (const ns of [B(), C(), R()]) await cluster.core.createNamespace({ body: { metadata: { name: ns, labels: { "linode.operator.dev/test": "true" } } } });
    env = await startOperatorEnv(cluster, {
      poll: { pendingMillis: 300, readyMillis: 2_000 }, provisionSeconds: 0.3, platform: "current",
      extraNamespaces: [B(), C(), R()], adoptNamespaces: [A(), B()], requireCredentialsRef: [R()],
    });
  });
  afterAll(async () => {
    (KindTimings as { clockSkewMillis: number }).clockSkewMillis = skew;
    await k.close();
    await env.stop();
    for (const ns of [B(), C(), R()]) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("1: engineConfig keys that name Object's prototype are InvalidSpec, never walked: nothing is polluted and another namespace's database still converges", async () => {
    await k.create(mdb, A(), "tuned", { ...base, engineConfig: { binlog_retention_period: 600 } });
    await k.ready(mdb, A(), "tuned");
    // The CRD cannot see into a free-form field: the API server stores it, the operator refuses it.
    await k.patch(mdb, A(), "tuned", { spec: { engineConfig: { constructor: { prototype: { polluted: "1" } } } } });
    const m = await message(A(), "tuned", "Synced", "InvalidSpec");
    expect(m).toContain("spec.engineConfig.constructor");
    await k.patch(mdb, A(), "tuned", { spec: { engineConfig: JSON.parse('{"mysql": {"__proto__": {"polluted": "1"}}}') as unknown } });
    await waitFor("the second edit refused", async () => ((await k.get(mdb, A(), "tuned")).status?.conditions?.find((c) => c.type === "Synced")?.message?.includes("__proto__") === true ? true : undefined), 30_000, 100);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
    await k.create(mdb, B(), "after", base);
    await k.ready(mdb, B(), "after");
  });

  it("3: a fork by id of a database another namespace's resource records is refused exactly as a fork of a missing one: nothing is sent", async () => {
    await k.create(mdb, A(), "orders", base);
    const id = Number((await k.ready(mdb, A(), "orders")).status?.id);
    const creates = k.count("POST /databases/mysql/instances");
    await k.create(mdb, B(), "copy", { ...base, restoreFrom: { pointInTime: { databaseId: id } } });
    const refused = await message(B(), "copy", "Synced", "RestoreSourceMismatch");
    const missing = 987_654_321;
    await k.create(mdb, B(), "copy-missing", { ...base, restoreFrom: { pointInTime: { databaseId: missing } } });
    const absent = await message(B(), "copy-missing", "Synced", "RestoreSourceMismatch");
    expect(refused.replaceAll(String(id), "ID")).toBe(absent.replaceAll(String(missing), "ID"));
    await k.repass(mdb, B(), "copy", 2);
    expect(k.count("POST /databases/mysql/instances") - creates).toBe(0);
    expect(await k.secret(B(), "copy-connection")).toBeUndefined();
    // The same database forked by reference in its own namespace is a fork like any other.
    await k.create(mdb, A(), "own-copy", { ...base, restoreFrom: { pointInTime: { databaseRef: { name: "orders" } } } });
    expect((await k.ready(mdb, A(), "own-copy")).status?.fork).toMatchObject({ source: id });
  });

  it("13: where adoption is not allowed, naming an id another namespace records is AdoptionNotAllowed exactly as naming a free one: whether it exists elsewhere is not told", async () => {
    await k.create(mdb, A(), "recorded", base);
    const recorded = Number((await k.ready(mdb, A(), "recorded")).status?.id);
    const free = await mysql().create({ ...base, label: "nobody-records-this" });
    await k.create(mdb, C(), "claims-recorded", { ...base, databaseId: recorded, managementPolicy: "Observe" });
    await k.create(mdb, C(), "claims-free", { ...base, databaseId: free.id, managementPolicy: "Observe" });
    const a = await message(C(), "claims-recorded", "Synced", "AdoptionNotAllowed");
    const b = await message(C(), "claims-free", "Synced", "AdoptionNotAllowed");
    expect(a.replaceAll(String(recorded), "ID")).toBe(b.replaceAll(String(free.id), "ID"));
    // Where adoption is allowed, one recorded elsewhere is still ExternalIdInUse.
    await k.create(mdb, B(), "claims-recorded", { ...base, databaseId: recorded, managementPolicy: "Observe" });
    await k.condWith(mdb, B(), "claims-recorded", "Synced", "ExternalIdInUse");
  });

  it("5: joining a VPC by id with the operator's token is the admin's decision: refused where adoption is not allowed, whatever the VPC, and nothing is sent", async () => {
    const creates = k.count("POST /databases/mysql/instances");
    await k.create(mdb, C(), "joins", { ...base, privateNetwork: { vpcId: 4242, subnetId: 4343 } });
    const a = await message(C(), "joins", "Synced", "AdoptionNotAllowed");
    await k.create(mdb, C(), "joins-other", { ...base, privateNetwork: { vpcId: 77, subnetId: 78 } });
    const b = await message(C(), "joins-other", "Synced", "AdoptionNotAllowed");
    expect(a.replace("4242", "V").replace("4343", "S")).toBe(b.replace("77", "V").replace("78", "S"));
    expect(k.count("POST /databases/mysql/instances") - creates).toBe(0);
    // An existing database moved into one: refused the same way, nothing sent.
    await k.create(mdb, C(), "moves", base);
    const id = Number((await k.ready(mdb, C(), "moves")).status?.id);
    await k.patch(mdb, C(), "moves", { spec: { privateNetwork: { vpcId: 4242, subnetId: 4343 } } });
    await k.condWith(mdb, C(), "moves", "Synced", "AdoptionNotAllowed");
    expect(k.mutationsOn(path(id), "PUT")).toBe(0);
    // Where adoption is allowed, the VPC is sent.
    await k.create(mdb, B(), "joins", { ...base, privateNetwork: { vpcId: 4242, subnetId: 4343 } });
    expect((await k.ready(mdb, B(), "joins")).status?.privateNetwork).toMatchObject({ vpcId: 4242, subnetId: 4343 });
  });

  it("4: a forged status.externalId toward a database no resource records: nothing is read into status, changed or deleted; deleting the decoy leaves it", async () => {
    const victim = await outside("victim-outside");
    await waitFor("victim active", async () => ((await mysql().get(victim.id)).status === "active" ? true : undefined), 30_000, 100);
    // The decoy names the victim's label, so it never creates one of its own (LabelInUse) ...
    await k.create(mdb, C(), "decoy", { ...base, label: "victim-outside", allowList: ["0.0.0.0/0"] });
    await k.condWith(mdb, C(), "decoy", "Synced", "LabelInUse");
    // ... then its status says the victim is its own, in the operator's account.
    await forgeStatus(C(), "decoy", { externalId: String(victim.id), id: victim.id, account: OPERATOR_ACCOUNT });
    await k.repass(mdb, C(), "decoy", 1);
    const m = await message(C(), "decoy", "Synced", "OwnershipUnproven");
    expect(m).toContain("deleting this resource leaves it in place");
    await k.repass(mdb, C(), "decoy", 2);
    const decoy = await k.get(mdb, C(), "decoy");
    expect(decoy.status?.hosts).toBeUndefined();
    expect(decoy.status?.externalIdProof).toBeUndefined();
    expect(await k.secret(C(), "decoy-connection")).toBeUndefined();
    await k.remove(mdb, C(), "decoy");
    await k.gone(mdb, C(), "decoy");
    expect(k.mutationsOn(path(victim.id))).toBe(0);
    expect((await mysql().get(victim.id)).allowList).toEqual(["198.51.100.1/32"]);
  });

  it("4b: a forged status.account in a namespace that must bring its own token does not make a delete use the operator's token on someone else's database", async () => {
    const victim = await outside("victim-required");
    await k.tokenSecret(R(), "own", "rrrr-own-token-unknown-to-the-emulator");
    await k.create(mdb, R(), "decoy", { ...base, credentialsRef: { name: "no-such-secret" } });
    await k.condWith(mdb, R(), "decoy", "Synced", "CredentialsNotFound");
    await forgeStatus(R(), "decoy", { externalId: String(victim.id), account: OPERATOR_ACCOUNT });
    await k.remove(mdb, R(), "decoy");
    await k.gone(mdb, R(), "decoy");
    expect(k.mutationsOn(path(victim.id), "DELETE")).toBe(0);
    expect((await mysql().get(victim.id)).label).toBe("victim-required");
  });

  it("11: a create announced and not seen is not adopted from a database that got its label but existed before: a forged createPending with a victim's label adopts nothing", async () => {
    const victim = await outside("victim-pending");
    await k.create(mdb, C(), "pending", { ...base, label: "victim-pending" });
    await k.condWith(mdb, C(), "pending", "Synced", "LabelInUse");
    await forgeStatus(C(), "pending", { createPending: { at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"), label: "victim-pending", account: OPERATOR_ACCOUNT.id } });
    await k.repass(mdb, C(), "pending", 1);
    await k.condWith(mdb, C(), "pending", "Synced", "OwnershipUnproven");
    expect((await k.get(mdb, C(), "pending")).status?.hosts).toBeUndefined();
    await k.remove(mdb, C(), "pending");
    await k.gone(mdb, C(), "pending");
    expect(k.mutationsOn(path(victim.id))).toBe(0);
  });

  it("4c: a resource's own record is proven (status.externalIdProof); one made unreadable is proven again by its label and age, and re-signed", async () => {
    await k.create(mdb, A(), "mine", base);
    const ready = await k.ready(mdb, A(), "mine");
    const proof = ready.status?.externalIdProof;
    expect(typeof proof).toBe("string");
    await forgeStatus(A(), "mine", { externalIdProof: "not-the-proof" });
    await k.repass(mdb, A(), "mine", 1);
    await waitFor("re-signed", async () => ((await k.get(mdb, A(), "mine")).status?.externalIdProof === proof ? true : undefined), 30_000, 100);
    await k.ready(mdb, A(), "mine");
  });

  it("12: a credentials Secret that loses its label is still released once nothing uses it (its in-use finalizer never outlives its use)", async () => {
    await k.tokenSecret(A(), "tok", TOKEN);
    await k.tokenSecret(A(), "tok2", TOKEN);
    await k.create(mdb, A(), "tokened", { ...base, credentialsRef: { name: "tok" } });
    await k.ready(mdb, A(), "tokened");
    const finalizers = async (name: string): Promise<string[]> => (await k.secret(A(), name))?.metadata?.finalizers ?? [];
    await waitFor("tok in use", async () => ((await finalizers("tok")).includes(IN_USE_FINALIZER) ? true : undefined), 30_000, 100);
    // The label removed while in use: the operator no longer caches it.
    await cluster.core.patchNamespacedSecret({ namespace: A(), name: "tok", body: [{ op: "remove", path: "/metadata/labels/linode.operator.dev~1credentials" }] });
    // Then the resource moves to another Secret of the same account: nothing uses tok any more.
    await k.patch(mdb, A(), "tokened", { spec: { credentialsRef: { name: "tok2" } } });
    await waitFor("the record follows tok2", async () => {
      const o = await k.get(mdb, A(), "tokened");
      return (o.status?.account as { credentialsRef?: { name?: string } } | undefined)?.credentialsRef?.name === "tok2" ? true : undefined;
    }, 30_000, 100);
    await waitFor("tok released", async () => ((await finalizers("tok")).includes(IN_USE_FINALIZER) ? undefined : true), 30_000, 100);
    await cluster.core.deleteNamespacedSecret({ namespace: A(), name: "tok" });
    await waitFor("tok gone", async () => ((await k.secret(A(), "tok")) === undefined ? true : undefined), 30_000, 100);
  });

  it("10: an engine parameter the API stores in another form is compared in that form: one update, learned from its answer, and no more", async () => {
    await k.create(mdb, A(), "canon", base);
    const id = Number((await k.ready(mdb, A(), "canon")).status?.id);
    env.emulator.setFaults({ normalizeEngineConfig: true });
    try {
      await k.patch(mdb, A(), "canon", { spec: { engineConfig: { mysql: { sql_mode: "TRADITIONAL,ANSI" } } } });
      const o = await waitFor("the form recorded", async () => {
        const x = await k.get(mdb, A(), "canon");
        return Array.isArray(x.status?.engineConfigForms) && x.status.engineConfigForms.length > 0 ? x : undefined;
      }, 30_000, 100);
      expect(o.status?.engineConfigForms).toEqual([{ parameter: "mysql.sql_mode", sent: "\"TRADITIONAL,ANSI\"", stored: "\"ANSI,TRADITIONAL\"" }]);
      await k.repass(mdb, A(), "canon", 3);
      expect(k.mutationsOn(path(id), "PUT")).toBe(1);
      await k.ready(mdb, A(), "canon");
    } finally {
      env.emulator.setFaults({});
    }
  });

  it("10b: an update that never takes is sent three passes running, then stops: Synced=False NotConverging, one Warning; a spec change sends again", async () => {
    await k.create(mdb, A(), "spelled", { ...base, engineConfig: { mysql: { sql_mode: "ANSI,TRADITIONAL" } } });
    const id = Number((await k.ready(mdb, A(), "spelled")).status?.id);
    env.emulator.setFaults({ normalizeEngineConfig: true });
    try {
      // The same modes in another order: the API keeps its own order, which is what the database has already.
      await k.patch(mdb, A(), "spelled", { spec: { engineConfig: { mysql: { sql_mode: "TRADITIONAL,ANSI" } } } });
      const c = await message(A(), "spelled", "Synced", "NotConverging");
      expect(c).toContain("sent 3 passes running");
      await k.repass(mdb, A(), "spelled", 3);
      expect(k.mutationsOn(path(id), "PUT")).toBe(3);
      const warnings = (await cluster.core.listNamespacedEvent({ namespace: A() })).items.filter((e) => e.involvedObject.name === "spelled" && e.reason === "NotConverging");
      expect(warnings.reduce((n, e) => n + (e.count ?? 1), 0)).toBe(1);
      // The spec set to what the API keeps: in step, nothing sent.
      await k.patch(mdb, A(), "spelled", { spec: { engineConfig: { mysql: { sql_mode: "ANSI,TRADITIONAL" } } } });
      await k.ready(mdb, A(), "spelled");
      expect(k.mutationsOn(path(id), "PUT")).toBe(3);
    } finally {
      env.emulator.setFaults({});
    }
  });

  it("9: deleting a resource whose spec no longer parses keeps its finalizer and says why while its database exists; fixing the spec lets the deletion go on; one that never created anything is let go", async () => {
    await k.create(mdb, A(), "unparsed", base);
    const id = Number((await k.ready(mdb, A(), "unparsed")).status?.id);
    await k.patch(mdb, A(), "unparsed", { spec: { engineConfig: { constructor: { x: 1 } } } });
    await k.condWith(mdb, A(), "unparsed", "Synced", "InvalidSpec");
    await k.remove(mdb, A(), "unparsed");
    const held = await waitFor("the deletion held", async () => {
      const o = await k.get(mdb, A(), "unparsed");
      const c = k.cond(o, "Synced");
      return o.metadata.deletionTimestamp !== undefined && c?.message?.includes("the deletion waits") === true ? o : undefined;
    }, 30_000, 100);
    expect(held.metadata.finalizers).toContain("linode.operator.dev/finalizer");
    await k.repass(mdb, A(), "unparsed", 2);
    expect((await mysql().get(id)).status).not.toBe("deleting");
    await k.patch(mdb, A(), "unparsed", { spec: { engineConfig: null } });
    await k.gone(mdb, A(), "unparsed");
    await expect(mysql().get(id)).rejects.toMatchObject({ kind: "notFound" });
    // Never created anything: nothing to orphan, so it goes at once.
    await k.create(mdb, A(), "never", { ...base, engineConfig: { prototype: 1 } });
    await k.condWith(mdb, A(), "never", "Synced", "InvalidSpec");
    await k.remove(mdb, A(), "never");
    await k.gone(mdb, A(), "never");
  });
});

