/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call -- assertions read untyped JSON response bodies */
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, fields, mysqlBody, pgBody, start } from "./helpers.ts";

let emu: RunningEmulator;
let api: ReturnType<typeof client>;
beforeAll(async () => { emu = await start({ provisionSeconds: 10, rateLimits: false }); api = client(emu); });
afterAll(async () => { await emu.close(); });

const M = "/databases/mysql/instances";
const P = "/databases/postgresql/instances";

async function activeDb(engine: "mysql" | "postgresql" = "mysql", over: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(engine === "mysql" ? M : P, engine === "mysql" ? mysqlBody(over) : pgBody(over));
  expect(res.status).toBe(200);
  emu.advance(10);
  return res.body.id as number;
}

describe("engines and types", () => {
  it("lists engines and views one by encoded or raw engine id", async () => {
    const list = await api.get("/databases/engines");
    expect(list.body.results).toBe(6);
    expect(list.body.data[0]).toEqual({ engine: "mysql", id: "mysql/8", version: "8" });
    expect((await api.get("/databases/engines/mysql%2F8")).body.id).toBe("mysql/8");
    expect((await api.get("/databases/engines/postgresql/16")).body.version).toBe("16");
    expect((await api.get("/databases/engines/mysql%2F5")).status).toBe(404);
  });
  it("lists and views node types", async () => {
    const list = await api.get("/databases/types");
    expect(list.body.data.map((t: { id: string }) => t.id)).toContain("g6-nanode-1");
    const one = await api.get("/databases/types/g6-dedicated-2");
    expect(Object.keys(one.body.engines)).toEqual(["mysql", "postgresql"]);
    expect((await api.get("/databases/types/nope")).status).toBe(404);
  });
});

describe("the answers' Date header", () => {
  it("is the emulated clock's, as records' times are: a record an answer changed is `updated` in that answer's second", async () => {
    const id = await activeDb();
    emu.advance(3_600);
    const view = await api.get(`${M}/${String(id)}`);
    const served = Date.parse(view.headers.get("date") ?? "");
    // An hour on, as the clock was moved: not the real time the answer left.
    expect(served - Date.now()).toBeGreaterThan(3_500_000);
    const change = await api.put(`${M}/${String(id)}`, { allow_list: ["203.0.113.7/32"] });
    expect(change.status).toBe(200);
    const after = await api.get(`${M}/${String(id)}`);
    const updated = Date.parse(`${String(after.body.updated)}Z`);
    // The same second (or the next, should the answer cross a second's edge).
    const gap = Math.floor(Date.parse(change.headers.get("date") ?? "") / 1000) - Math.floor(updated / 1000);
    expect(gap === 0 || gap === 1).toBe(true);
  });
});

