/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return -- assertions read untyped JSON response bodies */
// Each database has its own platform (legacy = rdbms-legacy, the spec's; current =
// rdbms-default, the real API's today), set at creation from the server's --platform or by the
// seed, kept in the state file, and every response about it is in its own platform's shape.
// The current platform as recorded (test/fixtures/recorded: TestDatabase_List,
// TestDatabase_MySQL_Suite) and without backups (none in the current platform's API).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import type { SerializedState } from "../../src/emulator/store.ts";
import { client, mysqlBody, pgBody, start } from "./helpers.ts";

const M = "/databases/mysql/instances";
const P = "/databases/postgresql/instances";
const ALL = "/databases/instances";
const NOT_FOUND = { errors: [{ reason: "Not found" }] };

type Api = ReturnType<typeof client>;

/** The legacy (spec) shape: replication fields, hosts {primary, secondary}, week_of_month, no current-only keys. */
function expectLegacyShape(db: Record<string, any>): void {
  expect(db.platform).toBe("rdbms-legacy");
  expect(db).toHaveProperty("replication_type");
  expect(Object.keys(db.hosts as object).sort()).toEqual(["primary", "secondary"]);
  expect(db.updates).toHaveProperty("week_of_month");
  expect(db.updates).not.toHaveProperty("pending");
  for (const key of ["engine_config", "private_network", "oldest_restore_time", "fork"]) expect(db).not.toHaveProperty(key);
}

/** The current shape: no replication fields, hosts {primary, standby}, updates.pending, engine_config, private_network. */
function expectCurrentShape(db: Record<string, any>): void {
  expect(db).toMatchObject({ platform: "rdbms-default", encrypted: true, ssl_connection: true, engine_config: {}, private_network: null, fork: null });
  for (const key of ["replication_type", "replication_commit_type", "instance_uri"]) expect(db).not.toHaveProperty(key);
  expect(Object.keys(db.hosts as object).sort()).toEqual(["primary", "standby"]);
  expect(db.updates).not.toHaveProperty("week_of_month");
  expect(db.updates.pending).toEqual([]);
}

const byId = (list: Record<string, any>[], id: number) => list.find((d) => d.id === id) as Record<string, any>;

