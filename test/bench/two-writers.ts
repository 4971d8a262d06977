// Two replicas writing one database: the one check bench:shards and bench:chaos:shards share,
// read from the emulator's mutation log (each replica names itself in its User-Agent). What
// counts is overlap: a write received before another replica's write to that database was
// answered. Writes one after another by different replicas are a handover (the old owner let
// go first), not two writers, however close.
import type { MutationRecord } from "../../src/emulator/server.ts";

export const TWO_WRITERS_MEANING = "two replicas' writes to one database in flight at once";

/** Each such pair among the writes received since `since`, said in a line. */
export function twoWriters(log: readonly MutationRecord[], since: number): string[] {
  return twoWriterPairs(log, since).map((p) => p.said);
}

/** Each such pair among the writes received since `since`: the database's id and a line that says it. */
export function twoWriterPairs(log: readonly MutationRecord[], since: number): { db: number; said: string }[] {
  const byDb = new Map<string, MutationRecord[]>();
  for (const m of log) {
    const db = /\/databases\/[a-z]+\/instances\/(\d+)/.exec(m.path)?.[1];
    if (m.receivedAt < since || db === undefined) continue;
    const writes = byDb.get(db);
    if (writes === undefined) byDb.set(db, [m]);
    else writes.push(m);
  }
  const found: { db: number; said: string }[] = [];
  for (const [db, writes] of byDb) {
    writes.sort((a, b) => a.receivedAt - b.receivedAt);
    writes.forEach((a, i) => {
      for (const b of writes.slice(i + 1)) {
        if (b.receivedAt >= a.answeredAt) break;
        if (b.userAgent !== a.userAgent) found.push({ db: Number(db), said: `database ${db}: ${a.method} ${a.path} by ${a.userAgent} and ${b.method} ${b.path} by ${b.userAgent} in flight at once` });
      }
    });
  }
  return found;
}
