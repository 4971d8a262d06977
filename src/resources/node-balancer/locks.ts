// A NodeBalancer's resource locks (the API's /locks, BETA): spec.deletionProtection puts a cannot_delete
// lock of this resource's own on it (status.deletionLockId) and takes only that one away; any
// lock holds this resource's deletion (reason Locked, naming the lock), which is looked at again
// with backoff, never by sending DELETE again and again.
//
// What is known and what is assumed:
//  - the NodeBalancer's `locks` field (lock types, no ids) is what a look reads; linodego says it
//    is served on v4beta only, so where it is absent the locks list (GET /locks, account-wide,
//    read in full: whether it filters by entity is not documented) stands in, read only when a
//    spec asks for protection or this resource made a lock;
//  - what the API answers to DELETE of a locked NodeBalancer is not recorded (the emulator's 400
//    is a guess): a 400 from the delete is explained by reading the locks list, and taken for a
//    lock only if the list shows one on this NodeBalancer;
//  - a lock made by a process that died before status recorded its id is taken for someone
//    else's: never removed, the conservative side (the NodeBalancer stays protected).
import { isNotFound, LinodeApiError, type LinodeClient, type NodeBalancer, type ResourceLock } from "../../linode/index.ts";
import { RetryAfterError, type PollIntervals } from "../../runtime/contract.ts";
import { linodeCall, translateLinodeError } from "../shared/linode-errors.ts";
import { NodeBalancerReasons } from "./reasons.ts";

const ENTITY = "nodebalancer";

/** What spec.deletionProtection asks of the locks now. */
export interface LockPlan {
  /** Make the cannot_delete lock it asks for: the NodeBalancer has no lock at all. */
  make: boolean;
  /** The lock this resource made, to remove: spec.deletionProtection is false. */
  remove?: number;
}

export const noLockChange: LockPlan = { make: false };

/**
 * `types`: the NodeBalancer's lock types; `own`: the id of the lock this resource made, if it
 * may still be there. A lock of any type, anyone's, already protects it: nothing to make (the
 * API takes one lock per entity).
 */
export function planLock(want: boolean, types: readonly string[], own: number | undefined): LockPlan {
  if (want) return { make: types.length === 0 };
  return own !== undefined ? { make: false, remove: own } : noLockChange;
}

export class NodeBalancerLocks {
  private readonly linode: LinodeClient;
  private readonly poll: PollIntervals;
  /** Locks this process made, by NodeBalancer, until status records them. */
  private readonly madeHere = new Map<number, number>();
  /** Deletions found locked in a row, by NodeBalancer: the backoff's exponent. */
  private readonly lockedLooks = new Map<number, number>();

  constructor(linode: LinodeClient, poll: PollIntervals) {
    this.linode = linode;
    this.poll = poll;
  }

  /** How many NodeBalancers this holds something for (a gauge: back to 0). */
  get size(): number {
    return this.madeHere.size + this.lockedLooks.size;
  }

  /**
   * The NodeBalancer's lock types: its `locks` field, or, where the API leaves it out, the locks
   * list when `needed` (otherwise none are assumed: nothing is made or removed then).
   */
  async types(nb: NodeBalancer, needed: boolean, signal: AbortSignal): Promise<string[]> {
    if (nb.locks !== undefined) return nb.locks;
    if (!needed) return [];
    return (await this.onEntity(nb.id, signal)).map((l) => l.lockType);
  }

  /**
   * The lock this resource made, while the NodeBalancer may still have it: status's record (or
   * this process's, before status has it), unless no cannot_delete lock is left.
   */
  own(nodeBalancerId: number, recorded: number | undefined, types: readonly string[]): number | undefined {
    const id = recorded ?? this.madeHere.get(nodeBalancerId);
    if (recorded !== undefined) this.madeHere.delete(nodeBalancerId);
    return id !== undefined && types.includes("cannot_delete") ? id : undefined;
  }

  async make(nodeBalancerId: number, signal: AbortSignal): Promise<void> {
    const lock = await linodeCall("locking the NodeBalancer (spec.deletionProtection)", () =>
      this.linode.locks.create({ entityType: ENTITY, entityId: nodeBalancerId, lockType: "cannot_delete" }, { signal }));
    this.madeHere.set(nodeBalancerId, lock.id);
  }

