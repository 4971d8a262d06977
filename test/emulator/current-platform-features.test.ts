/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument -- assertions read untyped JSON response bodies */
// The current database platform's own features (src/emulator/databases/facts.md), each on
// a current-platform database and, where the legacy platform is asked the same, on a legacy
// one: fork (point-in-time restore into a new database), suspend/resume, engine parameters
// (GET /databases/{engine}/config, engine_config on create and update), private networks, and
// resize / version upgrade in place.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTime } from "../../src/emulator/clock.ts";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import type { SerializedState } from "../../src/emulator/store.ts";
import { client, fields, mysqlBody, pgBody, start } from "./helpers.ts";

const M = "/databases/mysql/instances";
const P = "/databases/postgresql/instances";
const DAY = 24 * 3600;

type Api = ReturnType<typeof client>;

let cur: RunningEmulator;
let curApi: Api;
let leg: RunningEmulator;
let legApi: Api;
beforeAll(async () => {
  // Transitions take 10 emulated seconds; the clock is frozen until advanced.
  cur = await start({ rateLimits: false, provisionSeconds: 10, platform: "current", accountTokens: { other: ["other-token"] } });
  curApi = client(cur);
  leg = await start({ rateLimits: false, provisionSeconds: 10 });
  legApi = client(leg);
});
afterAll(async () => { await cur.close(); await leg.close(); });

async function activeDb(api: Api, emu: RunningEmulator, path: string, body: Record<string, unknown>): Promise<number> {
  const res = await api.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  emu.advance(10);
  expect((await api.get(`${path}/${String(res.body.id)}`)).body.status).toBe("active");
  return res.body.id as number;
}
const activeMy = (over: Record<string, unknown> = {}) => activeDb(curApi, cur, M, mysqlBody(over));
const activePg = (over: Record<string, unknown> = {}) => activeDb(curApi, cur, P, pgBody(over));
const get = async (path: string, id: number) => (await curApi.get(`${path}/${String(id)}`)).body as Record<string, any>;

