// The one generic reconciler: finalizers, deletion and management policies, references,
// create/update/delete through the kind's ExternalClient, the connection Secret, Ready/Synced
// conditions, status written only when it changed, Events on transitions. Kinds add only what
// differs (managed.ts).
import { isConflict, isNotFound } from "../kube/errors.ts";
import { keyOf, type KubeApi } from "../kube/types.ts";
import { getCondition, type ConditionInput } from "./conditions.ts";
import type { ConnectionSecrets } from "./connection-secrets.ts";
import { RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import type { AnyManagedKind, Managed, ManagedObject, Observed } from "./managed.ts";
import { ConditionReasons as R, EventActions, EventReasons } from "./reasons.ts";
import type { References } from "./references.ts";
import { StatusWriter } from "./status-writer.ts";
import { Timings, jittered } from "./timings.ts";

export const FINALIZER = "linode.operator.dev/finalizer";
export const EXTERNAL_ID_ANNOTATION = "linode.operator.dev/external-id";

export interface ReconcileResult {
  /** Poll again after this long (level-triggered: an event may come sooner). Absent: wait for a change. */
  requeueAfterMillis?: number;
}

export interface ReconcilerDeps {
  kube: KubeApi;
  events: EventRecorder;
  /** The kind's references, wired to the caches (absent: the kind refers to nothing). */
  references?: References<unknown>;
  /** Publishes and reads back connection Secrets (required when the kind has a connection). */
  connections?: ConnectionSecrets;
  /** Called after every write to the object, with the resourceVersion it produced. */
  onWrite?: (write: OwnWrite) => void;
}

export interface OwnWrite { key: string; resourceVersion: string | undefined; status: boolean }

type Spec = unknown;
type M = Managed<Spec>;

export class ManagedReconciler {
  private readonly kind: AnyManagedKind;
  private readonly deps: ReconcilerDeps;

  constructor(kind: AnyManagedKind, deps: ReconcilerDeps) {
    if (kind.connection !== undefined && deps.connections === undefined) throw new Error(`${kind.type.kind}: a kind with a connection needs a connection publisher`);
    this.kind = kind;
    this.deps = deps;
  }

  /**
   * Reconciles one object. `obj` must be a private copy: its metadata and status are updated
   * in place as the pass writes them. Throws TerminalError (reported, not retried until the
   * spec changes), RetryAfterError (retried after its delay) or anything else (retried with
   * backoff); a Kubernetes conflict is thrown unreported, to be retried with a fresh copy.
   */
  async reconcile(obj: ManagedObject, signal: AbortSignal): Promise<ReconcileResult> {
    const generation = obj.metadata.generation;
    const deleting = obj.metadata.deletionTimestamp !== undefined;
    const status = new StatusWriter(this.deps.kube, this.kind.type, obj, (resourceVersion) => this.wrote(obj, resourceVersion, true));

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
      await status.write([{ type: "Synced", status: "False", reason: R.InvalidSpec, message }], generation);
      throw new TerminalError(R.InvalidSpec, message);
    }
    const m: M = {
      obj, key: keyOf(obj), spec,
      externalId: obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION],
      policies: this.kind.policies(spec),
      refs: {},
    };

    try {
      if (deleting) return await this.reconcileDelete(m, status, signal);
      return await this.reconcileLive(m, status, signal);
    } catch (err) {
      if (isConflict(err) || signal.aborted) throw err;
      await this.reportError(m, status, err).catch(() => undefined);
      throw err;
    }
  }

  private async reconcileDelete(m: M, status: StatusWriter, signal: AbortSignal): Promise<ReconcileResult> {
    if (!(m.obj.metadata.finalizers ?? []).includes(FINALIZER)) return {};
    if (m.policies.deletion === "Delete" && m.policies.management === "Manage") {
      if (this.deps.references !== undefined) m.refs = this.deps.references.resolve(m, true).refs;
      // A cloud object that provably does not exist (e.g. a databaseId that was never valid)
      // must not hold the resource hostage.
      const observed = await this.kind.external.observe(m, signal).catch((err: unknown) => {
        if (err instanceof TerminalError && err.reason === R.NotFound) return { exists: false as const };
        throw err;
      });
      if (observed.exists) {
        const { gone } = await this.kind.external.delete(m, observed, signal);
        if (!gone) {
          await status.write([
            { type: "Ready", status: "False", reason: R.Deleting, message: "waiting for the cloud object to be deleted" },
          ], m.obj.metadata.generation);
          return { requeueAfterMillis: Timings.deletePollMillis };
        }
        this.deps.events.normal(m.obj, EventReasons.Deleted, EventActions.Delete, `deleted ${this.kind.type.kind} ${observed.externalId} from Linode`);
      }
    }
    await this.removeFinalizer(m.obj);
    return {};
  }

  private async reconcileLive(m: M, status: StatusWriter, signal: AbortSignal): Promise<ReconcileResult> {
    const gen = m.obj.metadata.generation;
    const observeOnly = m.policies.management === "Observe";
    if (!observeOnly) await this.ensureFinalizer(m.obj);
    else await this.removeFinalizer(m.obj);

    if (this.deps.references !== undefined) {
      const resolution = this.deps.references.resolve(m, false);
      m.refs = resolution.refs;
      if (resolution.unresolved !== undefined) {
        // Nothing to poll for: a change to the referenced object reconciles this one.
        const { reason, message } = resolution.unresolved;
        await status.write([
          { type: "Ready", status: "False", reason, message },
          { type: "Synced", status: "False", reason, message },
        ], gen);
        return {};
      }
    }

    let observed = await this.kind.external.observe(m, signal);
    if (!observed.exists) {
      if (observeOnly) {
        await status.write([
          { type: "Ready", status: "False", reason: R.NotFound, message: "the cloud object to observe does not exist" },
          { type: "Synced", status: "False", reason: R.NotFound, message: "managementPolicy is Observe and nothing was found to observe" },
        ], gen);
        return { requeueAfterMillis: this.pollMillis(false) * Timings.observeMissingFactor };
      }
      const created = await this.kind.external.create(m, signal);
      if (created.externalId !== undefined) await this.recordExternalId(m, created.externalId);
      this.deps.events.normal(m.obj, EventReasons.Created, EventActions.Create, created.externalId !== undefined
        ? `created ${this.kind.type.kind} ${created.externalId} on Linode`
        : `requested a new ${this.kind.type.kind} from Linode`);
      status.merge(created.status ?? {});
      await status.write([
        { type: "Ready", status: "False", reason: R.Creating, message: "the cloud object is being created" },
        { type: "Synced", status: "True", reason: R.ReconcileSuccess },
      ], gen);
      return { requeueAfterMillis: Math.min(this.pollMillis(false), Timings.afterCreateMaxMillis) };
    }

    if (m.externalId !== observed.externalId) await this.recordExternalId(m, observed.externalId);

    let synced: ConditionInput = { type: "Synced", status: "True", reason: observeOnly ? R.Observing : R.ReconcileSuccess };
    if (!observed.upToDate) {
      if (observeOnly) {
        synced = { type: "Synced", status: "True", reason: R.Observing, message: `differs from the spec (not changed: managementPolicy is Observe): ${observed.diff ?? ""}` };
      } else {
        await this.kind.external.update(m, observed, signal);
        this.deps.events.normal(m.obj, EventReasons.Updated, EventActions.Update, `updated ${observed.diff ?? "the cloud object"}`);
        observed = await this.kind.external.observe(m, signal);
        if (!observed.exists) return { requeueAfterMillis: Timings.afterUpdateMillis };
      }
    }
    status.merge(observed.status as Record<string, unknown>);

    let ready: ConditionInput = observed.ready
      ? { type: "Ready", status: "True", reason: R.Available }
      : { type: "Ready", status: "False", reason: observed.readyReason ?? R.Unavailable, message: observed.readyMessage ?? "" };
    const after = await this.kind.external.afterObserve?.(m, observed, signal);
    if (after?.status !== undefined) status.merge(after.status);
    if (after?.notReady !== undefined) ready = { type: "Ready", status: "False", ...after.notReady };
    if (this.kind.connection !== undefined && !(await this.publishConnection(m, observed, status, signal)) && ready.status === "True") {
      ready = { type: "Ready", status: "False", reason: R.SecretPending, message: "the connection Secret is not published yet" };
    }
    await status.write([ready, synced], gen);
    const settled = ready.status === "True" && observed.upToDate;
    return { requeueAfterMillis: after?.pollMillis ?? observed.pollMillis ?? this.pollMillis(settled) };
  }

  /** Publishes the connection Secret; returns whether it is in place (written now or already). */
  private async publishConnection(m: M, observed: Observed<unknown, unknown>, status: StatusWriter, signal: AbortSignal): Promise<boolean> {
    const source = this.kind.connection;
    const publisher = this.deps.connections;
    if (source === undefined || publisher === undefined) return false;
    const name = source.secretName(m);
    const published = publisher.read(m.obj, name);
    const details = await source.details(m, observed, published, signal);
    if (details === undefined) {
      if (published !== undefined) status.merge({ connectionSecretName: name });
      return published !== undefined;
    }
    if (await publisher.publish(m.obj, name, details)) {
      this.deps.events.normal(m.obj, EventReasons.ConnectionSecretPublished, EventActions.PublishSecret, `wrote the connection Secret ${name}`);
    }
    status.merge({ connectionSecretName: name });
    return true;
  }

  private pollMillis(settled: boolean): number {
    return jittered(settled ? this.kind.poll.readyMillis : this.kind.poll.pendingMillis);
  }

  private async reportError(m: M, status: StatusWriter, err: unknown): Promise<void> {
    const reason = err instanceof TerminalError || err instanceof RetryAfterError ? err.reason : R.ReconcileError;
    const message = errorMessage(err);
    const previous = getCondition(m.obj.status?.conditions, "Synced");
    await status.write([{ type: "Synced", status: "False", reason, message }], m.obj.metadata.generation);
    if (previous?.reason !== reason || previous.message !== message) {
      if (err instanceof RetryAfterError) this.deps.events.normal(m.obj, reason, EventActions.Reconcile, message);
      else this.deps.events.warning(m.obj, reason, EventActions.Reconcile, message);
    }
  }

  private async ensureFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers;
    if (finalizers?.includes(FINALIZER)) return;
    // A `test` first: if the cached copy is stale the patch fails as a conflict and the pass
    // starts again from a fresh copy, instead of acting on an object that changed meanwhile.
    const ops = finalizers === undefined
      ? [{ op: "test" as const, path: "/metadata/resourceVersion", value: obj.metadata.resourceVersion }, { op: "add" as const, path: "/metadata/finalizers", value: [FINALIZER] }]
      : [{ op: "test" as const, path: "/metadata/finalizers", value: finalizers }, { op: "add" as const, path: "/metadata/finalizers/-", value: FINALIZER }];
    const updated = await this.deps.kube.jsonPatchCustom(this.kind.type, keyOf(obj), ops);
    obj.metadata.finalizers = updated.metadata.finalizers;
    obj.metadata.resourceVersion = updated.metadata.resourceVersion;
    this.wrote(obj, updated.metadata.resourceVersion, false);
  }

  private async removeFinalizer(obj: ManagedObject): Promise<void> {
    const finalizers = obj.metadata.finalizers ?? [];
    const i = finalizers.indexOf(FINALIZER);
    if (i < 0) return;
    try {
      // test-then-remove by index: someone else's finalizer list change makes this a conflict.
      const updated = await this.deps.kube.jsonPatchCustom(this.kind.type, keyOf(obj), [
        { op: "test", path: `/metadata/finalizers/${i}`, value: FINALIZER },
        { op: "remove", path: `/metadata/finalizers/${i}` },
      ]);
      obj.metadata.finalizers = updated.metadata.finalizers;
      obj.metadata.resourceVersion = updated.metadata.resourceVersion;
      this.wrote(obj, updated.metadata.resourceVersion, false);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  private async recordExternalId(m: M, externalId: string): Promise<void> {
    const updated = await this.deps.kube.mergePatchCustom(this.kind.type, m.key, { metadata: { annotations: { [EXTERNAL_ID_ANNOTATION]: externalId } } });
    m.externalId = externalId;
    this.wrote(m.obj, updated.metadata.resourceVersion, false);
  }

  private wrote(obj: ManagedObject, resourceVersion: string | undefined, status: boolean): void {
    this.deps.onWrite?.({ key: `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, resourceVersion, status });
  }
}