  /** Removes lock `lockId` if it is still this NodeBalancer's cannot_delete lock (one gone already is done). */
  async remove(nodeBalancerId: number, lockId: number, signal: AbortSignal): Promise<void> {
    this.madeHere.delete(nodeBalancerId);
    await linodeCall(`removing lock ${String(lockId)} (spec.deletionProtection is false)`, async () => {
      try {
        const lock = await this.linode.locks.get(lockId, { signal });
        if (lock.entity.type !== ENTITY || lock.entity.id !== nodeBalancerId || lock.lockType !== "cannot_delete") return;
        await this.linode.locks.delete(lockId, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    });
  }

  /**
   * Before a DELETE: a NodeBalancer whose `locks` field shows a lock is not sent one while the
   * locks list confirms it (Locked, with backoff). The list is read fresh, as the NodeBalancer may
   * come from a shared list a poll interval old.
   */
  async holdDeletion(nb: NodeBalancer, own: number | undefined, signal: AbortSignal): Promise<void> {
    if (nb.locks === undefined || nb.locks.length === 0) return;
    let locks: ResourceLock[] | undefined;
    try {
      locks = await this.linode.locks.forEntity(ENTITY, nb.id, { signal });
    } catch (err) {
      // Without account:read_only the field is all there is: the lock is named by its type.
      if (!(err instanceof LinodeApiError) || (err.status !== 401 && err.status !== 403)) throw translateLinodeError(err, "reading the resource locks");
    }
    if (locks !== undefined && locks.length === 0) {
      this.unlocked(nb.id);
      return;
    }
    throw this.locked(nb.id, locks ?? nb.locks.map((type) => ({ lockType: type })), own);
  }

  /** After a DELETE answered 400: a lock the locks list shows on the NodeBalancer is why (Locked); otherwise `err` stands. */
  async explainRefusal(nodeBalancerId: number, err: unknown, own: number | undefined, signal: AbortSignal): Promise<unknown> {
    if (!(err instanceof LinodeApiError) || err.status !== 400) return err;
    const locks = await this.onEntity(nodeBalancerId, signal).catch(() => []);
    return locks.length > 0 ? this.locked(nodeBalancerId, locks, own) : err;
  }

  /** The NodeBalancer is deleted, or is no longer locked: its backoff starts again. */
  unlocked(nodeBalancerId: number): void {
    this.lockedLooks.delete(nodeBalancerId);
  }

  forget(nodeBalancerId: number): void {
    this.madeHere.delete(nodeBalancerId);
    this.lockedLooks.delete(nodeBalancerId);
  }

  private async onEntity(nodeBalancerId: number, signal: AbortSignal): Promise<ResourceLock[]> {
    return linodeCall("reading the resource locks", () => this.linode.locks.forEntity(ENTITY, nodeBalancerId, { signal }));
  }

  /** Locked, retried after a wait that doubles with each look that finds it locked (from the pending poll up to the drift poll). */
  private locked(nodeBalancerId: number, locks: readonly { id?: number; lockType: string }[], own: number | undefined): RetryAfterError {
    const looks = this.lockedLooks.get(nodeBalancerId) ?? 0;
    this.lockedLooks.set(nodeBalancerId, looks + 1);
    const wait = Math.min(this.poll.readyMillis, this.poll.pendingMillis * 2 ** Math.min(looks, 20));
    const named = locks.map((l) => `a ${l.lockType} lock${l.id !== undefined ? ` (lock id ${String(l.id)})` : " (its id unreadable: the token lacks account:read_only)"}`).join(", ");
    const ours = own !== undefined && locks.some((l) => l.id === own);
    const fix = ours
      ? "it is the lock spec.deletionProtection made: set spec.deletionProtection to false and the operator removes it"
      : `remove it (linode-cli locks delete <id>, or Cloud Manager; an unrestricted user's token with account:read_write)`;
    return new RetryAfterError(NodeBalancerReasons.Locked, `the NodeBalancer ${String(nodeBalancerId)} has ${named}, so it cannot be deleted: ${fix}; the deletion waits (no DELETE is sent while the NodeBalancer shows a lock) and completes once it is gone (looked at again with backoff, up to every ${String(Math.round(this.poll.readyMillis / 1000))} s)`, wait);
  }
}
