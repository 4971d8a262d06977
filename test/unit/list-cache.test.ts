// The shared list cache: one list serves many reads; what we just changed is never served
// from a list (or a GET) that was already on its way when we changed it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LinodeApiError } from "../../src/linode/index.ts";
import { ListCache } from "../../src/resources/shared/list-cache.ts";

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
});
