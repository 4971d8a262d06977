// The cloud side of `status`, read from the emulator over HTTP by the ids the operator records:
// a DatabaseSnapshot's backup (mysql/<database>/<backup>), a database on either platform, and an
// id the token's account does not have, which is said, not thrown.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCloudSide } from "../../src/status/cloud-side.ts";
import { eventually, label, makeClient, startTestEmulator, TOKEN, type Emulator, type TestClient } from "./helpers.ts";

describe("status: the cloud object by its recorded id", () => {
  let emu: Emulator;
  let api: TestClient;
  const token = { value: TOKEN, from: "LINODE_TOKEN" };
  beforeAll(async () => {
    emu = await startTestEmulator({ platform: "legacy" });
    api = makeClient(emu);
  });
  afterAll(async () => {
    await api.client.close();
    await emu.close();
  });

  it("a snapshot: the backup the API lists under its database", async () => {
    const mysql = api.client.databases.engine("mysql");
    const db = await mysql.create({ label: label("snap"), region: "us-east", type: "g6-nanode-1", version: "8", allowList: [] });
    await eventually(async () => ((await mysql.get(db.id)).status === "active" ? true : undefined));
    await mysql.createSnapshot(db.id, { label: "nightly1", target: "primary" });
    const backup = await eventually(async () => (await mysql.listAllBackups(db.id)).find((b) => b.label === "nightly1"));
    const side = await readCloudSide({ kind: "DatabaseSnapshot", externalId: `mysql/${String(db.id)}/${String(backup.id)}` }, token, emu.url);
    expect(side).toEqual({ state: "shown", tokenFrom: "LINODE_TOKEN", object: { kind: "snapshot", databaseId: db.id, backupId: backup.id, label: "nightly1", type: "snapshot", created: backup.created } });

    const legacy = await readCloudSide({ kind: "ManagedDatabase", externalId: String(db.id), engine: "mysql" }, token, emu.url);
    if (legacy.state !== "shown" || legacy.object.kind !== "database") throw new Error(JSON.stringify(legacy));
    expect(legacy.object).toMatchObject({ id: db.id, status: "active", platform: "rdbms-legacy", clusterSize: 1 });
    expect(legacy.object.members.map((m) => m.role)).toEqual(["primary"]);
  });

  it("a connection pool: the pool the API has under its database and label", async () => {
    const current = await startTestEmulator({ platform: "current" });
    const c = makeClient(current);
    try {
      const pg = c.client.databases.postgresql;
      const db = await pg.create({ label: label("pool"), region: "us-east", type: "g6-nanode-1", version: "16", allowList: [] });
      await eventually(async () => ((await pg.get(db.id)).status === "active" ? true : undefined));
      await c.client.connectionPools.create(db.id, { label: "app_pool", database: "defaultdb", mode: "session", size: 4, username: null });
      const side = await readCloudSide({ kind: "DatabaseConnectionPool", externalId: `postgresql/${String(db.id)}/app_pool` }, token, current.url);
      expect(side).toEqual({ state: "shown", tokenFrom: "LINODE_TOKEN", object: { kind: "pool", databaseId: db.id, label: "app_pool", database: "defaultdb", mode: "session", size: 4, username: null } });
      expect(await readCloudSide({ kind: "DatabaseConnectionPool", externalId: String(db.id) }, token, current.url)).toMatchObject({ state: "none" });
    } finally {
      await c.client.close();
      await current.close();
    }
  });

  it("an id the account does not have, or one of another form: said, not thrown", async () => {
    const missing = await readCloudSide({ kind: "NodeBalancer", externalId: "424242" }, token, emu.url);
    expect(missing).toMatchObject({ state: "error", tokenFrom: "LINODE_TOKEN", error: expect.stringMatching(/no such object with this token \(404\)/) as unknown });
    expect(await readCloudSide({ kind: "DatabaseSnapshot", externalId: "not-a-snapshot-id" }, token, emu.url)).toMatchObject({ state: "none" });
    const refused = await readCloudSide({ kind: "NodeBalancer", externalId: "1" }, { value: "not-a-token", from: "LINODE_TOKEN" }, emu.url);
    expect(refused).toMatchObject({ state: "error", error: expect.stringMatching(/401/) as unknown });
  });
});
