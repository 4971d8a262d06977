// The one generic reconciler: finalizers, deletion and management policies, create/update/
// delete through the kind's ExternalClient, Ready/Synced conditions, status written only when
// it changed, Events on transitions. Kinds add only what differs (managed.ts).
import type { KubeClient } from "../kube/client.ts";
import { isConflict, isNotFound, KubeApiError } from "../kube/errors.ts";
import { Reasons, setCondition, getCondition, type ConditionInput } from "./conditions.ts";
import { RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import type { KindDescriptor, Managed, ManagedObject, Observation } from "./managed.ts";

export const FINALIZER = "linode.operator.dev/finalizer";
export const EXTERNAL_ID_ANNOTATION = "linode.operator.dev/external-id";

export interface ReconcileResult {
  /** Poll again after this long (level-triggered: an event may come sooner). */
  requeueAfterMillis?: number;
}

export interface ReconcilerDeps {
  kube: KubeClient;
  events: EventRecorder;
  /** Counts status writes, for tests and metrics. */
  onStatusWrite?: () => void;
}

const DEFAULT_PENDING_POLL = 5_000;
const DEFAULT_READY_POLL = 5 * 60_000;
const DELETE_POLL = 3_000;

export class ManagedReconciler<Spec, Status> {
  private readonly kind: KindDescriptor<Spec, Status>;
  private readonly deps: ReconcilerDeps;

  constructor(kind: KindDescriptor<Spec, Status>, deps: ReconcilerDeps) {
    this.kind = kind;
    this.deps = deps;
  }

  /**
   * Reconciles one object as found in the cache. Throws TerminalError (reported, not
   * retried), RetryAfterError (retried after its delay) or anything else (retried with backoff).
   */
  async reconcile(obj: ManagedObject, signal: AbortSignal): Promise<ReconcileResult> {
    const key = { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name };
    const generation = obj.metadata.generation;
    const deleting = obj.metadata.deletionTimestamp !== undefined;

    let spec: Spec;
    try {
      spec = this.kind.parseSpec(obj.spec);
    } catch (err) {
      if (deleting) {
        // An object whose spec no longer parses can still be let go of.
        await this.removeFinalizer(obj);
        return {};
      }
      const message = `invalid spec: ${errorMessage(err)}`;
      await this.writeStatus(obj, {}, [
        { type: "Synced", status: "False", reason: Reasons.InvalidSpec, message },
      ], generation);
      throw new TerminalError(Reasons.InvalidSpec, message);
    }
    const m: Managed<Spec> = {
      obj, key, spec,
      externalId: obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION],
      policies: this.kind.policies(spec),
    };

    try {
      if (deleting) return await this.reconcileDelete(m, signal);
      return await this.reconcileLive(m, signal);
    } catch (err) {
      if (isConflict(err) || signal.aborted) throw err;
      await this.reportError(m, err).catch(() => undefined);
      throw err;
    }
  }

  private async reconcileDelete(m: Managed<Spec>, signal: AbortSignal): Promise<ReconcileResult> {
    if (!(m.obj.metadata.finalizers ?? []).includes(FINALIZER)) return {};
    if (m.policies.deletion === "Delete" && m.policies.management === "Manage") {
      // A cloud object that provably does not exist (e.g. a databaseId that was never valid)
      // must not hold the resource hostage.
      const observed = await this.kind.external.observe(m, signal).catch((err: unknown) => {
        if (err instanceof TerminalError && err.reason === Reasons.NotFound) return { exists: false as const };
        throw err;
      });
      if (observed.exists) {
        const { gone } = await this.kind.external.delete(m, observed, signal);
        if (!gone) {
          await this.writeStatus(m.obj, {}, [
            { type: "Ready", status: "False", reason: Reasons.Deleting, message: "waiting for the cloud object to be deleted" },
          ], m.obj.metadata.generation);
          return { requeueAfterMillis: DELETE_POLL };
        }
        this.deps.events.normal(m.obj, "Deleted", "Delete", `deleted ${this.kind.type.kind} ${observed.externalId} from Linode`);
      }
    }
    await this.removeFinalizer(m.obj);
    return {};
  }

  private async reconcileLive(m: Managed<Spec>, signal: AbortSignal): Promise<ReconcileResult> {
    const gen = m.obj.metadata.generation;
    const observeOnly = m.policies.management === "Observe";
    if (!observeOnly) await this.ensureFinalizer(m.obj);
    else if ((m.obj.metadata.finalizers ?? []).includes(FINALIZER)) await this.removeFinalizer(m.obj);

    let observed = await this.kind.external.observe(m, signal);
    if (!observed.exists) {
      if (observeOnly) {
        await this.writeStatus(m.obj, {}, [
          { type: "Ready", status: "False", reason: Reasons.NotFound, message: "the cloud object to observe does not exist" },
          { type: "Synced", status: "False", reason: Reasons.NotFound, message: "managementPolicy is Observe and nothing was found to observe" },
        ], gen);
        return { requeueAfterMillis: this.pollMillis(false) * 6 };
      }
      const { externalId } = await this.kind.external.create(m, signal);
      await this.recordExternalId(m, externalId);
      this.deps.events.normal(m.obj, "Created", "Create", `created ${this.kind.type.kind} ${externalId} on Linode`);
      await this.writeStatus(m.obj, { id: numericOrString(externalId) }, [
        { type: "Ready", status: "False", reason: Reasons.Creating, message: "the cloud object is being created" },
        { type: "Synced", status: "True", reason: Reasons.ReconcileSuccess },
      ], gen);
      return { requeueAfterMillis: Math.min(this.pollMillis(false), 2_000) };
    }

    if (m.externalId !== observed.externalId) await this.recordExternalId(m, observed.externalId);

    let synced: ConditionInput = { type: "Synced", status: "True", reason: observeOnly ? Reasons.Observing : Reasons.ReconcileSuccess };
    if (!observed.upToDate) {
      if (observeOnly) {
        synced = { type: "Synced", status: "True", reason: Reasons.Observing, message: `differs from the spec (not changed: managementPolicy is Observe): ${observed.diff ?? ""}` };
      } else {
        await this.kind.external.update(m, observed, signal);
        this.deps.events.normal(m.obj, "Updated", "Update", `updated ${observed.diff ?? "the cloud object"}`);
        observed = await this.kind.external.observe(m, signal);
        if (!observed.exists) return { requeueAfterMillis: 1_000 };
      }
    }

    let ready: ConditionInput = observed.ready
      ? { type: "Ready", status: "True", reason: Reasons.Available }
      : { type: "Ready", status: "False", reason: observed.readyReason ?? Reasons.Unavailable, message: observed.readyMessage ?? "" };
    let extra: Record<string, unknown> = {};
    const after = await this.kind.external.afterObserve?.(m, observed, signal);
    if (after?.status !== undefined) extra = after.status;
    if (after?.notReady !== undefined) ready = { type: "Ready", status: "False", ...after.notReady };
    await this.writeStatus(m.obj, { ...(observed.status as Record<string, unknown>), ...extra }, [ready, synced], gen);
    const settled = ready.status === "True" && observed.upToDate;
    return { requeueAfterMillis: after?.pollMillis ?? observed.pollMillis ?? this.pollMillis(settled) };
  }

  private pollMillis(settled: boolean): number {
    const p = this.kind.poll ?? {};
    const base = settled ? (p.readyMillis ?? DEFAULT_READY_POLL) : (p.pendingMillis ?? DEFAULT_PENDING_POLL);
    // Jitter spreads many objects' polls so they never arrive at the API in lockstep.
    return Math.round(base * (0.9 + 0.2 * Math.random()));
  }

  private async reportError(m: Managed<Spec>, err: unknown): Promise<void> {
    const reason = err instanceof TerminalError || err instanceof RetryAfterError ? err.reason : Reasons.ReconcileError;
    const message = errorMessage(err);
    const previous = getCondition(m.obj.status?.conditions, "Synced");
    await this.writeStatus(m.obj, {}, [{ type: "Synced", status: "False", reason, message }], m.obj.metadata.generation);
    if (previous?.reason !== reason || previous.message !== message) {
      if (err instanceof RetryAfterError) this.deps.events.normal(m.obj, reason, "Reconcile", message);
      else this.deps.events.warning(m.obj, reason, "Reconcile", message);
    }
  }

  private async ensureFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers;
    if (finalizers?.includes(FINALIZER)) return;
    const ops = finalizers === undefined
      ? [{ op: "test" as const, path: "/metadata/resourceVersion", value: obj.metadata.resourceVersion }, { op: "add" as const, path: "/metadata/finalizers", value: [FINALIZER] }]
      : [{ op: "test" as const, path: "/metadata/finalizers", value: finalizers }, { op: "add" as const, path: "/metadata/finalizers/-", value: FINALIZER }];
    const updated = await this.deps.kube.jsonPatchCustom(this.kind.type, keyOf(obj), ops);
    obj.metadata.finalizers = updated.metadata.finalizers;
    obj.metadata.resourceVersion = updated.metadata.resourceVersion;
  }

  private async removeFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers ?? [];
    const i = finalizers.indexOf(FINALIZER);
    if (i < 0) return;
    try {
      // test-then-remove by index: someone else's finalizer list change makes this fail and retry.
      await this.deps.kube.jsonPatchCustom(this.kind.type, keyOf(obj), [
        { op: "test", path: `/metadata/finalizers/${i}`, value: FINALIZER },
        { op: "remove", path: `/metadata/finalizers/${i}` },
      ]);
    } catch (err) {
      if (isNotFound(err)) return;
      if (err instanceof KubeApiError && err.code === 422) throw new KubeApiError(409, "Conflict", err.message);
      throw err;
    }
  }

  private async recordExternalId(m: Managed<Spec>, externalId: string): Promise<void> {
    await this.deps.kube.mergePatchCustom(this.kind.type, m.key, { metadata: { annotations: { [EXTERNAL_ID_ANNOTATION]: externalId } } });
    m.externalId = externalId;
  }

  /** Writes status fields and conditions, unless the result equals what is already there. */
  private async writeStatus(obj: ManagedObject, fields: Record<string, unknown>, conditions: ConditionInput[], generation: number | undefined): Promise<void> {
    const current = obj.status ?? {};
    let nextConditions = current.conditions;
    for (const c of conditions) nextConditions = setCondition(nextConditions, c, generation);
    const next: Record<string, unknown> = { ...current, ...fields, conditions: nextConditions };
    if (generation !== undefined) next.observedGeneration = generation;
    if (stableJson(next) === stableJson(current)) return;
    // Merge patch: fields absent from `next` but present before must be nulled explicitly.
    const patch: Record<string, unknown> = { ...next };
    for (const k of Object.keys(current)) if (!(k in next)) patch[k] = null;
    try {
      await this.deps.kube.patchCustomStatus(this.kind.type, keyOf(obj), patch);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.deps.onStatusWrite?.();
    obj.status = next;
  }
}

const keyOf = (obj: ManagedObject): { namespace: string; name: string } => ({ namespace: obj.metadata.namespace ?? "", name: obj.metadata.name });

function numericOrString(id: string): number | string {
  return /^\d+$/.test(id) ? Number(id) : id;
}

export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) => {
    if (val !== null && typeof val === "object" && !Array.isArray(val)) {
      return Object.fromEntries(Object.entries(val as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)));
    }
    return val;
  });
}

export type { Observation };
