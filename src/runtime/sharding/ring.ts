// Which shard owns a key: a consistent hash ring with virtual nodes (each shard at many points),
// so a shard joining or leaving moves only about 1/N of the keys, and those only to or from it.
// The key is what must stay together (a namespace: one tenant's objects and call budget on one
// shard). The hash is MD5's first 32 bits: evenly spread for similar names ("team-1",
// "team-2"), the same in every replica and every version, and not a security boundary.
import { createHash } from "node:crypto";

/** Points per shard: enough that five shards each hold within a few percent of a fifth. */
export const VIRTUAL_NODES = 128;

function point(s: string): number {
  return createHash("md5").update(s).digest().readUInt32BE(0);
}

export class HashRing {
  private readonly points: number[];
  private readonly owners: string[];
  readonly shards: readonly string[];

  constructor(shards: Iterable<string>, virtualNodes = VIRTUAL_NODES) {
    this.shards = [...new Set(shards)].sort();
    const all: [number, string][] = [];
    for (const shard of this.shards) {
      for (let i = 0; i < virtualNodes; i++) all.push([point(`${shard}#${String(i)}`), shard]);
    }
    // Ties (two shards on one point) go to the smaller name: every replica builds the same ring.
    all.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
    this.points = all.map(([p]) => p);
    this.owners = all.map(([, s]) => s);
  }

  /** The shard owning `key`: the first point at or after the key's, around the ring; undefined with no shards. */
  owner(key: string): string | undefined {
    if (this.points.length === 0) return undefined;
    const h = point(key);
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.points[mid] ?? 0) < h) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === this.points.length ? 0 : lo];
  }
}
