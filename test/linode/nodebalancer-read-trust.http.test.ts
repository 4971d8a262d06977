// Whether a NodeBalancer read is trusted (made after `updated`'s second ended, so a later change
// would move `updated`) goes by the API's clock, the configs list's Date header, against the
// emulator over HTTP: its clock stands still or jumps while this process's runs on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeBalancer } from "../../src/linode/index.ts";
import { ConfigReader } from "../../src/resources/node-balancer/configs.ts";
import { label, makeClient, metricValue, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let admin: ReturnType<typeof makeClient>;

beforeAll(async () => {
  emu = await startTestEmulator();
  admin = makeClient(emu);
});

afterAll(async () => {
  await admin.client.close();
  await emu.close();
});

describe("a NodeBalancer read's trust", () => {
  it("a read the API served in `updated`'s second is not trusted however late this process's clock says it is; two seconds on by the API's, it is", async () => {
    const configsLists = (): Promise<number> => metricValue(admin.registry, "linode_api_requests_total", { route: "/nodebalancers/{nodeBalancerId}/configs", method: "GET" });
    emu.setTimeScale(0);
    try {
      const made = await admin.client.nodeBalancers.create({ region: "us-east", label: label("trust"), configs: [{ port: 80, protocol: "http", nodes: [{ address: "192.168.211.10:80", label: "web-10", weight: 50, mode: "accept" }] }] });
      const nb: NodeBalancer = await admin.client.nodeBalancers.get(made.id);
      const reader = new ConfigReader(admin.client, 0);
      const opts = { healthMaxAgeMillis: 60_000, firewallsNow: false };
      // Seconds pass here, none at the API: by this process's clock the read is well after `updated`.
      await new Promise((r) => setTimeout(r, 3_100));
      const before = await configsLists();
      expect((await reader.read(nb, AbortSignal.timeout(10_000), opts)).updated).toBeUndefined();
      // Not trusted: the next look reads again, though the health counts are young.
      await reader.read(nb, AbortSignal.timeout(10_000), opts);
      expect(await configsLists()).toBe(before + 2);
      emu.advance(2);
      expect((await reader.read(nb, AbortSignal.timeout(10_000), opts)).updated).toBe(nb.updated);
      // Trusted: the next look within the health window reads nothing.
      await reader.read(nb, AbortSignal.timeout(10_000), opts);
      expect(await configsLists()).toBe(before + 3);
    } finally {
      emu.setTimeScale(1);
    }
  });
});
