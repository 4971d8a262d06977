/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { call, client, fields, mysqlBody, start, TOKEN } from "./helpers.ts";

const M = "/databases/mysql/instances";

describe("pagination at 10,000 objects and X-Filter", () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    emu = await start({ rateLimits: false });
    api = client(emu);
    const seeded = await api.admin("POST", "/seed", { databases: { count: 10_000 } });
    expect(seeded.body.databases.count).toBe(10_000);
  });
  afterAll(async () => { await emu.close(); });

  it("defaults to 100 per page and walks 500-item pages without gaps or repeats", async () => {
    const first = await api.get(M);
    expect(first.body).toMatchObject({ page: 1, pages: 100, results: 10_000 });
    expect(first.body.data).toHaveLength(100);
    const seen = new Set<number>();
    for (let page = 1; page <= 20; page++) {
      const res = await api.get(`${M}?page=${page}&page_size=500`);
      expect(res.body).toMatchObject({ page, pages: 20, results: 10_000 });
      for (const d of res.body.data as { id: number }[]) seen.add(d.id);
    }
    expect(seen.size).toBe(10_000);
    const beyond = await api.get(`${M}?page=21&page_size=500`);
    expect(beyond.body.data).toEqual([]);
    expect((await api.get(`${M}?page_size=25`)).body.pages).toBe(400);
  });
  it.each([["page_size=24", "page_size"], ["page_size=501", "page_size"], ["page_size=abc", "page_size"], ["page=0", "page"]])("%s -> 400", async (q, field) => {
    const res = await api.get(`${M}?${q}`);
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([field]);
  });
  it("filters by equality, +or, +and, operators and orders", async () => {
    const f = (filter: unknown) => api.get(`/databases/instances?page_size=500`, { headers: { "X-Filter": JSON.stringify(filter) } });
    const one = await f({ label: "seed-100005" });
    expect(one.body.results).toBe(1);
    expect(one.body.data[0].label).toBe("seed-100005");
    expect((await f({ "+or": [{ label: "seed-100005" }, { label: "seed-100006" }] })).body.results).toBe(2);
    expect((await f({ "+and": [{ engine: "mysql" }, { label: "seed-100007" }] })).body.results).toBe(1);
    expect((await f({ "+and": [{ engine: "postgresql" }, { label: "seed-100007" }] })).body.results).toBe(0);
    expect((await f({ label: { "+contains": "seed-1000" } })).body.results).toBe(99); // seed-100001..seed-100099
    const desc = await f({ "+order_by": "label", "+order": "desc", status: "active" });
    expect(desc.body.data[0].label).toBe("seed-110000");
    const bad = await f({ foo: "bar" });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: [{ reason: "Cannot filter on foo", field: "X-Filter" }] });
    const invalid = await api.get(M, { headers: { "X-Filter": "{nope" } });
    expect(fields(invalid)).toEqual(["X-Filter"]);
  });
});

