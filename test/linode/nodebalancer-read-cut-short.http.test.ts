// A NodeBalancer read the call budget cuts short, against the emulator over HTTP with the
// client's own paginated budget: the configs list and a nodes list go, the next nodes list is
// held back (the pass would be deferred); the next read goes on from there and reads no list twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter, type NodeBalancer } from "../../src/linode/index.ts";
import { ConfigReader } from "../../src/resources/node-balancer/configs.ts";
import { label, makeClient, metricValue, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let admin: ReturnType<typeof makeClient>;
let nb: NodeBalancer;

beforeAll(async () => {
  emu = await startTestEmulator();
  admin = makeClient(emu);
  const node = (n: number) => ({ address: `192.168.210.${String(n)}:80`, label: `web-${String(n)}`, weight: 50, mode: "accept" as const });
  const made = await admin.client.nodeBalancers.create({
    region: "us-east", label: label("cut-short"),
    configs: [
      { port: 80, protocol: "http", nodes: [node(10)] },
      { port: 81, protocol: "http", nodes: [node(11)] },
      { port: 82, protocol: "http", nodes: [node(12)] },
    ],
  });
  nb = await admin.client.nodeBalancers.get(made.id);
});

afterAll(async () => {
  await admin.client.close();
  await emu.close();
});

describe("a NodeBalancer read cut short by the call budget", () => {
  it("goes on where it stopped: the configs list and the nodes lists read before are not read again", async () => {
    // The limiter's clock is the test's: the paginated budget comes back only when the test moves it on.
    // Four a minute, of which one object's lists take three (one is left to the sweeps).
    let now = Date.now();
    const tc = makeClient(emu, { rateLimit: new RateLimiter({ listLimitPerMinute: 4, now: () => now }), retry: { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 0 } });
    const lists = async (): Promise<{ configs: number; nodes: number }> => ({
      configs: await metricValue(tc.registry, "linode_api_requests_total", { route: "/nodebalancers/{nodeBalancerId}/configs", method: "GET" }),
      nodes: await metricValue(tc.registry, "linode_api_requests_total", { route: "/nodebalancers/{nodeBalancerId}/configs/{configId}/nodes", method: "GET" }),
    });
    try {
      const reader = new ConfigReader(tc.client, 0);
      const opts = { healthMaxAgeMillis: 0, firewallsNow: false };
      await expect(reader.read(nb, AbortSignal.timeout(10_000), opts)).rejects.toThrow();
      const cut = await lists();
      // Held back before all three configs' nodes were read.
      expect(cut.configs).toBe(1);
      expect(cut.nodes).toBeGreaterThanOrEqual(1);
      expect(cut.nodes).toBeLessThan(3);
      now += 61_000;
      const read = await reader.read(nb, AbortSignal.timeout(10_000), opts);
      expect(read.configs.map((c) => c.nodes.map((n) => n.label))).toEqual([["web-10"], ["web-11"], ["web-12"]]);
      // Each list once in all: the configs list not again, each config's nodes once.
      expect(await lists()).toEqual({ configs: 1, nodes: 3 });
    } finally {
      await tc.client.close();
    }
  });
});
