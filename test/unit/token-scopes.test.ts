// The token-scope table: every route the client can call has its scope, the emulator (which
// follows the API reference) asks the same, and each kind's scopes are the highest its API areas
// need. Then the verdicts doctor and the start-up check give for real answers of the emulator.
import { readFileSync } from "node:fs";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildRouter, startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { assessToken, tokenChecks, verdictProblem } from "../../src/doctor/token.ts";
import { ConnectionPoolsApi } from "../../src/linode/connection-pools.ts";
import { DatabasesApi } from "../../src/linode/databases.ts";
import { FirewallsApi } from "../../src/linode/firewalls.ts";
import type { RequestSpec, Transport } from "../../src/linode/http.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { LocksApi } from "../../src/linode/locks.ts";
import { NodeBalancersApi } from "../../src/linode/nodebalancers.ts";
import { ProfileApi } from "../../src/linode/profile.ts";
import { VpcsApi } from "../../src/linode/vpcs.ts";
import { grants, parseScopes, routeKey, routeScopes, scopeText } from "../../src/linode/scopes.ts";
import { kinds } from "../../src/resources/index.ts";
import { kindScopes, neededScopes } from "../../src/resources/token-scopes.ts";

/** Calls every method of an API object with placeholder arguments, recording the routes asked for. */
async function routesOf(make: (t: Transport) => object): Promise<Set<string>> {
  const seen = new Set<string>();
  const transport: Transport = {
    request: <S extends import("zod").ZodType>(spec: RequestSpec<S>) => {
      seen.add(`${spec.method} ${spec.route}`);
      return Promise.resolve({ data: [], page: 1, pages: 1, results: 0 } as never);
    },
    close: () => Promise.resolve(),
  };
  const visit = async (api: object): Promise<void> => {
    for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(api))) {
      const fn = (api as Record<string, unknown>)[name];
      if (name === "constructor" || typeof fn !== "function") continue;
      const args = [1, 2, 3, {}].slice(0, Math.max(0, fn.length));
      try {
        const out: unknown = (fn as (...a: unknown[]) => unknown).apply(api, args.map((a, i) => (i === fn.length - 1 && fn.length > 1 ? {} : a)));
        await out;
      } catch { /* a placeholder argument refused before any call: the route was recorded or is not reached */ }
    }
    for (const v of Object.values(api) as unknown[]) if (v !== null && typeof v === "object" && v !== transport && !(v instanceof Set)) await visit(v);
  };
  await visit(make(transport));
  return seen;
}

