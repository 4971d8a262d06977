/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read untyped JSON response bodies */
// PostgreSQL connection pools over HTTP (spec 4.234.0 and the emulator's assumptions in
// src/emulator/databases/connection-pools.ts): the field rules, a pool addressed by its label,
// the plan's connection limit, non-active databases refused, legacy and MySQL databases without
// pools, v4beta, the scopes, and pools gone with their database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, fields, mysqlBody, pgBody, start } from "./helpers.ts";

const P = "/databases/postgresql/instances";
const M = "/databases/mysql/instances";
type Api = ReturnType<typeof client>;

let cur: RunningEmulator;
let api: Api;
let leg: RunningEmulator;
beforeAll(async () => {
  cur = await start({
    rateLimits: false, provisionSeconds: 10, platform: "current",
    config: { tokens: [{ token: "ro-token", scopes: "databases:read_only" }] },
  });
  api = client(cur);
  leg = await start({ rateLimits: false, provisionSeconds: 10 });
});
afterAll(async () => { await cur.close(); await leg.close(); });

async function activeDb(emu: RunningEmulator, path: string, body: Record<string, unknown>): Promise<number> {
  const c = client(emu);
  const res = await c.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  emu.advance(10);
  return res.body.id as number;
}
const pools = (id: number): string => `${P}/${String(id)}/connection-pools`;

describe("connection pools", () => {
  it("creates a pool with the spec's defaults, reads it by label, lists it, updates and deletes it", async () => {
    const id = await activeDb(cur, P, pgBody());
    const created = await api.post(pools(id), { label: "app_pool-1" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({ label: "app_pool-1", database: "defaultdb", mode: "transaction", size: 10, username: null });
    expect((await api.get(`${pools(id)}/app_pool-1`)).body).toEqual(created.body);
    const listed = await api.get(pools(id));
    expect(listed.body).toEqual({ data: [created.body], page: 1, pages: 1, results: 1 });
    // v4beta serves the same pools.
    expect((await fetch(`${cur.url.replace(/\/v4$/, "/v4beta")}${pools(id)}/app_pool-1`, { headers: { Authorization: "Bearer test-token" } })).status).toBe(200);
    const updated = await api.put(`${pools(id)}/app_pool-1`, { mode: "session", size: 20, username: "app" });
    expect(updated.body).toEqual({ label: "app_pool-1", database: "defaultdb", mode: "session", size: 20, username: "app" });
    expect((await api.put(`${pools(id)}/app_pool-1`, { username: null })).body.username).toBeNull();
    expect((await api.del(`${pools(id)}/app_pool-1`)).body).toEqual({});
    expect((await api.get(`${pools(id)}/app_pool-1`)).status).toBe(404);
    expect((await api.del(`${pools(id)}/app_pool-1`)).status).toBe(404);
  });

  it("refuses a bad label, mode or size, a label taken in the same database, and a label in a PUT", async () => {
    const id = await activeDb(cur, P, pgBody());
    for (const label of ["-starts-with-hyphen", "has space", "x".repeat(64), ""]) {
      const res = await api.post(pools(id), { label });
      expect(res.status, label).toBe(400);
      expect(new Set(fields(res))).toEqual(new Set(["label"]));
    }
    expect((await api.post(pools(id), { label: "x".repeat(63) })).status).toBe(200);
    const mode = await api.post(pools(id), { label: "m", mode: "pooled" });
    expect([mode.status, fields(mode)]).toEqual([400, ["mode"]]);
    for (const size of [0, 1.5, 26]) {
      const res = await api.post(pools(id), { label: "s", size });
      expect([res.status, fields(res)], String(size)).toEqual([400, ["size"]]);
    }
    // A 1 GiB plan: 25 connections a pool at most (assumed).
    expect((await api.post(pools(id), { label: "s", size: 25 })).status).toBe(200);
    expect((await api.put(`${pools(id)}/s`, { size: 26 })).status).toBe(400);
    const taken = await api.post(pools(id), { label: "s" });
    expect([taken.status, fields(taken)]).toEqual([400, ["label"]]);
    expect((await api.put(`${pools(id)}/s`, { label: "t" })).status).toBe(400);
    // Unique per database only.
    const other = await activeDb(cur, P, pgBody());
    expect((await api.post(pools(other), { label: "s" })).status).toBe(200);
  });

  it("refuses changes while the database is not active, and reads in any status", async () => {
    const res = await api.post(P, pgBody());
    const id = res.body.id as number;
    const provisioning = await api.post(pools(id), { label: "p" });
    expect(provisioning.status).toBe(400);
    expect(provisioning.body.errors[0].reason).toContain("provisioning");
    cur.advance(10);
    expect((await api.post(pools(id), { label: "p" })).status).toBe(200);
    expect((await api.post(`${P}/${String(id)}/suspend`)).status).toBe(200);
    cur.advance(10);
    expect((await api.get(`${P}/${String(id)}`)).body.status).toBe("suspended");
    expect((await api.post(pools(id), { label: "q" })).status).toBe(400);
    expect((await api.put(`${pools(id)}/p`, { size: 5 })).status).toBe(400);
    expect((await api.del(`${pools(id)}/p`)).status).toBe(400);
    expect((await api.get(`${pools(id)}/p`)).status).toBe(200);
  });

  it("has no pools for MySQL or legacy-platform databases (404), nor for a missing database", async () => {
    const my = await activeDb(cur, M, mysqlBody());
    expect((await api.get(`${M}/${String(my)}/connection-pools`)).status).toBe(404);
    expect((await api.post(`${M}/${String(my)}/connection-pools`, { label: "p" })).status).toBe(404);
    // A MySQL id on the PostgreSQL path is no PostgreSQL database.
    expect((await api.get(pools(my))).status).toBe(404);
    const legacy = await activeDb(leg, P, pgBody());
    expect((await client(leg).post(pools(legacy), { label: "p" })).status).toBe(404);
    expect((await api.get(pools(999_999))).status).toBe(404);
  });

  it("asks databases:read_write to list and change pools, read_only to read one", async () => {
    const id = await activeDb(cur, P, pgBody());
    expect((await api.post(pools(id), { label: "p" })).status).toBe(200);
    const ro = client(cur, "ro-token");
    expect((await ro.get(`${pools(id)}/p`)).status).toBe(200);
    expect((await ro.get(pools(id))).status).toBe(401);
    expect((await ro.post(pools(id), { label: "q" })).status).toBe(401);
    expect((await ro.del(`${pools(id)}/p`)).status).toBe(401);
  });

  it("deletes a database's pools with it", async () => {
    const id = await activeDb(cur, P, pgBody());
    expect((await api.post(pools(id), { label: "p" })).status).toBe(200);
    expect((await api.del(`${P}/${String(id)}`)).status).toBe(200);
    expect((await api.get(pools(id))).status).toBe(404);
    expect(cur.dump().databases.some((d) => d.id === id)).toBe(false);
  });
});
