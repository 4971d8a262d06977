// Shared caches, their indexes and the mapping of secondary changes to the objects they
// concern, on the in-memory Kubernetes API: an index follows adds, updates and deletes, and
// both the old and the new state of a changed object are mapped (a label or reference that
// moves from one owner to another wakes both).
import { afterEach, describe, expect, it } from "vitest";
import { secretsType, type KubeObject } from "../../src/kube/types.ts";
import { reference, referrersIndex, type ManagedObject } from "../../src/runtime/managed.ts";
import { References, wireWatch } from "../../src/runtime/references.ts";
import { InformerPool } from "../../src/runtime/stores.ts";
import { gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const ns = "stores";
const pools: InformerPool[] = [];
afterEach(async () => { await Promise.all(pools.splice(0).map((p) => p.stop())); });

function setup(): { kube: MemoryKube; pool: InformerPool } {
  const kube = new MemoryKube();
  const pool = new InformerPool(kube, { namespaces: [ns] });
  pools.push(pool);
  return { kube, pool };
}

/** Retries an assertion until it holds (events arrive asynchronously, later on a busy machine). */
async function eventually(assertion: () => void, timeoutMillis = 5_000): Promise<void> {
  const end = Date.now() + timeoutMillis;
  for (;;) {
    try {
      assertion();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
/** Lets whatever is already on its way arrive (for checks that nothing more happens). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));
const secret = (name: string, labels: Record<string, string>): { type: string; metadata: { name: string; namespace: string; labels: Record<string, string> }; data: Record<string, string> } =>
  ({ type: "Opaque", metadata: { name, namespace: ns, labels }, data: {} });

describe("shared stores and indexes", () => {
  it("one informer per resource and selector set, however many ask", () => {
    const { pool } = setup();
    const a = pool.store(secretsType, { labelSelector: "x=1" });
    expect(pool.store(secretsType, { labelSelector: "x=1" })).toBe(a);
    expect(pool.store(secretsType, { labelSelector: "x=2" })).not.toBe(a);
    expect(pool.store(gadgetType)).not.toBe(a);
  });

  it("an index follows adds, updates and deletes", async () => {
    const { kube, pool } = setup();
    const store = pool.store(secretsType);
    store.addIndex("team", (o) => (o.metadata.labels?.team !== undefined ? [o.metadata.labels.team] : []));
    await kube.applySecret(secret("s1", { team: "red" }));
    await pool.startAndSync();
    expect(store.byIndex("team", "red").map((o) => o.metadata.name)).toEqual(["s1"]);
    await kube.applySecret(secret("s2", { team: "red" }));
    await kube.applySecret(secret("s1", { team: "blue" }));
    await eventually(() => {
      expect(store.byIndex("team", "red").map((o) => o.metadata.name)).toEqual(["s2"]);
      expect(store.byIndex("team", "blue").map((o) => o.metadata.name)).toEqual(["s1"]);
    });
    await kube.deleteSecret({ namespace: ns, name: "s1" });
    await eventually(() => { expect(store.byIndex("team", "blue")).toEqual([]); });
  });

  it("a watch maps both the old and the new state of a changed object", async () => {
    const { kube, pool } = setup();
    const woken: string[] = [];
    wireWatch({ target: { secrets: {} }, map: (o: KubeObject) => [`${ns}/${o.metadata.labels?.owner ?? ""}`] },
      (t) => ("kind" in t ? pool.store(t.kind) : "secrets" in t ? pool.store(secretsType, t.secrets) : undefined), (key) => woken.push(key));
    await pool.startAndSync();
    await kube.applySecret(secret("s", { owner: "a" }));
    await eventually(() => { expect(woken).toEqual([`${ns}/a`]); });
    await kube.applySecret(secret("s", { owner: "b" }));
    await eventually(() => { expect(woken.slice(1).sort()).toEqual([`${ns}/a`, `${ns}/b`]); });
  });

  it("references: a referenced object's change wakes exactly its referrers, and a moved reference is followed", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType);
    const refs = new References<{ tls?: string }>([reference({ name: "tls", target: { secrets: {} }, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []), decode: (o) => ({ value: o }) })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    const gadget = (name: string, tls: string): Promise<unknown> => kube.createCustom(gadgetType, ns, { metadata: { name }, spec: { tls } });
    await gadget("web", "cert-a");
    await gadget("api", "cert-b");
    await pool.startAndSync();
    expect(self.byIndex(referrersIndex("tls"), `${ns}/cert-a`).map((o) => o.metadata.name)).toEqual(["web"]);

    await kube.applySecret(secret("cert-a", {}));
    await eventually(() => { expect(woken).toEqual([`${ns}/web`]); });

    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "web" }, { spec: { tls: "cert-b" } });
    await eventually(() => { expect(self.byIndex(referrersIndex("tls"), `${ns}/cert-b`).map((o) => o.metadata.name).sort()).toEqual(["api", "web"]); });
    woken.length = 0;
    await kube.applySecret(secret("cert-b", {}));
    await eventually(() => { expect(woken.sort()).toEqual([`${ns}/api`, `${ns}/web`]); });
    woken.length = 0;
    await kube.applySecret(secret("cert-a", { touched: "yes" }));
    await settle();
    expect(woken).toEqual([]);
  });

  it("references: a change that leaves the decoded view alone wakes no referrer", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType);
    // What the kind reads of the Secret: its `tier` label only.
    const refs = new References<{ tls?: string }>([reference({ name: "tls", target: { secrets: {} }, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []), decode: (o) => ({ value: o.metadata.labels?.tier }) })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "web" }, spec: { tls: "cert-v" } });
    await kube.applySecret(secret("cert-v", { tier: "gold" }));
    await pool.startAndSync();
    await settle();
    woken.length = 0; // what the first sync added
    await kube.applySecret(secret("cert-v", { tier: "gold", note: "annotated elsewhere" }));
    await settle();
    expect(woken).toEqual([]);
    await kube.applySecret(secret("cert-v", { tier: "silver", note: "annotated elsewhere" }));
    await eventually(() => { expect([...new Set(woken)]).toEqual([`${ns}/web`]); });
  });

  it("references: a change of the view wakes only the referrers it concerns (wakes); a deletion wakes them all", async () => {
    const { kube, pool } = setup();
    const self = pool.store<ManagedObject>(gadgetType);
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType);
    // Referrers whose status says "done" care only whether the Secret is ready (labelled tier), not which tier.
    const refs = new References<{ tls?: string }>([reference({
      name: "tls", target: { secrets: {} }, names: (spec: { tls?: string }) => (spec.tls !== undefined ? [spec.tls] : []),
      decode: (o) => (o.metadata.labels?.tier === undefined ? { notReady: "no tier" } : { value: o.metadata.labels.tier }),
      wakes: (referrer, before, after) => referrer.status?.done !== true || before.notReady !== after.notReady,
    })], storeFor);
    const woken: string[] = [];
    refs.wire(self, (raw) => raw as { tls?: string }, (key) => woken.push(key));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "busy" }, spec: { tls: "cert-w" } });
    await kube.createCustom(gadgetType, ns, { metadata: { name: "done" }, spec: { tls: "cert-w" } });
    await kube.patchCustomStatus(gadgetType, { namespace: ns, name: "done" }, { done: true });
    await kube.applySecret(secret("cert-w", { tier: "gold" }));
    await pool.startAndSync();
    await settle();
    woken.length = 0;
    await kube.applySecret(secret("cert-w", { tier: "silver" }));
    await eventually(() => { expect([...new Set(woken)]).toEqual([`${ns}/busy`]); });
    await settle();
    expect([...new Set(woken)]).toEqual([`${ns}/busy`]);
    woken.length = 0;
    await kube.applySecret(secret("cert-w", {}));
    await eventually(() => { expect([...new Set(woken)].sort()).toEqual([`${ns}/busy`, `${ns}/done`]); });
    woken.length = 0;
    await kube.deleteSecret({ namespace: ns, name: "cert-w" });
    await eventually(() => { expect([...new Set(woken)].sort()).toEqual([`${ns}/busy`, `${ns}/done`]); });
  });

  it("resolves references from the cache: found, not found, not ready; nothing is required while deleting", async () => {
    const { kube, pool } = setup();
    const storeFor = (): ReturnType<typeof pool.store> => pool.store(secretsType);
    const tls = reference<{ tls: string[] }, string>({
      name: "tls", target: { secrets: {} }, names: (spec) => spec.tls,
      decode: (o) => (o.metadata.labels?.ready === "no" ? { value: "pending", notReady: "not issued yet" } : { value: `issued:${o.metadata.name}` }),
      reasons: { notFound: "TLSSecretNotFound" },
    });
    const refs = new References<{ tls: string[] }>([tls], storeFor);
    await kube.applySecret(secret("good", {}));
    await kube.applySecret(secret("pending", { ready: "no" }));
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