describe("one emulator, both platforms", () => {
  let emu: RunningEmulator;
  let api: Api;
  let seeded: { legacy: number; current: number; currentPg: number };
  beforeAll(async () => {
    emu = await start({ rateLimits: false }); // --platform legacy (the default)
    api = client(emu);
    const res = await api.admin("POST", "/seed", {
      databases: [
        { count: 2, labelPrefix: "old" },
        { count: 2, platform: "current", labelPrefix: "new" },
        { count: 1, platform: "current", engine: "postgresql", labelPrefix: "newpg" },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.databases).toMatchObject([
      { count: 2, platform: "legacy" }, { count: 2, platform: "current" }, { count: 1, platform: "current" },
    ]);
    seeded = { legacy: res.body.databases[0].first_id, current: res.body.databases[1].first_id, currentPg: res.body.databases[2].first_id };
  });
  afterAll(async () => { await emu.close(); });

  it("serves seeded databases of both platforms each in its own shape (get, list)", async () => {
    expectLegacyShape((await api.get(`${M}/${String(seeded.legacy)}`)).body);
    const current = (await api.get(`${M}/${String(seeded.current)}`)).body;
    expectCurrentShape(current);
    expect(current.version).toBe("8.0.35");
    const pg = (await api.get(`${P}/${String(seeded.currentPg)}`)).body;
    expectCurrentShape(pg);
    expect(pg.version).toBe("16.4");
    const list = (await api.get(M)).body;
    expect(list.results).toBe(4);
    expectLegacyShape(byId(list.data, seeded.legacy));
    expectCurrentShape(byId(list.data, seeded.current));
    // The seed's single-group form still works and takes the server's platform.
    const one = await api.admin("POST", "/seed", { databases: { count: 1, labelPrefix: "single" } });
    expect(one.body.databases).toMatchObject({ count: 1, platform: "legacy" });
    expect((await api.admin("POST", "/seed", { databases: { count: 1, platform: "modern" } })).status).toBe(400);
  });

  it("creates on the server's platform; a database keeps its platform when that changes", async () => {
    const legacy = await api.post(M, mysqlBody());
    expect(legacy.status).toBe(200);
    expectLegacyShape(legacy.body);
    emu.context.platform = "current"; // what a restart with --platform current does for new creates
    try {
      const current = await api.post(M, mysqlBody());
      expect(current.status).toBe(200);
      expectCurrentShape(current.body);
      emu.advance(1);
      expectLegacyShape((await api.get(`${M}/${String(legacy.body.id)}`)).body);
      expectCurrentShape((await api.get(`${M}/${String(current.body.id)}`)).body);
    } finally {
      emu.context.platform = "legacy";
    }
  });

  it("filters on platform", async () => {
    const filter = (platform: string) => api.get(`${ALL}?page_size=500`, { headers: { "X-Filter": JSON.stringify({ platform }) } });
    const current = (await filter("rdbms-default")).body.data as Record<string, any>[];
    const legacy = (await filter("rdbms-legacy")).body.data as Record<string, any>[];
    expect(current.length).toBeGreaterThanOrEqual(3);
    expect(legacy.length).toBeGreaterThanOrEqual(2);
    expect(current.every((d) => d.platform === "rdbms-default")).toBe(true);
    expect(legacy.map((d) => d.id)).not.toContain(seeded.current);
  });

  it("GET /databases/instances: full objects for current databases, the reduced shape for legacy ones", async () => {
    const all = (await api.get(`${ALL}?page_size=500`)).body.data as Record<string, any>[];
    const legacy = byId(all, seeded.legacy);
    expect(Object.keys(legacy).sort()).toEqual(["allow_list", "cluster_size", "created", "encrypted", "engine", "hosts", "id", "instance_uri", "label", "region", "status", "type", "updated", "updates", "version"]);
    expect(byId(all, seeded.current)).toEqual((await api.get(`${M}/${String(seeded.current)}`)).body);
    expect(byId(all, seeded.currentPg)).toEqual((await api.get(`${P}/${String(seeded.currentPg)}`)).body);
  });
});

describe("the current platform as recorded (TestDatabase_List, TestDatabase_MySQL_Suite)", () => {
  let emu: RunningEmulator;
  let api: Api;
  beforeAll(async () => { emu = await start({ rateLimits: false, platform: "current" }); api = client(emu); });
  afterAll(async () => { await emu.close(); });

  it("the create response already has hosts (legacy: null), shows the major version, later reads the full one", async () => {
    const my = await api.post(M, mysqlBody({ cluster_size: 3 }));
    expect(my.status).toBe(200);
    expect(my.body).toMatchObject({ status: "provisioning", version: "8", members: {}, used_disk_size_gb: null });
    expect(my.body.hosts.primary).toBe(`a${String(my.body.id)}-akamai-prod-${String(my.body.hosts.primary).split("-")[3]}-default.g2a.akamaidb.net`);
    expect(my.body.hosts.standby).toBe(`replica-${String(my.body.hosts.primary)}`);
    expect(my.body).not.toHaveProperty("oldest_restore_time");
    const pg = await api.post(P, pgBody({ engine: "postgresql/14" }));
    expect(pg.body.version).toBe("14");
    // Reads while provisioning already show the full version and the hosts.
    const provisioning = (await api.get(`${M}/${String(my.body.id)}`)).body;
    expect(provisioning).toMatchObject({ status: "provisioning", version: "8.0.35", hosts: my.body.hosts });
    emu.advance(1);
    expect((await api.get(`${M}/${String(my.body.id)}`)).body).toMatchObject({ status: "active", version: "8.0.35", hosts: my.body.hosts });
    expect((await api.get(`${P}/${String(pg.body.id)}`)).body.version).toBe("14.13");

    const legacyEmu = await start({ rateLimits: false });
    const legacy = await client(legacyEmu).post(M, mysqlBody());
    expect(legacy.body).toMatchObject({ version: "8", hosts: { primary: null, secondary: null } });
    await legacyEmu.close();
  });

  it("an update answers active and stays active (legacy: updating)", async () => {
    const id = (await api.post(M, mysqlBody())).body.id as number;
    emu.advance(1);
    // The recorded update (a resize is not: it goes `resizing`, current-platform-features.test.ts).
    const put = await api.put(`${M}/${String(id)}`, { label: "updated-label", allow_list: ["192.0.2.0"], updates: { day_of_week: 3, duration: 4, frequency: "weekly", hour_of_day: 8 } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ status: "active", label: "updated-label", allow_list: ["192.0.2.0/32"], updates: { hour_of_day: 8, duration: 4 } });
    expect((await api.get(`${M}/${String(id)}`)).body.status).toBe("active");

    const legacyEmu = await start({ rateLimits: false });
    const lapi = client(legacyEmu);
    const lid = (await lapi.post(M, mysqlBody())).body.id as number;
    legacyEmu.advance(1);
    expect((await lapi.put(`${M}/${String(lid)}`, { allow_list: ["192.0.2.0"] })).body.status).toBe("updating");
    expect((await lapi.get(`${M}/${String(lid)}`)).body.status).toBe("updating");
    legacyEmu.advance(1);
    expect((await lapi.get(`${M}/${String(lid)}`)).body.status).toBe("active");
    await legacyEmu.close();
  });

  it("members (IP -> primary/failover) and a standby host for 2- and 3-node clusters, none for 1", async () => {
    const one = (await api.post(M, mysqlBody())).body.id as number;
    const two = await api.post(M, mysqlBody({ cluster_size: 2, type: "g6-dedicated-2" }));
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    const three = (await api.post(P, pgBody({ cluster_size: 3 }))).body.id as number;
    emu.advance(1);
    const get = async (path: string, id: number) => (await api.get(`${path}/${String(id)}`)).body as Record<string, any>;
    const roles = (db: Record<string, any>) => Object.values(db.members as Record<string, string>).sort();
    const d1 = await get(M, one);
    expect(d1.hosts.standby).toBeNull();
    expect(roles(d1)).toEqual(["primary"]);
    const d2 = await get(M, two.body.id as number);
    expect(d2.hosts.standby).toBe(`replica-${String(d2.hosts.primary)}`);
    expect(roles(d2)).toEqual(["failover", "primary"]);
    const d3 = await get(P, three);
    expect(d3.hosts.standby).toBe(`replica-${String(d3.hosts.primary)}`);
    expect(roles(d3)).toEqual(["failover", "failover", "primary"]);
    for (const ip of Object.keys(d3.members as object)) expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // Two nodes need a dedicated plan, and exist only on the current platform.
    const shared = await api.post(M, mysqlBody({ cluster_size: 2 }));
    expect(shared.status).toBe(400);
    expect(shared.body.errors[0].field).toBe("cluster_size");
    const legacyEmu = await start({ rateLimits: false });
    const legacyTwo = await client(legacyEmu).post(M, mysqlBody({ cluster_size: 2, type: "g6-dedicated-2" }));
    expect(legacyTwo.status).toBe(400);
    expect(legacyTwo.body.errors[0]).toEqual({ field: "cluster_size", reason: "Must be 1 or 3" });
    await legacyEmu.close();
  });

  it("never shows backing_up or restoring: no backups to take or restore, none kept, the admin endpoint refuses them", async () => {
    const id = (await api.post(M, mysqlBody())).body.id as number;
    emu.advance(1);
    expect((await api.post(`${M}/${String(id)}/backups`, { label: "snap1", target: "primary" })).status).toBe(404);
    expect((await api.get(`${M}/${String(id)}`)).body.status).toBe("active");
    emu.advance(3 * 24 * 3600); // three days: a legacy database would have automatic backups by now
    const record = emu.dump().databases.find((d) => d.id === id);
    expect(record?.backups).toEqual([]);
    for (const status of ["backing_up", "restoring"]) {
      const res = await api.admin("PUT", `/databases/${String(id)}/status`, { status });
      expect(res.status).toBe(400);
    }
    expect((await api.admin("PUT", `/databases/${String(id)}/status`, { status: "degraded" })).status).toBe(200);
    expect((await api.get(`${M}/${String(id)}`)).body.status).toBe("degraded");
  });
});

describe("backups routes: refused for a current-platform database, unchanged for a legacy one", () => {
  let emu: RunningEmulator;
  let api: Api;
  let legacy: number;
  let current: number;
  beforeAll(async () => {
    emu = await start({ rateLimits: false });
    api = client(emu);
    const res = await api.admin("POST", "/seed", { databases: [{ count: 1, labelPrefix: "bk-old" }, { count: 1, platform: "current", labelPrefix: "bk-new" }] });
    legacy = res.body.databases[0].first_id as number;
    current = res.body.databases[1].first_id as number;
    emu.advance(2 * 24 * 3600); // automatic daily backups for the legacy one
  });
  afterAll(async () => { await emu.close(); });

  it("answers 404 Not found to every backups route of a current database, and changes nothing", async () => {
    const base = `${M}/${String(current)}/backups`;
    const before = JSON.stringify((await api.get(`${M}/${String(current)}`)).body);
    const answers = [
      await api.get(base),
      await api.get(`${base}/1400001`),
      await api.post(base, { label: "snap1", target: "primary" }),
      await api.post(`${base}/1400001/restore`),
      await api.del(`${base}/1400001`),
    ];
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    expect(JSON.stringify((await api.get(`${M}/${String(current)}`)).body)).toBe(before);
    // A legacy database's backup id does not become reachable through a current database.
    const legacyBackup = (await api.get(`${M}/${String(legacy)}/backups`)).body.data[0].id as number;
    expect((await api.get(`${base}/${String(legacyBackup)}`)).status).toBe(404);
  });

  it("lists, takes, shows, restores and deletes backups of a legacy database as before", async () => {
    const base = `${M}/${String(legacy)}/backups`;
    const autos = (await api.get(base)).body;
    expect(autos.results).toBeGreaterThanOrEqual(1);
    expect(autos.data[0]).toMatchObject({ type: "auto" });
    expect((await api.post(base, { label: "snap1", target: "primary" })).body).toEqual({});
    expect((await api.get(`${M}/${String(legacy)}`)).body.status).toBe("backing_up");
    emu.advance(1);
    const snap = ((await api.get(base)).body.data as Record<string, any>[]).find((b) => b.type === "snapshot");
    expect(snap).toMatchObject({ label: "snap1" });
    expect((await api.get(`${base}/${String(snap?.id)}`)).body).toEqual(snap);
    expect((await api.post(`${base}/${String(snap?.id)}/restore`)).body).toEqual({});
    expect((await api.get(`${M}/${String(legacy)}`)).body.status).toBe("restoring");
    emu.advance(1);
    expect((await api.get(`${M}/${String(legacy)}`)).body.status).toBe("active");
    expect((await api.del(`${base}/${String(snap?.id)}`)).body).toEqual({});
    expect((await api.get(`${base}/${String(snap?.id)}`)).status).toBe(404);
  });
});

describe("the state file keeps each database's platform", () => {
  it("round trip: databases of both platforms made by POST under two --platform values, then served each in its shape", async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), "emu-platforms-")), "state.json");
    const first = await start({ stateFile, rateLimits: false });
    const legacy = (await client(first).post(M, mysqlBody({ label: "kept-legacy" }))).body.id as number;
    await first.close();

    const second = await start({ stateFile, rateLimits: false, platform: "current" });
    const c2 = client(second);
    const current = (await c2.post(P, pgBody({ label: "kept-current" }))).body.id as number;
    second.advance(1);
    expectLegacyShape((await c2.get(`${M}/${String(legacy)}`)).body);
    expectCurrentShape((await c2.get(`${P}/${String(current)}`)).body);
    await second.close();

    const saved = JSON.parse(readFileSync(stateFile, "utf8")) as SerializedState;
    expect(saved.databases.map((d) => [d.id, d.platform])).toEqual([[legacy, "legacy"], [current, "current"]]);

    const third = await start({ stateFile, rateLimits: false }); // back to legacy for new creates
    const c3 = client(third);
    third.advance(1);
    expectLegacyShape((await c3.get(`${M}/${String(legacy)}`)).body);
    expectCurrentShape((await c3.get(`${P}/${String(current)}`)).body);
    expect((await c3.get(`${P}/${String(current)}/backups`)).status).toBe(404);
    expect((await c3.get(`${M}/${String(legacy)}/backups`)).status).toBe(200);
    await third.close();
  });

  it("a state file written before databases had a platform loads them as the loading server's platform", async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), "emu-platforms-old-")), "state.json");
    const writer = await start({ stateFile, rateLimits: false });
    const id = (await client(writer).post(M, mysqlBody({ label: "from-before" }))).body.id as number;
    await writer.close();
    const old = JSON.parse(readFileSync(stateFile, "utf8")) as SerializedState;
    for (const d of old.databases) delete (d as Partial<(typeof old.databases)[number]>).platform;
    writeFileSync(stateFile, JSON.stringify(old));

    for (const platform of ["legacy", "current"] as const) {
      const emu = await start({ stateFile, rateLimits: false, platform });
      emu.advance(1);
      const db = (await client(emu).get(`${M}/${String(id)}`)).body;
      expect(db.platform).toBe(platform === "current" ? "rdbms-default" : "rdbms-legacy");
      await emu.close();
      writeFileSync(stateFile, JSON.stringify(old)); // close() saved the platform it gave
    }
  });

  it("the admin state dump and load keep platforms (and a dump without them takes the server's)", async () => {
    const emu = await start({ rateLimits: false });
    const api = client(emu);
    const seeded = (await api.admin("POST", "/seed", { databases: [{ count: 1 }, { count: 1, platform: "current" }] })).body.databases as { first_id: number }[];
    const dump = (await api.admin("GET", "/state")).body as SerializedState;
    expect(dump.databases.map((d) => d.platform)).toEqual(["legacy", "current"]);
    await api.admin("DELETE", "/state");
    expect((await api.admin("PUT", "/state", dump)).status).toBe(200);
    expect((await api.get(`${M}/${String(seeded[1]?.first_id)}`)).body.platform).toBe("rdbms-default");
    expect((await api.get(`${M}/${String(seeded[0]?.first_id)}`)).body.platform).toBe("rdbms-legacy");
    const stripped = { ...dump, databases: dump.databases.map(({ platform: _p, ...d }) => d) };
    expect((await api.admin("PUT", "/state", stripped)).status).toBe(200);
    expect((await api.get(`${M}/${String(seeded[1]?.first_id)}`)).body.platform).toBe("rdbms-legacy");
    await emu.close();
  });
});
