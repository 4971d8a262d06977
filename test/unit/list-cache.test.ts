// The shared list cache: one list serves many reads; what we just changed is never served
// from a list (or a GET) that was already on its way when we changed it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LinodeApiError } from "../../src/linode/index.ts";
import { HELD_LIST_GETS_PER_MINUTE, ListCache } from "../../src/resources/shared/list-cache.ts";
import { cachedReadAge } from "../../src/runtime/managed.ts";

interface Obj { id: number; status: string }

function source(onChange?: (id: number) => void): { cache: ListCache<Obj>; state: Map<number, Obj>; lists: number; gets: number; hold: () => () => void } {
  const state = new Map<number, Obj>([[1, { id: 1, status: "active" }], [2, { id: 2, status: "active" }]]);
  let gate: Promise<void> | undefined;
  const s = {
    state, lists: 0, gets: 0,
    hold: () => { let open!: () => void; gate = new Promise((r) => { open = r; }); return () => { gate = undefined; open(); }; },
    cache: undefined as unknown as ListCache<Obj>,
  };
  s.cache = new ListCache<Obj>({
    listAll: async () => {
      s.lists++;
      const snapshot = [...state.values()].map((o) => ({ ...o }));
      await gate;
      return snapshot;
    },
    ...(onChange !== undefined ? { onChange } : {}),
    get: (id) => { s.gets++; const o = state.get(id); return o === undefined ? Promise.reject(new LinodeApiError(404, [{ reason: "Not found" }], { method: "GET", route: "/things/{id}" })) : Promise.resolve({ ...o }); },
  });
  return s;
}

const signal = new AbortController().signal;

/** Moves the clock the cache reads (Date, the one thing faked here) `millis` on. */
function elapsed(millis: number): void {
  vi.setSystemTime(Date.now() + millis);
}

