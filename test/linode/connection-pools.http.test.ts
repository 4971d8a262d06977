// The connection-pool client against the emulator over HTTP: every call, the responses parsed
// (camelCase out), the bodies as the API takes them (snake_case, username null sent), and the
// API's refusals as the client's errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isNotFound, LinodeApiError, type LinodeClient } from "../../src/linode/index.ts";
import { eventually, label, makeClient, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let client: LinodeClient;

beforeAll(async () => {
  emu = await startTestEmulator({ platform: "current" });
  client = makeClient(emu).client;
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

async function activePostgres(): Promise<number> {
  const db = await client.databases.postgresql.create({ label: label("pool"), region: "us-east", type: "g6-nanode-1", version: "16" });
  await eventually(async () => ((await client.databases.postgresql.get(db.id)).status === "active" ? true : undefined));
  return db.id;
}

describe("connection pools", () => {
  it("creates, reads, lists, updates and deletes a pool by its label", async () => {
    const id = await activePostgres();
    const created = await client.connectionPools.create(id, { label: "app", database: "defaultdb", mode: "transaction", size: 10, username: null });
    expect(created).toEqual({ label: "app", database: "defaultdb", mode: "transaction", size: 10, username: null });
    expect(await client.connectionPools.get(id, "app")).toEqual(created);
    expect(await client.connectionPools.listAll(id)).toEqual([created]);
    const updated = await client.connectionPools.update(id, "app", { mode: "session", username: "reporting" });
    expect(updated).toEqual({ ...created, mode: "session", username: "reporting" });
    await client.connectionPools.delete(id, "app");
    const gone = await client.connectionPools.get(id, "app").catch((e: unknown) => e);
    expect(isNotFound(gone)).toBe(true);
  });

  it("surfaces the API's refusals with their field", async () => {
    const id = await activePostgres();
    await client.connectionPools.create(id, { label: "dup", database: "defaultdb", mode: "transaction", size: 10, username: null });
    const again = await client.connectionPools.create(id, { label: "dup", database: "defaultdb", mode: "transaction", size: 10, username: null }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(LinodeApiError);
    expect((again as LinodeApiError).status).toBe(400);
    expect((again as LinodeApiError).errors.map((e) => e.field)).toEqual(["label"]);
    const tooBig = await client.connectionPools.update(id, "dup", { size: 10_000 }).catch((e: unknown) => e);
    expect((tooBig as LinodeApiError).errors.map((e) => e.field)).toEqual(["size"]);
  });
});
