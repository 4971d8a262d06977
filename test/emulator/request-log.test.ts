import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { RequestLog } from "../../src/emulator/request-log.ts";
import { driftTimeline } from "../bench/drift-timeline.ts";
import { client, start } from "./helpers.ts";

let emu: RunningEmulator;
beforeAll(async () => { emu = await start({ rateLimits: false }); });
afterAll(async () => { await emu.close(); });

describe("the request log", () => {
  it("keeps GETs and writes in the order answered, with the page asked for, the status and the User-Agent", async () => {
    const before = emu.requests().length;
    const api = client(emu);
    await api.get("/databases/mysql/instances?page=1&page_size=500");
    await api.get("/databases/mysql/instances/999999");
    const added = emu.requests().slice(before);
    expect(added.map((r) => [r.method, r.path, r.status])).toEqual([
      ["GET", "/v4/databases/mysql/instances?page=1&page_size=500", 200],
      ["GET", "/v4/databases/mysql/instances/999999", 404],
    ]);
    for (const r of added) expect(r.answeredAt).toBeGreaterThanOrEqual(r.receivedAt);
  });

  it("keeps the answers a fault made too (a 429, a 5xx)", async () => {
    const api = client(emu);
    try {
      emu.setFaults({ rate429: 1 });
      const before = emu.requests().length;
      await api.get("/databases/mysql/instances");
      emu.setFaults({ errorRate: 1, errorStatus: 503 });
      await api.get("/databases/mysql/instances");
      expect(emu.requests().slice(before).map((r) => r.status)).toEqual([429, 503]);
    } finally {
      emu.setFaults({});
    }
  });

  it("keeps the newest when full, oldest first", () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) log.add({ receivedAt: i, answeredAt: i, method: "GET", path: `/${String(i)}`, status: 200, userAgent: "" });
    expect(log.entries().map((r) => r.path)).toEqual(["/2", "/3", "/4"]);
  });
});

describe("the drift timeline the scale bench saves", () => {
  const at = (receivedAt: number, path: string, userAgent = "linode-operator (pod-a)") => ({ receivedAt, answeredAt: receivedAt + 150, method: "GET", path, status: 200, userAgent });
  it("shows the operator's calls on an object and its lists, not the bench's own, nor another id that starts alike", () => {
    const rows = driftTimeline([
      at(500, "/v4/databases/mysql/instances?page=1"),
      at(1_000, "/v4/databases/mysql/instances/12"),
      at(1_100, "/v4/databases/mysql/instances/123"),
      at(1_200, "/v4/databases/mysql/instances/12", "linode-operator/0.1"),
      at(2_000, "/v4/databases/mysql/instances/12/credentials"),
    ], 900, [{ what: "db", paths: ["/databases/mysql/instances/12", "/databases/mysql/instances?"] }], 1_000);
    expect(rows).toEqual([[0, "GET /databases/mysql/instances/12", 200, 150, "db"], [1, "GET /databases/mysql/instances/12/credentials", 200, 150, "db"]]);
  });
});