describe("ListCache", () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); });
  afterEach(() => { vi.useRealTimers(); });
  it("a list held by the call budget is as old as when its first page went, not as when it was asked for", async () => {
    let lists = 0;
    const cache = new ListCache<Obj>({
      listAll: (_signal, sent) => {
        lists++;
        // Held 8 s for the budget, then its two pages go.
        elapsed(8_000);
        sent();
        sent();
        return Promise.resolve([{ id: 1, status: "active" }]);
      },
      get: () => Promise.reject(new Error("no GET expected")),
    });
    await cache.get(1, 10_000, signal);
    elapsed(5_000);
    // 13 s after it was asked for, 5 s after it went: still young enough for a 10 s read.
    await cache.get(1, 10_000, signal);
    expect(lists).toBe(1);
    elapsed(5_001);
    await cache.get(1, 10_000, signal);
    expect(lists).toBe(2);
  });

  it("one list serves every read within the age; a change we made is read fresh", async () => {
    const s = source();
    await Promise.all([s.cache.get(1, 10_000, signal), s.cache.get(2, 10_000, signal)]);
    expect(s.lists).toBe(1);
    s.state.set(1, { id: 1, status: "restoring" });
    s.cache.invalidate(1);
    expect((await s.cache.get(1, 10_000, signal))?.status).toBe("restoring");
    expect(s.lists).toBe(1);
    expect(s.gets).toBe(1);
  });

  it("a list taken before our change does not bring the old state back", async () => {
    const s = source();
    const open = s.hold();
    const pending = s.cache.get(2, 10_000, signal); // starts a list that sees 1 as active
    s.state.set(1, { id: 1, status: "restoring" });
    s.cache.invalidate(1);
    open();
    await pending;
    expect((await s.cache.get(1, 10_000, signal))?.status).toBe("restoring");
  });

  it("an object created while a list is on its way: the create's answer stands if that list lacks it (no GET); a later list's state wins", async () => {
    const s = source();
    await s.cache.get(1, 10_000, signal);
    elapsed(3);
    const open = s.hold();
    const pending = s.cache.get(1, 1, signal); // a list on its way, taken before the create
    expect(s.lists).toBe(2);
    s.state.set(3, { id: 3, status: "provisioning" });
    s.cache.put({ id: 3, status: "provisioning" });
    open();
    await pending;
    expect((await s.cache.get(3, 10_000, signal))?.status).toBe("provisioning");
    expect(s.gets).toBe(0);
    s.state.set(3, { id: 3, status: "active" });
    elapsed(3);
    expect((await s.cache.get(3, 1, signal))?.status).toBe("active");
    expect(s.gets).toBe(0);
  });

  it("a whole invalidation while a list is on its way: nothing from that list is served", async () => {
    const s = source();
    const open = s.hold();
    const pending = s.cache.get(1, 10_000, signal);
    s.state.set(1, { id: 1, status: "deleting" });
    s.cache.invalidate();
    open();
    expect((await pending)?.status).toBe("deleting");
  });

  it("an object missing from the list is confirmed by a GET; one that is gone is undefined", async () => {
    const s = source();
    await s.cache.get(1, 10_000, signal);
    s.state.set(3, { id: 3, status: "provisioning" });
    expect((await s.cache.get(3, 10_000, signal))?.status).toBe("provisioning");
    expect(await s.cache.get(9, 10_000, signal)).toBeUndefined();
  });

  it("a new list names what changed since the last one (drift, new, gone): the sweep that wakes only those", async () => {
    const changed: number[] = [];
    const s = source((id) => changed.push(id));
    await s.cache.get(1, 10_000, signal);
    expect(changed).toEqual([]);
    s.state.set(2, { id: 2, status: "failed" });
    s.state.set(3, { id: 3, status: "active" });
    s.state.delete(1);
    await s.cache.get(2, 0.001, signal);
    elapsed(5);
    await s.cache.get(3, 1, signal);
    expect(changed.sort()).toEqual([1, 2, 3]);
    const lists = s.lists;
    changed.length = 0;
    elapsed(5);
    await s.cache.get(3, 1, signal);
    expect(s.lists).toBe(lists + 1);
    expect(changed).toEqual([]);
  });

  it("a kind's own comparison decides what counts as changed (a counter moving on its own wakes no one)", async () => {
    interface Counted { id: number; updated: string; transfer: number }
    const state = new Map<number, Counted>([[1, { id: 1, updated: "a", transfer: 1 }], [2, { id: 2, updated: "a", transfer: 1 }]]);
    const changed: number[] = [];
    const cache = new ListCache<Counted>({
      listAll: () => Promise.resolve([...state.values()].map((o) => ({ ...o }))),
      get: (id) => Promise.resolve({ id, updated: "a", transfer: 0, ...state.get(id) }),
      onChange: (id) => changed.push(id),
      differs: (a, b) => a.updated !== b.updated,
    });
    await cache.get(1, 1, signal);
    state.set(1, { id: 1, updated: "a", transfer: 99 });
    state.set(2, { id: 2, updated: "b", transfer: 1 });
    elapsed(5);
    await cache.get(1, 1, signal);
    expect(changed).toEqual([2]);
  });

  it("what we invalidated is compared with the API's last answer, not read as new: a refused change wakes nothing, a real one does", async () => {
    const changed: number[] = [];
    const s = source((id) => changed.push(id));
    await s.cache.get(1, 1, signal);
    // We tried to change 1 and the API refused: its state did not move.
    s.cache.invalidate(1);
    elapsed(5);
    await s.cache.get(2, 1, signal);
    expect(changed).toEqual([]);
    // It did move (ours or not): the list says so.
    s.cache.invalidate(1);
    s.state.set(1, { id: 1, status: "resizing" });
    elapsed(5);
    await s.cache.get(2, 1, signal);
    expect(changed).toEqual([1]);
  });

  it("keeps invalidations only while a read is on its way (one that started before them could bring the old state back)", async () => {
    const s = source();
    const open = s.hold();
    const listing = s.cache.get(1, 10_000, signal);
    s.cache.invalidate(2);
    expect(s.cache.invalidations).toBe(1);
    open();
    await listing;
    // The list left 2 out, and nothing is on its way any more: no read can have started before it.
    expect(s.cache.size).toBe(1);
    expect(s.cache.invalidations).toBe(0);
  });
  it("an object taken over from another shard is not served a list older than its arrival, however settled it is", async () => {
    const s = source();
    const settled = 5 * 60_000;
    // This process listed the account while object 1 was still being made (another shard's then).
    s.state.set(1, { id: 1, status: "provisioning" });
    await s.cache.get(2, settled, signal);
    s.state.set(1, { id: 1, status: "active" });
    elapsed(20_000);
    // Its own objects still take that list: no change was missed for them (a list would have woken them).
    expect((await s.cache.get(1, cachedReadAge({}, settled), signal))?.status).toBe("provisioning");
    expect(s.lists).toBe(1);
    // One that arrived since (its owner saw it active): a new list, shared, not a GET.
    const taken = { managedSince: Date.now() - 1_000 };
    expect((await s.cache.get(1, cachedReadAge(taken, settled), signal))?.status).toBe("active");
    expect(s.lists).toBe(2);
    expect(s.gets).toBe(0);
    // That list serves it from then on, up to the settled age.
    elapsed(60_000);
    expect((await s.cache.get(1, cachedReadAge(taken, settled), signal))?.status).toBe("active");
    expect(s.lists).toBe(2);
  });

  it("cachedReadAge: the kind's age, no older than the arrival, never 0", () => {
    expect(cachedReadAge({}, 300_000, 1_000_000)).toBe(300_000);
    expect(cachedReadAge({ managedSince: 990_000 }, 300_000, 1_000_000)).toBe(10_000);
    expect(cachedReadAge({ managedSince: 500_000 }, 300_000, 1_000_000)).toBe(300_000);
    expect(cachedReadAge({ managedSince: 1_000_000 }, 300_000, 1_000_000)).toBe(1);
  });
  it("a list of many pages is not waited for by a read that has the object: it is served the last list's and the new list wakes what changed; a failed list is waited for next", async () => {
    const changed: number[] = [];
    const state = new Map<number, Obj>([[1, { id: 1, status: "provisioning" }], [2, { id: 2, status: "provisioning" }], [3, { id: 3, status: "provisioning" }]]);
    let lists = 0;
    let fail = false;
    let release: (() => void) | undefined;
    const cache = new ListCache<Obj>({
      pageSize: 2,
      onChange: (id) => changed.push(id),
      listAll: async () => {
        lists++;
        const snapshot = [...state.values()].map((o) => ({ ...o }));
        await new Promise<void>((r) => { release = r; });
        if (fail) throw new LinodeApiError(401, [{ reason: "Invalid Token" }], { method: "GET", route: "/things" });
        return snapshot;
      },
      get: () => Promise.reject(new Error("no GET expected")),
    });
    const pending = 5_000;
    // The first list is waited for: nothing is known before it.
    const first = cache.get(1, pending, signal);
    release?.();
    expect((await first)?.status).toBe("provisioning");
    state.set(1, { id: 1, status: "active" });
    elapsed(6_000);
    // Older than asked: served at once, and one new list (not one per read) is on its way.
    expect((await cache.get(1, pending, signal))?.status).toBe("provisioning");
    expect((await cache.get(2, pending, signal))?.status).toBe("provisioning");
    expect(lists).toBe(2);
    release?.();
    await vi.waitFor(() => { expect(changed).toEqual([1]); });
    expect((await cache.get(1, pending, signal))?.status).toBe("active");
    // That list failed: the read after it waits for the next, and gets its failure.
    elapsed(6_000);
    fail = true;
    void cache.get(2, pending, signal);
    release?.();
    await vi.waitFor(() => { expect(lists).toBe(3); });
    await new Promise((r) => setImmediate(r));
    elapsed(6_000);
    const waited = cache.get(2, pending, signal);
    expect(lists).toBe(4);
    release?.();
    await expect(waited).rejects.toThrow(/Invalid Token/);
  });

  it("a list of one page is waited for (one call, and the object read is as fresh as asked)", async () => {
    const state = new Map<number, Obj>([[1, { id: 1, status: "provisioning" }]]);
    const cache = new ListCache<Obj>({ pageSize: 500, onChange: () => undefined, listAll: () => Promise.resolve([...state.values()].map((o) => ({ ...o }))), get: () => Promise.reject(new Error("no GET expected")) });
    await cache.get(1, 5_000, signal);
    state.set(1, { id: 1, status: "active" });
    elapsed(6_000);
    expect((await cache.get(1, 5_000, signal))?.status).toBe("active");
  });

  it("a list the paginated class holds longer than a read may wait: the read GETs its object, a minute's GETs are capped, and the list still goes", async () => {
    const state = new Map<number, Obj>([[1, { id: 1, status: "provisioning" }], [2, { id: 2, status: "provisioning" }]]);
    let held = 0;
    let lists = 0;
    let gets = 0;
    let release!: () => void;
    let gate: Promise<void> = Promise.resolve();
    const cache = new ListCache<Obj>({
      pageSize: 500, onChange: () => undefined, listHeldMillis: () => held,
      listAll: async () => { lists++; await gate; return [...state.values()].map((o) => ({ ...o })); },
      get: (id) => { gets++; return Promise.resolve({ ...(state.get(id) ?? { id, status: "?" }) }); },
    });
    await cache.get(1, 1_000, signal);
    expect({ lists, gets }).toEqual({ lists: 1, gets: 0 });
    // The class is spent for 40 s: the list waits in its bucket (here: the gate), the reads do not.
    held = 40_000;
    gate = new Promise((r) => { release = r; });
    state.set(1, { id: 1, status: "active" });
    elapsed(2_000);
    expect((await cache.get(1, 1_000, signal))?.status).toBe("active");
    expect({ lists, gets }).toEqual({ lists: 2, gets: 1 });
    // No more than a minute's worth of GETs in place of the list: the 61st waits for the list.
    for (let i = 1; i < HELD_LIST_GETS_PER_MINUTE; i++) await cache.get(2, 1_000, signal);
    expect(gets).toBe(HELD_LIST_GETS_PER_MINUTE);
    let answered = false;
    const waiting = cache.get(2, 1_000, signal).then((o) => { answered = true; return o; });
    await Promise.resolve();
    expect(answered).toBe(false);
    release();
    expect((await waiting)?.status).toBe("provisioning");
    expect({ lists, gets }).toEqual({ lists: 2, gets: HELD_LIST_GETS_PER_MINUTE });
    // A hold no longer than the read's age is waited for.
    held = 1_000;
    elapsed(2_000);
    await cache.get(1, 1_000, signal);
    expect({ lists, gets }).toEqual({ lists: 3, gets: HELD_LIST_GETS_PER_MINUTE });
  });
});

