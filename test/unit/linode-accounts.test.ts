// LinodeAccounts: one client per token, the operator's own known as such, clients of tokens no
// object records closed and forgotten a while after their last use (a rotated-away token is not
// held until a restart), never one with a call in flight, the maps their parts kept uncounted
// with them; and an account is known by a hash of its token, never the token.
import { afterEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { LinodeClient } from "../../src/linode/index.ts";
import { CacheEntries } from "../../src/metrics/cache-entries.ts";
import { accountsRecordedBy, LinodeAccounts, tokenId } from "../../src/resources/shared/credentials.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";

const owner = {};
const registry = new Registry();
const client = (token = "t"): LinodeClient => new LinodeClient({ token, baseUrl: "http://127.0.0.1:9", registry, rateLimit: false });
const recording = (status: Record<string, unknown>): ManagedObject => ({ apiVersion: "v1", kind: "X", metadata: { name: "x", namespace: "ns" }, status });

describe("LinodeAccounts", () => {
  const made: LinodeClient[] = [];
  const closed: LinodeClient[] = [];
  let accounts: LinodeAccounts | undefined;
  const entries = new CacheEntries();
  const make = (idleReleaseMillis = 1_000, unusedReleaseMillis = 60_000): LinodeAccounts => {
    const operator = client();
    accounts = new LinodeAccounts({
      operator: { token: "operator-token", client: operator },
      clientFor: (token) => {
        const c = client(token);
        const close = c.close.bind(c);
        c.close = async () => { closed.push(c); await close(); };
        made.push(c);
        return c;
      },
      requireRef: () => false,
      idleReleaseMillis,
      unusedReleaseMillis,
      entries,
    });
    return accounts;
  };
  afterEach(async () => { await accounts?.close(); made.length = 0; closed.length = 0; });

  it("one client per token; the operator's token is the operator's account and makes no client", () => {
    const a = make();
    expect(a.forToken("operator-token")).toBe(a.operator);
    expect(a.operator?.operator).toBe(true);
    const team = a.forToken("team-token");
    expect(a.forToken("team-token")).toBe(team);
    expect(team.operator).toBe(false);
    expect(made).toHaveLength(1);
    expect(a.held).toBe(1);
  });

  it("an account is known by a hash of its token, never the token", () => {
    const a = make();
    const team = a.forToken("team-secret-token");
    expect(team.id).toBe(tokenId("team-secret-token"));
    expect(team.id).not.toContain("team-secret-token");
    expect(team.id).not.toBe(a.forToken("other-token").id);
  });

  it("releases the clients of tokens unused for the idle period, and their caches with them; the rest stay", async () => {
    const a = make(1_000);
    const old = a.forToken("rotated-away");
    const cache = old.part(owner, () => ({ built: Date.now() }));
    const t0 = Date.now();
    old.lastUsed = t0 - 5_000;
    const fresh = a.forToken("in-use");
    await a.releaseIdle(t0);
    expect(closed).toEqual([old.linode]);
    expect(a.held).toBe(1);
    expect(a.forToken("in-use")).toBe(fresh);
    // Needed again: a new client and new caches, not the closed ones.
    const again = a.forToken("rotated-away");
    expect(again).not.toBe(old);
    expect(again.linode).not.toBe(old.linode);
    expect(again.part(owner, () => ({ built: -1 }))).not.toBe(cache);
  });

  it("never releases the operator's own client (its owner closes it)", async () => {
    const a = make(1);
    const op = a.operator;
    if (op === undefined) throw new Error("no operator account");
    op.lastUsed = 0;
    await a.releaseIdle(Date.now() + 60_000);
    expect(a.forToken("operator-token")).toBe(op);
    expect(closed).toHaveLength(0);
  });
});

describe("LinodeAccounts: what objects record, and calls in flight", () => {
  const closed: string[] = [];
  let accounts: LinodeAccounts | undefined;
  const entries = new CacheEntries();
  /** The records objects hold now, as a kind's cache would give them. */
  let records: ManagedObject[] = [];
  const make = (): LinodeAccounts => {
    accounts = new LinodeAccounts({
      clientFor: (token) => {
        const c = client(token);
        const close = c.close.bind(c);
        c.close = async () => { closed.push(token); await close(); };
        return c;
      },
      requireRef: () => false,
      unusedReleaseMillis: 1_000,
      idleReleaseMillis: 10_000,
      entries,
    });
    accounts.usedBy(() => accountsRecordedBy(records));
    return accounts;
  };
  afterEach(async () => { await accounts?.close(); closed.length = 0; records = []; });

  it("a rotated-away token is released once no object records it and it was not used for the grace; the one objects record is kept", async () => {
    const a = make();
    const old = a.forToken("team-token-1");
    const fresh = a.forToken("team-token-2");
    const pending = a.forToken("team-token-3");
    records = [recording({ account: { id: fresh.id } }), recording({ createPending: { at: "2024-01-01T00:00:00Z", account: pending.id } })];
    const t0 = Date.now();
    await a.releaseIdle(t0 + 500);
    expect(closed).toEqual([]);
    await a.releaseIdle(t0 + 2_000);
    expect(closed).toEqual(["team-token-1"]);
    expect(a.holds(old.id)).toBe(false);
    expect(a.holds(fresh.id) && a.holds(pending.id)).toBe(true);
    // Recorded, but unused past the idle period (the objects cannot act with it): released too.
    await a.releaseIdle(t0 + 20_000);
    expect(closed.sort()).toEqual(["team-token-1", "team-token-2", "team-token-3"]);
    expect(a.held).toBe(0);
  });

  it("never releases a client with a call in flight (waiting for the budget included), whoever made it", async () => {
    const a = make();
    const busy = a.forToken("busy-token");
    let inFlight = 1;
    Object.defineProperty(busy.linode, "inFlight", { get: () => inFlight });
    await a.releaseIdle(Date.now() + 60_000);
    expect(closed).toEqual([]);
    inFlight = 0;
    await a.releaseIdle(Date.now() + 60_000);
    expect(closed).toEqual(["busy-token"]);
  });

  it("a released account's parts, the maps they kept and its rate-limit series go with it", async () => {
    const a = make();
    const team = a.forToken("series-token");
    const cache = team.part(owner, () => new Map([[1, "x"], [2, "y"]]));
    team.track("test.cache", () => cache.size);
    team.linode.metrics.rateLimitRemaining.set({ account: team.id, group: "list" }, 5);
    expect(entries.sizes().get("test.cache")).toBe(2);
    expect(entries.sizes().get("linode.accounts")).toBe(1);
    await a.releaseIdle(Date.now() + 60_000);
    expect(entries.sizes().get("test.cache")).toBe(0);
    expect(entries.sizes().get("linode.accounts")).toBe(0);
    const series = (await registry.getSingleMetric("linode_api_ratelimit_remaining")?.get())?.values ?? [];
    expect(series.filter((v) => v.labels.account === team.id)).toEqual([]);
  });
});
