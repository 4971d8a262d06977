// ManagedDatabase end to end on a real API server and the Linode API emulator over HTTP:
// kubectl apply → Ready with a connection Secret an application can use; updates; request
// tokens; deletion policies; adoption. Twice: against the spec's response shape and against
// the real API's current platform (full versions, no week_of_month, a standby host, ...), with
// no perpetual diff on either.
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { startAnswerProxy, type AnswerProxy } from "../harness/answer-proxy.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

describe.each(["legacy", "current"] as const)("ManagedDatabase (%s platform)", (platform) => {
  const cluster = useTestCluster(`mdb-${platform}`);
  let env: OperatorEnv;
  let emulator: RunningEmulator;
  // The operator calls the emulator through a proxy that can hold an update in flight.
  let proxy: AnswerProxy;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.3, platform });
    proxy = await startAnswerProxy(emulator.url);
    env = await startOperatorEnv(cluster, { platform, reuseEmulator: emulator, linodeUrl: proxy.url });
  });
  afterAll(async () => {
    await env.stop();
    await proxy.close();
    await emulator.close();
  });

  const apply = async (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Promise<void> => {
    const res = await cluster.kubectl(["-n", cluster.namespace, "apply", "-f", "-"], {
      input: JSON.stringify({ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, spec }),
    });
    expect(res.code, res.stderr).toBe(0);
  };
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name });
  const condition = (o: ManagedObject, type: string): { status: string; reason: string; message?: string } | undefined => o.status?.conditions?.find((c) => c.type === type);
  const readyAt = async (name: string, pred: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject | undefined> => {
    const o = await get(name);
    return condition(o, "Ready")?.status === "True" && o.status?.observedGeneration === o.metadata.generation && pred(o) ? o : undefined;
  };
  const secret = async (name: string): Promise<Record<string, string>> => {
    const s = await cluster.core.readNamespacedSecret({ namespace: cluster.namespace, name });
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
  };
  const gone = async (name: string): Promise<true | undefined> => get(name).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined));
  const key = (name: string): string => `${cluster.namespace}/${name}`;
  const mysql = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.7"] };
  const postgresql = { engine: "postgresql", version: "16", region: "us-east", type: "g6-dedicated-2", clusterSize: 3, allowList: ["198.51.100.0/24"] };
  /** A database of the test's own, applied and Ready: no test relies on another's objects. */
  const readyDatabase = async (name: string, spec: Record<string, unknown> = mysql): Promise<ManagedObject> => {
    await apply(name, spec);
    return waitFor(`${name} Ready`, () => readyAt(name), 60_000, 200);
  };
  /** Requests that changed this database (its path, or one under it ending in `suffix`), from the emulator's log. */
  const sentTo = (engine: string, id: number, filter: { method?: string; suffix?: string } = {}): number => {
    const base = `/databases/${engine}/instances/${String(id)}`;
    return env.emulator.mutations().filter((m) => (filter.method === undefined || m.method === filter.method)
      && (filter.suffix === undefined ? m.path === base || m.path.startsWith(`${base}/`) : m.path === `${base}${filter.suffix}`)).length;
  };

  it("a version the API does not offer is UnknownEngineVersion before anything is sent, naming those it offers", async () => {
    const creates = (): number => env.emulator.mutations().filter((m) => m.method === "POST" && m.path === "/databases/mysql/instances").length;
    const before = creates();
    await apply("unoffered", { ...mysql, version: "8.0" });
    const c = await waitFor("UnknownEngineVersion", async () => { const x = condition(await get("unoffered"), "Synced"); return x?.reason === "UnknownEngineVersion" ? x : undefined; }, 30_000, 100);
    expect(c.message).toContain("versions 8 ");
    expect(c.message).toContain('not "8.0"');
    // Announced nothing, created nothing.
    expect((await get("unoffered")).status?.createPending).toBeUndefined();
    expect(creates()).toBe(before);
    const label = derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: "unoffered" });
    expect((await env.linode.databases.engine("mysql").listAll()).filter((d) => d.label === label)).toEqual([]);
    const res = await cluster.kubectl(["-n", cluster.namespace, "delete", "linodedb", "unoffered", "--wait=true"]);
    expect(res.code, res.stderr).toBe(0);
  });

  it("a resize to a smaller plan, or to a plan the API does not list, is ResizeNotAllowed naming the plans' disks; nothing is sent", async () => {
    const o = await readyDatabase("shrunk", { ...mysql, type: "g6-standard-2" });
    const id = Number(o.status?.id);
    const refusedWith = async (type: string): Promise<string> => {
      await apply("shrunk", { ...mysql, type });
      const c = await waitFor(`ResizeNotAllowed for ${type}`, async () => { const x = condition(await get("shrunk"), "Synced"); return x?.reason === "ResizeNotAllowed" && x.message?.includes(type) === true ? x : undefined; }, 30_000, 100);
      return c.message ?? "";
    };
    expect(await refusedWith("g6-nanode-1")).toMatch(/cannot be resized to a smaller plan: g6-nanode-1 has a 25 GB disk, g6-standard-2 80 GB; plans and their disks are g6-nanode-1 25 GB, .*g6-standard-2 80 GB/);
    expect(await refusedWith("g6-bogus-9")).toContain("lists no database plan g6-bogus-9");
    await env.repass("ManagedDatabase", key("shrunk"), 3);
    expect(sentTo("mysql", id, { method: "PUT" })).toBe(0);
    expect((await env.linode.databases.engine("mysql").get(id)).type).toBe("g6-standard-2");
    // Back to what it is: in step again.
    await apply("shrunk", { ...mysql, type: "g6-standard-2" });
    await waitFor("Synced again", async () => (condition(await get("shrunk"), "Synced")?.status === "True" ? true : undefined), 30_000, 100);
  });

  it("creates a MySQL database and publishes a working connection Secret", async () => {
    const o = await readyDatabase("orders");
    const id = Number(o.status?.id);
    const db = await env.linode.databases.engine("mysql").get(id);
    expect(db.label).toBe(derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: "orders" }));
    expect(db.status).toBe("active");
    expect(db.allowList).toEqual(["203.0.113.7/32"]);
    expect(o.status).toMatchObject({ status: "active", platform, hosts: { primary: db.hosts.primary }, port: db.port, version: db.version, connectionSecretName: "orders-connection", binding: { name: "orders-connection" } });
    expect(condition(o, "Synced")?.status).toBe("True");
    // The window the API applies, though the spec leaves it to Linode.
    expect(o.status?.updates).toEqual({ frequency: db.updates?.frequency, duration: db.updates?.duration, hourOfDay: db.updates?.hourOfDay, dayOfWeek: db.updates?.dayOfWeek, ...(db.updates?.weekOfMonth !== null && db.updates?.weekOfMonth !== undefined ? { weekOfMonth: db.updates.weekOfMonth } : {}) });

    const data = await secret("orders-connection");
    const creds = await env.linode.databases.engine("mysql").getCredentials(id);
    expect(data).toMatchObject({ type: "mysql", provider: "linode", host: db.hosts.primary, port: String(db.port), username: creds.username, password: creds.password });
    expect(data.uri).toContain(`@${String(db.hosts.primary)}:${String(db.port)}/`);
    expect(data.uri).toMatch(/\?ssl-mode=VERIFY_IDENTITY&ssl-ca=\/bindings\/orders\/ca\.crt$/);
    expect(new X509Certificate(data["ca.crt"] ?? "").ca).toBe(true);
    const s = await cluster.core.readNamespacedSecret({ namespace: cluster.namespace, name: "orders-connection" });
    expect(s.type).toBe("servicebinding.io/mysql");
    expect(s.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "ManagedDatabase", name: "orders", uid: o.metadata.uid, controller: true });
  });

  it("creates a 3-node PostgreSQL cluster", async () => {
    const o = await readyDatabase("analytics", postgresql);
    const db = await env.linode.databases.engine("postgresql").get(Number(o.status?.id));
    expect(db.clusterSize).toBe(3);
    const data = await secret("analytics-connection");
    expect(data.type).toBe("postgresql");
    expect(data.uri).toMatch(/^postgresql:\/\//);
  });

  it("updates allowList, type and the maintenance window once, with no perpetual diff", async () => {
    const id = Number((await readyDatabase("updated")).status?.id);
    const putsBefore = await linodeCalls(env.operatorLinode, { method: "PUT" });
    const sentBefore = sentTo("mysql", id);
    // Each platform's window length: the current one's is 4 hours, the legacy one's 1..3.
    const duration = platform === "current" ? 4 : 3;
    await apply("updated", {
      ...mysql, type: "g6-standard-1", allowList: ["203.0.113.7", "198.51.100.0/24"],
      updates: { frequency: "weekly", duration, hourOfDay: 2, dayOfWeek: 6 },
    });
    const o = await waitFor("updated Ready at the new type", () => readyAt("updated", (x) => x.status?.type === "g6-standard-1"), 60_000, 200);
    const db = await env.linode.databases.engine("mysql").get(id);
    expect(db.allowList).toEqual(["198.51.100.0/24", "203.0.113.7/32"]);
    expect(db.type).toBe("g6-standard-1");
    expect(db.updates).toMatchObject({ frequency: "weekly", duration, hourOfDay: 2, dayOfWeek: 6 });
    expect(await linodeCalls(env.operatorLinode, { method: "PUT" }) - putsBefore).toBe(1);
    expect(sentTo("mysql", id) - sentBefore).toBe(1);
    // Three more passes: the bare IP and its /32 form are the same, so nothing more is sent
    // and nothing is written.
    await env.repass("ManagedDatabase", key("updated"), 3);
    expect(await linodeCalls(env.operatorLinode, { method: "PUT" }) - putsBefore).toBe(1);
    expect(sentTo("mysql", id) - sentBefore).toBe(1);
    const after = await get("updated");
    expect(after.metadata.resourceVersion).toBe(o.metadata.resourceVersion);
    expect(condition(after, "Synced")?.status).toBe("True");
  });

  it("coalesces rapid allowList edits: one update, or one more for the edits made while it was in flight", async () => {
    const ready = await readyDatabase("coalesced");
    const putsBefore = await linodeCalls(env.operatorLinode, { method: "PUT" });
    // The first update is held in flight until every edit is stored: however slowly a loaded
    // machine delivers the edits (over several coalescing windows), the later ones can only
    // queue behind it, into one more pass.
    proxy.hold((method, path) => method === "PUT" && path.endsWith(`/instances/${String(ready.status?.id)}`));
    const edited = await Promise.all([1, 2, 3, 4, 5].map((i) => env.deps.kube.mergePatchCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name: "coalesced" }, { spec: { allowList: ["203.0.113.7", `192.0.2.${String(i)}`] } })));
    await proxy.whenHeld(1);
    proxy.release();
    const last = edited.reduce((a, b) => ((a.metadata.generation ?? 0) >= (b.metadata.generation ?? 0) ? a : b));
    const o = await waitFor("coalesced at the last allowList", () => readyAt("coalesced", (x) => x.metadata.generation === last.metadata.generation), 60_000, 200);
    const db = await env.linode.databases.engine("mysql").get(Number(o.status?.id));
    expect(db.allowList).toEqual([...(last.spec as { allowList: string[] }).allowList].map((a) => `${a}/32`).sort());
    // Edits within the coalescing window become one PUT; those after the first pass started
    // wait while it runs, into one more: never one PUT per edit.
    const puts = await linodeCalls(env.operatorLinode, { method: "PUT" }) - putsBefore;
    expect(puts).toBeGreaterThanOrEqual(1);
    expect(puts).toBeLessThanOrEqual(2);
  });

  it("applies patches once per request token", async () => {
    const o = await readyDatabase("patched");
    const id = Number(o.status?.id);
    const before = await linodeCalls(env.operatorLinode, { route: "/patch" });
    await env.deps.kube.mergePatchCustom(mdb, { namespace: cluster.namespace, name: "patched" }, { spec: { requests: { patch: "maint-1" } } });
    const recorded = await waitFor("patch recorded", async () => ((await get("patched")).status?.lastRequests as { patch?: { token: string } } | undefined)?.patch);
    expect(recorded.token).toBe("maint-1");
    await waitFor("patched Ready after patching", () => readyAt("patched"), 60_000, 200);
    expect(sentTo("mysql", id, { method: "POST", suffix: "/patch" })).toBe(1);
    // Three more passes with the same token: it is not performed again.
    await env.repass("ManagedDatabase", key("patched"), 3);
    expect(await linodeCalls(env.operatorLinode, { route: "/patch" }) - before).toBe(1);
    expect(sentTo("mysql", id, { method: "POST", suffix: "/patch" })).toBe(1);
    expect((await env.linode.databases.engine("mysql").get(id)).status).toBe("active");
  });

  it("publishes the emulator's CA certificate, decoded to PEM", async () => {
    const o = await readyDatabase("certified");
    const ssl = await env.linode.databases.engine("mysql").getSslCertificate(Number(o.status?.id));
    const data = await secret("certified-connection");
    expect(data["ca.crt"]).toBe(Buffer.from(ssl.caCertificate ?? "", "base64").toString("utf8"));
    expect(data["ca.crt"]).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("publishes the Secret again when someone deletes it", async () => {
    await readyDatabase("republished");
    const before = await secret("republished-connection");
    await cluster.core.deleteNamespacedSecret({ namespace: cluster.namespace, name: "republished-connection" });
    const after = await waitFor("Secret back", () => secret("republished-connection").catch(() => undefined), 30_000, 200);
    expect(after.password).toBe(before.password);
  });

  it("puts back an edited connection Secret; one grown past what the operator writes (OWNED_SECRET_MAX_BYTES) is made anew, without what was added", async () => {
    await readyDatabase("regrown");
    const before = await secret("regrown-connection");
    const at = { namespace: cluster.namespace, name: "regrown-connection" };
    await env.deps.kube.jsonPatchSecret(at, [{ op: "replace", path: "/data/host", value: Buffer.from("elsewhere.example").toString("base64") }]);
    await waitFor("the host put back", async () => ((await secret("regrown-connection")).host === before.host ? true : undefined), 30_000, 200);
    // 600 KiB more: the operator's cache keeps none of it, and the Secret is replaced.
    await env.deps.kube.jsonPatchSecret(at, [{ op: "add", path: "/data/junk", value: Buffer.alloc(450 * 1024, 1).toString("base64") }]);
    const after = await waitFor("made anew without the added key", async () => { const d = await secret("regrown-connection"); return d.junk === undefined ? d : undefined; }, 30_000, 200);
    expect(after).toEqual(before);
  });

  it("resets the credentials once per request token and rewrites the Secret", async () => {
    const o = await readyDatabase("rotated");
    const before = await secret("rotated-connection");
    const id = Number(o.status?.id);
    const resetsBefore = await linodeCalls(env.operatorLinode, { route: "credentials/reset" });
    const res = await cluster.kubectl(["-n", cluster.namespace, "patch", "linodedb", "rotated", "--type=merge", "-p", JSON.stringify({ spec: { requests: { resetCredentials: "rotate-1" } } })]);
    expect(res.code, res.stderr).toBe(0);
    const after = await waitFor("new password in the Secret", async () => {
      const d = await secret("rotated-connection");
      return d.password !== before.password ? d : undefined;
    }, 60_000, 200);
    const creds = await env.linode.databases.engine("mysql").getCredentials(id);
    expect(after.password).toBe(creds.password);
    const recorded = await waitFor("request recorded", async () => {
      const x = await get("rotated");
      return (x.status?.lastRequests as { resetCredentials?: { token: string } } | undefined)?.resetCredentials;
    });
    expect(recorded.token).toBe("rotate-1");
    expect(sentTo("mysql", id, { method: "POST", suffix: "/credentials/reset" })).toBe(1);
    // Three more passes with the same token: it is not performed again.
    await env.repass("ManagedDatabase", key("rotated"), 3);
    expect(await linodeCalls(env.operatorLinode, { route: "credentials/reset" }) - resetsBefore).toBe(1);
    expect(sentTo("mysql", id, { method: "POST", suffix: "/credentials/reset" })).toBe(1);
    expect((await secret("rotated-connection")).password).toBe(after.password);
  });

  it("adopts an existing database read-only with managementPolicy Observe", async () => {
    const created = await env.linode.databases.engine("mysql").create({ label: "made-elsewhere", region: "us-east", type: "g6-nanode-1", version: "8" });
    await apply("observed", { engine: "mysql", version: "8", region: "us-east", type: "g6-standard-2", databaseId: created.id, managementPolicy: "Observe" });
    const o = await waitFor("observed Ready", () => readyAt("observed"), 60_000, 200);
    expect(o.status?.id).toBe(created.id);
    expect(condition(o, "Synced")?.reason).toBe("Observing");
    expect(condition(o, "Synced")?.message).toContain("type");
    expect(o.metadata.finalizers ?? []).not.toContain("linode.operator.dev/finalizer");
    const db = await env.linode.databases.engine("mysql").get(created.id);
    expect(db.type).toBe("g6-nanode-1"); // never changed
    expect((await secret("observed-connection")).host).toBe(db.hosts.primary);
    await cluster.kubectl(["-n", cluster.namespace, "delete", "linodedb", "observed", "--wait=true"]);
    expect((await env.linode.databases.engine("mysql").get(created.id)).id).toBe(created.id); // still there
  });

  it("adopts the database a lost create left behind instead of creating a second one", async () => {
    // The operator announced a create (create-pending), sent it, and stopped before it heard
    // back: the database exists under the derived label and only the announcement says so.
    const label = derivedLabel({ clusterId: env.clusterId, namespace: cluster.namespace, name: "lost" });
    const orphan = await env.linode.databases.engine("mysql").create({ label, region: "us-east", type: "g6-nanode-1", version: "8" });
    // The announcement lives in status.createPending (the status subresource, which only the
    // operator's role writes): set it while the resource is paused, then resume.
    const spec = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
    await apply("lost", spec, { "linode.operator.dev/paused": "true" });
    const announce = await cluster.kubectl(["-n", cluster.namespace, "patch", "linodedb", "lost", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { createPending: { at: new Date().toISOString(), label } } })]);
    expect(announce.code, announce.stderr).toBe(0);
    const resume = await cluster.kubectl(["-n", cluster.namespace, "annotate", "linodedb", "lost", "linode.operator.dev/paused-"]);
    expect(resume.code, resume.stderr).toBe(0);
    const o = await waitFor("lost Ready", () => readyAt("lost"), 60_000, 200);
    expect(o.status?.id).toBe(orphan.id);
    expect(o.metadata.annotations?.["linode.operator.dev/external-id"]).toBe(String(orphan.id));
    const all = await env.linode.databases.engine("mysql").listAll();
    expect(all.filter((d) => d.label === label)).toHaveLength(1);
  });

  it("deletes the cloud database before the resource goes; Retain leaves it", async () => {
    const [deleted, retained] = await Promise.all([readyDatabase("deleted"), readyDatabase("retained", postgresql)]);
    const id = Number(deleted.status?.id);
    const del = await cluster.kubectl(["-n", cluster.namespace, "delete", "linodedb", "deleted", "--wait=false"]);
    expect(del.code, del.stderr).toBe(0);
    await waitFor("deleted gone", () => gone("deleted"), 60_000, 200);
    await expect(env.linode.databases.engine("mysql").get(id)).rejects.toMatchObject({ kind: "notFound" });

    const patch = await cluster.kubectl(["-n", cluster.namespace, "patch", "linodedb", "retained", "--type=merge", "-p", '{"spec":{"deletionPolicy":"Retain"}}']);
    expect(patch.code, patch.stderr).toBe(0);
    const analytics = await waitFor("retain seen", () => readyAt("retained", (x) => x.metadata.generation !== retained.metadata.generation), 30_000, 200);
    // What the operator keeps by the database's id (which resource manages it, its backups) goes with the resource, though the database stays.
    const kept = (): { keyOf: number; backups: number } => {
      const sizes = env.deps.metrics.cacheEntries.sizes();
      return { keyOf: sizes.get("ManagedDatabase.keyOf") ?? 0, backups: sizes.get("ManagedDatabase.backups") ?? 0 };
    };
    const before = kept();
    // (The current platform has no backups: none were held.)
    const backupsHeld = platform === "legacy" ? 1 : 0;
    await cluster.kubectl(["-n", cluster.namespace, "delete", "linodedb", "retained", "--wait=false"]);
    await waitFor("retained gone", () => gone("retained"), 60_000, 200);
    expect((await env.linode.databases.engine("postgresql").get(Number(analytics.status?.id))).status).toBe("active");
    await waitFor("its entries dropped", () => { const now = kept(); return Promise.resolve(now.keyOf === before.keyOf - 1 && now.backups === before.backups - backupsHeld ? true : undefined); }, 10_000, 100);
  });
});