describe("ListCache.keepFresh: the sweep on its own timer", () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  /** A source whose lists are counted; `fail` makes the next lists fail. */
  function counted(): { cache: ListCache<Obj>; lists: () => number; fail: (f: boolean) => void } {
    let lists = 0;
    let failing = false;
    const cache = new ListCache<Obj>({
      listAll: (_signal, sent) => { lists++; sent(); return failing ? Promise.reject(new Error("list failed")) : Promise.resolve([{ id: 1, status: "active" }]); },
      get: () => Promise.reject(new Error("no GET expected")),
      onChange: () => undefined,
    });
    return { cache, lists: () => lists, fail: (f) => { failing = f; } };
  }

  it("lists whenever the list turns the window old while settled reads want it, with no read to start it", async () => {
    const s = counted();
    const closed = new AbortController();
    s.cache.keepFresh(10_000, closed.signal);
    await s.cache.get(1, 10_000, signal);
    expect(s.lists()).toBe(1);
    // No read for 15 s (the looks wait elsewhere): the timer's list went at 10 s.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(s.lists()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.lists()).toBe(2);
    // A read now finds the timer's list young: no list of its own.
    await vi.advanceTimersByTimeAsync(5_000);
    await s.cache.get(1, 10_000, signal);
    expect(s.lists()).toBe(2);
    closed.abort();
  });

  it("stops two periods after the last read that wanted it, and for good once closed", async () => {
    const s = counted();
    const closed = new AbortController();
    s.cache.keepFresh(10_000, closed.signal);
    await s.cache.get(1, 10_000, signal);
    await vi.advanceTimersByTimeAsync(60_000);
    // Lists at 10 and 20 s (wanted within 20 s of the read at 0), none after.
    expect(s.lists()).toBe(3);
    // A pending read (younger than the window) does not keep the sweep going.
    await s.cache.get(1, 5_000, signal);
    expect(s.lists()).toBe(4);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(s.lists()).toBe(4);
    // A settled read starts it again; closing stops it.
    await s.cache.get(1, 10_000, signal);
    closed.abort();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(s.lists()).toBe(5);
  });

  it("a failed list is tried again a period later, not at once", async () => {
    const s = counted();
    const closed = new AbortController();
    s.cache.keepFresh(10_000, closed.signal);
    await s.cache.get(1, 10_000, signal);
    s.fail(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.lists()).toBe(2);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(s.lists()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.lists()).toBe(3);
    closed.abort();
  });

  it("without keepFresh, nothing lists but the reads", async () => {
    const s = counted();
    await s.cache.get(1, 10_000, signal);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(s.lists()).toBe(1);
  });
});