describe("create", () => {
  it("applies the spec defaults (MySQL) and answers provisioning with null hosts", async () => {
    const res = await api.post(M, mysqlBody({ allow_list: ["203.0.113.9", "0.0.0.0/0", "192.0.1.0/24"] }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "provisioning", cluster_size: 1, encrypted: false, ssl_connection: true, engine: "mysql", version: "8",
      replication_type: "none", port: 3306, hosts: { primary: null, secondary: null },
      allow_list: ["0.0.0.0/0", "192.0.1.0/24", "203.0.113.9/32"],
    });
    expect(res.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(res.body).not.toHaveProperty("replication_commit_type");
  });
  it("applies PostgreSQL defaults, HA replication defaults per engine", async () => {
    const pg = await api.post(P, pgBody({ cluster_size: 3 }));
    expect(pg.body).toMatchObject({ engine: "postgresql", port: 5432, replication_type: "asynch", replication_commit_type: "local" });
    const my = await api.post(M, mysqlBody({ cluster_size: 3 }));
    expect(my.body.replication_type).toBe("semi_synch");
  });
  it.each([
    [{ label: "ab" }, "label"],
    [{ label: "x".repeat(33) }, "label"],
    [{ region: undefined }, "region"],
    [{ type: undefined }, "type"],
    [{ engine: undefined }, "engine"],
    [{ region: "mars-1" }, "region"],
    [{ type: "g6-huge-99" }, "type"],
    [{ engine: "postgresql/16" }, "engine"],
    [{ engine: "mysql/5.7" }, "engine"],
    [{ cluster_size: 2 }, "cluster_size"],
    [{ encrypted: "yes" }, "encrypted"],
    [{ ssl_connection: 1 }, "ssl_connection"],
    [{ allow_list: ["300.1.1.1"] }, "allow_list[0]"],
    [{ allow_list: ["10.0.0.0/33"] }, "allow_list[0]"],
    [{ allow_list: "10.0.0.1" }, "allow_list"],
    [{ replication_type: "sync" }, "replication_type"],
    [{ replication_type: "asynch" }, "replication_type"],
    [{ cluster_size: 3, replication_type: "none" }, "replication_type"],
    [{ replication_commit_type: "local" }, "replication_commit_type"],
  ])("MySQL %j -> 400 naming %s", async (over, field) => {
    const res = await api.post(M, mysqlBody(over));
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it.each([
    [{ replication_type: "semi_synch", cluster_size: 3 }, "replication_type"],
    [{ replication_commit_type: "sometimes" }, "replication_commit_type"],
    [{ engine: "mysql/8" }, "engine"],
  ])("PostgreSQL %j -> 400 naming %s", async (over, field) => {
    const res = await api.post(P, pgBody(over));
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it("keeps labels unique per engine", async () => {
    expect((await api.post(M, mysqlBody({ label: "shared-label" }))).status).toBe(200);
    const dup = await api.post(M, mysqlBody({ label: "shared-label" }));
    expect(dup.status).toBe(400);
    expect(fields(dup)).toEqual(["label"]);
    expect((await api.post(P, pgBody({ label: "shared-label" }))).status).toBe(200);
  });
});

describe("state machine", () => {
  it("provisions after provisionSeconds, then gets hosts and members", async () => {
    const id = (await api.post(M, mysqlBody({ cluster_size: 3 }))).body.id as number;
    emu.advance(9);
    expect((await api.get(`${M}/${id}`)).body.status).toBe("provisioning");
    emu.advance(1);
    const db = (await api.get(`${M}/${id}`)).body;
    expect(db.status).toBe("active");
    expect(db.hosts.primary).toBe(`lin-${id}-${db.hosts.primary.split("-")[2]}-mysql-primary.servers.linodedb.net`);
    expect(Object.values(db.members).sort()).toEqual(["failover", "failover", "primary"]);
    for (const ip of Object.keys(db.members)) expect(ip).toMatch(/^(203\.0\.113|198\.51\.100)\./);
  });
  it("enforces status preconditions while provisioning", async () => {
    const id = (await api.post(M, mysqlBody())).body.id as number;
    for (const [method, path] of [["PUT", ""], ["DELETE", ""], ["GET", "/credentials"], ["GET", "/ssl"], ["POST", "/patch"], ["GET", "/backups"], ["POST", "/backups"]] as const) {
      const res = method === "PUT" ? await api.put(`${M}/${id}${path}`, { label: "newlabel" })
        : method === "DELETE" ? await api.del(`${M}/${id}`)
          : method === "GET" ? await api.get(`${M}/${id}${path}`) : await api.post(`${M}/${id}${path}`, { label: "snap1" });
      expect(res.status, `${method} ${path}`).toBe(400);
    }
  });
  it("updates label and window in place; allow_list and resize pass through updating", async () => {
    const id = await activeDb();
    const lab = await api.put(`${M}/${id}`, { label: "renamed-db", updates: { frequency: "monthly", week_of_month: 2, duration: 4, hour_of_day: 23, day_of_week: 7 } });
    expect(lab.body).toMatchObject({ status: "active", label: "renamed-db", updates: { frequency: "monthly", week_of_month: 2, duration: 4 } });
    const acl = await api.put(`${M}/${id}`, { allow_list: ["198.51.100.7"] });
    expect(acl.body).toMatchObject({ status: "updating", allow_list: ["198.51.100.7/32"] });
    expect((await api.put(`${M}/${id}`, { label: "again-renamed" })).status).toBe(400);
    emu.advance(10);
    const small = await api.put(`${M}/${id}`, { type: "g6-nanode-1" });
    expect(small.status).toBe(200);
    const resize = await api.put(`${M}/${id}`, { type: "g6-standard-2" });
    expect(resize.body).toMatchObject({ status: "updating", type: "g6-standard-2" });
    emu.advance(10);
    const down = await api.put(`${M}/${id}`, { type: "g6-standard-1" });
    expect(fields(down)).toEqual(["type"]);
    expect(fields(await api.put(`${M}/${id}`, { type: "g6-mega" }))).toEqual(["type"]);
  });
  it.each([
    [{ label: "no" }, "label"],
    [{ allow_list: ["1.2.3"] }, "allow_list[0]"],
    [{ updates: { duration: 5 } }, "updates.duration"],
    [{ updates: { duration: 0 } }, "updates.duration"],
    [{ updates: { hour_of_day: 24 } }, "updates.hour_of_day"],
    [{ updates: { day_of_week: 0 } }, "updates.day_of_week"],
    [{ updates: { day_of_week: 8 } }, "updates.day_of_week"],
    [{ updates: { week_of_month: 5 } }, "updates.week_of_month"],
    [{ updates: { frequency: "daily" } }, "updates.frequency"],
    [{ updates: { frequency: "monthly", week_of_month: null } }, "updates.week_of_month"],
  ])("update %j -> 400 naming %s", async (body, field) => {
    const id = await activeDb();
    const res = await api.put(`${M}/${id}`, body);
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  });
  it("patch goes updating -> active; delete needs active/failed/degraded", async () => {
    const id = await activeDb();
    expect((await api.post(`${M}/${id}/patch`)).body).toEqual({});
    expect((await api.get(`${M}/${id}`)).body.status).toBe("updating");
    expect((await api.del(`${M}/${id}`)).status).toBe(400);
    emu.advance(10);
    expect((await api.get(`${M}/${id}`)).body.status).toBe("active");
    const del = await api.del(`${M}/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect((await api.get(`${M}/${id}`)).status).toBe(404);
  });
  it("deletes degraded databases (status forced through the admin endpoint)", async () => {
    const id = await activeDb();
    expect((await api.admin("PUT", `/databases/${id}/status`, { status: "degraded" })).status).toBe(200);
    expect((await api.post(`${M}/${id}/patch`)).status).toBe(400);
    expect((await api.del(`${M}/${id}`)).status).toBe(200);
  });
  it("refuses suspend and resume: a legacy database (the current platform's: current-platform-features.test.ts)", async () => {
    const id = await activeDb();
    for (const action of ["suspend", "resume"]) {
      const res = await api.post(`${M}/${id}/${action}`, {});
      expect(res.status).toBe(400);
      expect(res.body.errors[0].reason).toMatch(/legacy database platform/);
    }
    expect((await api.get(`${M}/${id}`)).body.status).toBe("active");
  });
  it("uses the wrong engine's path as not found", async () => {
    const id = await activeDb();
    expect((await api.get(`${P}/${id}`)).status).toBe(404);
    expect((await api.get(`${M}/999999999`)).status).toBe(404);
  });
});

describe.each([["mysql", M], ["postgresql", P]] as const)("%s credentials, ssl, backups", (engine, base) => {
  it("shows credentials; a reset changes the password after a few seconds", async () => {
    const id = await activeDb(engine);
    const before = (await api.get(`${base}/${id}/credentials`)).body;
    expect(before.username).toBe(engine === "mysql" ? "linroot" : "linpostgres");
    expect((await api.post(`${base}/${id}/credentials/reset`)).body).toEqual({});
    expect((await api.get(`${base}/${id}/credentials`)).body.password).toBe(before.password);
    emu.advance(10);
    const after = (await api.get(`${base}/${id}/credentials`)).body.password as string;
    expect(after).not.toBe(before.password);
    expect(after.length).toBeGreaterThanOrEqual(16);
  });
  it("serves a parseable base64 PEM CA certificate", async () => {
    const id = await activeDb(engine);
    const ssl = await api.get(`${base}/${id}/ssl`);
    const pem = Buffer.from(ssl.body.ca_certificate as string, "base64").toString("utf8");
    const cert = new X509Certificate(pem);
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
  });
  it("snapshots: backing_up, one at a time, at most 3, label rules, view/delete/restore", async () => {
    const id = await activeDb(engine);
    expect((await api.get(`${base}/${id}/backups`)).body).toEqual({ data: [], page: 1, pages: 1, results: 0 });
    for (const [body, field] of [[{}, "label"], [{ label: "" }, "label"], [{ label: "x".repeat(31) }, "label"], [{ label: "has space" }, "label"], [{ label: "ok", target: "tertiary" }, "target"]] as const) {
      const res = await api.post(`${base}/${id}/backups`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(fields(res)).toContain(field);
    }
    expect((await api.post(`${base}/${id}/backups`, { label: "snap1", target: "primary" })).body).toEqual({});
    expect((await api.get(`${base}/${id}`)).body.status).toBe("backing_up");
    expect((await api.post(`${base}/${id}/backups`, { label: "snap2" })).status).toBe(400);
    emu.advance(10);
    expect((await api.get(`${base}/${id}`)).body.status).toBe("active");
    for (const label of ["snap2", "snap3"]) {
      expect((await api.post(`${base}/${id}/backups`, { label })).status).toBe(200);
      emu.advance(10);
    }
    const fourth = await api.post(`${base}/${id}/backups`, { label: "snap4" });
    expect(fourth.status).toBe(400);
    const list = (await api.get(`${base}/${id}/backups`)).body;
    expect(list.results).toBe(3);
    expect(list.data[0]).toMatchObject({ type: "snapshot", label: "snap1" });
    const backupId = list.data[0].id as number;
    expect((await api.get(`${base}/${id}/backups/${backupId}`)).body.label).toBe("snap1");
    expect((await api.del(`${base}/${id}/backups/${list.data[2].id}`)).body).toEqual({});
    expect((await api.get(`${base}/${id}/backups/${list.data[2].id}`)).status).toBe(404);
    expect((await api.post(`${base}/${id}/backups/${backupId}/restore`)).body).toEqual({});
    expect((await api.get(`${base}/${id}`)).body.status).toBe("restoring");
    emu.advance(10);
    expect((await api.get(`${base}/${id}`)).body.status).toBe("active");
    // Spec: a restore after a credentials reset leaves the cluster failed.
    await api.post(`${base}/${id}/credentials/reset`);
    await api.post(`${base}/${id}/backups/${backupId}/restore`);
    emu.advance(10);
    expect((await api.get(`${base}/${id}`)).body.status).toBe("failed");
    expect((await api.post(`${base}/${id}/backups/${backupId}/restore`)).status).toBe(200);
    emu.advance(10);
    expect((await api.del(`${base}/${id}`)).status).toBe(200);
  });
});

describe("automatic backups", () => {
  it("takes one at 00:00 UTC each day and keeps at most 7 from the last 7 days", async () => {
    const id = await activeDb();
    const dayMs = 86_400_000;
    const untilMidnight = (dayMs - (emu.now() % dayMs)) / 1000;
    emu.advance(untilMidnight + 60);
    let backups = (await api.get(`${M}/${id}/backups`)).body.data as { type: string; created: string }[];
    expect(backups.filter((b) => b.type === "auto")).toHaveLength(1);
    expect(backups[0]?.created).toMatch(/T00:00:00$/);
    emu.advance(2 * 86_400);
    backups = (await api.get(`${M}/${id}/backups`)).body.data;
    expect(backups.filter((b) => b.type === "auto")).toHaveLength(3);
    emu.advance(10 * 86_400);
    backups = (await api.get(`${M}/${id}/backups`)).body.data;
    const autos = backups.filter((b) => b.type === "auto");
    expect(autos).toHaveLength(7);
    for (const b of autos) expect(emu.now() - Date.parse(`${b.created}Z`)).toBeLessThanOrEqual(7 * dayMs);
  });
});

describe("all instances", () => {
  it("lists both engines in the reduced shape with instance_uri", async () => {
    const id = await activeDb("postgresql");
    const res = await api.get("/databases/instances", { headers: { "X-Filter": JSON.stringify({ engine: "postgresql" }) } });
    const item = (res.body.data as { id: number }[]).find((d) => d.id === id) as Record<string, unknown>;
    expect(item.instance_uri).toBe(`/v4/databases/postgresql/instances/${id}`);
    expect(Object.keys(item).sort()).toEqual(["allow_list", "cluster_size", "created", "encrypted", "engine", "hosts", "id", "instance_uri", "label", "region", "status", "type", "updated", "updates", "version"]);
  });
});
