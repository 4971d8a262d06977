// LinodeAccounts: one client per token, the operator's own known as such, clients of tokens
// unused for the idle period closed and forgotten (a rotated-away token is not held forever),
// and an account is known by a hash of its token, never the token.
import { afterEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { LinodeClient } from "../../src/linode/index.ts";
import { LinodeAccounts, tokenId } from "../../src/resources/shared/credentials.ts";

const owner = {};
const client = (): LinodeClient => new LinodeClient({ token: "t", baseUrl: "http://127.0.0.1:9", registry: new Registry(), rateLimit: false });

describe("LinodeAccounts", () => {
  const made: LinodeClient[] = [];
  const closed: LinodeClient[] = [];
  let accounts: LinodeAccounts | undefined;
  const make = (idleReleaseMillis = 1_000): LinodeAccounts => {
    const operator = client();
    accounts = new LinodeAccounts({
      operator: { token: "operator-token", client: operator },
      clientFor: () => {
        const c = client();
        const close = c.close.bind(c);
        c.close = async () => { closed.push(c); await close(); };
        made.push(c);
        return c;
      },
      requireRef: () => false,
      idleReleaseMillis,
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
