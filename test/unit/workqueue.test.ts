import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WorkQueue } from "../../src/runtime/workqueue.ts";

describe("WorkQueue", () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it("deduplicates a burst of adds into one item", async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 10; i++) q.add("ns/a");
    q.add("ns/b");
    expect(q.length).toBe(2);
    expect(await q.get()).toBe("ns/a");
    expect(await q.get()).toBe("ns/b");
    expect(q.length).toBe(0);
  });

  it("routine keys wait behind every other key of their flow; one asked for again moves ahead, one already waiting keeps its place", async () => {
    const q = new WorkQueue();
    for (const k of ["r1", "r2", "r3"]) q.addRoutine(k);
    q.add("new");
    q.add("r2");
    q.addRoutine("new");
    expect(q.length).toBe(4);
    const order: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) { const k = await q.get(); order.push(k); q.done(k ?? ""); }
    expect(order).toEqual(["new", "r2", "r1", "r3"]);
    expect(q.length).toBe(0);
    expect(q.sizes).toMatchObject({ queued: 0, dirty: 0, processing: 0 });
    // Being worked on is the look a routine add asks for: it queues nothing more.
    q.add("k");
    const k = await q.get();
    q.addRoutine("k");
    q.done(k ?? "");
    expect(q.length).toBe(0);
  });

  it("says whether the pass now running was taken from the routine lane, so a deferral of it goes back there, behind what was asked for", async () => {
    const q = new WorkQueue();
    q.addRoutine("settled");
    const k = await q.get();
    expect(k).toBe("settled");
    expect(q.isRoutinePass("settled")).toBe(true);
    // Its look is deferred by the call budget; meanwhile a list wakes another object for drift.
    q.addAfter("settled", 30, { routine: q.isRoutinePass("settled") });
    q.done("settled");
    expect(q.isRoutinePass("settled")).toBe(false);
    q.add("woken");
    vi.advanceTimersByTime(30);
    q.add("new");
    const order: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) { const next = await q.get(); order.push(next); q.done(next ?? ""); }
    expect(order).toEqual(["woken", "new", "settled"]);
    // A key asked for is not a routine pass, even one that had been waiting as routine.
    q.addRoutine("r");
    q.add("r");
    expect(await q.get()).toBe("r");
    expect(q.isRoutinePass("r")).toBe(false);
    q.done("r");
  });

  it("with flows, a flow's routine keys wait behind its other keys only, not behind another flow's", async () => {
    const q = new WorkQueue({ flows: { of: (key) => key.split("/")[0] ?? "", workers: 2 } });
    q.addRoutine("a/settled1");
    q.addRoutine("a/settled2");
    q.add("b/new");
    q.add("a/new");
    const first = [await q.get(), await q.get()];
    expect(first.sort()).toEqual(["a/new", "b/new"]);
    for (const k of first) q.done(k ?? "");
    expect([await q.get(), await q.get()]).toEqual(["a/settled1", "a/settled2"]);
  });

  it("a settled object's next look (addAfter routine) is added behind new objects when due; an event for it moves it ahead as ever", async () => {
    const q = new WorkQueue();
    q.addAfter("settled1", 10_000, { routine: true });
    q.addAfter("settled2", 10_000, { routine: true });
    q.addAfter("plain", 10_000);
    vi.advanceTimersByTime(10_000);
    q.add("new");
    const order: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) { const k = await q.get(); order.push(k); q.done(k ?? ""); }
    expect(order).toEqual(["plain", "new", "settled1", "settled2"]);
    // Due, then changed: the change is a plain add, ahead of the routine keys.
    q.addAfter("a", 1_000, { routine: true });
    q.addAfter("b", 1_000, { routine: true });
    vi.advanceTimersByTime(1_000);
    q.add("b");
    expect(await q.get()).toBe("b");
    // An earlier plain due time replaces a later routine one (and adds as plain).
    q.addAfter("c", 5_000, { routine: true });
    q.addAfter("c", 1_000);
    vi.advanceTimersByTime(1_000);
    q.add("d");
    expect(await q.get()).toBe("c");
  });

  it("a routine key that has waited past the bound takes turns with a flood of other keys: neither lane starves", async () => {
    const q = new WorkQueue({ routineMaxWaitMillis: 60_000 });
    for (const k of ["r1", "r2", "r3"]) q.addRoutine(k);
    for (let i = 0; i < 5; i++) q.add(`n${String(i)}`);
    // Within the bound: the other keys first.
    let k = await q.get();
    expect(k).toBe("n0");
    q.done(k ?? "");
    vi.advanceTimersByTime(60_001);
    const order: (string | undefined)[] = [];
    for (let i = 0; i < 7; i++) { k = await q.get(); order.push(k); q.done(k ?? ""); }
    expect(order).toEqual(["r1", "n1", "r2", "n2", "r3", "n3", "n4"]);
    expect(q.sizes).toMatchObject({ queued: 0, dirty: 0, processing: 0 });
  });

  it("never hands a key to two workers; a re-add while processing runs once afterwards", async () => {
    const q = new WorkQueue();
    q.add("k");
    const key = await q.get();
    q.add("k");
    q.add("k");
    expect(q.length).toBe(0);
    q.done(key ?? "");
    expect(q.length).toBe(1);
    expect(await q.get()).toBe("k");
  });

  it("says when a key's next pass is due: none, a scheduled delay, or now once it waits", async () => {
    const q = new WorkQueue();
    expect(q.dueIn("k")).toBeUndefined();
    q.addAfter("k", 1_000);
    expect(q.dueIn("k")).toBe(1_000);
    vi.advanceTimersByTime(400);
    expect(q.dueIn("k")).toBe(600);
    vi.advanceTimersByTime(600);
    expect(q.dueIn("k")).toBe(0);
    const key = await q.get();
    expect(q.dueIn("k")).toBeUndefined();
    q.add("k"); // asked for again while its pass runs
    expect(q.dueIn("k")).toBe(0);
    q.done(key ?? "");
  });

  it("hands an add to a waiting worker", async () => {
    const q = new WorkQueue();
    const pending = q.get();
    q.add("k");
    expect(await pending).toBe("k");
  });

  it("keeps the earliest due time of delayed adds", async () => {
    const q = new WorkQueue();
    q.addAfter("k", 10_000);
    q.addAfter("k", 1_000);
    q.addAfter("k", 5_000);
    vi.advanceTimersByTime(999);
    expect(q.length).toBe(0);
    vi.advanceTimersByTime(1);
    expect(q.length).toBe(1);
    await q.get();
    q.done("k");
    vi.advanceTimersByTime(20_000);
    expect(q.length).toBe(0);
  });

  it("backs off exponentially per key with jitter, capped, and forgets on success", () => {
    const q = new WorkQueue({ backoff: { baseMillis: 100, maxMillis: 1_000, jitter: 0.5 }, random: () => 1 });
    const delays = [1, 2, 3, 4, 5, 6].map(() => q.addRateLimited("k"));
    expect(delays).toEqual([50, 100, 200, 400, 500, 500]);
    expect(q.addRateLimited("other")).toBe(50);
    q.forget("k");
    expect(q.failureCount("k")).toBe(0);
    expect(q.addRateLimited("k")).toBe(50);
  });

  it("wakes waiting workers with undefined on shutdown and drops delayed adds", async () => {
    const q = new WorkQueue();
    q.addAfter("k", 1_000);
    const pending = q.get();
    q.shutDown();
    expect(await pending).toBeUndefined();
    vi.advanceTimersByTime(2_000);
    q.add("x");
    expect(q.length).toBe(0);
  });
});
