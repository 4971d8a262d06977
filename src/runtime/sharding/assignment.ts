// What the sharder (the leader) does with one object, from its labels and the ring: a pure
// decision, so every case is a table row. An object moves between live shards in two steps,
// never one: the sharder marks it draining; its shard finishes any pass of it, then removes
// both labels itself; only then, unlabelled, is it assigned to the new shard. So no two shards
// act on it at once. A dead shard (its Lease expired: it stopped acting at its renew deadline,
// before) cannot let go, and its objects are assigned to their new shard directly.
import type { HashRing } from "./ring.ts";

/** The shard an object is assigned to (the replica's identity): the label each shard's watches select. */
export const SHARD_LABEL = "linode.operator.dev/shard";
/** The label selector of a shard's caches: the objects assigned to `identity`. */
export const shardSelector = (identity: string): string => `${SHARD_LABEL}=${identity}`;
/** Set by the sharder on an object that is to move: its shard lets it go (removes both labels). */
export const DRAIN_LABEL = "linode.operator.dev/drain";
/**
 * Written by the sharder with each assignment: the dead shard the object was labelled to, or
 * removed when it was unassigned. Its new shard then judges it from reads begun after it saw
 * that shard dead, not only from reads begun after the object arrived.
 */
export const TAKEN_FROM_ANNOTATION = "linode.operator.dev/taken-from";
/** A label's JSON Pointer (RFC 6901: "~" and "/" escaped), for the JSON patches that move the shard labels. */
export const labelPointer = (name: string): string => `/metadata/labels/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`;

export type ShardAction =
  | { type: "none" }
  /** Set the shard label (and remove a drain label): it is unassigned, or its shard is dead. */
  | { type: "assign"; shard: string }
  /** Mark it draining: its live shard is to let it go. */
  | { type: "drain" }
  /** Its shard is its own again while it drained: the drain is called off. */
  | { type: "undrain" };

/**
 * `key`: what is hashed (the object's namespace, or its account's key with --shard-by account); `alive`: the shards whose Leases are live (the
 * ring's own). With no shard alive nothing is done: an object is never assigned to nobody.
 */
export function planShard(labels: Record<string, string> | undefined, key: string, ring: HashRing): ShardAction {
  const desired = ring.owner(key);
  if (desired === undefined) return { type: "none" };
  const current = labels?.[SHARD_LABEL] ?? "";
  const draining = labels?.[DRAIN_LABEL] !== undefined;
  if (current === "") return { type: "assign", shard: desired };
  if (current === desired) return draining ? { type: "undrain" } : { type: "none" };
  if (!ring.shards.includes(current)) return { type: "assign", shard: desired };
  return draining ? { type: "none" } : { type: "drain" };
}
