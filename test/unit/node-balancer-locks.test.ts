// The NodeBalancer's locks helper against the emulator over HTTP: a lock read without the
// account scope is still named (by type), a lock id that is not this NodeBalancer's
// cannot_delete lock is never removed, and the waits of a locked deletion double up to the
// drift poll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { NodeBalancerLocks } from "../../src/resources/node-balancer/locks.ts";
import { RetryAfterError } from "../../src/runtime/contract.ts";

let emu: RunningEmulator;
let admin: LinodeClient;
let nbOnly: LinodeClient;
const poll = { pendingMillis: 1_000, readyMillis: 5_000 };
const signal = new AbortController().signal;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false, config: { tokens: [{ token: "all", scopes: "*" }, { token: "nb-only", scopes: "nodebalancers:read_write" }] } });
  admin = new LinodeClient({ token: "all", baseUrl: emu.url });
  nbOnly = new LinodeClient({ token: "nb-only", baseUrl: emu.url });
});
afterAll(async () => {
  await admin.close();
  await nbOnly.close();
  await emu.close();
});

const lockedNb = async (lockType: "cannot_delete" | "cannot_delete_with_subresources" = "cannot_delete") => {
  const nb = await admin.nodeBalancers.create({ region: "us-east" });
  const lock = await admin.locks.create({ entityType: "nodebalancer", entityId: nb.id, lockType });
  return { nb: await admin.nodeBalancers.get(nb.id), lock };
};

describe("NodeBalancerLocks", () => {
  it("a locked deletion is Locked, naming the lock and its id; the waits double up to the drift poll", async () => {
    const { nb, lock } = await lockedNb("cannot_delete_with_subresources");
    const locks = new NodeBalancerLocks(admin, poll);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const err = await locks.holdDeletion(nb, undefined, signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryAfterError);
      expect((err as RetryAfterError).reason).toBe("Locked");
      expect((err as RetryAfterError).message).toContain(`a cannot_delete_with_subresources lock (lock id ${String(lock.id)})`);
      waits.push((err as RetryAfterError).delayMillis);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    await admin.locks.delete(lock.id);
    await expect(locks.holdDeletion(nb, undefined, signal)).resolves.toBeUndefined();
    expect(locks.size).toBe(0);
  });

  it("a token without the account scope still holds the deletion, naming the lock by its type", async () => {
    const { nb } = await lockedNb();
    const err = await new NodeBalancerLocks(nbOnly, poll).holdDeletion(nb, undefined, signal).catch((e: unknown) => e);
    expect((err as RetryAfterError).reason).toBe("Locked");
    expect((err as RetryAfterError).message).toContain("a cannot_delete lock (its id unreadable: the token lacks account:read_only)");
  });

  it("removes a lock only if it is this NodeBalancer's cannot_delete lock", async () => {
    const { nb, lock } = await lockedNb();
    const other = await lockedNb("cannot_delete_with_subresources");
    const locks = new NodeBalancerLocks(admin, poll);
    await locks.remove(nb.id, other.lock.id, signal);
    await locks.remove(other.nb.id, other.lock.id, signal);
    expect(await admin.locks.get(other.lock.id)).toMatchObject({ id: other.lock.id });
    await locks.remove(nb.id, lock.id, signal);
    await expect(admin.locks.get(lock.id)).rejects.toMatchObject({ status: 404 });
    // Gone already: done.
    await expect(locks.remove(nb.id, lock.id, signal)).resolves.toBeUndefined();
  });

  it("a 400 from the delete is Locked only if the locks list shows a lock on it", async () => {
    const { nb } = await lockedNb();
    const refusal = await admin.nodeBalancers.delete(nb.id).catch((e: unknown) => e);
    const locks = new NodeBalancerLocks(admin, poll);
    expect(((await locks.explainRefusal(nb.id, refusal, undefined, signal)) as RetryAfterError).reason).toBe("Locked");
    const free = await admin.nodeBalancers.create({ region: "us-east" });
    expect(await locks.explainRefusal(free.id, refusal, undefined, signal)).toBe(refusal);
  });

  it("where the API leaves the locks field out (v4), the locks list stands in, read only when needed", async () => {
    const { nb } = await lockedNb();
    const { locks: _shown, ...bare } = nb;
    const locks = new NodeBalancerLocks(admin, poll);
    const before = emu.requestCounts()["GET /locks"] ?? 0;
    expect(await locks.types(bare, false, signal)).toEqual([]);
    expect(emu.requestCounts()["GET /locks"] ?? 0).toBe(before);
    expect(await locks.types(bare, true, signal)).toEqual(["cannot_delete"]);
    expect(await locks.types(nb, true, signal)).toEqual(["cannot_delete"]);
    expect(emu.requestCounts()["GET /locks"]).toBe(before + 1);
  });
});
