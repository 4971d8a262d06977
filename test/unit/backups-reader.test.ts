// A database's backups list for its status: read at most once per refresh period, and after a
// restart not at all while status's record of the last list stands (same snapshots, in period).
import { describe, expect, it } from "vitest";
import type { DatabaseBackup, LinodeClient } from "../../src/linode/index.ts";
import { BackupsReader, markDigest, type BackupsRecord } from "../../src/resources/managed-database/backups.ts";

const backup: DatabaseBackup = { id: 7, label: "nightly", type: "auto", created: "2026-11-25T00:00:00" };

function fake(): { linode: LinodeClient; lists: () => number } {
  let n = 0;
  const engine = { listAllBackups: () => { n++; return Promise.resolve([backup]); } };
  return { linode: { databases: { engine: () => engine } } as unknown as LinodeClient, lists: () => n };
}

const signal = new AbortController().signal;
const hour = 3_600_000;

describe("BackupsReader", () => {
  it("lists once per period; a new mark lists again", async () => {
    const { linode, lists } = fake();
    const r = new BackupsReader(linode, hour);
    await r.latest("mysql", 1, "", false, signal);
    await r.latest("mysql", 1, "", false, signal);
    expect(lists()).toBe(1);
    await r.latest("mysql", 1, "[7,\"Available\"]", false, signal);
    expect(lists()).toBe(2);
    expect(r.readOf(1)?.mark).toBe(markDigest("[7,\"Available\"]"));
  });

  it("after a restart, status's record stands while its mark is the same and its period runs; otherwise it lists", async () => {
    const recorded = (mark: string, agoMillis: number): BackupsRecord => ({ at: new Date(Date.now() - agoMillis).toISOString(), mark: markDigest(mark), backups: [backup] });
    const { linode, lists } = fake();
    expect(await new BackupsReader(linode, hour).latest("mysql", 1, "m", false, signal, recorded("m", 60_000))).toEqual([backup]);
    expect(lists()).toBe(0);
    await new BackupsReader(linode, hour).latest("mysql", 1, "m2", false, signal, recorded("m", 60_000));
    expect(lists()).toBe(1);
    await new BackupsReader(linode, hour).latest("mysql", 1, "m", false, signal, recorded("m", 2 * hour));
    expect(lists()).toBe(2);
  });
});
