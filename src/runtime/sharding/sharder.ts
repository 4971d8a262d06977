// The sharder, run by the leader when replicas share the work: it labels each object of the
// operator's kinds with the shard its namespace (or, with --shard-by account, its account)
// hashes to (ring.ts), and moves one between live shards only by draining it first
// (assignment.ts: the old shard lets go, then it is assigned). It keeps no cache of the
// objects, so the leader's memory does not grow with them: it lists them (their metadata only
// when hashing namespaces) in pages when the ring changes and every sweep period, and watches only the
// unassigned ones (new objects, and those a shard let go), which are few.
// Every label write carries the resourceVersion it was decided on: an object changed meanwhile
// (a shard letting go, a tenant's edit) is a 409, and decided again from what it is now.
// The connection Secrets an object's kind publishes are cached by its shard alone too (labelled
// like it): an object assigned after it was worked on (moved, its shard dead, or sharded for
// the first time) has its Secrets labelled to the new shard first, so that shard's cache holds
// them when it first acts on the object. A shard that left the ring (dead, or stopped) is taken
// over before the full sweep: only its objects are listed (by their label) and assigned.
// (Assigning its objects first and their Secrets after was tried: a survivor then acted on some
// before their Secrets reached its cache and wrote them itself, and at 10,000 objects on 2 cores
// the takeover was no faster.)
import { errorChain, isConflict, isNotFound } from "../../kube/errors.ts";
import { secretsType, type KubeApi, type KubeObject, type ListPage, type ResourceType } from "../../kube/types.ts";
import { FINALIZER } from "../annotations.ts";
import { labelValueFor, MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL } from "../connection-secrets.ts";
import type { Logger } from "../logger.ts";
import { InformerPool } from "../stores.ts";
import { DRAIN_LABEL, labelPointer, planShard, SHARD_LABEL, TAKEN_FROM_ANNOTATION, type ShardAction } from "./assignment.ts";
import type { HashRing } from "./ring.ts";

export interface SharderOptions {
  /** The operator's kinds: every object of these is assigned. */
  types: ResourceType[];
  /** Namespaces the operator watches; empty means all. */
  namespaces: string[];
  /** A full sweep this often, whatever happened (a missed event, a label a tenant removed). */
  sweepMillis?: number;
  log?: Logger;
  /**
   * What is hashed to place an object (default: its namespace). Given, the sweeps list whole
   * objects (the key may need the spec), not their metadata only.
   */
  keyOf?: (obj: KubeObject) => Promise<string>;
  /** Each label write made (assign, drain, undrain): a metric. */
  onMove?: (action: ShardAction["type"]) => void;
  /** Objects a sweep decides at once (default SWEEP_CONCURRENCY). */
  concurrency?: number;
  /**
   * After each full sweep that ended well: no object is labelled to a shard outside the ring
   * any more, so the dead shards' Leases may go (ShardMembers.pruneDead).
   */
  afterSweep?: () => Promise<unknown>;
}

export type SweepCounts = Record<ShardAction["type"], number>;

const PAGE = 500;
/**
 * Secrets per page of a metadata-only list: a tenant can fill a Secret's annotations (256 KiB),
 * so a page is kept small, and only each one's name, owner and shard are kept from it (as the
 * caches do: stores.ts METADATA_PAGE_SIZE).
 */
const SECRET_PAGE = 20;
/** Objects a sweep decides at once: a dead shard's objects move in seconds, not one round trip after another. */
export const SWEEP_CONCURRENCY = 8;
const DEFAULT_SWEEP_MILLIS = 60_000;
/** The log line of a takeover: the shards, the objects assigned (each after its Secrets), and how long it took. */
export const TOOK_OVER = "took over the objects of shards that left";

/** What the sharder keeps of a connection Secret: enough to relabel it. */
interface SecretRef { name: string; controllerUid: string | undefined; shard: string | undefined }
/** A namespace's connection Secrets, listed once per sweep for every object the sweep assigns there. */
type SecretsByNamespace = Map<string, Promise<SecretRef[]>>;

