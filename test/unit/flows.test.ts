// Fair shares of the workers among flows (src/runtime/flows.ts) and the work queue that uses
// them: a flow whose keys take long (an account whose API answers late or 429) cannot hold every
// worker while other flows' keys wait, and a flow alone may use them all.
import { describe, expect, it } from "vitest";
import { FlowShares } from "../../src/runtime/flows.ts";
import { WorkQueue } from "../../src/runtime/workqueue.ts";

describe("FlowShares", () => {
  it("an even share of the workers among the flows with work, rounded up, at least one", () => {
    const s = new FlowShares(4);
    expect([1, 2, 3, 4, 5, 9].map((n) => s.share(n))).toEqual([4, 2, 2, 1, 1, 1]);
    expect(new FlowShares(0).share(1)).toBe(1);
  });

  it("with a per-flow limit, no flow holds more than it however few are active; beyond workers ÷ limit flows they share", () => {
    // The controller's shape: 2 a flow, workers for four flows at that.
    const s = new FlowShares(8, { perFlow: 2 });
    expect([1, 2, 4, 5, 8, 9].map((n) => s.share(n))).toEqual([2, 2, 2, 2, 1, 1]);
    s.started("slow");
    s.started("slow");
    expect(s.next(["slow"])).toBeUndefined();
    expect(s.next(["slow", "quick"])).toBe("quick");
  });

  it("a flow alone may take every worker", () => {
    const s = new FlowShares(4);
    for (let i = 0; i < 4; i++) {
      expect(s.next(["slow"])).toBe("slow");
      s.started("slow");
    }
    expect(s.holding("slow")).toBe(4);
  });

  it("a flow holding its share waits while another flow has keys; the fewest-held flow goes first", () => {
    const s = new FlowShares(4);
    s.started("slow");
    s.started("slow");
    // Two flows with work: a share is 2 each; "slow" holds 2 already.
    expect(s.next(["slow", "quick"])).toBe("quick");
    s.started("quick");
    // Three flows: a share is 2 (4/3 rounded up); "quick" holds fewer than "slow".
    expect(s.next(["slow", "quick", "other"])).toBe("other");
    s.started("other");
    expect(s.next(["slow", "quick", "other"])).toBe("quick");
    s.started("quick");
    // Every flow waiting holds its share: the worker waits.
    expect(s.next(["slow", "quick"])).toBeUndefined();
    s.finished("slow");
    expect(s.next(["slow", "quick"])).toBe("slow");
  });

  it("flows holding as many go in turn, the one served longest ago first", () => {
    const s = new FlowShares(8);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const f = s.next(["a", "b", "c"]);
      if (f === undefined) throw new Error("no flow");
      order.push(f);
      s.started(f);
      s.finished(f);
    }
    expect(order).toEqual(["a", "b", "c", "a", "b", "c"]);
  });

  it("a flow whose pass just ended keeps its share a while: a slow flow cannot take every worker between another's polls", () => {
    let t = 0;
    const s = new FlowShares(4, { lingerMillis: 10_000, now: () => t });
    s.started("quick");
    s.finished("quick");
    // "quick" has nothing queued, but had a pass just now: two flows share the four workers.
    for (let i = 0; i < 2; i++) {
      expect(s.next(["slow"])).toBe("slow");
      s.started("slow");
    }
    expect(s.next(["slow"])).toBeUndefined();
    t = 9_999;
    expect(s.next(["slow"])).toBeUndefined();
    // Idle for longer than that: forgotten, and "slow" may use every worker.
    t = 10_000;
    expect(s.next(["slow"])).toBe("slow");
    expect(s.remembered(["slow"])).toBe(1);
  });

  it("a lingering flow is forgotten once its linger is over, for the gauge too", () => {
    let t = 0;
    const s = new FlowShares(2, { lingerMillis: 1_000, now: () => t });
    s.started("a");
    s.finished("a");
    s.started("b");
    expect(s.remembered([])).toBe(2);
    t = 1_000;
    expect(s.remembered([])).toBe(1);
    expect(s.remembered(["a"])).toBe(1);
  });

  it("forgets a flow once it has nothing queued or in progress", () => {
    const s = new FlowShares(2);
    s.started("a");
    s.idle("a");
    expect(s.remembered([])).toBe(1);
    s.finished("a");
    s.idle("a");
    expect(s.remembered([])).toBe(0);
  });
});

