// What a cache of Secrets or ConfigMaps keeps (issue 41, 8): anyone who may create them where
// the operator watches can give them the label or type a cache selects by, so a cache keeps only
// what the operator owns or needs, with a bound. On the in-memory API, with the references the
// kinds declare (credentials, TLS, allow-list ConfigMaps) and the connection Secrets' cache:
// - by name: lists and watches ask for metadata only, in small pages; an object nothing names is
//   kept as its identity, version and finalizers; the content of a named one is read by name,
//   read again when it changes (waking its referrers with the new content), cut to a bound (its
//   referrer told why, with the kind's reason), and dropped once nothing names it;
// - owned: only Secrets a kind of the operator controls are kept, cut to what it writes; one
//   grown past that is replaced.
import { afterEach, describe, expect, it } from "vitest";
import { Informer, type InformerEvent } from "../../src/kube/informer.ts";
import { configMapsType, secretsType, type KubeObject, type ListOptions, type ListPage, type ObjectKey, type ResourceType, type SecretObject, type WatchHandle, type WatchQuery } from "../../src/kube/types.ts";
import { allowListConfigMapReference, desiredAllowList, ALLOW_LIST_MAX_BYTES } from "../../src/resources/managed-database/allow-list-from.ts";
import { tlsReference, TLS_MAX_BYTES } from "../../src/resources/node-balancer/tls.ts";
import { credentialsReference, CREDENTIALS_MAX_BYTES, CREDENTIALS_SECRETS } from "../../src/resources/shared/credentials.ts";
import { ConnectionSecrets, OWNED_SECRET_MAX_BYTES, ownedSecretSelectors } from "../../src/runtime/connection-secrets.ts";
import type { Managed, ManagedObject, Reference, Target } from "../../src/runtime/managed.ts";
import { IN_USE_FINALIZER, ReferenceProtection } from "../../src/runtime/protection.ts";
import { References } from "../../src/runtime/references.ts";
import { InformerPool, type SharedStore } from "../../src/runtime/stores.ts";
import { gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { eventually } from "../harness/eventually.ts";

const ns = "caches";

/** The in-memory API, recording how lists and watches ask and which objects are read by name. */
class SpyKube extends MemoryKube {
  readonly lists: (ListOptions & { plural: string })[] = [];
  readonly watches: { path: string; metadataOnly: boolean }[] = [];
  readonly reads: string[] = [];

  override list<T extends KubeObject>(t: ResourceType, opts: ListOptions = {}): Promise<ListPage<T>> {
    this.lists.push({ ...opts, plural: t.plural });
    return super.list<T>(t, opts);
  }

  override watch(path: string, query: WatchQuery, onEvent: (type: string, obj: unknown) => void, _onDone?: (err: unknown) => void, opts: { metadataOnly?: boolean } = {}): Promise<WatchHandle> {
    this.watches.push({ path, metadataOnly: opts.metadataOnly === true });
    return super.watch(path, query, onEvent);
  }

  override getSecret(key: ObjectKey): Promise<SecretObject> {
    this.reads.push(`secrets/${key.name}`);
    return super.getSecret(key);
  }

  override getCustom<T extends KubeObject>(t: ResourceType, key: ObjectKey): Promise<T> {
    this.reads.push(`${t.plural}/${key.name}`);
    return super.getCustom<T>(t, key);
  }
}

const pools: InformerPool[] = [];
const protections: ReferenceProtection[] = [];
afterEach(async () => {
  await Promise.all(protections.splice(0).map((p) => p.stop()));
  await Promise.all(pools.splice(0).map((p) => p.stop()));
});

function setup(): { kube: SpyKube; pool: InformerPool; storeFor: (t: Target) => SharedStore<KubeObject> } {
  const kube = new SpyKube();
  const pool = new InformerPool(kube, { namespaces: [ns] });
  pools.push(pool);
  const storeFor = (t: Target): SharedStore<KubeObject> => pool.store(t.type, t.selectors);
  return { kube, pool, storeFor };
}

const b64 = (v: string): string => Buffer.from(v).toString("base64");
const secret = (name: string, data: Record<string, string>, extra: { labels?: Record<string, string>; annotations?: Record<string, string>; type?: string; ownerReferences?: NonNullable<KubeObject["metadata"]["ownerReferences"]> } = {}): { type: string; metadata: { name: string; namespace: string } & typeof extra; data: Record<string, string> } => ({
  type: extra.type ?? "Opaque",
  metadata: { name, namespace: ns, ...(extra.labels !== undefined ? { labels: extra.labels } : {}), ...(extra.annotations !== undefined ? { annotations: extra.annotations } : {}), ...(extra.ownerReferences !== undefined ? { ownerReferences: extra.ownerReferences } : {}) },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const CREDENTIALS = { "linode.operator.dev/credentials": "true" };

/** A pass's view of a gadget whose spec is `spec` (what References.resolve reads). */
const managed = <Spec>(spec: Spec): Managed<Spec> => ({
  obj: { metadata: { name: "user", namespace: ns } }, key: { namespace: ns, name: "user" }, spec,
  externalId: undefined, createPending: undefined, policies: { deletion: "Delete", management: "Manage" }, refs: {}, actions: undefined as never,
});

/** Wires `ref` onto a gadget store, as a controller does; returns what its changes wake. */
function wired<Spec>(pool: InformerPool, storeFor: (t: Target) => SharedStore<KubeObject>, ref: Reference<Spec>, kube: MemoryKube): { refs: References<Spec>; woken: string[]; protection: ReferenceProtection } {
  const refs = new References<Spec>([ref], storeFor);
  const woken: string[] = [];
  const protection = new ReferenceProtection(kube);
  protections.push(protection);
  refs.wire(pool.store<ManagedObject>(gadgetType), (raw) => raw as Spec, (key) => woken.push(key), protection);
  return { refs, woken, protection };
}

describe("caches of Secrets and ConfigMaps", () => {
  it("must say what they keep: a selector alone is refused", () => {
    const { pool } = setup();
    expect(() => pool.store(secretsType)).toThrow(/must say what it keeps/);
    expect(() => pool.store(configMapsType, { labelSelector: "linode.operator.dev/allow-list=true" })).toThrow(/must say what it keeps/);
    expect(() => pool.store(secretsType, CREDENTIALS_SECRETS)).not.toThrow();
  });

  it("by name: listed and watched as metadata only, in small pages; an unnamed Secret is kept as its identity, version and finalizers", async () => {
    const { kube, pool, storeFor } = setup();
    const store = storeFor(credentialsReference().target);
    await kube.applySecret(secret("tenant", { token: "x".repeat(100_000) }, { labels: { ...CREDENTIALS, other: "y" }, annotations: { notes: "n".repeat(100_000) } }));
    await pool.startAndSync();
    expect(kube.lists.find((l) => l.plural === "secrets")).toMatchObject({ metadataOnly: true, limit: 20, labelSelector: "linode.operator.dev/credentials=true" });
    expect(kube.watches).toEqual([expect.objectContaining({ path: `/api/v1/namespaces/${ns}/secrets`, metadataOnly: true })]);
    const kept = store.get(ns, "tenant");
    expect(kept).toEqual({ metadata: { name: "tenant", namespace: ns, uid: expect.any(String) as string, resourceVersion: expect.any(String) as string } });
    expect(store.unreadable(kept as KubeObject)).toBe("it has not been read yet");
    expect(kube.reads).toEqual([]);
  });

  it("by name: a named token is read by name before the store has synced, read again when it changes (waking its referrers with it), and dropped once nothing names it", async () => {
    const { kube, pool, storeFor } = setup();
    const ref = credentialsReference<{ credentialsRef?: { name: string; key: string } }>();
    const { refs, woken } = wired(pool, storeFor, ref, kube);
    const store = storeFor(ref.target);
    await kube.applySecret(secret("team", { token: "t1" }, { labels: CREDENTIALS }));
    await kube.applySecret(secret("unused", { token: "u1" }, { labels: CREDENTIALS }));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec: { credentialsRef: { name: "team", key: "token" } } });
    await pool.startAndSync();
    // Read before the first pass could ask for it; the other one never.
    expect(kube.reads).toEqual(["secrets/team"]);
    const spec = { credentialsRef: { name: "team", key: "token" } };
    expect(ref.value(refs.resolve(managed(spec), false), "team")?.token).toBe("t1");
    expect(store.get(ns, "unused")?.data).toBeUndefined();

    woken.length = 0;
    await kube.applySecret(secret("team", { token: "t2" }, { labels: CREDENTIALS }));
    await eventually(() => { expect(woken).toContain(`${ns}/user`); });
    // Woken with the new token in hand.
    expect(ref.value(refs.resolve(managed(spec), false), "team")?.token).toBe("t2");
    expect(kube.reads).toEqual(["secrets/team", "secrets/team"]);

    await kube.mergePatchCustom(gadgetType, { namespace: ns, name: "user" }, { spec: { credentialsRef: { name: "unused", key: "token" } } });
    await eventually(() => { expect(store.get(ns, "unused")?.data).toEqual({ token: b64("u1") }); });
    // Named by nothing now: the cache has its metadata only.
    expect(store.get(ns, "team")?.data).toBeUndefined();
    expect(kube.reads).toEqual(["secrets/team", "secrets/team", "secrets/unused"]);
  });

  it("by name: the in-use finalizer is judged on what the cache keeps (metadata): put on the token Secret a resource names, taken off once none does", async () => {
    const { kube, pool, storeFor } = setup();
    const ref = credentialsReference<{ credentialsRef?: { name: string; key: string } }>();
    const { protection } = wired(pool, storeFor, ref, kube);
    await kube.applySecret(secret("team", { token: "t1" }, { labels: CREDENTIALS }));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec: { credentialsRef: { name: "team", key: "token" } } });
    await pool.startAndSync();
    protection.start();
    const finalizers = async (): Promise<string[]> => (await kube.getSecret({ namespace: ns, name: "team" })).metadata.finalizers ?? [];
    await eventually(() => { expect(storeFor(ref.target).get(ns, "team")?.metadata.finalizers).toEqual([IN_USE_FINALIZER]); });
    expect(await finalizers()).toEqual([IN_USE_FINALIZER]);
    await kube.deleteCustom(gadgetType, { namespace: ns, name: "user" });
    await eventually(() => { expect(storeFor(ref.target).get(ns, "team")?.metadata.finalizers ?? []).toEqual([]); });
    expect(await finalizers()).toEqual([]);
  });

  it("by name: a token Secret larger than the bound is not kept; its referrer is told why (CredentialsInvalid), and it is read again once it shrinks", async () => {
    const { kube, pool, storeFor } = setup();
    const ref = credentialsReference<{ credentialsRef?: { name: string; key: string } }>();
    const { refs, woken } = wired(pool, storeFor, ref, kube);
    const store = storeFor(ref.target);
    await kube.applySecret(secret("big", { token: "t", padding: "p".repeat(CREDENTIALS_MAX_BYTES) }, { labels: CREDENTIALS }));
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec: { credentialsRef: { name: "big", key: "token" } } });
    await pool.startAndSync();
    const spec = { credentialsRef: { name: "big", key: "token" } };
    expect(refs.resolve(managed(spec), false).unresolved).toEqual({
      reason: "CredentialsInvalid",
      message: expect.stringMatching(new RegExp(`^Secret big is not ready: its data is larger than ${String(CREDENTIALS_MAX_BYTES)} bytes \\(\\d+\\)`)) as unknown,
    });
    expect(store.get(ns, "big")?.data).toBeUndefined();
    woken.length = 0;
    await kube.applySecret(secret("big", { token: "t" }, { labels: CREDENTIALS }));
    await eventually(() => { expect(woken).toContain(`${ns}/user`); });
    const resolved = refs.resolve(managed(spec), false);
    expect(resolved.unresolved).toBeUndefined();
    expect(ref.value(resolved, "big")?.token).toBe("t");
  });

  it("by name: a TLS Secret keeps tls.crt and tls.key only; those over the bound are TLSSecretInvalid", async () => {
    const { kube, pool, storeFor } = setup();
    const { refs } = wired(pool, storeFor, tlsReference, kube);
    const store = storeFor(tlsReference.target);
    const tls = (name: string, crt: string, extra: Record<string, string> = {}): ReturnType<typeof secret> => secret(name, { "tls.crt": crt, "tls.key": "k", ...extra }, { type: "kubernetes.io/tls" });
    await kube.applySecret(tls("with-ca", "c", { "ca.crt": "a".repeat(500_000) }));
    await kube.applySecret(tls("huge", "c".repeat(TLS_MAX_BYTES)));
    const spec = { configs: [{ protocol: "https", tlsSecretRef: { name: "with-ca" } }, { protocol: "https", tlsSecretRef: { name: "huge" } }] };
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec });
    await pool.startAndSync();
    expect(store.get(ns, "with-ca")).toMatchObject({ type: "kubernetes.io/tls", data: { "tls.crt": b64("c"), "tls.key": b64("k") } });
    expect(store.get(ns, "with-ca")?.data).not.toHaveProperty("ca.crt");
    const r = refs.resolve(managed(spec as never), false);
    expect(tlsReference.get(r, "huge")?.notReady).toMatch(new RegExp(`^tls.crt and tls.key are larger than ${String(TLS_MAX_BYTES)} bytes`));
    expect(r.unresolved?.reason).toBe("TLSSecretInvalid");
  });

  it("by name: an allow-list ConfigMap over the bound is InvalidAllowListSource, saying so", async () => {
    const { kube, pool, storeFor } = setup();
    const { refs } = wired(pool, storeFor, allowListConfigMapReference, kube);
    await kube.createCustom(configMapsType, ns, { metadata: { name: "egress", labels: { "linode.operator.dev/allow-list": "true" } }, data: { addresses: `192.0.2.1 ${"#".repeat(ALLOW_LIST_MAX_BYTES)}` } });
    const spec = { allowList: [], allowEmpty: false, allowListFrom: [{ cidrs: { name: "egress", key: "addresses" } }] };
    await kube.createCustom(gadgetType, ns, { metadata: { name: "user" }, spec });
    await pool.startAndSync();
    expect(kube.reads).toEqual(["configmaps/egress"]);
    const r = refs.resolve(managed(spec as never), false);
    const result = desiredAllowList(spec, { nodes: undefined, configMap: (name) => allowListConfigMapReference.value(r, name) });
    expect(result).toMatchObject({ held: { reason: "InvalidAllowListSource", message: expect.stringContaining(`ConfigMap egress (spec.allowListFrom) cannot be read: its data is larger than ${String(ALLOW_LIST_MAX_BYTES)} bytes`) as unknown } });
  });

  it("owned: only Secrets a registered kind controls are kept, each as large as the operator writes it at most", async () => {
    const { kube, pool } = setup();
    const store = pool.store<SecretObject>(secretsType, ownedSecretSelectors);
    store.keepOwnedBy(gadgetType);
    const label = { "app.kubernetes.io/managed-by": "linode-operator" };
    const ours = [{ apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: "Gadget", name: "g", uid: "u1", controller: true }];
    const someoneElses = [{ apiVersion: "apps/v1", kind: "Deployment", name: "d", uid: "u2", controller: true }];
    await kube.applySecret(secret("labelled", { x: "y".repeat(100_000) }, { labels: label }));
    await kube.applySecret(secret("theirs", { x: "y" }, { labels: label, ownerReferences: someoneElses }));
    await kube.applySecret(secret("g-conn", { password: "p" }, { labels: label, annotations: { "linode.operator.dev/database-id": "7" }, ownerReferences: ours }));
    await kube.applySecret(secret("g-grown", { password: "p", junk: "j".repeat(OWNED_SECRET_MAX_BYTES) }, { labels: label, ownerReferences: ours }));
    await pool.startAndSync();
    expect(kube.lists.find((l) => l.plural === "secrets")).toMatchObject({ limit: 20 });
    expect(kube.lists.find((l) => l.plural === "secrets")?.metadataOnly).toBeUndefined();
    expect(store.list().map((s) => s.metadata.name).sort()).toEqual(["g-conn", "g-grown"]);
    const conn = store.get(ns, "g-conn");
    expect(conn).toMatchObject({ data: { password: b64("p") }, metadata: { labels: label, annotations: { "linode.operator.dev/database-id": "7" }, ownerReferences: ours } });
    expect(store.unreadable(conn as SecretObject)).toBeUndefined();
    const grown = store.get(ns, "g-grown");
    expect(grown?.data).toBeUndefined();
    expect(store.unreadable(grown as SecretObject)).toMatch(new RegExp(`larger than ${String(OWNED_SECRET_MAX_BYTES)} bytes`));

    // Its owner reference taken away: no longer the operator's, gone from the cache (a delete for its handlers).
    const events: [InformerEvent, string][] = [];
    store.onEvent((ev, obj) => events.push([ev, obj.metadata.name]));
    await kube.applySecret(secret("g-conn", { password: "p" }, { labels: label }));
    await eventually(() => { expect(events).toEqual([["delete", "g-conn"]]); });
    expect(store.get(ns, "g-conn")).toBeUndefined();
  });

  it("owned: a connection Secret grown past the bound is not trusted and is replaced with exactly what it should hold", async () => {
    const { kube, pool } = setup();
    const store = pool.store<SecretObject>(secretsType, ownedSecretSelectors);
    const publisher = new ConnectionSecrets(kube, store, gadgetType);
    const owner: KubeObject = { metadata: { name: "g", namespace: ns, uid: "u1" } };
    await pool.startAndSync();
    const ours = async (): Promise<SecretObject | undefined> => { const found = await publisher.find(owner, "g-conn"); return "ours" in found ? found.ours : undefined; };
    expect(await publisher.publish(owner, "g-conn", { data: { password: "p" } }, await ours())).toBe("written");
    await eventually(() => { expect(publisher.contentOf(store.get(ns, "g-conn"))?.data).toEqual({ password: "p" }); });
    expect(await publisher.publish(owner, "g-conn", { data: { password: "p" } }, await ours())).toBe("unchanged");

    // Someone adds to it (another field manager: an apply of ours would leave their key).
    const current = await kube.getSecret({ namespace: ns, name: "g-conn" });
    await kube.applySecret({ ...current, metadata: { ...current.metadata, namespace: ns }, data: { ...current.data, junk: b64("j".repeat(OWNED_SECRET_MAX_BYTES)) } });
    await eventually(() => { expect(store.unreadable(store.get(ns, "g-conn") as SecretObject)).toBeDefined(); });
    expect(publisher.contentOf(await ours())).toBeUndefined();
    const before = kube.writesTo("secrets").length;
    expect(await publisher.publish(owner, "g-conn", { data: { password: "p" } }, await ours())).toBe("written");
    expect(kube.writesTo("secrets").slice(before).map((w) => w.method)).toEqual(["delete", "create"]);
    expect(Object.keys((await kube.getSecret({ namespace: ns, name: "g-conn" })).data ?? {})).toEqual(["password"]);
  });
});

