/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read untyped JSON response bodies */
// GET /profile: the read-only stand-in (outside the spec's scope) that off-the-shelf clients
// such as the Linode CLI use to name the token's user.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { call, start, TOKEN } from "./helpers.ts";

describe("GET /profile", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await start({
      config: {
        users: [{ username: "alice", restricted: true }],
        tokens: [{ token: "alice-token", scopes: "databases:read_only", username: "alice" }],
      },
    });
  });
  afterAll(async () => { await emu.close(); });

  it("names the token's user, whatever its scopes, under /v4 and /v4beta", async () => {
    const admin = await call(emu.url, "GET", "/profile");
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ username: "emulator-admin", restricted: false, email: "emulator-admin@example.com" });
    const alice = await call(emu.url, "GET", "/profile", undefined, { token: "alice-token" });
    expect(alice.status).toBe(200);
    expect(alice.body).toMatchObject({ username: "alice", restricted: true });
    const beta = await call(emu.url.replace(/\/v4$/, "/v4beta"), "GET", "/profile", undefined, { token: TOKEN });
    expect(beta.body.username).toBe("emulator-admin");
  });

  it("is read-only and needs a valid token", async () => {
    expect((await call(emu.url, "GET", "/profile", undefined, { token: "nope" })).status).toBe(401);
    expect((await call(emu.url, "PUT", "/profile", { email: "x@example.com" })).status).toBe(405);
  });
});