describe("WorkQueue with flows", () => {
  const flowOf = (key: string): string => key.split("/")[0] ?? "";

  it("keys of a slow flow queued first do not take the workers from another flow's", async () => {
    const q = new WorkQueue({ flows: { workers: 4, of: flowOf } });
    for (let i = 0; i < 10; i++) q.add(`noisy/db-${String(i)}`);
    for (let i = 0; i < 3; i++) q.add(`quiet/db-${String(i)}`);
    const taken = await Promise.all([q.get(), q.get(), q.get(), q.get()]);
    // Two flows with work: two workers each, not four for the first queued.
    expect(taken.map((k) => flowOf(k ?? ""))).toEqual(["noisy", "quiet", "noisy", "quiet"]);
    // Both hold their share: the next worker waits; a quiet key finishing lets the next quiet one go.
    const waiting = q.get();
    let got: string | undefined;
    void waiting.then((k) => { got = k; });
    await Promise.resolve();
    expect(got).toBeUndefined();
    q.done("quiet/db-0");
    expect(await waiting).toBe("quiet/db-2");
  });

  it("with a per-flow limit, a slow flow holding all it may takes no worker from another: each works at its own limit", async () => {
    const q = new WorkQueue({ flows: { workers: 8, perFlow: 2, of: flowOf } });
    for (let i = 0; i < 10; i++) q.add(`noisy/db-${String(i)}`);
    const noisy = await Promise.all([q.get(), q.get()]);
    expect(noisy).toEqual(["noisy/db-0", "noisy/db-1"]);
    // "noisy" holds its two (its passes waiting on a slow API): a worker free meanwhile waits for a key of another flow.
    const waiting = q.get();
    let got: string | undefined;
    void waiting.then((k) => { got = k; });
    await Promise.resolve();
    expect(got).toBeUndefined();
    for (let i = 0; i < 3; i++) q.add(`quiet/db-${String(i)}`);
    // The quiet flow gets its own two at once, as it would alone, while noisy's passes still run.
    expect([await waiting, await q.get()]).toEqual(["quiet/db-0", "quiet/db-1"]);
  });

  it("a flow alone uses every worker; a newcomer's key goes to the next free one, and its share is kept while it runs", async () => {
    const q = new WorkQueue({ flows: { workers: 3, of: flowOf } });
    for (let i = 0; i < 6; i++) q.add(`noisy/db-${String(i)}`);
    expect(await Promise.all([q.get(), q.get(), q.get()])).toEqual(["noisy/db-0", "noisy/db-1", "noisy/db-2"]);
    q.add("quiet/db-0");
    q.done("noisy/db-0");
    expect(await q.get()).toBe("quiet/db-0");
    // Two flows at work: "noisy" holds its share (2 of 3) until "quiet" has nothing in progress.
    const next = q.get();
    let got: string | undefined;
    void next.then((k) => { got = k; });
    await Promise.resolve();
    expect(got).toBeUndefined();
    q.done("quiet/db-0");
    expect(await next).toBe("noisy/db-3");
  });

  it("without flows it is first come first served, and drains to nothing", async () => {
    const q = new WorkQueue();
    for (const k of ["b/1", "a/1", "b/2"]) q.add(k);
    expect(await Promise.all([q.get(), q.get(), q.get()])).toEqual(["b/1", "a/1", "b/2"]);
    for (const k of ["b/1", "a/1", "b/2"]) q.done(k);
    expect(q.sizes).toEqual({ queued: 0, dirty: 0, processing: 0, delayed: 0, failures: 0, flows: 0 });
  });

  it("keeps no flow once its keys are done", async () => {
    const q = new WorkQueue({ flows: { workers: 2, of: flowOf } });
    q.add("a/1");
    q.add("b/1");
    const keys = await Promise.all([q.get(), q.get()]);
    expect(q.sizes.flows).toBe(2);
    for (const k of keys) q.done(k ?? "");
    expect(q.sizes).toEqual({ queued: 0, dirty: 0, processing: 0, delayed: 0, failures: 0, flows: 0 });
  });
});