describe("a connection Secret the cache does not hold", () => {
  it("is read by name: ours is trusted as the cache would trust it, someone else's is a conflict, none is none", async () => {
    const { kube, pool } = setup();
    const store = pool.store<SecretObject>(secretsType, ownedSecretSelectors);
    const publisher = new ConnectionSecrets(kube, store, gadgetType);
    const owner: KubeObject = { metadata: { name: "g", namespace: ns, uid: "u1" } };
    const controlledBy = (uid: string) => [{ apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: "Gadget", name: "g", uid, controller: true }];
    // Outside the cache's selector (as one labelled to the shard its owner was on before is).
    await kube.applySecret(secret("moved", { password: "p" }, { labels: { elsewhere: "yes" }, ownerReferences: controlledBy("u1") }));
    await kube.applySecret(secret("grown", { password: "p", junk: "j".repeat(OWNED_SECRET_MAX_BYTES) }, { ownerReferences: controlledBy("u1") }));
    await kube.applySecret(secret("other", { password: "q" }, { ownerReferences: controlledBy("u9") }));
    await kube.applySecret(secret("users", { password: "r" }));
    await pool.startAndSync();
    expect(store.size).toBe(0);
    const moved = await publisher.find(owner, "moved");
    expect("ours" in moved && publisher.contentOf(moved.ours)?.data).toEqual({ password: "p" });
    // Its content as it should be: nothing to write but what differs (its labels: the cache's own).
    const before = kube.writesTo("secrets").length;
    expect(await publisher.publish(owner, "moved", { data: { password: "p" } }, "ours" in moved ? moved.ours : undefined)).toBe("written");
    expect(kube.writesTo("secrets").slice(before).map((w) => w.method)).toEqual(["apply"]);
    const grown = await publisher.find(owner, "grown");
    expect("ours" in grown && grown.ours !== undefined && publisher.contentOf(grown.ours)).toBeUndefined();
    expect(await publisher.find(owner, "other")).toEqual({ conflict: expect.stringContaining("it belongs to Gadget g") as unknown });
    expect(await publisher.find(owner, "users")).toEqual({ conflict: expect.stringContaining("the operator did not create it") as unknown });
    expect(await publisher.find(owner, "none")).toEqual({ ours: undefined });
  });

  it("a Secret whose controller reference carries the owner's uid under another kind is not trusted as ours (find answers none)", async () => {
    const { kube, pool } = setup();
    const store = pool.store<SecretObject>(secretsType, ownedSecretSelectors);
    const publisher = new ConnectionSecrets(kube, store, gadgetType);
    const owner: KubeObject = { metadata: { name: "g", namespace: ns, uid: "u1" } };
    // A tenant's forgery: the uid of the owner, the kind of something the operator does not run.
    await kube.applySecret(secret("forged", { password: "x".repeat(OWNED_SECRET_MAX_BYTES) }, { ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "g", uid: "u1", controller: true }] }));
    await pool.startAndSync();
    expect(await publisher.find(owner, "forged")).toEqual({ ours: undefined });
  });
});

