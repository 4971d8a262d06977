/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read untyped JSON response bodies */
// What the newest spec (4.234.0) says of database creates and updates, over HTTP: the current
// platform's create takes only its own fields (additionalProperties false: encrypted, the
// replication fields and ssl_connection false are refused), its maintenance window is weekly and
// 4 hours; the legacy platform takes what it always did. And Valkey (limited availability):
// listed and creatable only where the emulator offers it. The answers' texts are guesses
// (src/emulator/databases/facts.md); the status codes and fields are what is asserted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, fields, mysqlBody, pgBody, start } from "./helpers.ts";

const M = "/databases/mysql/instances";
const P = "/databases/postgresql/instances";
const V = "/databases/valkey/instances";
/** An emulator of the test's own for one describe, and a client of it. */
function useEmulator(opts: Parameters<typeof start>[0]): { emu: () => RunningEmulator; api: () => ReturnType<typeof client> } {
  let emu: RunningEmulator | undefined;
  beforeAll(async () => { emu = await start({ rateLimits: false, ...opts }); });
  afterAll(async () => { await emu?.close(); });
  const running = (): RunningEmulator => emu as RunningEmulator;
  return { emu: running, api: () => client(running()) };
}

const valkeyBody = (over: Record<string, unknown> = {}) => ({ label: `vk-${Math.random().toString(36).slice(2, 10)}`, region: "us-east", type: "g6-nanode-1", engine: "valkey/8", ...over });

describe("current platform: the create takes only the fields its schema has", () => {
  const { emu, api } = useEmulator({ platform: "current" });

  it.each([
    ["encrypted", M, mysqlBody({ encrypted: true })],
    ["encrypted (false)", M, mysqlBody({ encrypted: false })],
    ["replication_type", M, mysqlBody({ cluster_size: 3, replication_type: "semi_synch" })],
    ["replication_type (none)", P, pgBody({ replication_type: "none" })],
    ["replication_commit_type", P, pgBody({ cluster_size: 3, replication_commit_type: "local" })],
    ["ssl_connection", M, mysqlBody({ ssl_connection: false })],
    ["updates", M, mysqlBody({ updates: { frequency: "monthly", duration: 3, hour_of_day: 1, day_of_week: 1, week_of_month: 2 } })],
  ])("refuses %s with a 400 naming it, and creates nothing", async (name, path, body) => {
    const before = (await api().get(path)).body.results;
    const res = await api().post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(fields(res)).toContain(name.split(" ")[0]);
    expect((await api().get(path)).body.results).toBe(before);
  });

  it("creates with the fields it has, ssl_connection: true among them", async () => {
    const res = await api().post(P, pgBody({ cluster_size: 3, ssl_connection: true, allow_list: ["203.0.113.1"] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ platform: "rdbms-default", encrypted: true, ssl_connection: true, updates: { frequency: "weekly", duration: 4 } });
  });

  it("an update's maintenance window: weekly and 4 hours only", async () => {
    const id = (await api().post(M, mysqlBody())).body.id as number;
    emu().advance(5);
    const window = { frequency: "weekly", duration: 4, hour_of_day: 2, day_of_week: 6 };
    for (const [updates, field] of [[{ ...window, duration: 3 }, "updates.duration"], [{ ...window, duration: 1 }, "updates.duration"], [{ ...window, frequency: "monthly", week_of_month: 2 }, "updates.frequency"]] as const) {
      const res = await api().put(`${M}/${String(id)}`, { updates });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(fields(res)).toEqual([field]);
    }
    expect((await api().get(`${M}/${String(id)}`)).body.updates).toMatchObject({ frequency: "weekly", duration: 4 });
    const ok = await api().put(`${M}/${String(id)}`, { updates: window });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.updates).toMatchObject({ hour_of_day: 2, day_of_week: 6, duration: 4 });
  });
});

describe("legacy platform: the create takes what it always did", () => {
  const { api } = useEmulator({});

  it("encrypted, ssl_connection and the replication fields", async () => {
    const res = await api().post(P, pgBody({ cluster_size: 3, encrypted: true, ssl_connection: false, replication_type: "asynch", replication_commit_type: "off" }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ platform: "rdbms-legacy", encrypted: true, ssl_connection: false, replication_type: "asynch", replication_commit_type: "off" });
  });
});

describe("Valkey, not offered (the default)", () => {
  const { api } = useEmulator({ platform: "current" });

  it("is not listed, not found by id, and a create is refused naming the engine", async () => {
    const engines = (await api().get("/databases/engines")).body.data as { engine: string }[];
    expect(engines.map((e) => e.engine)).not.toContain("valkey");
    expect(engines.length).toBeGreaterThan(0);
    expect((await api().get("/databases/engines/valkey%2F8")).status).toBe(404);
    const res = await api().post(V, valkeyBody());
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(["engine"]);
    expect((await api().get(V)).body.results).toBe(0);
  });
});

describe("Valkey, offered (config valkey: true)", () => {
  // A legacy server: Valkey databases are made on the current platform all the same.
  const { emu, api } = useEmulator({ config: { valkey: true } });

  it("is listed, and a database is made on the current platform, with credentials and a CA, no disk use, no restore point", async () => {
    const engines = (await api().get("/databases/engines")).body.data as { id: string; engine: string }[];
    expect(engines.filter((e) => e.engine === "valkey").map((e) => e.id)).toEqual(["valkey/8"]);
    expect((await api().get("/databases/engines/valkey%2F8")).body).toMatchObject({ engine: "valkey", version: "8" });
    const made = await api().post(V, valkeyBody({ cluster_size: 3, allow_list: ["203.0.113.9"] }));
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ engine: "valkey", platform: "rdbms-default", status: "provisioning", encrypted: true, ssl_connection: true });
    const id = made.body.id as number;
    emu().advance(5);
    const db = (await api().get(`${V}/${String(id)}`)).body;
    expect(db).toMatchObject({ status: "active", used_disk_size_gb: null, oldest_restore_time: null, cluster_size: 3 });
    expect(db.hosts.primary).toMatch(/akamaidb\.net$/);
    expect((await api().get(`${V}/${String(id)}/credentials`)).body).toEqual({ username: "default", password: expect.any(String) as string });
    expect((await api().get(`${V}/${String(id)}/ssl`)).body.ca_certificate).toEqual(expect.any(String));
    expect((await api().get(`${V}/${String(id)}/backups`)).status).toBe(404);
    const all = (await api().get("/databases/instances")).body.data as { engine: string }[];
    expect(all.map((d) => d.engine)).toContain("valkey");
  });

  it("refuses a create of another engine's fields, a fork and any engine parameter", async () => {
    const source = (await api().post(V, valkeyBody())).body.id as number;
    emu().advance(5);
    for (const [body, field] of [
      [valkeyBody({ replication_type: "none" }), "replication_type"],
      [valkeyBody({ fork: { source } }), "fork"],
      [valkeyBody({ engine_config: { maxmemory_policy: "allkeys-lru" } }), "engine_config.maxmemory_policy"],
    ] as const) {
      const res = await api().post(V, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(fields(res)).toEqual([field]);
    }
    expect((await api().get("/databases/valkey/config")).body).toEqual({});
  });
});
