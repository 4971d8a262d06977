// The event recorder counts repeats of an event (a series on one Event object) per object, and
// forgets an object's counts once it is gone: under churn, what it keeps follows the objects
// that exist (linode_operator_cache_entries{map="events.series"}), not all there ever were.
import { describe, expect, it } from "vitest";
import { CacheEntries } from "../../src/metrics/cache-entries.ts";
import { KubeEventRecorder, SERIES_TTL_MILLIS } from "../../src/runtime/events.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const obj = (name: string, uid: string) => ({ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name, namespace: "ns", uid } });

describe("KubeEventRecorder", () => {
  it("a repeat is a series on one Event; an object's counts go with it", async () => {
    const kube = new MemoryKube();
    const entries = new CacheEntries();
    const events = new KubeEventRecorder(kube, { controller: "c", instance: "i", entries });
    const a = obj("a", "uid-a");
    events.normal(a, "Created", "Create", "created");
    await events.idle();
    events.normal(a, "Created", "Create", "created");
    events.warning(obj("b", "uid-b"), "Failed", "Update", "refused");
    await events.idle();
    expect(kube.events).toHaveLength(2);
    expect((kube.events[0] as { series?: { count: number } }).series?.count).toBe(2);
    expect(entries.sizes().get("events.series")).toBe(2);
    events.forget(a);
    expect(entries.sizes().get("events.series")).toBe(1);
    // Recreated under the same name: a new object, a new series.
    events.normal(obj("a", "uid-a2"), "Created", "Create", "created");
    await events.idle();
    expect(kube.events).toHaveLength(3);
  });

  it("a series whose Event has expired on the API server is no longer kept", async () => {
    const kube = new MemoryKube();
    const entries = new CacheEntries();
    let now = 1_000_000;
    const events = new KubeEventRecorder(kube, { controller: "c", instance: "i", entries, now: () => now });
    const a = obj("a", "uid-a");
    // A long-lived object whose every update has its own note.
    for (let i = 0; i < 5; i++) { events.normal(a, "Updated", "Update", `allow list ${String(i)}`); now += 10 * 60_000; }
    await events.idle();
    expect(entries.sizes().get("events.series")).toBe(5);
    now += SERIES_TTL_MILLIS - 40 * 60_000;
    events.normal(a, "Updated", "Update", "allow list 0");
    await events.idle();
    // The first two are an hour old: dropped; the repeat of the first is a series of one again.
    expect(entries.sizes().get("events.series")).toBe(4);
    expect(kube.events.filter((e) => (e as { note?: string }).note === "allow list 0")).toHaveLength(1);
  });
});
