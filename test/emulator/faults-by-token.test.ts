/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read untyped JSON response bodies */
// Faults scoped to tokens: one account's API misbehaves (429s, latency) while the others'
// answer normally, and the misbehaving one's seeded decisions do not depend on the others' traffic.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { client, start, TOKEN } from "./helpers.ts";

const NOISY = "noisy-token";
const QUIET = "quiet-token";

describe("faults scoped to tokens", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await start({ rateLimits: false, accountTokens: { noisy: [NOISY], quiet: [QUIET] } });
  });
  afterAll(async () => { await emu.close(); });

  it("affects only the listed tokens' requests; an empty list affects every token", async () => {
    const admin = client(emu).admin;
    await admin("PUT", "/faults", { rate429: 1, retryAfterSeconds: 2, tokens: [NOISY] });
    const noisy = await client(emu, NOISY).get("/databases/instances");
    expect(noisy.status).toBe(429);
    expect(noisy.headers.get("retry-after")).toBe("2");
    expect((await client(emu, QUIET).get("/databases/instances")).status).toBe(200);
    expect((await client(emu).get("/databases/instances")).status).toBe(200);
    expect((await admin("GET", "/faults")).body.tokens).toEqual([NOISY]);

    await admin("PUT", "/faults", { rate429: 1 });
    expect((await client(emu, QUIET).get("/databases/instances")).status).toBe(429);
    expect((await client(emu, TOKEN).get("/databases/instances")).status).toBe(429);
    await admin("DELETE", "/faults");
    expect((await admin("GET", "/faults")).body.tokens).toEqual([]);
  });

  it("adds latency to the listed tokens only", async () => {
    emu.setFaults({ latencyMs: 300, tokens: [NOISY] });
    try {
      let t = performance.now();
      await client(emu, QUIET).get("/databases/engines");
      expect(performance.now() - t).toBeLessThan(250);
      t = performance.now();
      await client(emu, NOISY).get("/databases/engines");
      expect(performance.now() - t).toBeGreaterThanOrEqual(290);
    } finally {
      emu.setFaults({});
    }
  });

  it("the listed tokens' seeded decisions are the same whatever the other tokens send", async () => {
    const run = async (quietCalls: number): Promise<number[]> => {
      const e = await start({ seed: 11, rateLimits: false, accountTokens: { noisy: [NOISY], quiet: [QUIET] }, faults: { rate429: 0.5, tokens: [NOISY] } });
      const codes: number[] = [];
      try {
        for (let i = 0; i < 20; i++) {
          for (let q = 0; q < quietCalls; q++) expect((await client(e, QUIET).get("/databases/engines")).status).toBe(200);
          codes.push((await client(e, NOISY).get("/databases/engines")).status);
        }
      } finally {
        await e.close();
      }
      return codes;
    };
    const alone = await run(0);
    expect(alone).toContain(429);
    expect(alone).toContain(200);
    expect(await run(3)).toEqual(alone);
  });
});
