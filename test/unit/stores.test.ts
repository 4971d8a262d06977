// Shared caches, their indexes and the mapping of secondary changes to the objects they
// concern, on the in-memory Kubernetes API: an index follows adds, updates and deletes, and
// both the old and the new state of a changed object are mapped (a label or reference that
// moves from one owner to another wakes both). Referenced Secrets are read by name
// (test/unit/secret-caches.test.ts says what such a cache keeps).
import { afterEach, describe, expect, it } from "vitest";
import { secretsType, type KubeObject, type SecretObject } from "../../src/kube/types.ts";
import { reference, referrersIndex, type ManagedObject } from "../../src/runtime/managed.ts";
import type { Read } from "../../src/runtime/reads.ts";
import { References, wireWatch } from "../../src/runtime/references.ts";
import { InformerPool, type Selectors } from "../../src/runtime/stores.ts";
import { gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { eventually } from "../harness/eventually.ts";

const ns = "stores";
const pools: InformerPool[] = [];
afterEach(async () => { await Promise.all(pools.splice(0).map((p) => p.stop())); });

function setup(): { kube: MemoryKube; pool: InformerPool } {
  const kube = new MemoryKube();
  const pool = new InformerPool(kube, { namespaces: [ns] });
  pools.push(pool);
  return { kube, pool };
}

/** Secrets read by name when referenced (what every cache of Secrets must say it keeps). */
const SECRETS: Selectors = { content: { byName: { maxBytes: 4096 } } };
const SECRETS_READ: Read = { type: secretsType, scope: "namespaces", selectors: SECRETS, why: "test" };
const secret = (name: string, data: Record<string, string>): { type: string; metadata: { name: string; namespace: string }; data: Record<string, string> } =>
  ({ type: "Opaque", metadata: { name, namespace: ns }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])) });
/** A Secret's value as a reference decodes it. */
const valueOf = (o: KubeObject, key: string): string | undefined => {
  const v = (o as SecretObject).data?.[key];
  return v === undefined ? undefined : Buffer.from(v, "base64").toString();
};
const gadget = (name: string, labels: Record<string, string>): KubeObject => ({ metadata: { name, labels }, spec: { size: 1 } });

/**
 * Proves that nothing was woken by what came before, by a later event instead of by time: a
 * gadget `probe` reads the Secret `probe-secret` alone, which each call changes; once the probe is
 * woken, every earlier event of the Secrets' informer has been handled. Returns what else was woken.
 */
async function barrier(kube: MemoryKube, woken: string[]): Promise<string[]> {
  await kube.applySecret(secret("probe-secret", { cert: String(Math.random()), tier: String(Math.random()) }));
  await eventually(() => { expect(woken).toContain(`${ns}/probe`); });
  return [...new Set(woken.filter((k) => k !== `${ns}/probe`))].sort();
}
const probe = (kube: MemoryKube): Promise<unknown> => kube.createCustom(gadgetType, ns, { metadata: { name: "probe" }, spec: { tls: "probe-secret" } });

