// Kubernetes Events (events.k8s.io/v1) on our objects. A repeat of the same reason and note
// bumps the event's series instead of creating a new object, and recording never blocks or
// fails a reconcile.
import { createHash } from "node:crypto";
import { microTime } from "../kube/client.ts";
import type { KubeApi, KubeObject } from "../kube/types.ts";
import { errorChain, isConflict, isNotFound } from "../kube/errors.ts";
import type { CacheEntries } from "../metrics/cache-entries.ts";

export interface EventRecorder {
  normal(obj: KubeObject, reason: string, action: string, note: string): void;
  warning(obj: KubeObject, reason: string, action: string, note: string): void;
  /** The object is gone: what was kept to count repeats of its events is dropped. */
  forget?(obj: KubeObject): void;
}

/** A safety net: more series than this (one object with ever-changing notes) starts the count afresh. */
const MAX_SERIES = 10_000;
/**
 * How long a series is counted after its last event: the API server's default --event-ttl. An
 * Event older than that is gone, so its count would only be restarted; kept longer, every note a
 * long-lived object ever had (one per update) would stay until MAX_SERIES clears them all.
 */
export const SERIES_TTL_MILLIS = 60 * 60_000;

export interface EventSink {
  warn(obj: object, msg: string): void;
}

export class KubeEventRecorder implements EventRecorder {
  private readonly kube: KubeApi;
  private readonly controller: string;
  private readonly instance: string;
  private readonly log: EventSink | undefined;
  /** Repeats counted by event name, with the last one's time, grouped by the regarded object's uid (dropped with it). */
  private readonly series = new Map<string, Map<string, { count: number; at: number }>>();
  private seriesCount = 0;
  private readonly now: () => number;
  private swept: number;
  /** Writes on their way to the API server. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(kube: KubeApi, opts: { controller: string; instance: string; log?: EventSink; entries?: CacheEntries; now?: () => number }) {
    this.kube = kube;
    this.controller = opts.controller;
    this.instance = opts.instance;
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.swept = this.now();
    opts.entries?.track("events.series", () => this.seriesCount);
  }

  normal(obj: KubeObject, reason: string, action: string, note: string): void { this.record(obj, "Normal", reason, action, note); }
  warning(obj: KubeObject, reason: string, action: string, note: string): void { this.record(obj, "Warning", reason, action, note); }

  forget(obj: KubeObject): void {
    const uid = obj.metadata.uid ?? "";
    this.seriesCount -= this.series.get(uid)?.size ?? 0;
    this.series.delete(uid);
  }

  /** Counts one more event of this name on the object (or, `restart`, the first again): how many there have been. */
  private count(uid: string, name: string, restart = false): number {
    const now = this.now();
    this.sweep(now);
    let names = this.series.get(uid);
    if (names?.has(name) !== true) {
      // Forgotten while its repeat was on its way: counted no more.
      if (restart) return 1;
      if (this.seriesCount >= MAX_SERIES) { this.series.clear(); this.seriesCount = 0; names = undefined; }
      if (names === undefined) { names = new Map(); this.series.set(uid, names); }
      this.seriesCount++;
    }
    const count = restart ? 1 : (names.get(name)?.count ?? 0) + 1;
    names.set(name, { count, at: now });
    return count;
  }

  /** Drops the series whose last event has expired on the API server, at most once a minute (one pass over all). */
  private sweep(now: number): void {
    if (now - this.swept < 60_000) return;
    this.swept = now;
    for (const [uid, names] of this.series) {
      for (const [name, { at }] of names) {
        if (now - at >= SERIES_TTL_MILLIS) { names.delete(name); this.seriesCount--; }
      }
      if (names.size === 0) this.series.delete(uid);
    }
  }

  /** Resolves once every Event recorded so far has been written (or failed): a barrier, never a wait. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private record(obj: KubeObject, type: string, reason: string, action: string, note: string): void {
    const write = this.emit(obj, type, reason, action, note).catch((err: unknown) => {
      this.log?.warn({ err: errorChain(err), reason }, "could not record event");
    }).finally(() => { this.inFlight.delete(write); });
    this.inFlight.add(write);
  }

  private async emit(obj: KubeObject, type: string, reason: string, action: string, note: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? "default";
    const hash = createHash("sha256").update(`${obj.metadata.uid ?? ""}/${type}/${reason}/${note}`).digest("hex").slice(0, 12);
    // Event names are object names: at most 253 characters, whatever the regarded object's name.
    const name = `${obj.metadata.name.slice(0, 253 - hash.length - 1)}.${hash}`;
    const now = microTime();
    const uid = obj.metadata.uid ?? "";
    const count = this.count(uid, name);
    const event = {
      apiVersion: "events.k8s.io/v1", kind: "Event",
      metadata: { name, namespace },
      eventTime: now, type, reason, action, note: note.slice(0, 1024),
      reportingController: this.controller, reportingInstance: this.instance,
      regarding: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace, uid: obj.metadata.uid },
    };
    if (count === 1) {
      try {
        await this.kube.createEvent(namespace, event);
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    try {
      await this.kube.patchEvent({ namespace, name }, { series: { count: Math.max(count, 2), lastObservedTime: now } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The API server expired it (Events live about an hour): record it anew.
      this.count(uid, name, true);
      await this.kube.createEvent(namespace, event);
    }
  }
}
