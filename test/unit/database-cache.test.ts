// The account's database lists serve a reader that would otherwise GET one database (a snapshot
// waiting out its backup): a list young enough costs nothing, a new one is taken while one page
// holds the engine's databases (as dear as the GET, and it serves everyone), else the GET.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Database, LinodeClient } from "../../src/linode/index.ts";
import { DatabaseListCache } from "../../src/resources/managed-database/database-cache.ts";

function fake(n: number): { linode: LinodeClient; calls: string[] } {
  const calls: string[] = [];
  const db = (id: number): Database => ({ id, status: "active" }) as unknown as Database;
  const engine = {
    listAll: () => { calls.push("list"); return Promise.resolve(Array.from({ length: n }, (_, i) => db(i + 1))); },
    get: (id: number) => { calls.push(`get ${String(id)}`); return Promise.resolve(db(id)); },
  };
  return { linode: { databases: { engine: () => engine }, sweepHeldMillis: () => 0 } as unknown as LinodeClient, calls };
}

const signal = new AbortController().signal;
/** Moves the clock the lists' ages are read by (Date, the one thing faked here) `ms` on. */
const elapsed = (ms: number): void => { vi.setSystemTime(Date.now() + ms); };

describe("DatabaseListCache.fresh", () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); });
  afterEach(() => { vi.useRealTimers(); });
  it("a list young enough answers without a call; an older one is listed again while one page holds them", async () => {
    const { linode, calls } = fake(3);
    const cache = new DatabaseListCache(linode, new AbortController().signal);
    await cache.get("mysql", 1, 60_000, signal);
    expect(calls).toEqual(["list"]);
    expect((await cache.fresh("mysql", 2, 60_000, signal))?.id).toBe(2);
    expect(calls).toEqual(["list"]);
    elapsed(5);
    await cache.fresh("mysql", 2, 1, signal);
    expect(calls).toEqual(["list", "list"]);
  });

  it("with more than a page of databases, an older list is not listed again for one: it is read alone", async () => {
    const { linode, calls } = fake(600);
    const cache = new DatabaseListCache(linode, new AbortController().signal);
    await cache.get("mysql", 1, 60_000, signal);
    elapsed(5);
    await cache.fresh("mysql", 7, 1, signal);
    expect(calls).toEqual(["list", "get 7"]);
  });

  it("with no list yet, the database is read alone", async () => {
    const { linode, calls } = fake(3);
    await new DatabaseListCache(linode, new AbortController().signal).fresh("postgresql", 2, 5_000, signal);
    expect(calls).toEqual(["get 2"]);
  });
});
