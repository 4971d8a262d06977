// A pass waiting out a retry lends its place in its account's share to the next key of that
// account, and takes it back at once when it goes on: then no key of the account starts until
// enough end to bring it under its share again, and nothing ever waits for a place it lent.
import { describe, expect, it } from "vitest";
import { lendingTurn, PassTurn, runAsPass } from "../../src/runtime/lent-turns.ts";
import { WorkQueue } from "../../src/runtime/workqueue.ts";

/** A queue of flows named by the key's prefix ("a/1" is flow a), `perFlow` places each, 8 workers. */
const queueOf = (perFlow: number): WorkQueue => new WorkQueue({ flows: { of: (key) => key.split("/")[0] ?? "", workers: 8, perFlow } });
/** Whether `p` has settled after the microtasks and a macrotask turn. */
const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => { done = true; }, () => { done = true; });
  await new Promise((r) => setImmediate(r));
  return done;
};

describe("lent turns", () => {
  it("a key waiting lends its place: the next key of its flow runs; taken back at once, no further key starts until the flow is under its share", async () => {
    const q = queueOf(1);
    for (const k of ["a/1", "a/2", "a/3"]) q.add(k);
    expect(await q.get()).toBe("a/1");
    const blocked = q.get();
    expect(await settled(blocked)).toBe(false);
    q.lend("a/1");
    expect(await blocked).toBe("a/2");
    // a/1 goes on beside a/2: the flow holds two places of its one; a/3 waits for both to end.
    q.reclaim("a/1");
    const third = q.get();
    q.done("a/2");
    expect(await settled(third)).toBe(false);
    q.done("a/1");
    expect(await third).toBe("a/3");
  });

  it("another flow is not held up, and a key not lent, or not running, lends and reclaims nothing", async () => {
    const q = queueOf(1);
    q.add("a/1");
    q.add("b/1");
    expect(await q.get()).toBe("a/1");
    expect(await q.get()).toBe("b/1");
    q.reclaim("a/1");
    q.lend("zz/9");
    q.reclaim("zz/9");
    q.add("a/2");
    const next = q.get();
    expect(await settled(next)).toBe(false);
    q.done("a/1");
    expect(await next).toBe("a/2");
  });

  it("a flow lends at most its share of places at once: the passes waiting still hold workers, so an account of 429s takes at most twice its share", async () => {
    const q = queueOf(1);
    for (const k of ["a/1", "a/2", "a/3", "b/1"]) q.add(k);
    expect(await q.get()).toBe("a/1");
    expect(await q.get()).toBe("b/1");
    q.lend("a/1");
    expect(await q.get()).toBe("a/2");
    // a/2 waits too, but the flow has lent its one place already: a/3 does not start.
    q.lend("a/2");
    const third = q.get();
    expect(await settled(third)).toBe(false);
    q.reclaim("a/1");
    q.done("a/1");
    expect(await settled(third)).toBe(false);
    q.done("a/2");
    expect(await third).toBe("a/3");
  });

  it("a pass that ends while lent gives back nothing twice: the flow's place count stays right", async () => {
    const q = queueOf(1);
    for (const k of ["a/1", "a/2", "a/3", "a/4"]) q.add(k);
    expect(await q.get()).toBe("a/1");
    q.lend("a/1");
    expect(await q.get()).toBe("a/2");
    q.done("a/1");
    // Only a/2 holds the place: a/3 waits for it, not two at once.
    const third = q.get();
    const fourth = q.get();
    expect(await settled(third)).toBe(false);
    q.done("a/2");
    expect(await third).toBe("a/3");
    expect(await settled(fourth)).toBe(false);
  });

  it("a wait shared with the pass that took the lent place (a list sweep both await) ends for both: taking the place back never waits", async () => {
    const q = queueOf(1);
    q.add("a/1");
    q.add("a/2");
    expect(await q.get()).toBe("a/1");
    let endWait = (): void => {};
    // a/1 starts the sweep; its retry's wait lends a/1's place.
    const sweep = runAsPass(new PassTurn(q, "a/1"), () => lendingTurn(() => new Promise<void>((r) => { endWait = r; })));
    // a/2 takes the place and awaits the same sweep.
    expect(await q.get()).toBe("a/2");
    const second = sweep.then(() => { q.done("a/2"); });
    endWait();
    await sweep;
    await second;
    q.done("a/1");
    q.add("a/3");
    expect(await q.get()).toBe("a/3");
  });

  it("inside a pass, waits lend its place once, and take it back when the last of them ends; outside a pass, a wait is only a wait", async () => {
    const calls: string[] = [];
    const queue = { lend: (k: string) => { calls.push(`lend ${k}`); }, reclaim: (k: string) => { calls.push(`reclaim ${k}`); } };
    const turn = new PassTurn(queue, "a/1");
    let release1 = (): void => {};
    let release2 = (): void => {};
    await runAsPass(turn, async () => {
      const w1 = lendingTurn(() => new Promise<void>((r) => { release1 = r; }));
      const w2 = lendingTurn(() => new Promise<void>((r) => { release2 = r; }));
      await new Promise((r) => setImmediate(r));
      expect(calls).toEqual(["lend a/1"]);
      release1();
      await w1;
      expect(calls).toEqual(["lend a/1"]);
      release2();
      await w2;
      expect(calls).toEqual(["lend a/1", "reclaim a/1"]);
    });
    // After the pass: a wait it left behind neither lends nor reclaims.
    turn.end();
    await runAsPass(turn, () => lendingTurn(() => Promise.resolve()));
    await lendingTurn(() => Promise.resolve());
    expect(calls).toEqual(["lend a/1", "reclaim a/1"]);
  });
});
