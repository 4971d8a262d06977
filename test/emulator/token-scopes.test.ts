// The emulator answers each token's scopes as the API does (X-OAuth-Scopes, space-separated,
// on every authenticated answer, refusals included) and refuses a call outside them with the
// API's 401 and the scope it would have needed (X-Accepted-OAuth-Scopes); doctor reads the former.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, start } from "./helpers.ts";

describe("token scopes on the wire", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await start({ rateLimits: false, config: { tokens: [{ token: "scoped", scopes: "databases:read_write,nodebalancers:read_only" }] } });
  });
  afterAll(async () => { await emu.close(); });

  it("names the token's scopes on the profile, which any valid token may read", async () => {
    const res = await client(emu, "scoped").get("/profile");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-oauth-scopes")).toBe("databases:read_write nodebalancers:read_only");
    expect((await client(emu).get("/profile")).headers.get("x-oauth-scopes")).toBe("*");
  });

  it("refuses a call outside them with 401, still naming what the token has and what the call needs", async () => {
    const res = await client(emu, "scoped").post("/nodebalancers", { region: "us-east" });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: [{ reason: "Your OAuth token is not authorized to use this endpoint." }] });
    expect(res.headers.get("x-oauth-scopes")).toBe("databases:read_write nodebalancers:read_only");
    expect(res.headers.get("x-accepted-oauth-scopes")).toBe("nodebalancers:read_write");
    expect((await client(emu, "scoped").get("/nodebalancers")).status).toBe(200);
  });

  it("an unknown token gets no scopes header at all", async () => {
    const res = await client(emu, "unknown").get("/profile");
    expect(res.status).toBe(401);
    expect(res.headers.get("x-oauth-scopes")).toBeNull();
  });
});
