// The client's connection slots: a waiting request holds none, a cancelled one gives up its
// place without taking a slot, and a released slot goes to the first in line.
import { describe, expect, it } from "vitest";
import { ConnectionSlots } from "../../src/linode/connection-slots.ts";

const settledYet = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => { done = true; }, () => { done = true; });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe("ConnectionSlots", () => {
  it("gives a slot at once while one is free, then queues", async () => {
    const slots = new ConnectionSlots(2);
    await slots.acquire();
    await slots.acquire();
    const third = slots.acquire();
    expect(await settledYet(third)).toBe(false);
    expect(slots.queued).toBe(1);
    slots.release();
    await third;
    expect(slots.queued).toBe(0);
  });

  it("hands released slots first come, first served", async () => {
    const slots = new ConnectionSlots(1);
    await slots.acquire();
    const order: string[] = [];
    const a = slots.acquire().then(() => order.push("a"));
    const b = slots.acquire().then(() => order.push("b"));
    slots.release();
    await a;
    expect(await settledYet(b)).toBe(false);
    slots.release();
    await b;
    expect(order).toEqual(["a", "b"]);
  });

  it("a cancelled waiter leaves the queue and takes no slot", async () => {
    const slots = new ConnectionSlots(1);
    await slots.acquire();
    const ac = new AbortController();
    const cancelled = slots.acquire(ac.signal);
    const behind = slots.acquire();
    ac.abort(new Error("shutdown"));
    await expect(cancelled).rejects.toThrow("shutdown");
    slots.release();
    await behind;
    // The slot went to the one behind: none is free now, and none was lost.
    const more = slots.acquire();
    expect(await settledYet(more)).toBe(false);
    slots.release();
    await more;
  });

  it("an already aborted signal fails at once, holding nothing", async () => {
    const slots = new ConnectionSlots(1);
    await expect(slots.acquire(AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
    await slots.acquire();
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => new ConnectionSlots(0)).toThrow(RangeError);
    expect(() => new ConnectionSlots(1.5)).toThrow(RangeError);
  });
});