describe("OAuth scopes", () => {
  it("parses the X-OAuth-Scopes header and grants read_only with read_write", () => {
    expect(parseScopes("*")).toBe("*");
    const held = parseScopes("databases:read_write nodebalancers:read_only,firewall:read_only junk");
    expect(held).toEqual([{ area: "databases", level: "read_write" }, { area: "nodebalancers", level: "read_only" }, { area: "firewall", level: "read_only" }]);
    expect(grants(held, { area: "databases", level: "read_only" })).toBe(true);
    expect(grants(held, { area: "nodebalancers", level: "read_write" })).toBe(false);
    expect(grants(held, { area: "linodes", level: "read_only" })).toBe(false);
    expect(grants("*", { area: "anything", level: "read_write" })).toBe(true);
  });

  it("knows the scope of every route the client calls, as the emulator asks it", async () => {
    const called = await routesOf((t) => ({ d: new DatabasesApi(t), c: new ConnectionPoolsApi(t), n: new NodeBalancersApi(t), f: new FirewallsApi(t), l: new LocksApi(t), p: new ProfileApi(t), v: new VpcsApi(t) }));
    expect(called.size).toBeGreaterThan(40);
    const keys = [...called].map((c) => { const [m, r] = c.split(" "); return routeKey(m ?? "", r ?? ""); });
    expect(keys.filter((k) => !(k in routeScopes))).toEqual([]);
    // And nothing in the table that the client no longer calls.
    expect(Object.keys(routeScopes).filter((k) => !keys.includes(k))).toEqual([]);
    const router = buildRouter();
    for (const [key, scope] of Object.entries(routeScopes)) {
      const [method, template] = key.split(" ") as [string, string];
      const path = template.replace("{engine}", "mysql").replace("{engineId}", "mysql%2F8").replace("{typeId}", "g6-nanode-1").replace(/\{\w+\}/g, "7");
      const match = router.match(method, path);
      expect(match.kind, key).toBe("found");
      if (match.kind !== "found") continue;
      expect(match.route.area === null ? null : `${match.route.area}:${match.route.level}`, key).toBe(scope === null ? null : scopeText(scope));
    }
  });

  it("gives every kind its scopes, each the highest its API area needs", () => {
    expect(Object.keys(kindScopes).sort()).toEqual(kinds.map((k) => k.definition.kind).sort());
    const highest = new Map<string, string>();
    for (const s of Object.values(routeScopes)) if (s !== null && highest.get(s.area) !== "read_write") highest.set(s.area, s.level);
    for (const needs of Object.values(kindScopes)) for (const n of needs) expect(highest.get(n.scope.area), scopeText(n.scope)).toBe(n.scope.level);
    const all = neededScopes(Object.keys(kindScopes));
    expect(all.filter((n) => n.feature === undefined).map((n) => scopeText(n.scope)).sort()).toEqual(["databases:read_write", "nodebalancers:read_write"]);
    expect(all.filter((n) => n.feature !== undefined).map((n) => `${scopeText(n.scope)} ${n.feature ?? ""}`)).toEqual(["firewall:read_write spec.firewallId", "vpc:read_only spec.vpcs", "account:read_write spec.deletionProtection"]);
  });

  it("docs/token-scopes.md names exactly the scopes the kinds need, each in its own row", () => {
    const doc = readFileSync(new URL("../../docs/token-scopes.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\| `([a-z_]+:read_(?:only|write))` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual([...new Set(Object.values(kindScopes).flat().map((n) => scopeText(n.scope)))].sort());
  });
});

describe("token verdicts from the emulator's answers", () => {
  let emu: RunningEmulator;
  const clients: LinodeClient[] = [];
  const as = (token: string, url?: string): LinodeClient => {
    const c = new LinodeClient({ token, baseUrl: url ?? emu.url, registry: new Registry(), rateLimit: false, retry: { maxAttempts: 1 } });
    clients.push(c);
    return c;
  };
  const everyKind = Object.keys(kindScopes);
  beforeAll(async () => {
    emu = await startEmulator({
      rateLimits: false,
      config: {
        users: [{ username: "limited", restricted: true }],
        tokens: [
          { token: "all-scopes", scopes: "*" },
          { token: "db-only", scopes: "databases:read_write" },
          { token: "no-firewall", scopes: "databases:read_write nodebalancers:read_write" },
          { token: "restricted", scopes: "*", username: "limited" },
        ],
      },
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await emu.close();
  });

  it("a token with every scope works", async () => {
    const v = await assessToken(as("all-scopes"), everyKind);
    expect(v).toMatchObject({ kind: "usable", missingFeatures: [] });
    expect(verdictProblem(v, emu.url)).toBeUndefined();
    expect(tokenChecks(v, emu.url).map((c) => c.status)).toEqual(["OK", "OK", "OK"]);
  });

  it("an unknown token is invalid, and says nothing of it", async () => {
    const v = await assessToken(as("not-a-token-at-all"), everyKind);
    expect(v).toEqual({ kind: "invalid", detail: "Invalid Token" });
    const problem = verdictProblem(v, emu.url) ?? "";
    expect(problem).toMatch(/refused the operator's token \(Invalid Token\).*unknown, expired or revoked/);
    expect(problem).not.toContain("not-a-token-at-all");
    expect(tokenChecks(v, emu.url).map((c) => [c.check, c.status])).toEqual([["Linode API", "OK"], ["Linode token", "FAIL"]]);
  });

  it("a token without a scope a kind needs is under-scoped, naming the scope, the kinds and the fix", async () => {
    const v = await assessToken(as("db-only"), everyKind);
    expect(v.kind).toBe("underScoped");
    expect(verdictProblem(v, emu.url)).toMatch(/lacks the scope nodebalancers:read_write \(needed by NodeBalancer\); create a token with nodebalancers:read_write/);
    const scopes = tokenChecks(v, emu.url).find((c) => c.check === "Linode token scopes");
    expect(scopes).toMatchObject({ status: "FAIL", message: expect.stringContaining('has "databases:read_write", missing nodebalancers:read_write') as unknown, fix: expect.stringContaining("nodebalancers:read_write (and firewall:read_write for spec.firewallId") as unknown });
    // Only the kinds installed count: with the database kinds alone it is enough.
    expect((await assessToken(as("db-only"), ["ManagedDatabase", "DatabaseSnapshot"])).kind).toBe("usable");
  });

  it("a scope only a feature needs is a warning, not a failure", async () => {
    const v = await assessToken(as("no-firewall"), everyKind);
    expect(v.kind).toBe("usable");
    expect(verdictProblem(v, emu.url)).toBeUndefined();
    expect(tokenChecks(v, emu.url).filter((c) => c.status !== "OK")).toEqual([
      expect.objectContaining({ status: "WARN", check: "Linode token scopes (spec.firewallId)" }),
      expect.objectContaining({ status: "WARN", check: "Linode token scopes (spec.vpcs)" }),
      expect.objectContaining({ status: "WARN", check: "Linode token scopes (spec.deletionProtection)" }),
    ]);
  });

  it("a restricted user is a warning", async () => {
    const v = await assessToken(as("restricted"), everyKind);
    expect(tokenChecks(v, emu.url).filter((c) => c.status !== "OK")).toEqual([expect.objectContaining({ status: "WARN", check: "Linode user", message: expect.stringContaining("restricted") as unknown })]);
  });

  it("an API that does not answer is unreachable, not a bad token", async () => {
    const v = await assessToken(as("all-scopes", "http://127.0.0.1:9/v4"), everyKind);
    expect(v.kind).toBe("unreachable");
    expect(verdictProblem(v, "http://127.0.0.1:9/v4")).toMatch(/could not be reached .*a network problem, not the token/);
    expect(tokenChecks(v, "http://127.0.0.1:9/v4")).toEqual([expect.objectContaining({ check: "Linode API", status: "FAIL" })]);
  });
});
