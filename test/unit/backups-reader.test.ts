// A database's backups list for its status: read at most once per refresh period; a snapshot
// this cluster took is added as its DatabaseSnapshot observed it (no list), one lost lists again;
// after a restart not at all while status's record of the last list stands (same snapshots, in period).
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DatabaseBackup, LinodeClient } from "../../src/linode/index.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { BackupsReader, markDigest, markOf, sameBackups, snapshotBackupsOf, type BackupsRecord } from "../../src/resources/managed-database/backups.ts";

const backup: DatabaseBackup = { id: 7, label: "nightly", type: "auto", created: "2026-11-25T00:00:00" };
const snap = (id: number, created: string): DatabaseBackup => ({ id, label: `s${String(id)}`, type: "snapshot", created });

function fake(): { linode: LinodeClient; lists: () => number } {
  let n = 0;
  const engine = { listAllBackups: () => { n++; return Promise.resolve([backup]); } };
  return { linode: { databases: { engine: () => engine } } as unknown as LinodeClient, lists: () => n };
}

const signal = new AbortController().signal;
const hour = 3_600_000;

describe("BackupsReader", () => {
  afterEach(() => { vi.useRealTimers(); });

  it("a list that finds the same backups is no news: the time status records stays that of the list that found them", async () => {
    vi.useFakeTimers({ now: Date.parse("2026-11-25T06:00:00Z") });
    let answer: DatabaseBackup[] = [backup];
    const engine = { listAllBackups: () => Promise.resolve(answer) };
    const r = new BackupsReader({ databases: { engine: () => engine } } as unknown as LinodeClient, hour);
    await r.latest("mysql", 1, [], false, signal);
    const first = r.readOf(1);
    expect(first?.at).toBe("2026-11-25T06:00:00Z");
    vi.advanceTimersByTime(hour + 1);
    await r.latest("mysql", 1, [], false, signal);
    expect(r.readOf(1)).toEqual(first);
    const next: DatabaseBackup = { id: 8, label: "nightly2", type: "auto", created: "2026-11-26T00:00:00" };
    answer = [next, backup];
    vi.advanceTimersByTime(hour + 1);
    expect(await r.latest("mysql", 1, [], false, signal)).toEqual([next, backup]);
    expect(r.readOf(1)?.at).toBe("2026-11-25T08:00:00Z");
  });

  it("sameBackups: the same ids under the same mark, in any order", () => {
    const other: DatabaseBackup = { ...backup, id: 8 };
    expect(sameBackups({ mark: "", backups: [backup, other] }, "", [other, backup])).toBe(true);
    expect(sameBackups({ mark: "", backups: [backup] }, "", [other, backup])).toBe(false);
    expect(sameBackups({ mark: "9", backups: [backup] }, "", [backup])).toBe(false);
    expect(sameBackups({ mark: "", backups: undefined }, "", [])).toBe(false);
    expect(sameBackups({ mark: "", backups: undefined }, "", undefined)).toBe(true);
  });

  it("lists once per period; snapshots taken since are added without a list, newest first", async () => {
    const { linode, lists } = fake();
    const r = new BackupsReader(linode, hour);
    await r.latest("mysql", 1, [], false, signal);
    await r.latest("mysql", 1, [], false, signal);
    expect(lists()).toBe(1);
    const s9 = snap(9, "2026-11-25T02:00:00");
    const s8 = snap(8, "2026-11-25T01:00:00");
    expect(await r.latest("mysql", 1, [s9], false, signal)).toEqual([s9, backup]);
    expect(await r.latest("mysql", 1, [s9, s8], false, signal)).toEqual([s9, s8, backup]);
    expect(lists()).toBe(1);
    expect(r.readOf(1)?.mark).toBe(markDigest(markOf([s8, s9])));
  });

  it("a snapshot lost (deleted, or its resource gone with the backup retained) lists again", async () => {
    const { linode, lists } = fake();
    const r = new BackupsReader(linode, hour);
    const s9 = snap(9, "2026-11-25T02:00:00");
    await r.latest("mysql", 1, [s9], false, signal);
    expect(lists()).toBe(1);
    expect(await r.latest("mysql", 1, [], false, signal)).toEqual([backup]);
    expect(lists()).toBe(2);
  });

  it("a database just created has none to list; its first snapshot is added", async () => {
    const { linode, lists } = fake();
    const r = new BackupsReader(linode, hour);
    expect(await r.latest("mysql", 1, [], true, signal)).toEqual([]);
    const s9 = snap(9, "2026-11-25T02:00:00");
    expect(await r.latest("mysql", 1, [s9], true, signal)).toEqual([s9]);
    expect(lists()).toBe(0);
  });

  it("after a restart, status's record stands while its mark is the same and its period runs; otherwise it lists", async () => {
    const recorded = (known: DatabaseBackup[], agoMillis: number): BackupsRecord => ({ at: new Date(Date.now() - agoMillis).toISOString(), mark: markDigest(markOf(known)), backups: [backup] });
    const { linode, lists } = fake();
    const s9 = snap(9, "2026-11-25T02:00:00");
    expect(await new BackupsReader(linode, hour).latest("mysql", 1, [s9], false, signal, recorded([s9], 60_000))).toEqual([backup]);
    expect(lists()).toBe(0);
    await new BackupsReader(linode, hour).latest("mysql", 1, [snap(10, "2026-11-25T03:00:00")], false, signal, recorded([s9], 60_000));
    expect(lists()).toBe(1);
    await new BackupsReader(linode, hour).latest("mysql", 1, [s9], false, signal, recorded([s9], 2 * hour));
    expect(lists()).toBe(2);
  });

  it("a snapshot's backup counts for the database it was taken of only (its ManagedDatabase may manage another since), and only once taken", () => {
    const snapshot = (name: string, status: Record<string, unknown>): KubeObject => ({ metadata: { name, namespace: "ns" }, status });
    const s9 = { phase: "Available", backupId: 9, databaseId: 1, label: "s9", created: "2026-11-25T02:00:00" };
    const older = { phase: "Available", backupId: 4, databaseId: 2, label: "s4", created: "2026-11-24T02:00:00" };
    const waiting = { phase: "BackingUp", databaseId: 1, label: "s10" };
    expect(snapshotBackupsOf([snapshot("a", s9), snapshot("b", older), snapshot("c", waiting)], 1)).toEqual([{ id: 9, type: "snapshot", label: "s9", created: "2026-11-25T02:00:00" }]);
  });
});
