/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// The API's rate-limit classes over HTTP: the general window, paginated GETs (S176: 200/min)
// and /stats (50/min), each counted per token on its own.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildRouter, type RunningEmulator } from "../../src/emulator/index.ts";
import { client, start, TOKEN, type ApiResponse } from "./helpers.ts";

const limitOf = (res: ApiResponse) => ({ status: res.status, limit: res.headers.get("x-ratelimit-limit"), remaining: res.headers.get("x-ratelimit-remaining") });

describe("rate-limit classes", () => {
  let emu: RunningEmulator;
  let nb: number;
  // The windows are on the wall clock (Date, the one thing faked here): the tests move it.
  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    emu = await start({ tokens: [TOKEN, "other"] });
    const created = await client(emu).post("/nodebalancers", { region: "us-east", label: "classes" });
    nb = created.body.id as number;
  });
  beforeEach(async () => { await client(emu).admin("PUT", "/rate-limits", {}); });
  afterAll(async () => { await emu.close(); vi.useRealTimers(); });

  it("defaults to the documented classes, lists reporting the general window as recorded", async () => {
    const api = client(emu);
    const config = (await api.admin("GET", "/rate-limits")).body;
    expect(config.default).toEqual({ limit: 1840, windowSeconds: 60 });
    expect(config.paginated).toEqual({ limit: 200, windowSeconds: 60, headers: "general" });
    // Recorded: 1840 on a list (GET .../configs/{id}/nodes, GET /databases/instances) and on a single read; 50 on stats.
    expect(limitOf(await api.get(`/nodebalancers/${nb}/configs`))).toEqual({ status: 200, limit: "1840", remaining: "1839" });
    expect(limitOf(await api.get(`/nodebalancers/${nb}`))).toEqual({ status: 200, limit: "1840", remaining: "1838" });
    expect(limitOf(await api.get(`/nodebalancers/${nb}/stats`))).toMatchObject({ limit: "50", remaining: "49" });
  });

  it("refuses the 201st list of a minute with the paginated class's headers, while single reads go on", async () => {
    const api = client(emu);
    for (let i = 0; i < 200; i++) expect((await api.get(i % 2 === 0 ? "/nodebalancers" : `/nodebalancers/${nb}/configs`)).status).toBe(200);
    const refused = await api.get("/databases/instances");
    expect(limitOf(refused)).toEqual({ status: 429, limit: "200", remaining: "0" });
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // The general window counted every list (the conservative guess): 1840 - 200 left, then this read.
    expect(limitOf(await api.get(`/nodebalancers/${nb}`))).toEqual({ status: 200, limit: "1840", remaining: "1639" });
    expect(limitOf(await api.get(`/nodebalancers/${nb}/stats`))).toMatchObject({ limit: "50", remaining: "49" });
    // Another token's lists are its own.
    expect(limitOf(await client(emu, "other").get("/nodebalancers"))).toMatchObject({ status: 200, remaining: "1839" });
    vi.setSystemTime(Date.now() + retry * 1000);
    expect((await api.get("/databases/instances")).status).toBe(200);
  });

  it("answers the class's own counts when configured so, and the general window's 429 when that is full first", async () => {
    const api = client(emu);
    await api.admin("PUT", "/rate-limits", { default: { limit: 3, windowSeconds: 60 }, paginated: { limit: 5, windowSeconds: 60, headers: "class" } });
    expect(limitOf(await api.get("/nodebalancers"))).toEqual({ status: 200, limit: "5", remaining: "4" });
    expect(limitOf(await api.get(`/nodebalancers/${nb}`))).toEqual({ status: 200, limit: "3", remaining: "1" });
    expect(limitOf(await api.get("/nodebalancers"))).toEqual({ status: 200, limit: "5", remaining: "3" });
    // The general window (3) is full before the paginated class (5): its headers, its Retry-After.
    const refused = await api.get("/nodebalancers");
    expect(limitOf(refused)).toEqual({ status: 429, limit: "3", remaining: "0" });
    expect(refused.headers.get("retry-after")).not.toBeNull();
    vi.setSystemTime(Date.now() + 61_000);
    expect(limitOf(await api.get("/nodebalancers"))).toEqual({ status: 200, limit: "5", remaining: "4" });
  });

  it("refuses the 51st statistics read of a minute without touching the other classes", async () => {
    const api = client(emu);
    for (let i = 0; i < 50; i++) await api.get(`/nodebalancers/${nb}/stats`);
    const refused = await api.get(`/nodebalancers/${nb}/stats`);
    expect(limitOf(refused)).toEqual({ status: 429, limit: "50", remaining: "0" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limitOf(await api.get("/nodebalancers"))).toEqual({ status: 200, limit: "1840", remaining: "1839" });
  });
});

describe("the paginated class", () => {
  it("holds exactly the GET routes whose answer is a page envelope", async () => {
    const emu = await start();
    try {
      const api = client(emu);
      const nb = (await api.post("/nodebalancers", { region: "us-east", label: "env", configs: [{ port: 80, nodes: [{ address: "192.168.1.1:80", label: "node-1" }] }] })).body;
      const config = (await api.get(`/nodebalancers/${nb.id}/configs`)).body.data[0];
      const node = (await api.get(`/nodebalancers/${nb.id}/configs/${config.id}/nodes`)).body.data[0];
      const db = (await api.post("/databases/mysql/instances", { label: "env-db", region: "us-east", type: "g6-nanode-1", engine: "mysql/8" })).body;
      const vpc = (await api.post("/vpcs", { label: "env-vpc", region: "us-east", subnets: [{ label: "s1", ipv4: "10.0.0.0/24" }] })).body;
      const ids: Record<string, string> = {
        nodeBalancerId: String(nb.id), configId: String(config.id), nodeId: String(node.id), instanceId: String(db.id),
        vpcId: String(vpc.id), subnetId: String(vpc.subnets?.[0]?.id), engineId: "mysql/8", typeId: "g6-nanode-1",
      };
      const seen: string[] = [];
      for (const route of buildRouter().routes.filter((r) => r.method === "GET")) {
        const path = route.template.replace(/\{(\w+)\+?\}/g, (_m, name: string) => ids[name] ?? "1");
        const res = await api.get(path);
        if (res.status !== 200 || typeof res.body !== "object") continue;
        seen.push(route.template);
        expect({ route: route.template, envelope: "pages" in res.body }).toEqual({ route: route.template, envelope: route.paginated === true });
      }
      // Enough of them answered for the check to mean something: lists and single reads of each family.
      expect(seen).toEqual(expect.arrayContaining(["/nodebalancers", "/nodebalancers/{nodeBalancerId}/configs", "/nodebalancers/{nodeBalancerId}/configs/{configId}/nodes", "/databases/instances", "/vpcs", "/databases/engines", "/nodebalancers/{nodeBalancerId}"]));
    } finally {
      await emu.close();
    }
  });
});
