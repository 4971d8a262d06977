/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- assertions read untyped JSON response bodies */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, mysqlBody, start, TOKEN } from "./helpers.ts";

const M = "/databases/mysql/instances";

describe("authentication, scopes and grants", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await start({
      rateLimits: false,
      config: {
        users: [
          { username: "restricted-none", restricted: true },
          { username: "restricted-add", restricted: true, grants: { global: { add_databases: true, add_nodebalancers: true } } },
        ],
        tokens: [
          { token: "db-ro", scopes: "databases:read_only" },
          { token: "db-rw", scopes: "databases:read_write" },
          { token: "nb-ro", scopes: "nodebalancers:read_only" },
          { token: "nb-rw", scopes: "nodebalancers:read_write" },
          { token: "r-none", scopes: "*", username: "restricted-none" },
          { token: "r-add", scopes: "*", username: "restricted-add" },
        ],
      },
    });
  });
  afterAll(async () => { await emu.close(); });

  it("requires a valid bearer token", async () => {
    for (const token of [null, "nope"]) {
      const res = await client(emu, token).get(M);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ errors: [{ reason: "Invalid Token" }] });
    }
    const ok = await client(emu).get(M);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-oauth-scopes")).toBe("*");
    expect(ok.headers.get("x-accepted-oauth-scopes")).toBe("databases:read_only");
  });

  it("enforces OAuth scopes per operation", async () => {
    const admin = client(emu);
    const id = (await admin.post(M, mysqlBody())).body.id as number;
    emu.advance(1);
    expect((await client(emu, "db-ro").get(`${M}/${id}`)).status).toBe(200);
    expect((await client(emu, "db-ro").get(`${M}/${id}/credentials`)).status).toBe(200);
    expect((await client(emu, "db-ro").post(M, mysqlBody())).status).toBe(401);
    // Spec: backups list/view need databases:read_write.
    expect((await client(emu, "db-ro").get(`${M}/${id}/backups`)).status).toBe(401);
    expect((await client(emu, "db-rw").get(`${M}/${id}/backups`)).status).toBe(200);
    expect((await client(emu, "nb-rw").get(M)).status).toBe(401);
    expect((await client(emu, "db-ro").get("/databases/engines")).status).toBe(200);
    const nb = (await client(emu, "nb-rw").post("/nodebalancers", { region: "us-east" })).body.id as number;
    const cfg = (await client(emu, "nb-rw").post(`/nodebalancers/${nb}/configs`, {})).body.id as number;
    const node = (await client(emu, "nb-rw").post(`/nodebalancers/${nb}/configs/${cfg}/nodes`, { address: "192.168.130.1:80", label: "web" })).body.id as number;
    expect((await client(emu, "nb-ro").get(`/nodebalancers/${nb}/configs/${cfg}/nodes`)).status).toBe(200);
    // Spec: node view is listed under nodebalancers:read_write.
    expect((await client(emu, "nb-ro").get(`/nodebalancers/${nb}/configs/${cfg}/nodes/${node}`)).status).toBe(401);
    expect((await client(emu, "nb-ro").put(`/nodebalancers/${nb}`, { label: "nope-nope" })).status).toBe(401);
    expect((await client(emu, "db-rw").get("/nodebalancers")).status).toBe(401);
  });

  it("needs the add_databases / add_nodebalancers grant to create as a restricted user", async () => {
    const none = client(emu, "r-none");
    expect((await none.post(M, mysqlBody())).status).toBe(403);
    expect((await none.post("/nodebalancers", { region: "us-east" })).status).toBe(403);
    const add = client(emu, "r-add");
    expect((await add.post(M, mysqlBody())).status).toBe(200);
    expect((await add.post("/nodebalancers", { region: "us-east" })).status).toBe(200);
  });

  it("shows restricted users only what they may see; delete and reset are unrestricted-only", async () => {
    const other = (await client(emu).post(M, mysqlBody())).body.id as number;
    const add = client(emu, "r-add");
    const mine = (await add.post(M, mysqlBody())).body.id as number;
    emu.advance(1);
    const listed = (await add.get(M)).body.data.map((d: { id: number }) => d.id) as number[];
    expect(listed).toContain(mine);
    expect(listed).not.toContain(other);
    expect((await add.get(`${M}/${other}`)).status).toBe(404);
    expect((await add.put(`${M}/${mine}`, { label: "mine-renamed" })).status).toBe(200);
    expect((await add.del(`${M}/${mine}`)).status).toBe(403);
    expect((await add.post(`${M}/${mine}/credentials/reset`)).status).toBe(403);
    expect((await client(emu).post(`${M}/${mine}/credentials/reset`)).status).toBe(200);
    expect((await client(emu).del(`${M}/${mine}`)).status).toBe(200);
  });

  it("honours read_only entity grants and tokens added through the admin endpoint", async () => {
    const id = (await client(emu).post(M, mysqlBody())).body.id as number;
    emu.advance(1);
    const api = client(emu);
    expect((await api.admin("POST", "/users", { username: "viewer", restricted: true, grants: { database: [{ id, permissions: "read_only" }] } })).status).toBe(200);
    expect((await api.admin("POST", "/tokens", { token: "viewer-token", scopes: "databases:read_write", username: "viewer" })).status).toBe(200);
    expect((await api.admin("POST", "/tokens", { token: "bad", scopes: "everything" })).status).toBe(400);
    const viewer = client(emu, "viewer-token");
    expect((await viewer.get(`${M}/${id}`)).status).toBe(200);
    expect((await viewer.put(`${M}/${id}`, { label: "viewer-edit" })).status).toBe(403);
    const listed = await api.admin("GET", "/tokens");
    expect(JSON.stringify(listed.body)).not.toContain("viewer-token");
    expect((await api.admin("DELETE", "/tokens/viewer-token")).status).toBe(200);
    expect((await viewer.get(`${M}/${id}`)).status).toBe(401);
  });
});

describe("rate limiting", () => {
  let emu: RunningEmulator;
  // The windows are on the wall clock (Date, the one thing faked here): the tests move it.
  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    emu = await start({ tokens: [TOKEN, "other"], rateLimits: { default: { limit: 3, windowSeconds: 2 }, tokens: { other: { limit: 5, windowSeconds: 60 } } } });
  });
  afterAll(async () => { await emu.close(); vi.useRealTimers(); });

  it("sends X-RateLimit-* on every response and 429 with Retry-After past the limit", async () => {
    const api = client(emu);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.get("/databases/engines");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 1);
      remaining.push(res.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const limited = await api.get("/databases/engines");
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ errors: [{ reason: "Too many requests" }] });
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(2);
    // Per-token limits are independent.
    const other = await client(emu, "other").get("/databases/engines");
    expect(other.headers.get("x-ratelimit-limit")).toBe("5");
    vi.setSystemTime(Date.now() + retry * 1000);
    expect((await api.get("/databases/engines")).status).toBe(200);
  });

  it("is reconfigurable through the admin endpoint (stats keep their own bucket)", async () => {
    const api = client(emu);
    const set = await api.admin("PUT", "/rate-limits", { default: { limit: 1, windowSeconds: 60 }, routes: { "GET /nodebalancers/{nodeBalancerId}/stats": { limit: 50, windowSeconds: 60 } } });
    expect(set.status).toBe(200);
    expect((await api.get("/nodebalancers")).status).toBe(200);
    expect((await api.get("/nodebalancers")).status).toBe(429);
    const stats = await api.get("/nodebalancers/1/stats");
    expect(stats.headers.get("x-ratelimit-limit")).toBe("50");
  });
});