describe("faults, clock, request counts, HTTP behaviour", () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof client>;
  beforeAll(async () => { emu = await start({ rateLimits: false, seed: 7 }); api = client(emu); });
  afterAll(async () => { await emu.close(); });

  it("injects 5xx before handling (no state change)", async () => {
    await api.admin("PUT", "/faults", { errorRate: 1, routes: ["POST /databases"] });
    const label = `fault-${Date.now()}`;
    const res = await api.post(M, mysqlBody({ label }));
    expect(res.status).toBe(500);
    expect(res.body.errors[0].reason).toBeTypeOf("string");
    expect((await api.get(M)).status).toBe(200);
    await api.admin("DELETE", "/faults");
    const list = await api.get(M, { headers: { "X-Filter": JSON.stringify({ label }) } });
    expect(list.body.results).toBe(0);
  });
  it("answers bursts of 429 with Retry-After, then recovers", async () => {
    await api.admin("PUT", "/faults", { burst429: 2, retryAfterSeconds: 3 });
    const a = await api.get("/databases/engines");
    const b = await api.get("/databases/engines");
    expect([a.status, b.status]).toEqual([429, 429]);
    expect(a.headers.get("retry-after")).toBe("3");
    expect((await api.get("/databases/engines")).status).toBe(200);
  });
  it("answers 429 at a seeded rate with Retry-After, refusing the request before it is handled", async () => {
    const run = async () => {
      const e = await start({ seed: 5, faults: { rate429: 0.3, retryAfterSeconds: 2, routes: ["POST /databases"] }, rateLimits: false });
      const c = client(e);
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await c.post(M, mysqlBody({ label: `rate429-${String(i)}` }));
        codes.push(res.status);
        if (res.status === 429) expect(res.headers.get("retry-after")).toBe("2");
      }
      // Other routes are not affected; a refused create made nothing.
      expect((await c.get("/databases/engines")).status).toBe(200);
      const made = (await c.get(M)).body.results as number;
      await e.close();
      return { codes, made };
    };
    const first = await run();
    const refused = first.codes.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(20);
    expect(first.codes.filter((s) => s !== 429).every((s) => s === 200)).toBe(true);
    expect(first.made).toBe(20 - refused);
    expect(await run()).toEqual(first);
  });
  it("adds latency", async () => {
    await api.admin("PUT", "/faults", { latencyMs: 150 });
    const t = performance.now();
    await api.get("/databases/engines");
    expect(performance.now() - t).toBeGreaterThanOrEqual(140);
    await api.admin("DELETE", "/faults");
  });
  it("commits and then drops the connection", async () => {
    emu.setFaults({ dropRate: 1, routes: ["POST /databases/mysql/instances"] });
    const label = `dropped-${Date.now()}`;
    await expect(api.post(M, mysqlBody({ label }))).rejects.toThrow();
    emu.setFaults({});
    const list = await api.get(M, { headers: { "X-Filter": JSON.stringify({ label }) } });
    expect(list.body.results).toBe(1);
  });
  it("reproduces fault decisions from the seed", async () => {
    const run = async () => {
      const e = await start({ seed: 42, faults: { errorRate: 0.5 }, rateLimits: false });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) codes.push((await client(e).get("/databases/engines")).status);
      await e.close();
      return codes;
    };
    const first = await run();
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });
  it("controls the clock through the admin endpoint", async () => {
    const before = (await api.admin("GET", "/clock")).body;
    expect(before.time_scale).toBe(0);
    const id = (await api.post(M, mysqlBody())).body.id as number;
    const adv = await api.admin("POST", "/clock/advance", { seconds: 1 });
    expect(adv.body.now_ms - before.now_ms).toBeGreaterThanOrEqual(1000);
    expect((await api.get(`${M}/${id}`)).body.status).toBe("active");
    expect((await api.admin("POST", "/clock/advance", { seconds: -5 })).status).toBe(400);
    expect((await api.admin("PUT", "/clock", { now: "2000-01-01T00:00:00" })).status).toBe(400);
  });
  it("runs transitions in real time at a time scale", async () => {
    // Real time is Date, the one thing faked here: 30 emulated seconds are 30 of its milliseconds.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const fast = await start({ timeScale: 1000, provisionSeconds: 30, rateLimits: false });
      const c = client(fast);
      const id = (await c.post(M, mysqlBody())).body.id as number;
      vi.setSystemTime(Date.now() + 29);
      expect((await c.get(`${M}/${id}`)).body.status).toBe("provisioning");
      vi.setSystemTime(Date.now() + 1);
      expect((await c.get(`${M}/${id}`)).body.status).toBe("active");
      await fast.close();
    } finally {
      vi.useRealTimers();
    }
  });
  it("counts requests by method and route template, and resets", async () => {
    await api.admin("DELETE", "/requests");
    await api.get(`${M}/1`);
    await api.get(`${M}/2`);
    await api.get("/databases/engines/mysql%2F8");
    const counts = (await api.admin("GET", "/requests")).body;
    expect(counts.routes).toEqual({ "GET /databases/mysql/instances/{instanceId}": 2, "GET /databases/engines/{engineId}": 1 });
    expect(counts.total).toBe(3);
    expect(emu.requestCounts()).toEqual(counts.routes);
    await api.admin("DELETE", "/requests");
    expect((await api.admin("GET", "/requests")).body.total).toBe(0);
  });
  it("speaks /v4 and /v4beta, JSON errors for unknown paths, methods and bodies", async () => {
    const base = emu.url.replace(/\/v4$/, "");
    const beta = await call(base, "GET", "/v4beta/databases/engines", undefined, { token: TOKEN });
    expect(beta.status).toBe(200);
    expect(beta.headers.get("content-type")).toBe("application/json");
    expect(beta.headers.get("connection")).toBe("keep-alive");
    expect((await call(base, "GET", "/v3/databases/engines")).status).toBe(404);
    expect((await api.get("/nowhere")).body).toEqual({ errors: [{ reason: "Not found" }] });
    expect((await api.del("/databases/engines")).status).toBe(405);
    const bad = await api.post(M, undefined, { raw: "{not json" });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: [{ reason: "Invalid JSON" }] });
  });
});

describe("persistence", () => {
  it("keeps objects and id counters across a restart", async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), "emu-state-")), "state.json");
    const first = await start({ stateFile, rateLimits: false });
    const c1 = client(first);
    const db = (await c1.post(M, mysqlBody({ label: "persisted-db" }))).body;
    const nb = (await c1.post("/nodebalancers", { region: "us-east", label: "persisted-nb", configs: [{ port: 80, nodes: [{ address: "192.168.130.1:80", label: "web" }] }] })).body;
    await first.close();
    const second = await start({ stateFile, rateLimits: false });
    const c2 = client(second);
    expect((await c2.get(`${M}/${db.id}`)).body.label).toBe("persisted-db");
    expect((await c2.get(`/nodebalancers/${nb.id}/configs`)).body.results).toBe(1);
    const next = (await c2.post(M, mysqlBody())).body.id as number;
    expect(next).toBeGreaterThan(db.id as number);
    await second.close();
  });
  it("dumps, clears and loads state through the admin endpoint", async () => {
    const emu = await start({ rateLimits: false });
    const c = client(emu);
    await c.post(M, mysqlBody({ label: "dumped-db" }));
    const dump = (await c.admin("GET", "/state")).body;
    await c.admin("DELETE", "/state");
    expect((await c.get(M)).body.results).toBe(0);
    await c.admin("PUT", "/state", dump);
    expect((await c.get(M)).body.data[0].label).toBe("dumped-db");
    await emu.close();
  });
});
