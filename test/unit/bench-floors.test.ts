// The floors the scale bench holds convergence to: computed from the counts, before a run.
import { describe, expect, it } from "vitest";
import { sendSeconds, workloadFloor } from "../bench/floors.ts";

const budget = { perWindow: 920, windowSeconds: 60, listsPerWindow: 100 };

describe("bench floors", () => {
  it("calls go out a window's share at each window's start: the last at the start of the window that holds it", () => {
    expect(sendSeconds(920, 0, budget)).toBe(0);
    expect(sendSeconds(921, 0, budget)).toBe(60);
    expect(sendSeconds(4_600, 0, budget)).toBe(240);
    // Lists have a window of their own: 250 lists need three of them even if the rest fits in one.
    expect(sendSeconds(300, 250, budget)).toBe(120);
  });

  it("the workload floor counts each object's own calls and the list sweeps the time floor needs", () => {
    const f = workloadFloor({ databasesByEngine: [500, 500], nodeBalancers: 200, configsPerNodeBalancer: 4, snapshots: 300, provisionSeconds: 5, pendingPollSeconds: 5 }, budget);
    const own = 3 * 1000 + 200 * 6 + 3 * 300;
    expect(f.calls).toBe(own + f.lists);
    expect(f.parts.reduce((a, [, n]) => a + n, 0)).toBe(f.calls);
    // The paginated GETs: the sweeps' pages, each NodeBalancer's configs list and 4 nodes lists,
    // and each snapshot's backups list, 1,300 of them at 100 a window: the paginated class sets the time.
    expect(f.paginated).toBe(f.lists + 200 * 5 + 300);
    expect(f.seconds).toBe(sendSeconds(f.calls, f.paginated, budget));
    expect(f.seconds).toBeGreaterThanOrEqual(600);
    expect(f.sweeps).toBe(Math.ceil(f.seconds / 5));
    // Databases alone: their two lists a sweep while they converge, provisioning twice with snapshots.
    const dbs = workloadFloor({ databasesByEngine: [500, 500], nodeBalancers: 0, configsPerNodeBalancer: 0, snapshots: 300, provisionSeconds: 5, pendingPollSeconds: 5 }, budget);
    expect(dbs.lists).toBe(2 * dbs.sweeps);
    // Each snapshot's backups list is a paginated GET too.
    expect(dbs.seconds).toBe(sendSeconds(3_900 + dbs.lists, dbs.lists + 300, budget) + 15);
    // Larger pages: 1,200 databases of one engine are three pages a sweep.
    const big = workloadFloor({ databasesByEngine: [1_200], nodeBalancers: 0, configsPerNodeBalancer: 0, snapshots: 0, provisionSeconds: 5, pendingPollSeconds: 5 }, budget);
    expect(big.lists).toBe(3 * big.sweeps);
    expect(big.seconds).toBe(sendSeconds(big.calls, big.lists, budget) + 10);
  });

  it("at a small share the sweeps leave room in the paginated class: the floor is finite", () => {
    // A tenth of the API's limit: 20 paginated GETs a minute, three list pages a sweep.
    const small = { perWindow: 184, windowSeconds: 60, listsPerWindow: 20 };
    const f = workloadFloor({ databasesByEngine: [100, 100], nodeBalancers: 40, configsPerNodeBalancer: 4, snapshots: 60, provisionSeconds: 5, pendingPollSeconds: 5 }, small);
    // 200 paginated GETs of the NodeBalancers' own at 20 a minute: ten minutes at least, and not
    // much more than the sweeps' half of the class adds.
    expect(f.seconds).toBeGreaterThanOrEqual(600);
    expect(f.seconds).toBeLessThan(3_600);
    expect(f.seconds).toBe(sendSeconds(f.calls, f.paginated, small));
  });
});
