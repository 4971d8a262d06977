// The Argo CD health checks (deploy/argocd/, docs/argocd.md), run as Argo CD runs them: the
// object in the global `obj`, a plain Lua table, and the table the script returns read back; on
// objects the operator itself wrote, in each state, from a real API server and the emulator.
// The interpreter is real Lua (5.4, compiled to WASM by wasmoon); the scripts keep to Lua 5.1,
// which Argo CD's gopher-lua runs.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LuaFactory } from "wasmoon";
import { parse } from "yaml";
import { databaseSnapshotType as snapType } from "../../src/resources/database-snapshot/index.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { managedDatabaseType as mdbType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ResourceType } from "../../src/kube/types.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";
import { healthKey, reasonHealth, reasonsOf } from "../../scripts/argocd-health.ts";

/** The scripts as a user installs them: the ConfigMap in deploy/argocd/. */
const configMap = parse(readFileSync(new URL("../../deploy/argocd/argocd-cm.yaml", import.meta.url), "utf8")) as { data: Record<string, string> };
const scriptOf = (kind: string): string => {
  const def = kindDefinitions.find((d) => d.kind === kind);
  const script = def === undefined ? undefined : configMap.data[healthKey(def)];
  if (script === undefined) throw new Error(`no health check for ${kind} in deploy/argocd/argocd-cm.yaml`);
  return script;
};

/** A value as a Lua constructor: what Argo CD hands a script (maps and lists as tables, null as nil). */
function lua(v: unknown): string {
  if (v === null || v === undefined) return "nil";
  // Lua's decimal escapes for quotes, backslashes and control characters; other bytes as they are.
  if (typeof v === "string") return `"${[...v].map((c) => (c === "\\" || c === '"' || c.charCodeAt(0) < 32 ? `\\${String(c.charCodeAt(0)).padStart(3, "0")}` : c)).join("")}"`;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `{ ${v.map(lua).join(", ")} }`;
  return `{ ${Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== null).map(([k, x]) => `[${lua(k)}] = ${lua(x)}`).join(", ")} }`;
}

interface HealthStatus { status: string; message: string }

/** Runs a kind's health script on `obj` in a fresh interpreter, as Argo CD would. */
async function health(obj: ManagedObject): Promise<HealthStatus> {
  const engine = await new LuaFactory().createEngine();
  try {
    await engine.doString(`obj = ${lua(JSON.parse(JSON.stringify(obj)))}`);
    const hs = await engine.doString(scriptOf(obj.kind ?? "")) as Partial<HealthStatus> | null;
    // Argo CD's contract: a table of a status it knows and a message.
    expect(Object.keys(hs ?? {}).sort()).toEqual(["message", "status"]);
    expect(["Healthy", "Progressing", "Degraded", "Suspended"]).toContain(hs?.status);
    return { status: String(hs?.status), message: String(hs?.message) };
  } finally {
    engine.global.close();
  }
}

function expectHealth(got: HealthStatus, status: string, message?: RegExp): void {
  expect(got.status, got.message).toBe(status);
  if (message !== undefined) expect(got.message).toMatch(message);
}

const mysql = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.7"] };
const PAUSED = { "linode.operator.dev/paused": "true" };
type Cond = { type: string; status: string; reason: string };