describe("an informer's transform", () => {
  const source = (kube: MemoryKube): ConstructorParameters<typeof Informer>[1] => ({
    name: "secrets", watchPath: `/api/v1/namespaces/${ns}/secrets`,
    list: (token) => kube.list(secretsType, { namespace: ns, ...(token !== undefined ? { continueToken: token } : {}) }),
  });

  it("keeps what it returns; an object it stops keeping is deleted for the cache and its handlers; one it throws on is skipped and reported", async () => {
    const kube = new MemoryKube();
    const failures: string[] = [];
    const informer = new Informer<KubeObject>(kube, source(kube), {
      transform: (o) => {
        if (o.metadata.name === "bad") throw new Error("unexpected object");
        return o.metadata.labels?.keep === "yes" ? { metadata: { name: o.metadata.name, namespace: o.metadata.namespace ?? "", resourceVersion: o.metadata.resourceVersion ?? "" } } : undefined;
      },
      onUnexpectedError: (where) => failures.push(where),
    });
    const events: [InformerEvent, string][] = [];
    informer.onEvent((ev, o) => events.push([ev, o.metadata.name]));
    await kube.applySecret(secret("a", { k: "v" }, { labels: { keep: "yes" } }));
    await kube.applySecret(secret("b", { k: "v" }, { labels: { keep: "no" } }));
    await kube.applySecret(secret("bad", { k: "v" }, { labels: { keep: "yes" } }));
    informer.start();
    await informer.synced;
    try {
      expect(informer.list()).toEqual([{ metadata: { name: "a", namespace: ns, resourceVersion: expect.any(String) as string } }]);
      expect(failures).toEqual(["informer-transform"]);
      await kube.applySecret(secret("b", { k: "v" }, { labels: { keep: "yes" } }));
      await kube.applySecret(secret("a", { k: "v" }, { labels: { keep: "no" } }));
      await eventually(() => { expect(events).toEqual([["add", "a"], ["add", "b"], ["delete", "a"]]); });
      // A deletion of what was never kept is no news: events come in order, so b's deletion, once
      // seen, proves that a's came and went without one.
      await kube.deleteSecret({ namespace: ns, name: "a" });
      await kube.deleteSecret({ namespace: ns, name: "b" });
      await eventually(() => { expect(events.at(-1)).toEqual(["delete", "b"]); });
      expect(events).toEqual([["add", "a"], ["add", "b"], ["delete", "a"], ["delete", "b"]]);
    } finally {
      await informer.stop();
    }
  });
});
