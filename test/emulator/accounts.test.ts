/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read untyped JSON response bodies */
// Accounts: each token belongs to one; an account never sees or changes another's objects and
// never shares its rate limit. Ids stay unique across accounts, as the real API's are global.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, mysqlBody, start, TOKEN } from "./helpers.ts";

const ids = (res: { body: unknown }): number[] => (res.body as { data: { id: number }[] }).data.map((d) => d.id);
const labels = (res: { body: unknown }): string[] => (res.body as { data: { label: string }[] }).data.map((d) => d.label);
const nbBody = (label: string) => ({ label, region: "us-east", configs: [{ port: 80, nodes: [{ label: "node-1", address: "192.168.10.5:80" }] }] });

describe("accounts", () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), "emu-accounts-"));
  const stateFile = join(dir, "state.json");
  beforeAll(async () => {
    emu = await start({
      stateFile, accountTokens: { acme: ["acme-token"] },
      config: { users: [{ username: "bob", account: "globex" }], tokens: [{ token: "bob-token", username: "bob" }] },
    });
  });
  afterAll(async () => { await emu.close(); rmSync(dir, { recursive: true, force: true }); });

  it("an account sees, reads, changes and deletes only its own objects; labels repeat across accounts, ids never", async () => {
    const main = client(emu);
    const acme = client(emu, "acme-token");
    const globex = client(emu, "bob-token");
    const a = await acme.post("/databases/mysql/instances", mysqlBody({ label: "shared-label" }));
    expect(a.status).toBe(200);
    const m = await main.post("/databases/mysql/instances", mysqlBody({ label: "shared-label" }));
    expect(m.status).toBe(200);
    expect(m.body.id).not.toBe(a.body.id);
    expect(ids(await acme.get("/databases/instances"))).toEqual([a.body.id]);
    expect(ids(await main.get("/databases/instances"))).toEqual([m.body.id]);
    expect((await globex.get("/databases/instances")).body.data).toEqual([]);
    expect((await main.get(`/databases/mysql/instances/${String(a.body.id)}`)).status).toBe(404);
    expect((await globex.put(`/databases/mysql/instances/${String(a.body.id)}`, { label: "taken-over" })).status).toBe(404);
    expect((await globex.del(`/databases/mysql/instances/${String(a.body.id)}`)).status).toBe(404);
    expect((await acme.get(`/databases/mysql/instances/${String(a.body.id)}`)).body.label).toBe("shared-label");

    const nb = await globex.post("/nodebalancers", nbBody("web"));
    expect(nb.status).toBe(200);
    expect((await acme.get("/nodebalancers")).body.data).toEqual([]);
    expect((await acme.get(`/nodebalancers/${String(nb.body.id)}/configs`)).status).toBe(404);
    expect((await client(emu, "bob-token").post("/nodebalancers", nbBody("web"))).status).toBe(400);
    expect((await acme.post("/nodebalancers", nbBody("web"))).status).toBe(200);
  });

  it("the admin endpoint names each token's account and adds tokens to an account", async () => {
    const admin = client(emu).admin;
    const tokens = (await admin("GET", "/tokens")).body.tokens as { token: string; account: string }[];
    expect(tokens.find((t) => t.token.startsWith("acme"))?.account).toBe("acme");
    expect(tokens.find((t) => t.token.startsWith("bob-"))?.account).toBe("globex");
    expect(tokens.find((t) => t.token.startsWith(TOKEN.slice(0, 4)))?.account).toBe("default");
    expect((await admin("POST", "/tokens", { token: "acme-token-2", account: "acme" })).status).toBe(200);
    expect((await client(emu, "acme-token-2").get("/databases/instances")).body.data).toHaveLength(1);
    expect((await admin("POST", "/tokens", { token: "x", username: "bob", account: "acme" })).status).toBe(400);
  });

  it("rate limits are per token: one account spending its budget leaves the other's whole", async () => {
    await client(emu).admin("PUT", "/rate-limits", { default: { limit: 3, windowSeconds: 60 } });
    try {
      const acme = client(emu, "acme-token");
      for (let i = 0; i < 3; i++) expect((await acme.get("/databases/instances")).status).toBe(200);
      expect((await acme.get("/databases/instances")).status).toBe(429);
      expect((await client(emu, "bob-token").get("/databases/instances")).status).toBe(200);
    } finally {
      await client(emu).admin("PUT", "/rate-limits", { enabled: false });
    }
  });

  it("every account's objects survive a restart with the state file", async () => {
    const dump = emu.dump();
    expect(Object.keys(dump.accounts ?? {}).sort()).toEqual(["acme", "globex"]);
    await emu.close();
    emu = await start({ stateFile, accountTokens: { acme: ["acme-token"] } });
    const acme = client(emu, "acme-token");
    expect(labels(await acme.get("/databases/instances"))).toEqual(["shared-label"]);
    expect((await client(emu).get("/databases/instances")).body.data).toHaveLength(1);
  });
});
