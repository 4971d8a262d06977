// A Controller as one shard of several: its caches hold only the objects labelled to it; it acts
// on one only while its own ring gives it the namespace as well (a label alone, which a tenant
// can write, does not); it lets go of one the sharder drains, and no pass of it runs after.
// On the in-memory Kubernetes API (whose label-selected watches, like the API server's, drop
// an object that leaves the selector) and the in-memory Gadget cloud.
import { afterEach, describe, expect, it } from "vitest";
import { apiVersionOf, secretsType } from "../../src/kube/types.ts";
import { Registry } from "prom-client";
import { createOperatorMetrics, type OperatorMetrics } from "../../src/metrics/operator-metrics.ts";
import { FINALIZER } from "../../src/runtime/annotations.ts";
import { MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL } from "../../src/runtime/connection-secrets.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { RetryAfterError } from "../../src/runtime/errors.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { DRAIN_LABEL, SHARD_LABEL, TAKEN_FROM_ANNOTATION } from "../../src/runtime/sharding/assignment.ts";
import { GadgetCloud, gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { waitFor } from "../harness/operator-runtime.ts";

/** Until `fn` holds, polled on the event loop (the 5 s bound only turns a hang into a failure). */
const until = async (what: string, fn: () => boolean): Promise<void> => { await waitFor(what, fn, 5_000, 5); };

const ns = "tenant";
const running: Controller[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((c) => c.stop())); });

async function shard(identity: string, owns: () => boolean, lines: Record<string, unknown>[] = [], kindOpts: { connection?: boolean } = {}, metrics?: OperatorMetrics, diedAt?: (shard: string) => number | undefined) {
  const kube = new MemoryKube();
  const cloud = new GadgetCloud();
  const log = createLogger({ level: "info" }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } });
  const controller = new Controller(cloud.kind({ pendingMillis: 40, readyMillis: 60_000 }, kindOpts), {
    kube, log, events: new KubeEventRecorder(kube, { controller: "test", instance: identity }), ...(metrics !== undefined ? { metrics } : {}),
  }, { concurrency: 2, namespaces: [ns], coalesceMillis: 0, shard: { identity, owns, ...(diedAt !== undefined ? { diedAt } : {}) } });
  running.push(controller);
  await controller.start();
  const get = (name: string): ManagedObject | undefined => kube.peek(gadgetType, { namespace: ns, name }) as ManagedObject | undefined;
  return {
    kube, cloud, controller, get,
    observes: (name: string): number => cloud.observeCalls.filter((c) => c.key === `${ns}/${name}`).length,
    create: (name: string, labels: Record<string, string>, finalizers?: string[], annotations?: Record<string, string>) => kube.createCustom(gadgetType, ns, { metadata: { name, labels, ...(finalizers !== undefined ? { finalizers } : {}), ...(annotations !== undefined ? { annotations } : {}) }, spec: { size: 1 } }),
    ready: (name: string): boolean => get(name)?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true,
  };
}

