// The shard benches' two-writer check: overlap by different replicas counts, a handover
// (one replica's write after another's was answered) and one replica's overlapping writes do not.
import { describe, expect, it } from "vitest";
import type { MutationRecord } from "../../src/emulator/server.ts";
import { twoWriterPairs, twoWriters } from "../bench/two-writers.ts";

const write = (userAgent: string, receivedAt: number, answeredAt: number, id = 7): MutationRecord => ({
  receivedAt, answeredAt, method: "PUT", route: "/databases/mysql/instances/{instanceId}", path: `/databases/mysql/instances/${String(id)}`, status: 200, user: "u", token: "t", userAgent,
});

describe("twoWriters", () => {
  it("counts two replicas' writes to one database in flight at once, and nothing else", () => {
    expect(twoWriters([write("op-a", 100, 300), write("op-b", 200, 400)], 0)).toHaveLength(1);
    // A handover: op-b writes after op-a's write was answered, however soon.
    expect(twoWriters([write("op-a", 100, 300), write("op-b", 300, 400)], 0)).toEqual([]);
    // One replica's own overlapping writes, and two replicas on different databases.
    expect(twoWriters([write("op-a", 100, 300), write("op-a", 200, 400), write("op-b", 150, 250, 8)], 0)).toEqual([]);
    // Before `since`: not this round's.
    expect(twoWriters([write("op-a", 100, 300), write("op-b", 200, 400)], 150)).toEqual([]);
  });

  it("names each pair's database, so a round can tell the databases a tenant forged a shard label on from the rest", () => {
    const pairs = twoWriterPairs([write("op-a", 100, 300, 7), write("op-b", 200, 400, 7), write("op-a", 100, 300, 9), write("op-c", 150, 350, 9)], 0);
    expect(pairs.map((p) => p.db).sort()).toEqual([7, 9]);
    expect(pairs.find((p) => p.db === 9)?.said).toContain("by op-c");
  });
});