describe("fork: point-in-time restore into a new database", () => {
  it("every current database shows oldest_restore_time: its creation, but no earlier than seven days ago", async () => {
    const created = await curApi.post(M, mysqlBody());
    expect(created.body).not.toHaveProperty("oldest_restore_time"); // the create's answer (recorded)
    expect((await get(M, created.body.id as number)).oldest_restore_time).toBeNull(); // provisioning: no data yet
    cur.advance(10);
    const db = await get(M, created.body.id as number);
    expect(db.oldest_restore_time).toBe(db.created);
    expect(db.fork).toBeNull();
    cur.advance(10 * DAY);
    expect((await get(M, created.body.id as number)).oldest_restore_time).toBe(apiTime(cur.now() - 7 * DAY * 1000));
    // The all-engines list too (full objects for current databases).
    const all = (await curApi.get("/databases/instances?page_size=500")).body.data as Record<string, any>[];
    expect(all.find((d) => d.id === created.body.id)?.oldest_restore_time).toBe(apiTime(cur.now() - 7 * DAY * 1000));
  });

  it("creates a new database from the source as of restore_time (latest when omitted); the source keeps running", async () => {
    const source = await activeMy();
    cur.advance(3600);
    const before = await get(M, source);
    const latest = await curApi.post(M, mysqlBody({ fork: { source } }));
    expect(latest.status, JSON.stringify(latest.body)).toBe(200);
    expect(latest.body).toMatchObject({ status: "provisioning", fork: { source, restore_time: apiTime(cur.now()) }, engine: "mysql", version: "8" });
    expect(latest.body.id).not.toBe(source);
    expect(await get(M, source)).toEqual(before);
    const at = apiTime(cur.now() - 1800 * 1000);
    const pit = await curApi.post(M, mysqlBody({ fork: { source, restore_time: at }, cluster_size: 3 }));
    expect(pit.status, JSON.stringify(pit.body)).toBe(200);
    expect(pit.body).toMatchObject({ fork: { source, restore_time: at }, cluster_size: 3 });
    cur.advance(10);
    const forked = await get(M, pit.body.id as number);
    expect(forked).toMatchObject({ status: "active", fork: { source, restore_time: at } });
    expect(forked.oldest_restore_time).toBe(forked.created); // its own restore points start at its creation
    // The earliest restore point itself, in the OpenAPI example's spelling and as ISO 8601 with a zone.
    const oldest = before.oldest_restore_time as string;
    for (const restoreTime of [oldest, oldest.replace("T", " "), `${oldest}Z`, `${oldest}.000+00:00`]) {
      const res = await curApi.post(M, mysqlBody({ fork: { source, restore_time: restoreTime } }));
      expect(res.status, `${restoreTime}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.fork).toEqual({ source, restore_time: oldest });
    }
    // A fork of a fork.
    expect((await curApi.post(M, mysqlBody({ fork: { source: pit.body.id } }))).status).toBe(200);
  });

  it("refuses a restore_time before the source's oldest_restore_time, in the future or not a date-time (400 naming fork.restore_time)", async () => {
    const source = await activeMy();
    const oldest = Date.parse(`${String((await get(M, source)).oldest_restore_time)}Z`);
    for (const restoreTime of [apiTime(oldest - 1000), apiTime(cur.now() + 60_000), "yesterday", "2025-13-45T99:00:00"]) {
      const res = await curApi.post(M, mysqlBody({ fork: { source, restore_time: restoreTime } }));
      expect(res.status, restoreTime).toBe(400);
      expect(fields(res)).toEqual(["fork.restore_time"]);
    }
    const early = await curApi.post(M, mysqlBody({ fork: { source, restore_time: apiTime(oldest - 1000) } }));
    expect(early.body.errors[0].reason).toMatch(/before the source's oldest_restore_time/);
  });

  it("needs a source that exists in the caller's account, of the same engine and version, active, degraded or failed", async () => {
    const my = await activeMy();
    const pg = await activePg({ engine: "postgresql/16" });
    const expectRefused = async (path: string, body: Record<string, unknown>, field: string, token?: string) => {
      const res = token === undefined ? await curApi.post(path, body) : await client(cur, token).post(path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(fields(res)).toEqual([field]);
      return res;
    };
    await expectRefused(M, mysqlBody({ fork: { source: 999_999 } }), "fork.source");
    await expectRefused(M, mysqlBody({ fork: { source: pg } }), "fork.source");
    await expectRefused(P, pgBody({ fork: { source: my } }), "fork.source");
    await expectRefused(P, pgBody({ engine: "postgresql/15", fork: { source: pg } }), "engine");
    expect((await curApi.post(P, pgBody({ engine: "postgresql/16", fork: { source: pg } }))).status).toBe(200);
    // Another account's database is as missing.
    await expectRefused(M, mysqlBody({ fork: { source: my } }), "fork.source", "other-token");
    // A provisioning source has no restore point yet; a suspended one cannot be forked.
    const young = (await curApi.post(M, mysqlBody())).body.id as number;
    expect((await expectRefused(M, mysqlBody({ fork: { source: young } }), "fork.source")).body.errors[0].reason).toMatch(/provisioning/);
    cur.advance(10);
    expect((await curApi.post(`${M}/${String(young)}/suspend`, {})).status).toBe(200);
    await expectRefused(M, mysqlBody({ fork: { source: young } }), "fork.source");
    for (const status of ["degraded", "failed"]) {
      expect((await curApi.admin("PUT", `/databases/${String(my)}/status`, { status })).status).toBe(200);
      expect((await curApi.post(M, mysqlBody({ fork: { source: my } }))).status, status).toBe(200);
    }
    // The fork's own create fields are checked as for any create.
    const bad = await curApi.post(M, mysqlBody({ region: "mars-1", fork: { source: my } }));
    expect(fields(bad)).toEqual(["region"]);
    for (const fork of [{ source: "x" }, { restore_time: "2025-01-01T00:00:00" }, { source: -1 }, "all"]) {
      expect((await curApi.post(M, mysqlBody({ fork }))).status, JSON.stringify(fork)).toBe(400);
    }
  });

  it("needs read_write access to the source (403 with read_only)", async () => {
    const source = await activeMy();
    for (const [username, permissions] of [["fork-viewer", "read_only"], ["fork-editor", "read_write"]] as const) {
      expect((await curApi.admin("POST", "/users", { username, restricted: true, grants: { global: { add_databases: true }, database: [{ id: source, permissions }] } })).status).toBe(200);
      expect((await curApi.admin("POST", "/tokens", { token: `${username}-token`, username })).status).toBe(200);
    }
    expect((await client(cur, "fork-viewer-token").post(M, mysqlBody({ fork: { source } }))).status).toBe(403);
    expect((await client(cur, "fork-editor-token").post(M, mysqlBody({ fork: { source } }))).status).toBe(200);
  });

  it("legacy: a create with fork is refused (400 naming fork); a legacy source cannot be forked", async () => {
    const res = await legApi.post(M, mysqlBody({ fork: { source: 1 } }));
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(["fork"]);
    expect(res.body.errors[0].reason).toMatch(/legacy database platform/);
    expect((await legApi.post(M, mysqlBody({ fork: null }))).status).toBe(200); // null asks for nothing
    const seeded = (await curApi.admin("POST", "/seed", { databases: { count: 1, platform: "legacy", labelPrefix: "old-src" } })).body.databases;
    const refused = await curApi.post(M, mysqlBody({ fork: { source: seeded.first_id } }));
    expect(fields(refused)).toEqual(["fork.source"]);
    expect(refused.body.errors[0].reason).toMatch(/legacy/);
  });
});

describe("suspend and resume", () => {
  it("active -> suspending -> suspended -> resuming -> active, each step the provisioning time; both answer 200 {}", async () => {
    const id = await activeMy();
    const base = `${M}/${String(id)}`;
    expect((await curApi.post(`${base}/resume`, {})).status).toBe(400); // only when suspended
    const suspend = await curApi.post(`${base}/suspend`, {});
    expect(suspend.status).toBe(200);
    expect(suspend.body).toEqual({});
    expect((await get(M, id)).status).toBe("suspending");
    expect((await curApi.post(`${base}/suspend`, {})).status).toBe(400); // only when active
    cur.advance(9);
    expect((await get(M, id)).status).toBe("suspending");
    cur.advance(1);
    expect((await get(M, id)).status).toBe("suspended");
    expect((await curApi.post(`${base}/suspend`, {})).body.errors[0].reason).toMatch(/suspended/);
    const resume = await curApi.post(`${base}/resume`, {});
    expect(resume.status).toBe(200);
    expect(resume.body).toEqual({});
    expect((await get(M, id)).status).toBe("resuming");
    cur.advance(10);
    expect((await get(M, id)).status).toBe("active");
  });

  it("while suspended: no credentials, certificate, reset or update; engine_config has its own reason", async () => {
    const id = await activePg();
    const base = `${P}/${String(id)}`;
    expect((await curApi.post(`${base}/suspend`, {})).status).toBe(200);
    cur.advance(10);
    for (const res of [await curApi.get(`${base}/credentials`), await curApi.get(`${base}/ssl`), await curApi.post(`${base}/credentials/reset`), await curApi.post(`${base}/patch`)]) {
      expect(res.status).toBe(400);
    }
    const config = await curApi.put(base, { engine_config: { work_mem: 8 } });
    expect(config.status).toBe(400);
    expect(config.body.errors).toEqual([{ field: "engine_config", reason: "Cannot update engine_config while the database is suspended; resume it first." }]);
    const label = await curApi.put(base, { label: "renamed-while-off" });
    expect(label.status).toBe(400);
    expect(label.body.errors[0].reason).toMatch(/suspended/);
    expect((await curApi.post(`${base}/resume`, {})).status).toBe(200);
    expect((await curApi.get(`${base}/credentials`)).status).toBe(400); // resuming
    cur.advance(10);
    expect((await curApi.get(`${base}/credentials`)).status).toBe(200);
    expect((await curApi.put(base, { engine_config: { work_mem: 8 } })).body.engine_config).toEqual({ work_mem: 8 });
  });

  it("not while provisioning; a database of another account is not found", async () => {
    const id = (await curApi.post(M, mysqlBody())).body.id as number;
    expect((await curApi.post(`${M}/${String(id)}/suspend`, {})).status).toBe(400);
    cur.advance(10);
    expect((await client(cur, "other-token").post(`${M}/${String(id)}/suspend`, {})).status).toBe(404);
  });
});

describe("engine parameters", () => {
  it("GET /databases/{engine}/config: the catalogue in the API's shape", async () => {
    const mysql = await curApi.get("/databases/mysql/config");
    expect(mysql.status).toBe(200);
    expect(mysql.headers.get("x-accepted-oauth-scopes")).toBe("*");
    expect(Object.keys(mysql.body).sort()).toEqual(["binlog_retention_period", "mysql"]);
    expect(mysql.body.binlog_retention_period).toEqual({ description: expect.any(String), example: 600, maximum: 86400, minimum: 600, requires_restart: false, type: "integer" });
    expect(Object.keys(mysql.body.mysql).length).toBeGreaterThanOrEqual(12);
    expect(mysql.body.mysql.connect_timeout).toMatchObject({ minimum: 2, maximum: 3600, type: "integer", requires_restart: false });
    expect(mysql.body.mysql.innodb_rollback_on_timeout).toMatchObject({ type: "boolean", requires_restart: true });
    expect(mysql.body.mysql.internal_tmp_mem_storage_engine).toMatchObject({ type: "string", enum: ["TempTable", "MEMORY"] });
    const pg = await curApi.get("/databases/postgresql/config");
    expect(Object.keys(pg.body).sort()).toEqual(["pg", "pg_stat_monitor_enable", "pglookout", "shared_buffers_percentage", "work_mem"]);
    expect(Object.keys(pg.body.pg).length).toBeGreaterThanOrEqual(12);
    expect(pg.body.shared_buffers_percentage).toMatchObject({ minimum: 20, maximum: 60, type: "number", requires_restart: true });
    expect(pg.body.work_mem).toMatchObject({ minimum: 1, maximum: 1024, type: "integer" });
    expect(pg.body.pglookout.max_failover_replication_time_lag).toMatchObject({ minimum: 10, maximum: 999999, type: "integer" });
    expect(pg.body.pg_stat_monitor_enable).toMatchObject({ type: "boolean" });
    for (const group of [mysql.body.mysql, pg.body.pg]) {
      for (const p of Object.values(group as Record<string, Record<string, unknown>>)) {
        expect(p).toMatchObject({ description: expect.any(String), requires_restart: expect.any(Boolean) });
        expect(p).toHaveProperty("type");
      }
    }
    // The same catalogue on a legacy emulator (the route is the engine's, not a database's).
    expect((await legApi.get("/databases/mysql/config")).body).toEqual(mysql.body);
    expect((await curApi.get("/databases/mongodb/config")).status).toBe(404);
  });

  it("create stores and returns engine_config (keys sorted; the recorded defaults added); none without one", async () => {
    const my = await curApi.post(M, mysqlBody({ engine_config: { mysql: { wait_timeout: 600, connect_timeout: 10, innodb_ft_server_stopword_table: null }, binlog_retention_period: 900 } }));
    expect(my.status, JSON.stringify(my.body)).toBe(200);
    const expected = {
      binlog_retention_period: 900,
      mysql: {
        connect_timeout: 10,
        sql_mode: "ANSI,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,NO_ZERO_DATE,NO_ZERO_IN_DATE,STRICT_ALL_TABLES",
        sql_require_primary_key: true,
        wait_timeout: 600,
      },
    };
    expect(my.body.engine_config).toEqual(expected);
    expect(Object.keys(my.body.engine_config.mysql as object)).toEqual(["connect_timeout", "sql_mode", "sql_require_primary_key", "wait_timeout"]);
    cur.advance(10);
    expect((await get(M, my.body.id as number)).engine_config).toEqual(expected);
    const pg = await curApi.post(P, pgBody({ engine_config: { pg: {} } }));
    expect(pg.body.engine_config).toEqual({ pg: { password_encryption: "md5" }, pg_stat_monitor_enable: false, pglookout: { max_failover_replication_time_lag: 60 } });
    expect((await curApi.post(P, pgBody())).body.engine_config).toEqual({});
  });

  it.each([
    [M, { mysql: { nope: 1 } }, ["engine_config.mysql.nope"]],
    [M, { mysql: { connect_timeout: "10" } }, ["engine_config.mysql.connect_timeout"]],
    [M, { mysql: { connect_timeout: 1 } }, ["engine_config.mysql.connect_timeout"]],
    [M, { mysql: { connect_timeout: 10.5 } }, ["engine_config.mysql.connect_timeout"]],
    [M, { mysql: { internal_tmp_mem_storage_engine: "InnoDB" } }, ["engine_config.mysql.internal_tmp_mem_storage_engine"]],
    [M, { mysql: { sql_mode: "lower,case" } }, ["engine_config.mysql.sql_mode"]],
    [M, { mysql: { sql_require_primary_key: "yes" } }, ["engine_config.mysql.sql_require_primary_key"]],
    [M, { mysql: "all" }, ["engine_config.mysql"]],
    [M, { binlog_retention_period: 86401 }, ["engine_config.binlog_retention_period"]],
    [M, { pg: {} }, ["engine_config.pg"]],
    [M, "big", ["engine_config"]],
    [P, { work_mem: 1.5, shared_buffers_percentage: 61 }, ["engine_config.work_mem", "engine_config.shared_buffers_percentage"]],
    [P, { pglookout: { max_failover_replication_time_lag: 5 } }, ["engine_config.pglookout.max_failover_replication_time_lag"]],
    [P, { pg: { password_encryption: "sha1" }, pg_stat_monitor_enable: 1 }, ["engine_config.pg.password_encryption", "engine_config.pg_stat_monitor_enable"]],
    [P, { mysql: {} }, ["engine_config.mysql"]],
  ] as const)("%s engine_config %j -> 400 naming %j, on create and update", async (path, config, expected) => {
    const create = await curApi.post(path, path === M ? mysqlBody({ engine_config: config }) : pgBody({ engine_config: config }));
    expect(create.status).toBe(400);
    expect(fields(create)).toEqual(expected);
    const id = path === M ? await activeMy() : await activePg();
    const update = await curApi.put(`${path}/${String(id)}`, { engine_config: config, label: `changed-${String(id)}` });
    expect(update.status).toBe(400);
    expect(fields(update)).toEqual(expected);
    expect((await get(path, id)).label).not.toBe(`changed-${String(id)}`); // nothing applied
  });

  it("update merges parameters: new ones added, given ones replaced, null removes a parameter (or a whole group)", async () => {
    const id = (await activePg({ engine_config: { pg: { jit: true, deadlock_timeout: 1000 }, work_mem: 4 } }));
    const put = await curApi.put(`${P}/${String(id)}`, { engine_config: { pg: { deadlock_timeout: 2000, jit: null, timezone: "Europe/Helsinki" }, shared_buffers_percentage: 41.5, work_mem: null } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.status).toBe("active");
    expect(put.body.engine_config).toEqual({
      pg: { deadlock_timeout: 2000, password_encryption: "md5", timezone: "Europe/Helsinki" },
      pg_stat_monitor_enable: false,
      pglookout: { max_failover_replication_time_lag: 60 },
      shared_buffers_percentage: 41.5,
    });
    const cleared = await curApi.put(`${P}/${String(id)}`, { engine_config: { pglookout: null } });
    expect(cleared.body.engine_config).not.toHaveProperty("pglookout");
    expect((await get(P, id)).engine_config).toEqual(cleared.body.engine_config);
    // engine_config: null or absent changes nothing.
    expect((await curApi.put(`${P}/${String(id)}`, { engine_config: null, label: "same-config" })).body.engine_config).toEqual(cleared.body.engine_config);
  });

  it("legacy: engine_config on create or update is refused (400 naming it); null passes", async () => {
    const create = await legApi.post(M, mysqlBody({ engine_config: { mysql: {} } }));
    expect(create.status).toBe(400);
    expect(fields(create)).toEqual(["engine_config"]);
    const id = (await legApi.post(M, mysqlBody({ engine_config: null }))).body.id as number;
    leg.advance(10);
    const update = await legApi.put(`${M}/${String(id)}`, { engine_config: { mysql: { connect_timeout: 10 } } });
    expect(update.status).toBe(400);
    expect(fields(update)).toEqual(["engine_config"]);
    expect((await legApi.put(`${M}/${String(id)}`, { engine_config: null, label: "legacy-renamed" })).status).toBe(200);
  });
});

describe("private network", () => {
  it("create: as given (public_access defaults to false), hosts become private ones; null when none", async () => {
    const none = await curApi.post(M, mysqlBody());
    expect(none.body.private_network).toBeNull();
    const hidden = await curApi.post(M, mysqlBody({ cluster_size: 3, private_network: { vpc_id: 101, subnet_id: 202 } }));
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
    expect(hidden.body.private_network).toEqual({ vpc_id: 101, subnet_id: 202, public_access: false });
    expect(hidden.body.hosts.primary).toMatch(/^private-a\d+-akamai-prod-\d+-default\.g2a\.akamaidb\.net$/);
    expect(hidden.body.hosts.standby).toBe(`replica-${String(hidden.body.hosts.primary)}`);
    const open = await curApi.post(P, pgBody({ private_network: { vpc_id: 101, subnet_id: 203, public_access: true } }));
    expect(open.body.private_network).toEqual({ vpc_id: 101, subnet_id: 203, public_access: true });
    expect(open.body.hosts.primary).toMatch(/^a\d+-akamai-prod-/);
    cur.advance(10);
    expect((await get(M, hidden.body.id as number)).private_network).toEqual({ vpc_id: 101, subnet_id: 202, public_access: false });
  });

  it("update: sets, replaces and clears it (null); absent leaves it; no transition", async () => {
    const id = await activeMy();
    const base = `${M}/${String(id)}`;
    const set = await curApi.put(base, { private_network: { vpc_id: 7, subnet_id: 8 } });
    expect(set.body).toMatchObject({ status: "active", private_network: { vpc_id: 7, subnet_id: 8, public_access: false } });
    expect(set.body.hosts.primary).toMatch(/^private-/);
    const replaced = await curApi.put(base, { private_network: { vpc_id: 9, subnet_id: 10, public_access: true } });
    expect(replaced.body.private_network).toEqual({ vpc_id: 9, subnet_id: 10, public_access: true });
    expect(replaced.body.hosts.primary).not.toMatch(/^private-/);
    expect((await curApi.put(base, { label: "kept-network" })).body.private_network).toEqual({ vpc_id: 9, subnet_id: 10, public_access: true });
    const cleared = await curApi.put(base, { private_network: null });
    expect(cleared.body.private_network).toBeNull();
    expect((await get(M, id)).private_network).toBeNull();
  });

  it.each([
    [{ vpc_id: 0, subnet_id: 1 }, "private_network.vpc_id"],
    [{ vpc_id: "1", subnet_id: 1 }, "private_network.vpc_id"],
    [{ vpc_id: 1 }, "private_network.subnet_id"],
    [{ vpc_id: 1, subnet_id: 2.5 }, "private_network.subnet_id"],
    [{ vpc_id: 1, subnet_id: 2, public_access: "no" }, "private_network.public_access"],
    ["vpc-1", "private_network"],
  ])("private_network %j -> 400 naming %s (create and update)", async (pn, field) => {
    expect(fields(await curApi.post(M, mysqlBody({ private_network: pn })))).toEqual([field]);
    const id = await activeMy();
    expect(fields(await curApi.put(`${M}/${String(id)}`, { private_network: pn }))).toEqual([field]);
  });

  it("legacy: refused on create and update (400 naming it); null passes", async () => {
    expect(fields(await legApi.post(M, mysqlBody({ private_network: { vpc_id: 1, subnet_id: 2 } })))).toEqual(["private_network"]);
    const id = (await legApi.post(M, mysqlBody({ private_network: null }))).body.id as number;
    leg.advance(10);
    expect(fields(await legApi.put(`${M}/${String(id)}`, { private_network: { vpc_id: 1, subnet_id: 2 } }))).toEqual(["private_network"]);
    expect((await legApi.put(`${M}/${String(id)}`, { private_network: null })).status).toBe(200);
  });
});

describe("resize and version upgrade in place", () => {
  it("type: a larger plan goes resizing for the provisioning time, then active; a smaller or equal one is refused", async () => {
    const id = await activeMy({ type: "g6-standard-2" });
    const base = `${M}/${String(id)}`;
    const small = await curApi.put(base, { type: "g6-standard-1" });
    expect(small.status).toBe(400);
    expect(small.body.errors).toEqual([{ field: "type", reason: expect.stringMatching(/can't be resized to smaller plans/) }]);
    expect(fields(await curApi.put(base, { type: "g6-dedicated-2" }))).toEqual(["type"]); // same disk
    expect(fields(await curApi.put(base, { type: "g6-huge-1" }))).toEqual(["type"]);
    expect((await curApi.put(base, { type: "g6-standard-2", label: "same-plan" })).body.status).toBe("active");
    const up = await curApi.put(base, { type: "g6-standard-4" });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: "resizing", type: "g6-standard-4", total_disk_size_gb: 96 });
    expect(fields(await curApi.put(base, { label: "busy-now" }))).toEqual([undefined]); // status must be active
    cur.advance(9);
    expect((await get(M, id)).status).toBe("resizing");
    cur.advance(1);
    expect(await get(M, id)).toMatchObject({ status: "active", type: "g6-standard-4" });
  });

  it("cluster_size: 1, 2 (dedicated plans only) or 3, resizing then active with the standby and members", async () => {
    const id = await activeMy();
    const base = `${M}/${String(id)}`;
    expect(fields(await curApi.put(base, { cluster_size: 2 }))).toEqual(["cluster_size"]); // a nanode plan
    expect(fields(await curApi.put(base, { cluster_size: 4 }))).toEqual(["cluster_size"]);
    const three = await curApi.put(base, { cluster_size: 3 });
    expect(three.body).toMatchObject({ status: "resizing", cluster_size: 3 });
    expect(three.body.hosts.standby).toBe(`replica-${String(three.body.hosts.primary)}`);
    cur.advance(10);
    const db = await get(M, id);
    expect(db.status).toBe("active");
    expect(Object.values(db.members as object).sort()).toEqual(["failover", "failover", "primary"]);
    // Two nodes with a move to a dedicated plan in the same update.
    const two = await curApi.put(base, { cluster_size: 2, type: "g6-dedicated-4" });
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(two.body).toMatchObject({ status: "resizing", cluster_size: 2, type: "g6-dedicated-4" });
    cur.advance(10);
    expect((await get(M, id)).status).toBe("active");
  });

  it("version: a major upgrade to a version the engines list offers goes updating, then active; no downgrade", async () => {
    const id = await activePg({ engine: "postgresql/13" });
    const base = `${P}/${String(id)}`;
    expect((await get(P, id)).version).toBe("13.16");
    for (const version of ["18", "12", "x"]) expect(fields(await curApi.put(base, { version })), version).toEqual(["version"]);
    expect((await curApi.put(base, { version: "13" })).body.status).toBe("active"); // the version it runs: nothing to do
    const up = await curApi.put(base, { version: "14" });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: "updating", version: "14.13" });
    cur.advance(10);
    expect(await get(P, id)).toMatchObject({ status: "active", version: "14.13" });
    const down = await curApi.put(base, { version: "13" });
    expect(down.status).toBe(400);
    expect(down.body.errors[0]).toMatchObject({ field: "version", reason: expect.stringMatching(/major version upgrades/) });
    expect((await curApi.put(base, { version: "postgresql/16" })).body).toMatchObject({ status: "updating", version: "16.4" });
    // MySQL has one major version: nothing to upgrade to.
    const my = await activeMy();
    expect((await curApi.put(`${M}/${String(my)}`, { version: "8" })).body.status).toBe("active");
    expect(fields(await curApi.put(`${M}/${String(my)}`, { version: "9" }))).toEqual(["version"]);
  });

  it("legacy: cluster_size and version changes are refused (400 naming them), the same values pass; a larger type still goes updating", async () => {
    const id = (await legApi.post(P, pgBody({ engine: "postgresql/13" }))).body.id as number;
    leg.advance(10);
    const base = `${P}/${String(id)}`;
    expect(fields(await legApi.put(base, { cluster_size: 3 }))).toEqual(["cluster_size"]);
    expect(fields(await legApi.put(base, { version: "14" }))).toEqual(["version"]);
    expect(fields(await legApi.put(base, { cluster_size: 3, version: "14" }))).toEqual(["cluster_size", "version"]);
    expect((await legApi.put(base, { cluster_size: 1, version: "13", label: "legacy-same" })).body).toMatchObject({ status: "active", cluster_size: 1, version: "13" });
    expect((await legApi.put(base, { type: "g6-standard-1" })).body).toMatchObject({ status: "updating", type: "g6-standard-1" });
  });

  it("the admin status endpoint knows resizing on the current platform only", async () => {
    const id = await activeMy();
    expect((await curApi.admin("PUT", `/databases/${String(id)}/status`, { status: "resizing" })).status).toBe(200);
    expect((await get(M, id)).status).toBe("resizing");
    const legacy = (await legApi.admin("POST", "/seed", { databases: { count: 1, labelPrefix: "no-resizing" } })).body.databases.first_id as number;
    expect((await legApi.admin("PUT", `/databases/${String(legacy)}/status`, { status: "resizing" })).status).toBe(400);
  });
});

describe("the state", () => {
  it("keeps engine_config, private_network and fork; a dump made before they existed loads with none", async () => {
    const source = await activeMy();
    const forked = (await curApi.post(M, mysqlBody({ fork: { source }, engine_config: { binlog_retention_period: 700 }, private_network: { vpc_id: 3, subnet_id: 4 } }))).body;
    const dump = (await curApi.admin("GET", "/state")).body as SerializedState;
    const saved = dump.databases.find((d) => d.id === forked.id);
    expect(saved).toMatchObject({ engine_config: { binlog_retention_period: 700 }, private_network: { vpc_id: 3, subnet_id: 4, public_access: false }, fork: { source } });
    const emu = await start({ rateLimits: false, platform: "current" });
    const api = client(emu);
    expect((await api.admin("PUT", "/state", dump)).status).toBe(200);
    expect((await api.get(`${M}/${String(forked.id)}`)).body).toMatchObject({ engine_config: forked.engine_config, private_network: forked.private_network, fork: forked.fork });
    const old = { ...dump, databases: dump.databases.map(({ engine_config: _e, private_network: _p, fork: _f, ...d }) => d) };
    expect((await api.admin("PUT", "/state", old)).status).toBe(200);
    expect((await api.get(`${M}/${String(forked.id)}`)).body).toMatchObject({ engine_config: {}, private_network: null, fork: null });
    await emu.close();
  });
});

describe("planned maintenance (updates.pending)", () => {
  const plan = (emu: RunningEmulator, id: number, body: unknown): Promise<Response> =>
    fetch(`${emu.adminUrl}/databases/${String(id)}/pending-updates`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("is set through the admin API on a current-platform database, listed in updates.pending, and cleared", async () => {
    const id = await activeMy();
    expect((await curApi.get(`${M}/${String(id)}`)).body.updates.pending).toEqual([]);
    const planned = { description: "OS patches", planned_for: "2026-12-01T03:00:00", deadline: "2026-12-08T03:00:00" };
    expect((await plan(cur, id, [planned])).status).toBe(200);
    expect((await curApi.get(`${M}/${String(id)}`)).body.updates.pending).toEqual([planned]);
    expect((await plan(cur, id, [])).status).toBe(200);
    expect((await curApi.get(`${M}/${String(id)}`)).body.updates.pending).toEqual([]);
  });

  it("does not exist on the legacy platform (400), nor for a database that does not (404)", async () => {
    const res = await legApi.post(M, mysqlBody());
    expect((await plan(leg, res.body.id as number, [{ description: "x" }])).status).toBe(400);
    expect((await plan(cur, 99_999_999, [])).status).toBe(404);
  });
});