describe("Argo CD health checks", () => {
  const cluster = useTestCluster("argocd");
  let env: OperatorEnv;
  // Provisioning slow enough to see a database being created.
  beforeAll(async () => { env = await startOperatorEnv(cluster, { provisionSeconds: 3, poll: { pendingMillis: 300, readyMillis: 2_000 } }); });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const create = (t: ResourceType, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Promise<ManagedObject> => env.deps.kube.createCustom(t, ns(), {
    apiVersion: "linode.operator.dev/v1alpha1", kind: t.kind, metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, spec,
  });
  const get = (t: ResourceType, name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(t, { namespace: ns(), name });
  const cond = (o: ManagedObject, type: string): Cond | undefined => (o.status?.conditions as Cond[] | undefined)?.find((c) => c.type === type);
  /** The object once the operator wrote `reason` on condition `type` for its current generation. */
  const withReason = (t: ResourceType, name: string, type: string, reason: string, status?: string): Promise<ManagedObject> => waitFor(`${name} ${type} ${reason}`, async () => {
    const o = await get(t, name);
    const c = cond(o, type);
    return c?.reason === reason && (status === undefined || c.status === status) && o.status?.observedGeneration === o.metadata.generation ? o : undefined;
  }, 60_000, 100);

  it("places every reason each kind's conditions can carry", () => {
    for (const def of kindDefinitions) expect(reasonsOf(def).filter((r) => reasonHealth[r] === undefined), def.kind).toEqual([]);
    // And places no reason the operator does not have (a rename would leave it behind).
    const all = new Set(kindDefinitions.flatMap(reasonsOf));
    expect(Object.keys(reasonHealth).filter((r) => !all.has(r))).toEqual([]);
  });

  it("ManagedDatabase: Progressing while created, Healthy when Ready and Synced, Suspended when paused, Progressing on a spec the operator has not seen", async () => {
    const fresh = await create(mdbType, "orders", mysql);
    expect(await health(fresh)).toEqual({ status: "Progressing", message: "waiting for the operator's first status" });
    const creating = await withReason(mdbType, "orders", "Ready", "Creating");
    expectHealth(await health(creating), "Progressing", /^Ready Creating/);
    const ready = await withReason(mdbType, "orders", "Ready", "Available", "True");
    expect(await health(ready)).toEqual({ status: "Healthy", message: "Ready Available" });
    // The same object with a spec newer than its status: what Argo CD sees right after a sync.
    expectHealth(await health({ ...ready, metadata: { ...ready.metadata, generation: (ready.metadata.generation ?? 1) + 1 } }), "Progressing", /has not acted on generation/);
    await env.deps.kube.mergePatchCustom(mdbType, { namespace: ns(), name: "orders" }, { metadata: { annotations: PAUSED } });
    const paused = await withReason(mdbType, "orders", "Synced", "Paused");
    expectHealth(await health(paused), "Suspended");
    // Paused before the operator wrote anything: Suspended too.
    expectHealth(await health(await create(mdbType, "held", mysql, PAUSED)), "Suspended");
    await env.deps.kube.mergePatchCustom(mdbType, { namespace: ns(), name: "orders" }, { metadata: { annotations: { "linode.operator.dev/paused": null } } });
    await withReason(mdbType, "orders", "Synced", "ReconcileSuccess", "True");
  });

  it("ManagedDatabase: Degraded on a spec the API cannot serve, with the condition's reason and message", async () => {
    await create(mdbType, "wrong-version", { ...mysql, version: "99" });
    const o = await withReason(mdbType, "wrong-version", "Synced", "UnknownEngineVersion", "False");
    expectHealth(await health(o), "Degraded", /^Synced UnknownEngineVersion: .*99/);
  });

  it("ManagedDatabase in Observe mode: Healthy when observed; a DatabaseSnapshot of it is Degraded (it is never changed); of a paused one Suspended, then Healthy once taken", async () => {
    const theirs = await env.linode.databases.engine("mysql").create({ label: "made-elsewhere", region: "us-east", type: "g6-nanode-1", version: "8" });
    await create(mdbType, "observed", { ...mysql, databaseId: theirs.id, managementPolicy: "Observe" });
    const observed = await withReason(mdbType, "observed", "Ready", "Available", "True");
    expect(cond(observed, "Synced")?.reason).toBe("Observing");
    expectHealth(await health(observed), "Healthy", /^Synced Observing/);

    await create(snapType, "of-observed", { databaseRef: { name: "observed" } });
    const notManaged = await withReason(snapType, "of-observed", "Ready", "DatabaseNotManaged");
    expectHealth(await health(notManaged), "Degraded", /DatabaseNotManaged/);

    // A snapshot of a paused database waits (Suspended), then is taken once the pause ends (Healthy).
    await env.deps.kube.mergePatchCustom(mdbType, { namespace: ns(), name: "orders" }, { metadata: { annotations: PAUSED } });
    await withReason(mdbType, "orders", "Synced", "Paused");
    await create(snapType, "nightly", { databaseRef: { name: "orders" } });
    expectHealth(await health(await withReason(snapType, "nightly", "Ready", "DatabasePaused")), "Suspended", /DatabasePaused/);
    await env.deps.kube.mergePatchCustom(mdbType, { namespace: ns(), name: "orders" }, { metadata: { annotations: { "linode.operator.dev/paused": null } } });
    const taken = await withReason(snapType, "nightly", "Ready", "Available", "True");
    expectHealth(await health(taken), "Healthy");
  });

  it("NodeBalancer: Healthy when serving; Progressing while its TLS Secret is not there; Degraded when it is not a usable certificate", async () => {
    const nodes = [{ label: "web-1", address: "192.168.128.5:80" }];
    await create(nbType, "web", { region: "us-east", configs: [{ port: 80, nodes }] });
    expectHealth(await health(await withReason(nbType, "web", "Ready", "Available", "True")), "Healthy");

    await create(nbType, "tls", { region: "us-east", configs: [{ port: 443, protocol: "https", tlsSecretRef: { name: "web-tls" }, nodes }] });
    const missing = await withReason(nbType, "tls", "Synced", "TLSSecretNotFound");
    expectHealth(await health(missing), "Progressing", /TLSSecretNotFound/);
    await cluster.core.createNamespacedSecret({ namespace: ns(), body: { metadata: { name: "web-tls" }, type: "kubernetes.io/tls", stringData: { "tls.crt": "not a certificate", "tls.key": "not a key" } } });
    const invalid = await withReason(nbType, "tls", "Synced", "TLSSecretInvalid");
    expectHealth(await health(invalid), "Degraded", /TLSSecretInvalid/);
  });
});