describe("shared stores and indexes", () => {
  it("one informer per resource and selector set, however many ask", () => {
    const { pool } = setup();
    const a = pool.store(secretsType, { labelSelector: "x=1", ...SECRETS });
    expect(pool.store(secretsType, { labelSelector: "x=1", ...SECRETS })).toBe(a);
    expect(pool.store(secretsType, { labelSelector: "x=2", ...SECRETS })).not.toBe(a);
    expect(pool.store(secretsType, { labelSelector: "x=1", content: { byName: { maxBytes: 1 } } })).not.toBe(a);
    expect(pool.store(gadgetType)).not.toBe(a);
  });

  it("an index follows adds, updates and deletes", async () => {
    const { kube, pool } = setup();
    const store = pool.store(gadgetType);
    store.addIndex("team", (o) => (o.metadata.labels?.team !== undefined ? [o.metadata.labels.team] : []));
    await kube.createCustom(gadgetType, ns, gadget("g1", { team: "red" }));
    await pool.startAndSync();
    expect(store.byIndex("team", "red").map((o) => o.metadata.name)).toEqual(["g1"]);
    await kube.createCustom(gadgetType, ns, gadget("g2", { team: "red" }));
    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "g1" }, { metadata: { labels: { team: "blue" } } });
    await eventually(() => {
      expect(store.byIndex("team", "red").map((o) => o.metadata.name)).toEqual(["g2"]);
      expect(store.byIndex("team", "blue").map((o) => o.metadata.name)).toEqual(["g1"]);
    });
    await kube.deleteCustom(gadgetType, { namespace: ns, name: "g1" });
    await eventually(() => { expect(store.byIndex("team", "blue")).toEqual([]); });
  });

  it("a watch maps both the old and the new state of a changed object", async () => {
    const { kube, pool } = setup();
    const woken: string[] = [];
    wireWatch({ target: { type: gadgetType, scope: "namespaces", why: "test" }, map: (o: KubeObject) => [`${ns}/${o.metadata.labels?.owner ?? ""}`] },
      (t) => pool.store(t.type), (key) => woken.push(key));
    await pool.startAndSync();
    await kube.createCustom(gadgetType, ns, gadget("g", { owner: "a" }));
    await eventually(() => { expect(woken).toEqual([`${ns}/a`]); });
    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "g" }, { metadata: { labels: { owner: "b" } } });
    await eventually(() => { expect(woken.slice(1).sort()).toEqual([`${ns}/a`, `${ns}/b`]); });
  });

  it("references: a referenced object's change wakes exactly its referrers, and a moved reference is followed", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType, SECRETS);
    const refs = new References<{ tls?: string }>([reference({ name: "tls", target: SECRETS_READ, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []), decode: (o) => ({ value: valueOf(o, "cert") }) })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    const gadget = (name: string, tls: string): Promise<unknown> => kube.createCustom(gadgetType, ns, { metadata: { name }, spec: { tls } });
    await gadget("web", "cert-a");
    await gadget("api", "cert-b");
    await probe(kube);
    await pool.startAndSync();
    expect(self.byIndex(referrersIndex("tls"), `${ns}/cert-a`).map((o) => o.metadata.name)).toEqual(["web"]);

    await kube.applySecret(secret("cert-a", { cert: "a1" }));
    await eventually(() => { expect(woken).toEqual([`${ns}/web`]); });

    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "web" }, { spec: { tls: "cert-b" } });
    await eventually(() => { expect(self.byIndex(referrersIndex("tls"), `${ns}/cert-b`).map((o) => o.metadata.name).sort()).toEqual(["api", "web"]); });
    woken.length = 0;
    await kube.applySecret(secret("cert-b", { cert: "b1" }));
    await eventually(() => { expect(woken.sort()).toEqual([`${ns}/api`, `${ns}/web`]); });
    woken.length = 0;
    await kube.applySecret(secret("cert-a", { cert: "a2" }));
    expect(await barrier(kube, woken)).toEqual([]);
  });

  it("references: a change that leaves the decoded view alone wakes no referrer", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType, SECRETS);
    // What the kind reads of the Secret: its `tier` only.
    const refs = new References<{ tls?: string }>([reference({ name: "tls", target: SECRETS_READ, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []), decode: (o) => ({ value: valueOf(o, "tier") }) })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "web" }, spec: { tls: "cert-v" } });
    await kube.applySecret(secret("cert-v", { tier: "gold" }));
    await probe(kube);
    await pool.startAndSync();
    await barrier(kube, woken);
    woken.length = 0; // what the first sync added
    await kube.applySecret(secret("cert-v", { tier: "gold", note: "written elsewhere" }));
    expect(await barrier(kube, woken)).toEqual([]);
    woken.length = 0;
    await kube.applySecret(secret("cert-v", { tier: "silver", note: "written elsewhere" }));
    await eventually(() => { expect([...new Set(woken)]).toEqual([`${ns}/web`]); });
  });

  it("references: a change of the view wakes only the referrers it concerns (wakes); a deletion wakes them all", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType, SECRETS);
    // Referrers whose status says "done" care only whether the Secret is ready (it has a tier), not which tier.
    const refs = new References<{ tls?: string }>([reference({
      name: "tls", target: SECRETS_READ, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []),
      decode: (o) => { const tier = valueOf(o, "tier"); return tier === undefined ? { notReady: "no tier" } : { value: tier }; },
      wakes: (referrer, before, after) => referrer.status?.done !== true || before.notReady !== after.notReady,
    })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "busy" }, spec: { tls: "cert-w" } });
    await kube.createCustom(gadgetType, ns, { metadata: { name: "done" }, spec: { tls: "cert-w" } });
    await kube.patchCustomStatus(gadgetType, { namespace: ns, name: "done" }, { done: true });
    await kube.applySecret(secret("cert-w", { tier: "gold" }));
    await probe(kube);
    await pool.startAndSync();
    await barrier(kube, woken);
    woken.length = 0;
    await kube.applySecret(secret("cert-w", { tier: "silver" }));
    expect(await barrier(kube, woken)).toEqual([`${ns}/busy`]);
    woken.length = 0;
    await kube.applySecret(secret("cert-w", {}));
    await eventually(() => { expect([...new Set(woken)].sort()).toEqual([`${ns}/busy`, `${ns}/done`]); });
    woken.length = 0;
    await kube.deleteSecret({ namespace: ns, name: "cert-w" });
    await eventually(() => { expect([...new Set(woken)].sort()).toEqual([`${ns}/busy`, `${ns}/done`]); });
  });

  it("resolves references from the cache: found, not found, not ready; nothing is required while deleting", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType, SECRETS);
    const tls = reference<{ tls: string[] }, string>({
      name: "tls", target: SECRETS_READ, names: (spec) => spec.tls,
      decode: (o) => (valueOf(o, "ready") === "no" ? { value: "pending", notReady: "not issued yet" } : { value: `issued:${o.metadata.name}` }),
      reasons: { notFound: "TLSSecretNotFound" },
    });
    const refs = new References<{ tls: string[] }>([tls], storeFor);
    refs.wire(self, (raw) => raw as { tls: string[] }, () => undefined);
    await kube.applySecret(secret("good", {}));
    await kube.applySecret(secret("pending", { ready: "no" }));
    // What a Gadget names is what is read (by name) of the Secrets.
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec: { tls: ["good", "pending", "missing"] } });
    await pool.startAndSync();
    const m = (tls: string[]): Parameters<typeof refs.resolve>[0] => ({
      obj: { metadata: { name: "x", namespace: ns } }, key: { namespace: ns, name: "x" }, spec: { tls },
      externalId: undefined, createPending: undefined, policies: { deletion: "Delete", management: "Manage" }, refs: {},
      actions: undefined as never,
    });
    const ok = refs.resolve(m(["good"]), false);
    expect(ok.unresolved).toBeUndefined();
    expect(ok.refs.tls?.get("good")?.obj.metadata.name).toBe("good");
    // Decoded once, read back typed through the reference.
    expect(tls.value(ok, "good")).toBe("issued:good");
    expect([...tls.values(refs.resolve(m(["good", "pending"]), false))]).toEqual([["good", "issued:good"], ["pending", "pending"]]);
    expect(tls.get(ok, "missing")).toBeUndefined();
    expect(refs.resolve(m(["good", "missing"]), false).unresolved).toMatchObject({ reason: "TLSSecretNotFound" });
    expect(refs.resolve(m(["pending"]), false).unresolved).toMatchObject({ reason: "ReferenceNotReady", message: "Secret pending is not ready: not issued yet" });
    expect(refs.resolve(m(["missing"]), true).unresolved).toBeUndefined();
  });
});