/** Runs `fn` over `items`, at most `limit` at once. */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class Sharder {
  private readonly kube: KubeApi;
  private readonly opts: SharderOptions;
  private readonly unassigned: InformerPool;
  private ring: HashRing | undefined;
  private sweeping: Promise<SweepCounts> | undefined;
  private sweepAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Leading: a ring change sweeps from then on (before, it is only remembered). */
  private started = false;
  /** Shards that left the ring since the last sweep began: their objects are taken over first. */
  private gone = new Set<string>();

  constructor(kube: KubeApi, opts: SharderOptions) {
    this.kube = kube;
    this.opts = opts;
    this.unassigned = new InformerPool(kube, { namespaces: opts.namespaces, ...(opts.log !== undefined ? { informer: { logger: opts.log } } : {}) });
    for (const t of opts.types) {
      const store = this.unassigned.store<KubeObject>(t, { labelSelector: `!${SHARD_LABEL}` });
      store.onEvent((ev, obj) => {
        if (ev !== "delete") void this.act(t, obj).catch((err: unknown) => { this.opts.log?.warn({ err: errorChain(err) }, "could not assign an object to a shard"); });
      });
    }
  }

  /**
   * Leads from now on. `dead` names shards whose Leases say they are gone (or shut down): their
   * objects are taken over first, whether or not this replica saw them leave.
   */
  async start(ring: HashRing, dead: readonly string[] = []): Promise<void> {
    this.ring = this.ring ?? ring;
    for (const shard of dead) if (!this.ring.shards.includes(shard)) this.gone.add(shard);
    this.started = true;
    await this.unassigned.startAndSync();
    const tick = (): void => {
      this.timer = setTimeout(() => {
        if (this.stopped) return;
        void this.sweep().finally(tick);
      }, this.opts.sweepMillis ?? DEFAULT_SWEEP_MILLIS);
      this.timer.unref();
    };
    await this.sweep();
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.unassigned.stop();
    await this.sweeping;
  }

  /** The alive shards changed: every object is decided again. */
  setRing(ring: HashRing): void {
    for (const shard of this.ring?.shards ?? []) if (!ring.shards.includes(shard)) this.gone.add(shard);
    for (const shard of ring.shards) this.gone.delete(shard);
    this.ring = ring;
    if (this.started && !this.stopped) void this.sweep();
  }

  /** Decides every object once (a sweep asked for while one runs runs again after it). */
  sweep(): Promise<SweepCounts> {
    if (this.sweeping !== undefined) {
      this.sweepAgain = true;
      return this.sweeping;
    }
    const run = async (): Promise<SweepCounts> => {
      const counts: SweepCounts = { none: 0, assign: 0, drain: 0, undrain: 0 };
      try {
        do {
          this.sweepAgain = false;
          const gone = [...this.gone];
          this.gone.clear();
          if (gone.length > 0) {
            await this.takeOver(gone, counts).catch((err: unknown) => {
              // Taken over by the next sweep, first again, unless they came back meanwhile.
              for (const shard of gone) if (this.ring?.shards.includes(shard) !== true) this.gone.add(shard);
              throw err;
            });
          }
          const secrets: SecretsByNamespace = new Map();
          await this.eachObject(undefined, async (t, o) => { counts[await this.act(t, o, secrets)]++; });
          // Asked for again while this one ran (set from outside during the awaits above).
        } while (this.askedAgain() && !this.stopped);
        if (!this.halted()) await this.opts.afterSweep?.();
      } catch (err) {
        this.opts.log?.warn({ err: errorChain(err) }, "a shard sweep failed; the next one decides again");
      } finally {
        this.sweeping = undefined;
      }
      if (counts.assign + counts.drain + counts.undrain > 0) this.opts.log?.info({ ...counts }, "shards assigned");
      return counts;
    };
    this.sweeping = run();
    return this.sweeping;
  }

  /** Stopped (read after an await: set from outside meanwhile). */
  private halted(): boolean {
    return this.stopped;
  }

  private askedAgain(): boolean {
    return this.sweepAgain;
  }

  /**
   * Every object of the operator's kinds (those `labelSelector` selects), listed in pages (the
   * next page asked for while this one's objects are decided), `fn` run on each, at most the
   * sweep's concurrency at once.
   */
  private async eachObject(labelSelector: string | undefined, fn: (t: ResourceType, o: KubeObject) => Promise<void>): Promise<void> {
    for (const t of this.opts.types) {
      for (const namespace of this.opts.namespaces.length > 0 ? this.opts.namespaces : [undefined]) {
        const list = (continueToken: string | undefined): Promise<ListPage<KubeObject>> => this.kube.list<KubeObject>(t, {
          metadataOnly: this.opts.keyOf === undefined, limit: PAGE,
          ...(namespace !== undefined ? { namespace } : {}), ...(labelSelector !== undefined ? { labelSelector } : {}), ...(continueToken !== undefined ? { continueToken } : {}),
        });
        let next: Promise<ListPage<KubeObject>> | undefined = list(undefined);
        while (next !== undefined) {
          const page: ListPage<KubeObject> = await next;
          next = page.continueToken !== undefined && !this.halted() ? list(page.continueToken) : undefined;
          // A failed prefetch is the sweep's failure once awaited, not an unhandled rejection meanwhile.
          next?.catch(() => undefined);
          await eachLimited(page.items, this.opts.concurrency ?? SWEEP_CONCURRENCY, (o) => fn(t, o));
        }
      }
    }
  }

  /** The objects of shards that left the ring, assigned to their new shards (each after its Secrets) before anything else is decided. */
  private async takeOver(gone: string[], counts: SweepCounts): Promise<void> {
    const started = Date.now();
    let assigned = 0;
    const secrets: SecretsByNamespace = new Map();
    await this.eachObject(`${SHARD_LABEL} in (${gone.join(",")})`, async (t, o) => {
      const action = await this.act(t, o, secrets);
      counts[action]++;
      if (action === "assign") assigned++;
    });
    this.opts.log?.info({ shards: gone, assigned, millis: Date.now() - started }, TOOK_OVER);
  }

  /** `secrets`: a sweep's lists of Secrets by namespace (an object's own event lists its own). */
  private async act(t: ResourceType, o: KubeObject, secrets?: SecretsByNamespace): Promise<ShardAction["type"]> {
    if (this.ring === undefined || this.stopped) return "none";
    const key = this.opts.keyOf !== undefined ? await this.opts.keyOf(o) : o.metadata.namespace ?? "";
    // The ring as it is once the key is known (it may have changed meanwhile).
    const ring = this.ring;
    if (this.halted()) return "none";
    const action = planShard(o.metadata.labels, key, ring);
    const labels = action.type === "assign" ? { [SHARD_LABEL]: action.shard, [DRAIN_LABEL]: null }
      : action.type === "drain" ? { [DRAIN_LABEL]: "true" }
      : action.type === "undrain" ? { [DRAIN_LABEL]: null }
      : undefined;
    if (labels === undefined) return "none";
    // An assignment says whose it was: a dead shard's (labelled to it still), or nobody's.
    const from = o.metadata.labels?.[SHARD_LABEL];
    const annotations = action.type === "assign" ? { [TAKEN_FROM_ANNOTATION]: from !== undefined && from !== "" ? from : null } : undefined;
    try {
      if (action.type === "assign") await this.labelSecrets(o, action.shard, secrets);
      await this.kube.mergePatchCustom(t, { namespace: o.metadata.namespace ?? "", name: o.metadata.name }, { metadata: { resourceVersion: o.metadata.resourceVersion, labels, ...(annotations !== undefined ? { annotations } : {}) } });
    } catch (err) {
      // Changed or gone since it was read: decided again from its next event or sweep.
      if (isConflict(err) || isNotFound(err)) return "none";
      throw err;
    }
    this.opts.onMove?.(action.type);
    return action.type;
  }

  /**
   * The connection Secrets `o` controls, labelled to `shard` (before `o` is). One its kind never
   * worked on (no finalizer yet: a new object) has none, and costs nothing. Whatever this
   * misses (a Secret written meanwhile by the old shard's last pass, a failed patch) its new
   * shard finds by name when it publishes, and labels itself.
   */
  private async labelSecrets(o: KubeObject, shard: string, sweep: SecretsByNamespace | undefined): Promise<void> {
    const uid = o.metadata.uid;
    const namespace = o.metadata.namespace;
    if (uid === undefined || namespace === undefined || o.metadata.finalizers?.includes(FINALIZER) !== true) return;
    let refs: SecretRef[];
    if (sweep !== undefined) {
      // One list of the namespace's for every object this sweep assigns in it.
      let listed = sweep.get(namespace);
      if (listed === undefined) {
        listed = this.secretRefs(namespace, `${MANAGED_BY_LABEL}=${MANAGED_BY}`);
        sweep.set(namespace, listed);
      }
      refs = await listed;
    } else {
      refs = await this.secretRefs(namespace, `${MANAGED_BY_LABEL}=${MANAGED_BY},${OWNER_LABEL}=${labelValueFor(o.metadata.name)}`);
    }
    // The label selects by name; the owner reference says whose it is (another kind's object of that name has its own).
    for (const ref of refs) {
      if (ref.controllerUid !== uid || ref.shard === shard) continue;
      try {
        await this.kube.jsonPatchSecret({ namespace, name: ref.name }, [{ op: "add", path: labelPointer(SHARD_LABEL), value: shard }]);
        ref.shard = shard;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /** The connection Secrets `labelSelector` selects in `namespace`: name, controller and shard of each. */
  private async secretRefs(namespace: string, labelSelector: string): Promise<SecretRef[]> {
    const refs: SecretRef[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.kube.list<KubeObject>(secretsType, { namespace, labelSelector, metadataOnly: true, limit: SECRET_PAGE, ...(continueToken !== undefined ? { continueToken } : {}) });
      for (const s of page.items) refs.push({ name: s.metadata.name, controllerUid: s.metadata.ownerReferences?.find((r) => r.controller === true)?.uid, shard: s.metadata.labels?.[SHARD_LABEL] });
      continueToken = page.continueToken;
    } while (continueToken !== undefined && !this.halted());
    return refs;
  }
}
