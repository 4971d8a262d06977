// What the operator must never do, on a real API server and the emulator over HTTP: adopt or
// delete a database it did not create, repeat an action it already performed, write a Secret
// it does not own, retarget to another database, paper over a mismatch or a vanished
// database, or let its status say what the cloud does not. One case per finding of the
// ownership issue; each fails on the code before it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsV1Api } from "@kubernetes/client-node";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
type Cond = { status: string; reason: string; message?: string };

describe("ManagedDatabase ownership and integrity", () => {
  const cluster = useTestCluster("own");
  let env: OperatorEnv;
  // A settled database is looked at every 2 s here (the drift window), so changes made
  // outside show up within seconds.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const create = (name: string, spec: Record<string, unknown>, namespace = ns()): Promise<ManagedObject> => env.deps.kube.createCustom(mdb, namespace, {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec,
  });
  const get = (name: string, namespace = ns()): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(mdb, { namespace, name });
  const patchSpec = (name: string, spec: Record<string, unknown>): Promise<unknown> => env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name }, { spec });
  const cond = async (name: string, type: string, namespace = ns()): Promise<Cond | undefined> => (await get(name, namespace)).status?.conditions?.find((c) => c.type === type);
  const condWith = (name: string, type: string, reason: string, namespace = ns()): Promise<Cond> =>
    waitFor(`${name} ${type} ${reason}`, async () => { const c = await cond(name, type, namespace); return c?.reason === reason ? c : undefined; }, 60_000, 100);
  const ready = (name: string, namespace = ns()): Promise<ManagedObject> => waitFor(`${name} Ready`, async () => {
    const o = await get(name, namespace);
    return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true && o.status.observedGeneration === o.metadata.generation ? o : undefined;
  }, 60_000, 100);
  const secretData = async (name: string): Promise<Record<string, string> | undefined> => {
    const s = await cluster.core.readNamespacedSecret({ namespace: ns(), name }).catch(() => undefined);
    return s === undefined ? undefined : Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
  };
  const gone = (name: string, namespace = ns()): Promise<true> => waitFor(`${name} gone`, async () => get(name, namespace).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
  const mysql = (): ReturnType<OperatorEnv["linode"]["databases"]["engine"]> => env.linode.databases.engine("mysql");
  const key = (name: string): string => `${ns()}/${name}`;
  /** Requests of a method to one database's path (or under it) the emulator answered: what was sent to it, whatever other tests' objects do. */
  const sentTo = (id: number, method: string): number => env.emulator.mutations().filter((m) => m.method === method
    && (m.path === `/databases/mysql/instances/${String(id)}` || m.path.startsWith(`/databases/mysql/instances/${String(id)}/`))).length;

  it("1: two namespaces naming the same label: the second is LabelInUse, and deleting it leaves the database alone", async () => {
    const other = `${ns()}-b`;
    await cluster.core.createNamespace({ body: { metadata: { name: other } } });
    // The env watches only its namespace; a second controller would be another team's operator.
    await create("shared", { ...base, label: "team-shared-db" });
    const first = await ready("shared");
    const env2 = await startOperatorEnv({ ...cluster, namespace: other }, { reuseEmulator: env.emulator });
    try {
      await create("shared", { ...base, label: "team-shared-db" }, other);
      const c = await condWith("shared", "Synced", "LabelInUse", other);
      expect(c.message).toContain(`spec.databaseId: ${String(first.status?.id)}`);
      const second = await get("shared", other);
      expect(second.metadata.annotations?.["linode.operator.dev/external-id"]).toBeUndefined();
      await env.deps.kube.deleteCustom(mdb, { namespace: other, name: "shared" });
      await gone("shared", other);
      expect((await mysql().get(Number(first.status?.id))).label).toBe("team-shared-db");
    } finally {
      await env2.stop();
      await cluster.core.deleteNamespace({ name: other }).catch(() => undefined);
    }
  });

  it("1b: a database carrying this resource's derived label that it never created is not adopted", async () => {
    const label = derivedLabel({ clusterId: env.clusterId, namespace: ns(), name: "imposter" });
    const planted = await mysql().create({ ...base, label });
    await create("imposter", base);
    await condWith("imposter", "Synced", "LabelInUse");
    expect((await get("imposter")).metadata.annotations?.["linode.operator.dev/external-id"]).toBeUndefined();
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "imposter" });
    await gone("imposter");
    expect((await mysql().get(planted.id)).id).toBe(planted.id);
  });

  it("2: reset and patch requested together, the patch failing: one reset, recorded at once, the Secret true; the patch never sent twice", async () => {
    await create("tokens", base);
    const o = await ready("tokens");
    const id = Number(o.status?.id);
    const resets = await linodeCalls(env.operatorLinode, { route: "credentials/reset" });
    const patches = await linodeCalls(env.operatorLinode, { route: "/patch" });
    env.emulator.setFaults({ errorRate: 1, errorStatus: 500, routes: ["POST /databases/mysql/instances/{instanceId}/patch"] });
    try {
      await patchSpec("tokens", { requests: { resetCredentials: "r1", patch: "p1" } });
      const c = await condWith("tokens", "Synced", "RequestOutcomeUnknown");
      expect(c.message).toMatch(/patch requested by token p1/);
      const lr = (await get("tokens")).status?.lastRequests as { resetCredentials?: { token: string; completedAt?: string }; patch?: { token: string; startedAt?: string; completedAt?: string } };
      expect(lr.resetCredentials).toMatchObject({ token: "r1" });
      expect(lr.resetCredentials?.completedAt).toBeDefined();
      expect(lr.patch?.token).toBe("p1");
      expect(lr.patch?.startedAt).toBeDefined();
      expect(lr.patch?.completedAt).toBeUndefined();
      await env.repass("ManagedDatabase", key("tokens"), 3); // three more passes
      expect(await linodeCalls(env.operatorLinode, { route: "credentials/reset" }) - resets).toBe(1);
      expect(await linodeCalls(env.operatorLinode, { route: "/patch" }) - patches).toBe(1);
      const creds = await mysql().getCredentials(id);
      await waitFor("the Secret holds the password the API accepts", async () => ((await secretData("tokens-connection"))?.password === creds.password ? true : undefined), 30_000, 200);
    } finally {
      env.emulator.setFaults({ errorRate: 0, routes: [] });
    }
    // A new token asks again, and is performed once.
    await patchSpec("tokens", { requests: { resetCredentials: "r1", patch: "p2" } });
    await condWith("tokens", "Synced", "ReconcileSuccess");
    expect(((await get("tokens")).status?.lastRequests as { patch?: { token: string; completedAt?: string } }).patch).toMatchObject({ token: "p2" });
    expect(await linodeCalls(env.operatorLinode, { route: "/patch" }) - patches).toBe(2);
  });

  /**
   * Until no connection Secret here waits for its confirming read (credentials read anew are
   * read once more a second later): the reads counted after are the next test's own.
   */
  const credentialsSettled = (): Promise<true> => waitFor("every connection Secret's credentials confirmed", async () => {
    const secrets = await cluster.core.listNamespacedSecret({ namespace: ns() });
    return secrets.items.some((x) => x.metadata?.annotations?.["linode.operator.dev/credentials-unconfirmed"] === "true") ? undefined : true;
  }, 30_000, 200);

  it("3: a password reset made outside the operator reaches the Secret within the drift window, with no credentials reads in between", async () => {
    await create("outside", base);
    const o = await ready("outside");
    const id = Number(o.status?.id);
    const before = await waitFor("Secret", () => secretData("outside-connection"), 30_000, 200);
    await credentialsSettled();
    const reads = await linodeCalls(env.operatorLinode, { route: "/credentials", method: "GET" });
    await env.repass("ManagedDatabase", key("outside"), 3); // three drift passes, nothing changed
    expect(await linodeCalls(env.operatorLinode, { route: "/credentials", method: "GET" }) - reads).toBe(0);
    await mysql().resetCredentials(id); // Cloud Manager, linode-cli, ...
    const started = Date.now();
    const fresh = await waitFor("the new password in the Secret", async () => {
      const c = await mysql().getCredentials(id).catch(() => undefined);
      const s = await secretData("outside-connection");
      return c !== undefined && s !== undefined && c.password !== before.password && c.password === s.password ? c : undefined;
    }, 30_000, 100);
    process.stdout.write(`an outside password reset reached the Secret ${String(Date.now() - started)} ms later (drift window 2 s)\n`);
    expect(fresh.password).not.toBe(before.password);
  });

  it("3b: a move of `updated` that changes no credentials (a backup) costs one credentials read (and one more a second later confirming it) and no CA read; the Secret keeps its CA (only its as-of annotation moves)", async () => {
    await create("backed-up", base);
    const id = Number((await ready("backed-up")).status?.id);
    const before = await waitFor("Secret", () => secretData("backed-up-connection"), 30_000, 200);
    await credentialsSettled();
    const version = (await cluster.core.readNamespacedSecret({ namespace: ns(), name: "backed-up-connection" })).metadata?.resourceVersion;
    const [creds, cas] = [await linodeCalls(env.operatorLinode, { route: "/credentials", method: "GET" }), await linodeCalls(env.operatorLinode, { route: "/ssl", method: "GET" })];
    // `updated` is to the second: the cloud's clock moves a second on, so the backup starts in a later one.
    env.emulator.advance(1);
    const updated = (await mysql().get(id)).updated;
    await mysql().createSnapshot(id, { label: "byhand" }); // Cloud Manager, linode-cli, ...
    await waitFor("updated moved and active again", async () => { const db = await mysql().get(id); return db.updated !== updated && db.status === "active" ? true : undefined; }, 30_000, 100);
    await waitFor("credentials read again", async () => ((await linodeCalls(env.operatorLinode, { route: "/credentials", method: "GET" })) > creds ? true : undefined), 30_000, 100);
    await env.repass("ManagedDatabase", key("backed-up"), 2);
    expect(await linodeCalls(env.operatorLinode, { route: "/ssl", method: "GET" }) - cas).toBe(0);
    expect((await cluster.core.readNamespacedSecret({ namespace: ns(), name: "backed-up-connection" })).metadata?.resourceVersion).not.toBe(version);
    expect((await secretData("backed-up-connection"))?.["ca.crt"]).toBe(before["ca.crt"]);
  });

  it("4: a Secret the user already has is never written: SecretConflict, and it survives the resource with all its keys", async () => {
    const users = await cluster.core.createNamespacedSecret({ namespace: ns(), body: { metadata: { name: "mine-connection" }, stringData: { note: "keep me", password: "hunter2" } } });
    const mine = await create("mine", base);
    // A dependent of "mine" that the garbage collector deletes once "mine" is gone: when it is
    // gone, the collector has dealt with what "mine" owned.
    await cluster.core.createNamespacedConfigMap({ namespace: ns(), body: { metadata: { name: "mine-gc-canary", ownerReferences: [{ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", name: "mine", uid: mine.metadata.uid ?? "" }] } } });
    const c = await condWith("mine", "Ready", "SecretConflict");
    expect(c.message).toMatch(/mine-connection already exists/);
    const s = await cluster.core.readNamespacedSecret({ namespace: ns(), name: "mine-connection" });
    expect(s.metadata?.ownerReferences ?? []).toEqual([]);
    expect(await secretData("mine-connection")).toEqual({ note: "keep me", password: "hunter2" });
    // Another resource naming a Secret this one owns gets the condition too.
    await create("copycat", { ...base, connectionSecret: { name: "mine-connection" } });
    await condWith("copycat", "Ready", "SecretConflict");
    for (const name of ["mine", "copycat"]) await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name });
    await gone("mine");
    await gone("copycat");
    await waitFor("the garbage collector ran for mine", async () => cluster.core.readNamespacedConfigMap({ namespace: ns(), name: "mine-gc-canary" }).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
    expect(await secretData("mine-connection")).toEqual({ note: "keep me", password: "hunter2" });
    // Never written by anyone since the user made it (no owner added on the way out either).
    const after = await cluster.core.readNamespacedSecret({ namespace: ns(), name: "mine-connection" });
    expect(after.metadata?.resourceVersion).toBe(users.metadata?.resourceVersion);
    expect(after.metadata?.ownerReferences ?? []).toEqual([]);
  });

  it("4b: renaming connectionSecret.name removes the old Secret this resource owned", async () => {
    await create("renamed", base);
    await ready("renamed");
    await waitFor("old Secret", () => secretData("renamed-connection"), 30_000, 200);
    await patchSpec("renamed", { connectionSecret: { name: "renamed-creds" } });
    await waitFor("new Secret", () => secretData("renamed-creds"), 30_000, 200);
    await waitFor("old Secret removed", async () => ((await secretData("renamed-connection")) === undefined ? true : undefined), 30_000, 200);
    // The pass that removed it writes the status after: waited for, not read at once.
    await waitFor("status names the new Secret", async () => ((await get("renamed")).status?.connectionSecretName === "renamed-creds" ? true : undefined), 30_000, 100).catch(() => undefined);
    expect((await get("renamed")).status?.connectionSecretName).toBe("renamed-creds");
  });

  it("5: a databaseId added to a resource that created its own database is refused; nothing changes in the cloud", async () => {
    await create("retarget", base);
    const o = await ready("retarget");
    const own = Number(o.status?.id);
    const other = await mysql().create({ ...base, label: "someone-elses" });
    const sent = (): number[] => [own, other.id].flatMap((id) => ["POST", "PUT", "DELETE"].map((m) => sentTo(id, m)));
    const before = sent();
    await patchSpec("retarget", { databaseId: other.id });
    const c = await condWith("retarget", "Synced", "DatabaseIdMismatch");
    expect(c.message).toContain(String(own));
    // Three more looks at it: still refused, nothing sent to either database.
    await env.repass("ManagedDatabase", key("retarget"), 3);
    expect((await cond("retarget", "Synced"))?.reason).toBe("DatabaseIdMismatch");
    expect((await get("retarget")).metadata.annotations?.["linode.operator.dev/external-id"]).toBe(String(own));
    expect(sent()).toEqual(before);
    expect((await mysql().get(own)).status).toBe("active");
    expect((await mysql().get(other.id)).label).toBe("someone-elses");
  });

  it("6: adoption keeps the database's label and compares what cannot change: ImmutableFieldMismatch, nothing sent", async () => {
    const theirs = await mysql().create({ ...base, label: "adopted-as-is", region: "us-west" });
    await waitFor("active", async () => ((await mysql().get(theirs.id)).status === "active" ? true : undefined), 30_000, 200);
    const sent = (): number[] => ["POST", "PUT", "DELETE"].map((m) => sentTo(theirs.id, m));
    const before = sent();
    await create("mismatch", { ...base, databaseId: theirs.id, allowList: ["203.0.113.9"], deletionPolicy: "Retain" });
    const c = await condWith("mismatch", "Synced", "ImmutableFieldMismatch");
    expect(c.message).toMatch(/region \(spec us-east, database us-west\)/);
    // Three more looks at it: still a mismatch, nothing sent to the database.
    await env.repass("ManagedDatabase", key("mismatch"), 3);
    expect((await cond("mismatch", "Synced"))?.reason).toBe("ImmutableFieldMismatch");
    expect(sent()).toEqual(before);
    expect((await get("mismatch")).status?.status).toBe("active");
    // Region is immutable at admission: with a spec that matches, the allowList is converged
    // and the label left as the database had it.
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "mismatch" });
    await gone("mismatch");
    await create("adopted", { ...base, region: "us-west", databaseId: theirs.id, allowList: ["203.0.113.9"], deletionPolicy: "Retain" });
    await ready("adopted");
    await waitFor("allowList converged", async () => ((await mysql().get(theirs.id)).allowList.join() === "203.0.113.9/32" ? true : undefined), 30_000, 200);
    expect((await mysql().get(theirs.id)).label).toBe("adopted-as-is");
  });

  it("7: a failed database with a spec change pending shows failed and Ready=False", async () => {
    await create("failing", base);
    const o = await ready("failing");
    const id = Number(o.status?.id);
    await fetch(`${env.emulator.adminUrl}/databases/${String(id)}/status`, { method: "PUT", body: JSON.stringify({ status: "failed" }) });
    await patchSpec("failing", { allowList: ["198.51.100.7"] });
    await waitFor("status failed", async () => { const x = await get("failing"); return x.status?.status === "failed" ? x : undefined; }, 30_000, 100);
    const r = await cond("failing", "Ready");
    expect(r).toMatchObject({ status: "False" });
    expect(r?.message).toMatch(/failed/);
  });

  it("8: a database deleted behind the operator's back is not replaced: ExternalResourceGone and a Warning; recreate makes one", async () => {
    await create("vanish", base);
    const o = await ready("vanish");
    const id = Number(o.status?.id);
    const posts = await linodeCalls(env.operatorLinode, { method: "POST", route: "/databases/mysql/instances" });
    await mysql().delete(id);
    const c = await condWith("vanish", "Ready", "ExternalResourceGone");
    expect(c.message).toMatch(/spec\.requests\.recreate/);
    // Three more looks at it: still gone, nothing created.
    await env.repass("ManagedDatabase", key("vanish"), 3);
    expect((await cond("vanish", "Ready"))?.reason).toBe("ExternalResourceGone");
    expect(await linodeCalls(env.operatorLinode, { method: "POST", route: "/databases/mysql/instances" }) - posts).toBe(0);
    const events = await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns() });
    expect(events.items.some((e) => e.regarding?.name === "vanish" && e.type === "Warning" && e.reason === "ExternalResourceGone")).toBe(true);
    await patchSpec("vanish", { requests: { recreate: "again" } });
    const again = await ready("vanish");
    expect(again.status?.id).not.toBe(id);
    expect(await linodeCalls(env.operatorLinode, { method: "POST", route: "/databases/mysql/instances" }) - posts).toBe(1);
  });

  it("9: a name longer than 63 characters gets its Secret and its Events", async () => {
    const name = `a-very-long-name-${"x".repeat(70)}`;
    await create(name, base);
    await ready(name);
    const secret = await cluster.core.readNamespacedSecret({ namespace: ns(), name: `${name}-connection` });
    expect(secret.metadata?.labels?.["linode.operator.dev/owner"]?.length).toBeLessThanOrEqual(63);
    const events = await cluster.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns() });
    expect(events.items.some((e) => e.regarding?.name === name && e.reason === "Created")).toBe(true);
  });
});
