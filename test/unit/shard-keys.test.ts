// --shard-by account: the key an object is placed by is its Linode account (its token's id),
// read alike by the sharder and every shard from the object and the Secret it names.
import { describe, expect, it } from "vitest";
import { tokenId } from "../../src/linode/token-id.ts";
import { managedDatabaseType } from "../../src/resources/managed-database/index.ts";
import { AccountShardKeys, OPERATOR_KEY } from "../../src/resources/shard-keys.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const labelled = { "linode.operator.dev/credentials": "true" };
const b64 = (s: string): string => Buffer.from(s).toString("base64");

function world() {
  const kube = new MemoryKube();
  let now = 0;
  const keys = new AccountShardKeys(kube, { operatorTokenId: tokenId("operator-token"), ttlMillis: 30_000, now: () => now });
  const secret = (namespace: string, name: string, token: string, labels: Record<string, string> = labelled) =>
    kube.applySecret({ metadata: { namespace, name, labels }, data: { token: b64(token) } });
  const db = (namespace: string, name: string, spec: Record<string, unknown> = {}) =>
    kube.createCustom(managedDatabaseType, namespace, { metadata: { name }, spec: { engine: "mysql", ...spec } });
  const obj = (namespace: string, spec: Record<string, unknown>, status?: Record<string, unknown>) =>
    ({ metadata: { namespace, name: "x" }, spec, ...(status !== undefined ? { status } : {}) });
  return { kube, keys, secret, db, obj, later: (ms: number) => { now += ms; } };
}

describe("AccountShardKeys", () => {
  it("one token in two namespaces is one key; another token another; the operator's own token, named or not, is the operator's", async () => {
    const w = world();
    await w.secret("team-a", "linode", "tok-1");
    await w.secret("team-b", "other-name", "tok-1");
    await w.secret("team-c", "linode", "tok-2");
    await w.secret("team-d", "linode", "operator-token");
    const ref = (name: string) => ({ credentialsRef: { name } });
    const a = await w.keys.keyOf(w.obj("team-a", ref("linode")));
    expect(a).toBe(tokenId("tok-1"));
    expect(await w.keys.keyOf(w.obj("team-b", ref("other-name")))).toBe(a);
    expect(await w.keys.keyOf(w.obj("team-c", ref("linode")))).toBe(tokenId("tok-2"));
    expect(await w.keys.keyOf(w.obj("team-d", ref("linode")))).toBe(OPERATOR_KEY);
    expect(await w.keys.keyOf(w.obj("team-e", {}))).toBe(OPERATOR_KEY);
  });

  it("a Secret not labelled as credentials is never read, and one missing or without the key is known by its name", async () => {
    const w = world();
    await w.secret("team-a", "plain", "tok-1", {});
    expect(await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: "plain" } }))).toBe("secret:team-a/plain/token");
    expect(await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: "missing" } }))).toBe("secret:team-a/missing/token");
    await w.secret("team-a", "keyed", "tok-1");
    expect(await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: "keyed", key: "other" } }))).toBe("secret:team-a/keyed/other");
  });

  it("a snapshot (or a pool) without a token of its own is its database's account; status's record stands for a removed credentialsRef", async () => {
    const w = world();
    await w.secret("team-a", "linode", "tok-1");
    await w.db("team-a", "orders", { credentialsRef: { name: "linode" } });
    const snapshot = { metadata: { namespace: "team-a", name: "snap" }, spec: { databaseRef: { name: "orders" } } };
    expect(await w.keys.keyOf(snapshot)).toBe(tokenId("tok-1"));
    // A database not there (yet): the operator's, as it would act.
    expect(await w.keys.keyOf({ ...snapshot, spec: { databaseRef: { name: "gone" } } })).toBe(OPERATOR_KEY);
    expect(await w.keys.keyOf(w.obj("team-a", {}, { account: { id: tokenId("tok-1"), credentialsRef: { name: "linode", key: "token" } } }))).toBe(tokenId("tok-1"));
    expect(await w.keys.keyOf(w.obj("team-a", {}, { account: { id: tokenId("operator-token") } }))).toBe(OPERATOR_KEY);
  });

  it("a token rotated into another account is a new key once its id is read again (30 s on)", async () => {
    const w = world();
    await w.secret("team-a", "linode", "tok-1");
    const o = w.obj("team-a", { credentialsRef: { name: "linode" } });
    expect(await w.keys.keyOf(o)).toBe(tokenId("tok-1"));
    await w.secret("team-a", "linode", "tok-9");
    expect(await w.keys.keyOf(o)).toBe(tokenId("tok-1"));
    w.later(30_001);
    expect(await w.keys.keyOf(o)).toBe(tokenId("tok-9"));
  });

  it("what a namespace names is held no longer than the time-to-live after its last read (a flood of names does not stay)", async () => {
    const w = world();
    for (let i = 0; i < 300; i++) await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: `s-${String(i)}` } }));
    w.later(30_001);
    await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: "s-0" } }));
    w.later(30_001);
    await w.keys.keyOf(w.obj("team-a", { credentialsRef: { name: "s-1" } }));
    expect(w.keys.size).toBeLessThanOrEqual(2);
  });
});
