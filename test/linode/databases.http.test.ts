// Every managed-database endpoint through the client against the emulator over HTTP.
// MySQL and PostgreSQL run the same suite: the client serves both from one implementation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeCaCertificate, type Database, type DatabaseEngineApi, type LinodeClient } from "../../src/linode/index.ts";
import { eventually, label, makeClient, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let client: LinodeClient;

beforeAll(async () => {
  emu = await startTestEmulator();
  client = makeClient(emu).client;
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

async function waitForStatus(api: DatabaseEngineApi, id: number, status: string): Promise<Database> {
  return eventually(async () => {
    const db = await api.get(id);
    return db.status === status ? db : undefined;
  });
}

describe("engines, types and the all-engines list", () => {
  it("lists engines and reads one by its engine/version id", async () => {
    const engines = await client.databases.listAllEngines();
    expect(engines.length).toBeGreaterThan(0);
    const first = engines[0];
    if (!first) throw new Error("no engines");
    expect(first.id).toBe(`${first.engine}/${first.version}`);
    const one = await client.databases.getEngine(first.id);
    expect(one).toEqual(first);
    const page = await client.databases.listEngines({ pageSize: 25 });
    expect(page.page).toBe(1);
    expect(page.results).toBe(engines.length);
  });

  it("lists types and reads one", async () => {
    const types = await client.databases.listAllTypes();
    expect(types.length).toBeGreaterThan(0);
    const first = types[0];
    if (!first) throw new Error("no types");
    const one = await client.databases.getType(first.id);
    expect(one.id).toBe(first.id);
  });
});

describe.each(["mysql", "postgresql"] as const)("%s instances", (engine) => {
  let api: DatabaseEngineApi;
  let db: Database;
  let version: string;

  beforeAll(async () => {
    api = client.databases.engine(engine);
    const engines = await client.databases.listAllEngines({ filter: { engine } });
    const e = engines.find((x) => x.engine === engine);
    if (!e) throw new Error(`emulator offers no ${engine} engine`);
    version = e.version;
  });

  it("creates (camelCase in, camelCase out) and lists", async () => {
    const name = label(`it-${engine}`);
    db = await api.create({ label: name, region: "us-east", type: "g6-nanode-1", version, clusterSize: 1, allowList: ["203.0.113.7"] });
    expect(db.label).toBe(name);
    expect(db.engine).toBe(engine);
    expect(db.status).toBe("provisioning");
    expect(db.clusterSize).toBe(1);
    expect(db.allowList).toContain("203.0.113.7/32");
    const page = await api.list();
    expect(page.data.map((d) => d.id)).toContain(db.id);
    const all = await api.listAll();
    expect(all.map((d) => d.id)).toContain(db.id);
    expect(await api.findByLabel(name)).toMatchObject({ id: db.id });
    expect(await api.findByLabel("no-such-database")).toBeUndefined();
    const everything = await client.databases.listAllInstances();
    expect(everything.map((d) => d.id)).toContain(db.id);
  });

  it("becomes active and exposes hosts, port and the maintenance window", async () => {
    db = await waitForStatus(api, db.id, "active");
    expect(db.hosts.primary).toBeTruthy();
    expect(db.port).toBeGreaterThan(0);
    expect(db.updates).not.toBeNull();
    expect(typeof db.updates?.hourOfDay).toBe("number");
  });

  it("updates label, allow list and maintenance window", async () => {
    const newLabel = label(`up-${engine}`);
    const updated = await api.update(db.id, {
      label: newLabel,
      allowList: ["198.51.100.0/24"],
      updates: { frequency: "weekly", duration: 3, hourOfDay: 5, dayOfWeek: 2 },
    });
    expect(updated.label).toBe(newLabel);
    expect(updated.allowList).toEqual(["198.51.100.0/24"]);
    expect(updated.updates).toMatchObject({ frequency: "weekly", duration: 3, hourOfDay: 5, dayOfWeek: 2 });
    db = await waitForStatus(api, db.id, "active");
  });

  it("reads and resets credentials, reads the CA certificate", async () => {
    const before = await api.getCredentials(db.id);
    expect(before.username).toBeTruthy();
    expect(before.password).toBeTruthy();
    await api.resetCredentials(db.id);
    const after = await eventually(async () => {
      try {
        const c = await api.getCredentials(db.id);
        return c.password !== before.password ? c : undefined;
      } catch {
        return undefined; // not active again yet
      }
    });
    expect(after.password).not.toBe(before.password);
    await waitForStatus(api, db.id, "active");
    const ssl = await api.getSslCertificate(db.id);
    expect(ssl.caCertificate).toBeTruthy();
    expect(decodeCaCertificate(ssl.caCertificate ?? "")).toContain("BEGIN CERTIFICATE");
  });

  it("patches", async () => {
    await api.patch(db.id);
    db = await waitForStatus(api, db.id, "active");
  });

  it("creates a snapshot, lists, reads, restores and deletes backups", async () => {
    await api.createSnapshot(db.id, { label: "snap1", target: "primary" });
    const snap = await eventually(async () => {
      const backups = await api.listAllBackups(db.id);
      return backups.find((b) => b.label === "snap1" && b.type === "snapshot");
    });
    const page = await api.listBackups(db.id);
    expect(page.data.map((b) => b.id)).toContain(snap.id);
    expect(await api.getBackup(db.id, snap.id)).toEqual(snap);
    await waitForStatus(api, db.id, "active");
    await api.restoreBackup(db.id, snap.id);
    // The spec: a restore after a credentials reset leaves the cluster failed.
    await waitForStatus(api, db.id, "failed");
    await api.deleteBackup(db.id, snap.id);
    await expect(api.getBackup(db.id, snap.id)).rejects.toMatchObject({ kind: "notFound", status: 404 });
  });

  it("deletes, after which the instance is not found", async () => {
    await api.delete(db.id);
    await eventually(async () => {
      try {
        await api.get(db.id);
        return undefined;
      } catch (err) {
        return (err as { kind?: string }).kind === "notFound" ? true : undefined;
      }
    });
  });
});