describe("a Controller as one shard", () => {
  it("an object taken from a dead shard (the sharder's taken-from) may be judged from reads begun after this replica saw that shard dead; any other arrival, from reads begun after it arrived", async () => {
    const deaths = new Map([["op-dead", Date.now() - 30_000]]);
    const s = await shard("op-a", () => true, [], {}, undefined, (name) => deaths.get(name));
    const arrive = async (name: string, from?: string): Promise<number> => {
      await s.create(name, { [SHARD_LABEL]: "op-b" }, [FINALIZER], from !== undefined ? { [TAKEN_FROM_ANNOTATION]: from } : undefined);
      const at = Date.now();
      await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name }, { metadata: { labels: { [SHARD_LABEL]: "op-a" } } });
      await until(`${name} observed`, () => s.observes(name) > 0);
      return at;
    };
    const sinceOf = (name: string): number | undefined => s.cloud.observeCalls.find((c) => c.key === `${ns}/${name}`)?.managedSince;
    await arrive("from-dead", "op-dead");
    expect(sinceOf("from-dead")).toBe(deaths.get("op-dead"));
    // A shard this replica never saw die (a forged or stale name), a drained one (no annotation): its arrival.
    for (const [name, from] of [["from-unknown", "op-never"], ["drained", undefined]] as const) {
      const at = await arrive(name, from);
      expect(sinceOf(name)).toBeGreaterThanOrEqual(at);
    }
    // Never later than its arrival, whatever the death's moment says.
    deaths.set("op-late", Date.now() + 60_000);
    const at = await arrive("late", "op-late");
    const since = sinceOf("late") ?? Number.NaN;
    expect(since).toBeGreaterThanOrEqual(at);
    expect(since).toBeLessThanOrEqual(Date.now());
  });

  it("times an object another shard worked on (it carries the finalizer) from its arrival to the end of this shard's first successful pass (linode_operator_takeover_seconds); a new object is not a takeover", async () => {
    const metrics = createOperatorMetrics(new Registry(), { defaultMetrics: false });
    const s = await shard("op-a", () => true, [], {}, metrics);
    await s.create("new", { [SHARD_LABEL]: "op-a" });
    await s.create("moved", { [SHARD_LABEL]: "op-b" }, [FINALIZER]);
    await until("new Ready", () => s.ready("new"));
    const count = async (): Promise<string> => (await metrics.registry.metrics()).split("\n").find((l) => l.startsWith("linode_operator_takeover_seconds_count")) ?? "";
    expect(await count()).toBe("");
    // The sharder hands it over: labelled to this shard, it arrives.
    await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "moved" }, { metadata: { labels: { [SHARD_LABEL]: "op-a" } } });
    await until("moved Ready", () => s.ready("moved"));
    await until("idle", () => s.controller.queue.inFlight === 0);
    expect(await count()).toBe(`linode_operator_takeover_seconds_count{kind="${gadgetType.kind}"} 1`);
    // Counted once: its later passes are not takeovers, and nothing is kept of it.
    s.controller.queue.add(`${ns}/moved`);
    await until("passed again", () => s.observes("moved") >= 2 && s.controller.queue.inFlight === 0);
    expect(await count()).toBe(`linode_operator_takeover_seconds_count{kind="${gadgetType.kind}"} 1`);
    expect(metrics.cacheEntries.sizes().get(`${gadgetType.kind}.takenOver`)).toBe(0);
  });

  it("holds and acts on only the objects labelled to it", async () => {
    const s = await shard("op-a", () => true);
    await s.create("mine", { [SHARD_LABEL]: "op-a" });
    await s.create("theirs", { [SHARD_LABEL]: "op-b" });
    await s.create("unassigned", {});
    await until("mine Ready", () => s.ready("mine"));
    await until("idle", () => s.controller.queue.inFlight === 0 && s.controller.queue.length === 0);
    expect(s.controller.list().map((o) => o.metadata.name)).toEqual(["mine"]);
    expect(s.observes("theirs") + s.observes("unassigned")).toBe(0);
  });

  it("a label its own ring does not agree with (a tenant's, or a move it has not seen yet) is not acted on until it does", async () => {
    let owns = false;
    const s = await shard("op-a", () => owns);
    await s.create("forged", { [SHARD_LABEL]: "op-a" });
    await until("looked at", () => s.controller.get(`${ns}/forged`) !== undefined && (s.controller.queue.dueIn(`${ns}/forged`) ?? 0) > 0);
    expect(s.observes("forged")).toBe(0);
    expect(s.cloud.creates).toHaveLength(0);
    owns = true;
    await until("Ready once its ring agrees", () => s.ready("forged"));
  });

  it("an object whose shard cannot be told now (its key unreadable) is not acted on, and the log says so once, not at every retry", async () => {
    let failing = true;
    const lines: Record<string, unknown>[] = [];
    const s = await shard("op-a", () => {
      if (failing) throw new Error("secrets \"team-token\" is forbidden");
      return true;
    }, lines);
    await s.create("unknown", { [SHARD_LABEL]: "op-a" });
    const said = () => lines.filter((l) => String(l.msg).startsWith("cannot tell which shard owns this object"));
    await until("said", () => said().length > 0);
    // Looked at again a retry period later (2 s): a second look must not say it again.
    s.controller.queue.add(`${ns}/unknown`);
    await until("looked at again", () => (s.controller.queue.dueIn(`${ns}/unknown`) ?? 0) > 0 && !s.controller.queue.isProcessing(`${ns}/unknown`));
    expect(said()).toHaveLength(1);
    expect(said()[0]).toMatchObject({ level: "warn", namespace: ns, name: "unknown", err: expect.stringContaining("forbidden") as unknown });
    expect(s.observes("unknown")).toBe(0);
    failing = false;
    s.controller.queue.add(`${ns}/unknown`);
    await until("Ready once its key is read", () => s.ready("unknown"));
    expect(lines.some((l) => l.msg === "the object's shard is known again")).toBe(true);
  });

  it("lets go of a drained object: both labels removed by it, out of its cache, no pass after", async () => {
    const s = await shard("op-a", () => true);
    await s.create("moving", { [SHARD_LABEL]: "op-a", team: "x" });
    await until("Ready", () => s.ready("moving"));
    await until("idle", () => s.controller.queue.inFlight === 0);
    const passes = s.observes("moving");
    const o = s.get("moving");
    await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "moving" }, { metadata: { labels: { ...o?.metadata.labels, [DRAIN_LABEL]: "true" } } });
    await until("let go", () => s.get("moving")?.metadata.labels?.[SHARD_LABEL] === undefined);
    expect(s.get("moving")?.metadata.labels).toEqual({ team: "x" });
    await until("out of its cache", () => s.controller.get(`${ns}/moving`) === undefined);
    expect(s.observes("moving")).toBe(passes);
    // Its cloud object stays: letting go is not deleting.
    expect(s.cloud.deletes).toHaveLength(0);
  });

  it("letting go of a drained object whose create the call budget held unsent takes its announcement back: the next shard need not wait for it", async () => {
    const s = await shard("op-a", () => true);
    s.cloud.createFails.push(new RetryAfterError("RateLimited", "creating: waiting for the call budget", 60_000, { unsent: true }));
    await s.create("held", { [SHARD_LABEL]: "op-a" });
    await until("held back", () => s.get("held")?.status?.conditions?.some((c) => c.type === "Synced" && c.reason === "RateLimited") === true);
    expect(s.get("held")?.status?.createPending).toBeDefined();
    const o = s.get("held");
    await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "held" }, { metadata: { labels: { ...o?.metadata.labels, [DRAIN_LABEL]: "true" } } });
    await until("let go", () => s.get("held")?.metadata.labels?.[SHARD_LABEL] === undefined);
    expect(s.get("held")?.status?.createPending).toBeUndefined();
    expect(s.cloud.createAttempts).toHaveLength(1);
  });

  it("labels the connection Secrets it writes to itself, and takes one over that a move left labelled to another shard", async () => {
    const s = await shard("op-a", () => true, [], { connection: true });
    await s.create("mine", { [SHARD_LABEL]: "op-a" });
    await until("mine Ready", () => s.ready("mine"));
    const secretOf = (name: string) => s.kube.peek(secretsType, { namespace: ns, name });
    expect(secretOf("mine-gadget")?.metadata.labels).toMatchObject({ [SHARD_LABEL]: "op-a", [MANAGED_BY_LABEL]: MANAGED_BY });
    // Moved in with its Secret still labelled to its old shard (the sharder's relabel missed it):
    // out of this shard's cache, found by name, and written with this shard's label; never another's.
    await s.create("moved", {});
    const moved = s.get("moved");
    await s.kube.createSecret({
      type: "Opaque", data: { size: Buffer.from("0").toString("base64") },
      metadata: { name: "moved-gadget", namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: "moved", [SHARD_LABEL]: "op-b" }, ownerReferences: [{ apiVersion: apiVersionOf(gadgetType), kind: "Gadget", name: "moved", uid: moved?.metadata.uid ?? "", controller: true }] },
    });
    await s.kube.mergePatchCustom(gadgetType, { namespace: ns, name: "moved" }, { metadata: { labels: { [SHARD_LABEL]: "op-a" } } });
    await until("moved Ready", () => s.ready("moved"));
    expect(secretOf("moved-gadget")?.metadata.labels?.[SHARD_LABEL]).toBe("op-a");
    expect(Buffer.from((await s.kube.getSecret({ namespace: ns, name: "moved-gadget" })).data?.size ?? "", "base64").toString()).toBe("1");
  });
});
