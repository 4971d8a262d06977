// Several tokens' clients share one registry (one per account in the operator): each keeps its
// own rate-limit series, labelled by a hash of its token (never the token), so one account's
// remaining budget never overwrites another's.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LinodeClient, tokenId } from "../../src/linode/index.ts";
import { startTestEmulator } from "./helpers.ts";

describe("linode_api_ratelimit_remaining", () => {
  it("has one series per account, labelled by the token's hash", async () => {
    const emu = await startTestEmulator({ tokens: ["token-of-team-a", "token-of-team-b"], rateLimits: { default: { limit: 50, windowSeconds: 60 } } });
    const registry = new Registry();
    const a = new LinodeClient({ token: "token-of-team-a", baseUrl: emu.url, registry });
    const b = new LinodeClient({ token: "token-of-team-b", baseUrl: emu.url, registry });
    try {
      for (let i = 0; i < 3; i++) await a.nodeBalancers.list();
      await b.nodeBalancers.list();
      const values = (await registry.getSingleMetric("linode_api_ratelimit_remaining")?.get())?.values ?? [];
      const byAccount = Object.fromEntries(values.filter((v) => v.labels.group === "list").map((v) => [String(v.labels.account), v.value]));
      expect(Object.keys(byAccount).sort()).toEqual([tokenId("token-of-team-a"), tokenId("token-of-team-b")].sort());
      expect(byAccount[tokenId("token-of-team-a")]).toBeLessThan(byAccount[tokenId("token-of-team-b")] ?? 0);
      expect(await registry.metrics()).not.toMatch(/token-of-team/);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await emu.close();
    }
  });
});
