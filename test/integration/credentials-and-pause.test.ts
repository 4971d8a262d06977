// Teams and accounts on a real API server and the emulator over HTTP (two accounts): a
// resource's spec.credentialsRef decides which Linode account its cloud object lives in; a
// rotated token is used from then on; a missing Secret or a refused token is a condition, not a
// loop; an operator can require every resource to bring its own token. And the paused
// annotation: nothing is created, changed or deleted until it is removed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeClient } from "../../src/linode/index.ts";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { derivedLabel } from "../../src/resources/shared/derived-label.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import { Registry } from "prom-client";
import { useTestCluster } from "../harness/cluster.ts";
import { linodeCalls } from "../harness/linode-calls.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const base = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" };
// Two tokens of one team account (a rotation), one of another; the operator's own is the default account's.
const TEAM_A = "aaaa-team-a-token";
const TEAM_A_ROTATED = "bbbb-team-a-token";
const TEAM_B = "cccc-team-b-token";
const POST_DB = "POST /databases/mysql/instances";
type Cond = { status: string; reason: string; message?: string };

describe("credentialsRef and pause", () => {
  const cluster = useTestCluster("creds");
  let env: OperatorEnv;
  const clients: LinodeClient[] = [];
  const as = (token: string): LinodeClient => {
    const c = new LinodeClient({ token, baseUrl: env.emulator.url, registry: new Registry(), rateLimit: false });
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, {
      poll: { pendingMillis: 300, readyMillis: 2_000 },
      emulatorConfig: { tokens: [{ token: TEAM_A, account: "team-a" }, { token: TEAM_A_ROTATED, account: "team-a" }, { token: TEAM_B, account: "team-b" }] },
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await env.stop();
  });

  const ns = (): string => cluster.namespace;
  const create = (t: ResourceType, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Promise<ManagedObject> => env.deps.kube.createCustom(t, ns(), {
    apiVersion: "linode.operator.dev/v1alpha1", kind: t.kind, metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, spec,
  });
  const get = (t: ResourceType, name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(t, { namespace: ns(), name });
  const cond = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const condWith = (t: ResourceType, name: string, type: string, reason: string): Promise<Cond> =>
    waitFor(`${name} ${type} ${reason}`, async () => { const c = cond(await get(t, name), type); return c?.reason === reason ? c : undefined; }, 60_000, 100);
  const ready = (t: ResourceType, name: string): Promise<ManagedObject> => waitFor(`${name} Ready`, async () => {
    const o = await get(t, name);
    return cond(o, "Ready")?.status === "True" && cond(o, "Synced")?.status === "True" && o.status?.observedGeneration === o.metadata.generation ? o : undefined;
  }, 60_000, 100);
  const gone = (t: ResourceType, name: string): Promise<true> => waitFor(`${name} gone`, async () => get(t, name).then(() => undefined, (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined)), 60_000, 100);
  const tokenSecret = (name: string, token: string, labelled = true): Promise<unknown> => env.deps.kube.applySecret({
    metadata: { name, namespace: ns(), ...(labelled ? { labels: { "linode.operator.dev/credentials": "true" } } : {}) },
    type: "Opaque", data: { token: Buffer.from(token).toString("base64") },
  });
  const annotate = (t: ResourceType, name: string, value: string | null): Promise<unknown> =>
    env.deps.kube.mergePatchCustom(t, { namespace: ns(), name }, { metadata: { annotations: { "linode.operator.dev/paused": value } } });
  const count = (key: string): number => env.emulator.requestCounts()[key] ?? 0;
  const ids = async (c: LinodeClient): Promise<number[]> => (await c.databases.engine("mysql").listAll()).map((d) => d.id);
  const key = (name: string): string => `${ns()}/${name}`;
  /** Which of these resources' databases an account holds, by their derived labels: each must be in its own account only. */
  const holds = async (c: LinodeClient, names: string[]): Promise<string[]> => {
    const labels = new Map(names.map((n) => [derivedLabel({ clusterId: env.clusterId, namespace: ns(), name: n }), n]));
    return (await c.databases.engine("mysql").listAll()).flatMap((d) => labels.get(d.label) ?? []).sort();
  };

  it("each resource's database lives in the account of the token its credentialsRef names; without one, in the operator's", async () => {
    await tokenSecret("accounts-a", TEAM_A);
    await tokenSecret("accounts-b", TEAM_B);
    await create(mdb, "a1", { ...base, credentialsRef: { name: "accounts-a" } });
    await create(mdb, "b1", { ...base, credentialsRef: { name: "accounts-b" } });
    await create(mdb, "own", base);
    const [a1, b1, own] = await Promise.all([ready(mdb, "a1"), ready(mdb, "b1"), ready(mdb, "own")]);
    const names = ["a1", "b1", "own"];
    expect(await holds(as(TEAM_A), names)).toEqual(["a1"]);
    expect(await holds(as(TEAM_B), names)).toEqual(["b1"]);
    expect(await holds(env.linode, names)).toEqual(["own"]);
    expect(await ids(as(TEAM_A))).toContain(a1.status?.id);
    expect(await ids(as(TEAM_B))).toContain(b1.status?.id);
    expect(await ids(env.linode)).toContain(own.status?.id);
    // The connection Secret holds team A's credentials, read with team A's token.
    const creds = await as(TEAM_A).databases.engine("mysql").getCredentials(a1.status?.id as number);
    const secret = await cluster.core.readNamespacedSecret({ namespace: ns(), name: "a1-connection" });
    expect(Buffer.from(secret.data?.password ?? "", "base64").toString()).toBe(creds.password);
  });

  it("a snapshot acts in its database's account; a NodeBalancer in the account its credentialsRef names", async () => {
    await tokenSecret("acting-a", TEAM_A);
    await tokenSecret("acting-b", TEAM_B);
    await create(mdb, "snapped", { ...base, credentialsRef: { name: "acting-a" } });
    const db = await ready(mdb, "snapped");
    await create(snapType, "snapped-snap", { databaseRef: { name: "snapped" } });
    const snap = await ready(snapType, "snapped-snap");
    const backups = await as(TEAM_A).databases.engine("mysql").listAllBackups(db.status?.id as number);
    expect(backups.map((b) => b.id)).toContain(snap.status?.backupId);
    await create(nbType, "web", { region: "us-east", credentialsRef: { name: "acting-b" }, configs: [{ port: 80, check: "none", nodes: [{ label: "web-1", address: "192.168.10.5:80" }] }] });
    const nb = await ready(nbType, "web");
    expect((await as(TEAM_B).nodeBalancers.listAll()).map((n) => n.id)).toEqual([nb.status?.id]);
    expect(await env.linode.nodeBalancers.listAll()).toEqual([]);
    await env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "web" });
    await gone(nbType, "web");
    expect(await as(TEAM_B).nodeBalancers.listAll()).toEqual([]);
  });

  it("a rotated token in the Secret is what the next change is sent with", async () => {
    await tokenSecret("rotating", TEAM_A);
    await create(mdb, "rotated", { ...base, credentialsRef: { name: "rotating" } });
    const id = (await ready(mdb, "rotated")).status?.id as number;
    await tokenSecret("rotating", TEAM_A_ROTATED);
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "rotated" }, { spec: { allowList: ["203.0.113.9"] } });
    const put = await waitFor("the allow list update", () => {
      const m = env.emulator.mutations().find((x) => x.method === "PUT" && x.path.endsWith(`/instances/${String(id)}`));
      return Promise.resolve(m);
    }, 30_000, 100);
    expect(put.token).toBe(`${TEAM_A_ROTATED.slice(0, 4)}…`);
    expect(put.status).toBe(200);
    await ready(mdb, "rotated");
  });

  it("a token rotated before the resource's deletion is the first pass to use it: the database is deleted with it and the resource goes (not held as AccountChanged)", async () => {
    await tokenSecret("rotating-away", TEAM_A);
    await create(mdb, "rotated-away", { ...base, credentialsRef: { name: "rotating-away" } });
    const id = (await ready(mdb, "rotated-away")).status?.id as number;
    // Paused, nothing is looked at: the rotation and the deletion meet in one pass once it resumes.
    await annotate(mdb, "rotated-away", "true");
    await condWith(mdb, "rotated-away", "Synced", "Paused");
    await tokenSecret("rotating-away", TEAM_A_ROTATED);
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "rotated-away" });
    await annotate(mdb, "rotated-away", null);
    await gone(mdb, "rotated-away");
    const deletes = env.emulator.mutations().filter((x) => x.method === "DELETE" && x.path.endsWith(`/instances/${String(id)}`));
    expect(deletes.map((d) => [d.token, d.status])).toEqual([[`${TEAM_A_ROTATED.slice(0, 4)}…`, 200]]);
    expect(await ids(as(TEAM_A))).not.toContain(id);
  });

  it("a missing Secret is CredentialsNotFound and a refused token CredentialsInvalid, each without a loop; a good token then proceeds", async () => {
    // Refused, "late" waits for its Secret to change and is not looked at again: a database
    // polled every drift poll (2 s) shows the operator's time going by meanwhile.
    await create(mdb, "ticker", base);
    await ready(mdb, "ticker");
    const posts = count(POST_DB);
    await create(mdb, "late", { ...base, credentialsRef: { name: "late-token" } });
    const missing = await condWith(mdb, "late", "Ready", "CredentialsNotFound");
    expect(missing.message).toContain("late-token");
    // Without the label it is not one of the operator's to read: looked at three more times with
    // it there, still not found, and the message says how.
    await tokenSecret("late-token", "not-a-real-token", false);
    await env.repass("ManagedDatabase", key("late"), 3);
    const unlabelled = cond(await get(mdb, "late"), "Ready");
    expect(unlabelled?.reason).toBe("CredentialsNotFound");
    expect(unlabelled?.message).toContain("linode.operator.dev/credentials=true");
    await tokenSecret("late-token", "not-a-real-token");
    const invalid = await condWith(mdb, "late", "Synced", "CredentialsInvalid");
    expect(invalid.message).not.toContain("not-a-real-token");
    // Not tried again until the Secret changes (every client of the operator counts into one registry).
    const refused = await linodeCalls(env.operatorLinode, { status: "401" });
    expect(refused).toBeGreaterThanOrEqual(1);
    const passes = env.passes("ManagedDatabase", key("late"));
    await env.afterPasses("ManagedDatabase", key("ticker"), 3);
    expect(await linodeCalls(env.operatorLinode, { status: "401" }) - refused).toBe(0);
    // At most the pass that wrote CredentialsInvalid, if it had not ended yet.
    expect(env.passes("ManagedDatabase", key("late")) - passes).toBeLessThanOrEqual(1);
    // The token is found out before any create: the engines list read first refuses it (401), so
    // neither the missing Secret nor the refused token sent a create.
    expect(count(POST_DB) - posts).toBe(0);
    await tokenSecret("late-token", TEAM_B);
    const late = await ready(mdb, "late");
    expect(await ids(as(TEAM_B))).toContain(late.status?.id);
  });

  it("paused: nothing is created, changed or deleted until the annotation goes, and status says Paused", async () => {
    const posts = count(POST_DB);
    await create(mdb, "held", base, { "linode.operator.dev/paused": "true" });
    const paused = await condWith(mdb, "held", "Synced", "Paused");
    expect(paused.message).toContain("linode.operator.dev/paused");
    // Three more looks at it: nothing created, no finalizer.
    await env.repass("ManagedDatabase", key("held"), 3);
    expect(count(POST_DB)).toBe(posts);
    expect((await get(mdb, "held")).metadata.finalizers ?? []).toEqual([]);
    await annotate(mdb, "held", null);
    const held = await ready(mdb, "held");
    const id = held.status?.id as number;

    await annotate(mdb, "held", "true");
    await condWith(mdb, "held", "Synced", "Paused");
    const puts = count("PUT /databases/mysql/instances/{instanceId}");
    const deletes = count("DELETE /databases/mysql/instances/{instanceId}");
    await env.deps.kube.mergePatchCustom(mdb, { namespace: ns(), name: "held" }, { spec: { allowList: ["203.0.113.10"] } });
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "held" });
    // A pass saw the new spec (still Paused, at its generation), then three more looks: nothing changed or deleted.
    await waitFor("Paused at the new generation", async () => {
      const o = await get(mdb, "held");
      return cond(o, "Synced")?.reason === "Paused" && o.status?.observedGeneration === o.metadata.generation ? true : undefined;
    }, 30_000, 100);
    await env.repass("ManagedDatabase", key("held"), 3);
    expect(count("PUT /databases/mysql/instances/{instanceId}")).toBe(puts);
    expect(count("DELETE /databases/mysql/instances/{instanceId}")).toBe(deletes);
    expect((await get(mdb, "held")).metadata.finalizers).toContain("linode.operator.dev/finalizer");
    expect(await ids(env.linode)).toContain(id);

    await annotate(mdb, "held", null);
    await gone(mdb, "held");
    expect(await ids(env.linode)).not.toContain(id);
  });

  it("deleting a resource deletes its database in its own account", async () => {
    await tokenSecret("deleting", TEAM_A);
    await create(mdb, "doomed", { ...base, credentialsRef: { name: "deleting" } });
    const id = (await ready(mdb, "doomed")).status?.id as number;
    await create(snapType, "doomed-snap", { databaseRef: { name: "doomed" } });
    await ready(snapType, "doomed-snap");
    expect(await ids(as(TEAM_A))).toContain(id);
    await env.deps.kube.deleteCustom(snapType, { namespace: ns(), name: "doomed-snap" });
    await gone(snapType, "doomed-snap");
    await env.deps.kube.deleteCustom(mdb, { namespace: ns(), name: "doomed" });
    await gone(mdb, "doomed");
    expect(await ids(as(TEAM_A))).not.toContain(id);
  });
});

describe("an operator that requires credentialsRef", () => {
  const cluster = useTestCluster("credsreq");
  let env: OperatorEnv;
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, { requireCredentialsRef: ["*"], emulatorConfig: { tokens: [{ token: TEAM_A, account: "team-a" }] } });
  });
  afterAll(async () => { await env.stop(); });

  it("never falls back to its own token: a resource without credentialsRef is CredentialsNotFound and nothing is sent", async () => {
    await env.deps.kube.createCustom(mdb, cluster.namespace, { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "no-ref" }, spec: base });
    const c = await waitFor("no-ref CredentialsNotFound", async () => {
      const o = await env.deps.kube.getCustom<ManagedObject>(mdb, { namespace: cluster.namespace, name: "no-ref" });
      return o.status?.conditions?.find((x) => x.type === "Synced" && x.reason === "CredentialsNotFound");
    }, 30_000, 100);
    expect(c.message).toContain("spec.credentialsRef");
    expect(env.emulator.requestCounts()[POST_DB] ?? 0).toBe(0);
    expect(await env.linode.databases.engine("mysql").listAll()).toEqual([]);
    await env.deps.kube.deleteCustom(mdb, { namespace: cluster.namespace, name: "no-ref" });
  });
});
