// The one generic reconciler: finalizers, deletion and management policies, references,
// create/update/delete through the kind's ExternalClient, the connection Secret, Ready/Synced
// conditions, status written only when it changed, Events on transitions. Kinds add only what
// differs (managed.ts).
//
// What it promises about the cloud:
// - a create is announced on the object (create-pending) before it is sent, so only a create
//   that may have been lost is ever looked for, and what is found is adopted;
// - a recorded object that vanished is reported (ExternalResourceGone), never replaced unless
//   spec.requests.recreate asks, once per token;
// - what it acts on is what it recorded through the status subresource (status.externalId,
//   status.createPending), never an annotation anyone with edit rights could write; a cloud id
//   belongs to one resource (ExternalIdInUse for any other), and deleting a resource deletes
//   only what it recorded;
// - whatever fails in a pass, what was observed (status fields and Ready) is written.
import { isConflict, isNotFound } from "../kube/errors.ts";
import { keyOf, type KubeApi } from "../kube/types.ts";
import { Actions, LAST_REQUESTS } from "./actions.ts";
import { getCondition, type ConditionInput } from "./conditions.ts";
import type { ConnectionSecrets } from "./connection-secrets.ts";
import { RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import type { AnyManagedKind, CreatePending, Deferral, Managed, ManagedObject, ManagedStatus, Observation, Observed } from "./managed.ts";
import type { ReferenceProtection } from "./protection.ts";
import { ConditionReasons as R, EventActions, EventReasons } from "./reasons.ts";
import type { References } from "./references.ts";
import { StatusWriter } from "./status-writer.ts";
import { Timings, jittered } from "./timings.ts";

export const FINALIZER = "linode.operator.dev/finalizer";
/** A copy of status.externalId for people and tools; never read as the truth. */
export const EXTERNAL_ID_ANNOTATION = "linode.operator.dev/external-id";
/** Written by operators before status.createPending existed; removed when seen, never followed. */
export const CREATE_PENDING_ANNOTATION = "linode.operator.dev/create-pending";
/** `"true"` stops every write for the object (cloud and Kubernetes, finalizer removal included) but the Synced condition saying so. */
export const PAUSED_ANNOTATION = "linode.operator.dev/paused";

export const isPaused = (obj: ManagedObject): boolean => obj.metadata.annotations?.[PAUSED_ANNOTATION] === "true";

/**
 * The cloud id `obj` recorded: status.externalId, or, for an object last written by an operator
 * before that field existed, its external-id annotation where the status that operator wrote
 * (the kind's legacyId) confirms it.
 */
export function recordedIdOf(kind: AnyManagedKind, obj: ManagedObject): string | undefined {
  const recorded = obj.status?.externalId;
  if (typeof recorded === "string" && recorded !== "") return recorded;
  const annotation = obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION];
  return annotation !== undefined && annotation !== "" && kind.legacyId?.(obj) === annotation ? annotation : undefined;
}

function createPendingOf(status: ManagedStatus | undefined): CreatePending | undefined {
  const p = status?.createPending;
  if (p === null || typeof p !== "object" || typeof (p as { at?: unknown }).at !== "string") return undefined;
  return Object.fromEntries(Object.entries(p).filter(([, v]) => typeof v === "string")) as CreatePending;
}

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
  /** This kind's objects (any namespace the operator watches) whose recorded cloud id is `id`. */
  recorders?: (id: string) => ManagedObject[];
  /** Keeps the objects protected references name (credentials Secrets) from going first. */
  protection?: ReferenceProtection;
}

export interface OwnWrite { key: string; resourceVersion: string | undefined; status: boolean }

type Spec = unknown;
type M = Managed<Spec>;

/** One pass's running state: the status being built and the Ready condition observed so far. */
interface Pass {
  status: StatusWriter;
  generation: number | undefined;
  ready?: ConditionInput;
  /** The pass set out to change something (create, update, delete): a failure of it is news. */
  acting?: boolean;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/** Whether a failed call got an answer from the API (an HTTP status), so it did not vanish in flight. */
const answered = (err: unknown): boolean => typeof (err as { status?: unknown } | null)?.status === "number";

export class ManagedReconciler {
  private readonly kind: AnyManagedKind;
  private readonly deps: ReconcilerDeps;
  /** Keys whose last create this process sent got an answer (an error): nothing of it can still be in flight. */
  private readonly answeredCreates = new Set<string>();

  constructor(kind: AnyManagedKind, deps: ReconcilerDeps) {
    if (kind.connection !== undefined && deps.connections === undefined) throw new Error(`${kind.type.kind}: a kind with a connection needs a connection publisher`);
    this.kind = kind;
    this.deps = deps;
  }

  /**
   * Reconciles one object. `obj` must be a private copy: its metadata and status are updated
   * in place as the pass writes them. Throws TerminalError (reported, not retried until
   * something changes), RetryAfterError (retried after its delay) or anything else (retried
   * with backoff); a Kubernetes conflict is thrown unreported, to be retried with a fresh copy.
   */
  async reconcile(obj: ManagedObject, signal: AbortSignal): Promise<ReconcileResult> {
    const deleting = obj.metadata.deletionTimestamp !== undefined;
    const status = new StatusWriter(this.deps.kube, this.kind.type, obj, (resourceVersion) => { this.wrote(obj, resourceVersion, true); });
    const pass: Pass = { status, generation: obj.metadata.generation };

    if (isPaused(obj)) {
      // Crossplane's crossplane.io/paused: the one write is the condition that tells why nothing happens.
      await status.write([{
        type: "Synced", status: "False", reason: R.Paused,
        message: `reconciliation is paused by the annotation ${PAUSED_ANNOTATION}: "true": nothing is created, changed or deleted in Linode or in Kubernetes${deleting ? " (the finalizer stays, so the resource is not deleted)" : ""} until it is removed`,
      }], pass.generation);
      return {};
    }

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
      await status.write([{ type: "Synced", status: "False", reason: R.InvalidSpec, message }], pass.generation);
      throw new TerminalError(R.InvalidSpec, message);
    }
    const m: M = {
      obj, key: keyOf(obj), spec,
      externalId: recordedIdOf(this.kind, obj),
      createPending: createPendingOf(obj.status),
      policies: this.kind.policies(spec),
      refs: {},
      actions: new Actions(status),
    };

    try {
      if (deleting) return await this.reconcileDelete(m, pass, signal);
      return await this.reconcileLive(m, pass, signal);
    } catch (err) {
      if (isConflict(err) || signal.aborted) throw err;
      await this.reportError(m, pass, err).catch(() => undefined);
      throw err;
    }
  }

  private async reconcileDelete(m: M, pass: Pass, signal: AbortSignal): Promise<ReconcileResult> {
    if (!(m.obj.metadata.finalizers ?? []).includes(FINALIZER)) return {};
    pass.acting = true;
    if (m.policies.deletion === "Delete" && m.policies.management === "Manage") {
      if (this.deps.references !== undefined) m.refs = this.deps.references.resolve(m, true).refs;
      const owner = m.externalId !== undefined ? this.ownerOtherThan(m, m.externalId) : undefined;
      if (owner !== undefined) {
        // Recorded by another resource too (a race of two adoptions, or a cluster upgraded from
        // before ids were exclusive): the one that owns it decides its fate, not this one.
        this.deps.events.normal(m.obj, EventReasons.NotDeleted, EventActions.Delete, `the ${this.kind.type.kind} ${m.externalId ?? ""} is left in place: another resource in this cluster manages it`);
        await this.removeFinalizer(m.obj);
        return {};
      }
      // A cloud object that provably does not exist (e.g. a databaseId that was never valid)
      // must not hold the resource hostage.
      const observed: Observation<unknown, unknown> = await this.kind.external.observe(m, signal).catch((err: unknown) => {
        if (err instanceof TerminalError && err.reason === R.NotFound) return { exists: false as const };
        throw err;
      });
      if (!observed.exists && observed.blocked !== undefined) return this.reportBlocked(m, pass, observed.blocked);
      if (observed.exists) {
        // Found by a create it announced: recorded before the delete, so the pass after it knows
        // which object to see gone instead of waiting out the announcement.
        if (observed.externalId !== m.externalId) await this.recordExternalId(m, pass, observed.externalId);
        const { gone } = await this.kind.external.delete(m, observed, signal);
        if (!gone) {
          await pass.status.write([
            { type: "Ready", status: "False", reason: R.Deleting, message: "waiting for the cloud object to be deleted" },
          ], pass.generation);
          return { requeueAfterMillis: Timings.deletePollMillis };
        }
        this.deps.events.normal(m.obj, EventReasons.Deleted, EventActions.Delete, `deleted ${this.kind.type.kind} ${observed.externalId} from Linode`);
      }
    }
    await this.removeFinalizer(m.obj);
    return {};
  }

  private async reconcileLive(m: M, pass: Pass, signal: AbortSignal): Promise<ReconcileResult> {
    const { status, generation: gen } = pass;
    const observeOnly = m.policies.management === "Observe";
    if (!observeOnly) await this.ensureFinalizer(m.obj);
    else await this.removeFinalizer(m.obj);

    this.refuseForgedId(m);
    // Taken over from an operator that recorded the id only in the annotation (and status.id).
    if (m.externalId !== undefined && m.obj.status?.externalId === undefined) status.merge({ externalId: m.externalId });
    const claimed = this.claimedElsewhere(m);
    if (claimed !== undefined) return this.reportInUse(m, pass, claimed);

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
      // What the cloud object cannot be reached without must outlive this resource: protected before anything is done with it.
      if (!observeOnly) for (const o of this.deps.references.protectedOf(m)) await this.deps.protection?.ensure(o);
    }

    let observed = await this.kind.external.observe(m, signal);
    if (!observed.exists && observed.blocked !== undefined) return this.reportBlocked(m, pass, observed.blocked);
    if (!observed.exists) {
      if (observeOnly) {
        await status.write([
          { type: "Ready", status: "False", reason: R.NotFound, message: "the cloud object to observe does not exist" },
          { type: "Synced", status: "False", reason: R.NotFound, message: "managementPolicy is Observe and nothing was found to observe" },
        ], gen);
        return { requeueAfterMillis: this.pollMillis(false) * Timings.observeMissingFactor };
      }
      if (m.externalId !== undefined && !(await this.recreateRequested(m, pass))) return this.reportGone(m, pass, observed.gone);
      return this.create(m, pass, signal);
    }

    if (m.externalId !== observed.externalId || m.createPending !== undefined) await this.recordExternalId(m, pass, observed.externalId);
    status.merge(observed.status as Record<string, unknown>);
    pass.ready = readyOf(observed);
    if (!observeOnly) await this.spendIdleRecreateToken(m);

    let synced: ConditionInput = { type: "Synced", status: "True", reason: observeOnly ? R.Observing : R.ReconcileSuccess };
    if (observeOnly) {
      const differences = [observed.upToDate ? undefined : observed.diff, observed.unfixable?.message].filter((d) => d !== undefined && d !== "");
      if (differences.length > 0) synced = { ...synced, message: `differs from the spec (not changed: managementPolicy is Observe): ${differences.join("; ")}` };
    } else if (observed.unfixable !== undefined) {
      // Nothing is sent while the spec asks for what cannot be: a partial update would pretend otherwise.
      synced = { type: "Synced", status: "False", ...observed.unfixable };
    } else if (!observed.upToDate) {
      pass.acting = true;
      await this.kind.external.update(m, observed, signal);
      this.deps.events.normal(m.obj, EventReasons.Updated, EventActions.Update, `updated ${observed.diff ?? "the cloud object"}`);
      observed = await this.kind.external.observe(m, signal);
      if (!observed.exists) return { requeueAfterMillis: Timings.afterUpdateMillis };
      status.merge(observed.status as Record<string, unknown>);
      pass.ready = readyOf(observed);
    }

    const after = await this.kind.external.afterObserve?.(m, observed, signal);
    if (after?.status !== undefined) status.merge(after.status);
    if (after?.notReady !== undefined) pass.ready = { type: "Ready", status: "False", ...after.notReady };
    if (after?.notSynced !== undefined) synced = { type: "Synced", status: "False", ...after.notSynced };
    // The observation predates what afterObserve just did; publishing from it could read what is no longer there.
    if (this.kind.connection !== undefined && after?.notReady === undefined) {
      const published = await this.publishConnection(m, observed, status, signal).catch((err: unknown) => {
        // Ready promises a usable Secret: a pass that could not publish the first one must not write Ready=True on its way out.
        const connection = this.kind.connection;
        const unpublished = connection === undefined || this.deps.connections?.read(m.obj, connection.secretName(m)) === undefined;
        if (pass.ready?.status === "True" && unpublished) pass.ready = { type: "Ready", status: "False", reason: R.SecretPending, message: `the connection Secret is not published yet: ${errorMessage(err)}` };
        throw err;
      });
      if (published !== true && pass.ready.status === "True") pass.ready = { type: "Ready", status: "False", ...published };
    }
    const ready = pass.ready ?? readyOf(observed);
    await status.write([ready, synced], gen);
    // Settled: nothing left this operator can do (an unfixable difference waits for the spec).
    const settled = ready.status === "True" && observed.upToDate && (synced.status === "True" || observed.unfixable !== undefined);
    return { requeueAfterMillis: after?.pollMillis ?? observed.pollMillis ?? this.pollMillis(settled) };
  }

  private async create(m: M, pass: Pass, signal: AbortSignal): Promise<ReconcileResult> {
    pass.acting = true;
    const inFlight = this.createMayBeInFlight(m);
    const deferral = inFlight ?? await this.kind.external.readyToCreate?.(m, signal);
    if (deferral !== undefined) {
      pass.status.merge(deferral.status ?? {});
      await pass.status.write([
        { type: "Ready", status: "False", reason: deferral.reason, message: deferral.message },
        { type: "Synced", status: "True", reason: R.ReconcileSuccess },
      ], pass.generation);
      // Whatever it waits for usually wakes it (a referenced object changing); this is the backstop.
      return { requeueAfterMillis: deferral.retryAfterMillis ?? this.pollMillis(true) };
    }
    // Announced first, every time: if the response is lost (or the process dies), the next
    // pass knows a create may have happened and looks for it; without the mark it never adopts
    // anything, and its time starts the grace period of this attempt.
    await this.markCreatePending(m, pass);
    const key = `${m.key.namespace}/${m.key.name}`;
    this.answeredCreates.delete(key);
    // A create still waiting (for the call budget, a 429, a slow answer) after the deadline is
    // abandoned, so none is ever sent later than the grace period that keeps another from
    // being sent meanwhile (createMayBeInFlight) assumes.
    const deadline = new AbortController();
    const timer = setTimeout(() => { deadline.abort(new Error(`the create was not answered within ${String(Timings.createDeadlineMillis / 1000)} s`)); }, Timings.createDeadlineMillis);
    const forward = (): void => { deadline.abort(signal.reason); };
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    let created;
    try {
      created = await this.kind.external.create(m, deadline.signal);
    } catch (err) {
      // The API refused it: nothing was created, so nothing may be looked for or adopted later.
      if (err instanceof TerminalError) await this.clearCreatePending(m, pass).catch(() => undefined);
      else if (err instanceof RetryAfterError || answered(err)) this.answeredCreates.add(key);
      throw err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", forward);
    }
    if (created.externalId !== undefined) await this.recordExternalId(m, pass, created.externalId);
    this.deps.events.normal(m.obj, EventReasons.Created, EventActions.Create, created.externalId !== undefined
      ? `created ${this.kind.type.kind} ${created.externalId} on Linode`
      : `requested a new ${this.kind.type.kind} from Linode`);
    pass.status.merge(created.status ?? {});
    await pass.status.write([
      { type: "Ready", status: "False", reason: R.Creating, message: "the cloud object is being created" },
      { type: "Synced", status: "True", reason: R.ReconcileSuccess },
    ], pass.generation);
    return { requeueAfterMillis: Math.min(this.pollMillis(false), Timings.afterCreateMaxMillis) };
  }

  /**
   * A create announced moments ago and not seen yet may still land (its process died mid-call,
   * or its answer was lost): sending another could make a second object, so wait until it
   * shows up or the grace period has passed.
   */
  private createMayBeInFlight(m: M): Deferral | undefined {
    if (m.createPending === undefined || this.answeredCreates.has(`${m.key.namespace}/${m.key.name}`)) return undefined;
    const age = Date.now() - Date.parse(m.createPending.at);
    if (!Number.isFinite(age) || age >= Timings.createGraceMillis) return undefined;
    return {
      reason: R.Creating,
      message: `a create sent at ${m.createPending.at} is not seen yet; it is not sent again before ${String(Math.ceil((Timings.createGraceMillis - age) / 1000))} s have passed`,
      retryAfterMillis: this.pollMillis(false),
    };
  }

  /** The recorded object is gone: a new recreate token lets it be created again (once), after forgetting the old id. */
  private async recreateRequested(m: M, pass: Pass): Promise<boolean> {
    const token = this.kind.recreateToken?.(m.spec);
    if (token === undefined) return false;
    const outcome = await m.actions.run({
      name: "recreate", token, atMostOnce: false, refused: () => false,
      perform: async () => {
        await this.forgetExternalId(m, pass);
        return undefined;
      },
    });
    return outcome.state === "done";
  }

  /** A recreate token seen while the object exists is spent doing nothing: only one set after it vanished recreates. */
  private async spendIdleRecreateToken(m: M): Promise<void> {
    const token = this.kind.recreateToken?.(m.spec);
    if (token === undefined) return;
    const recorded = (m.obj.status?.[LAST_REQUESTS] as Record<string, { token?: string } | undefined> | undefined)?.recreate?.token;
    if (recorded === token) return;
    await m.actions.run({ name: "recreate", token, atMostOnce: false, refused: () => false, perform: () => Promise.resolve({ skipped: "the object existed" }) });
  }

  private async reportGone(m: M, pass: Pass, gone: { reason: string; message: string } | undefined): Promise<ReconcileResult> {
    const recreate = this.kind.recreateToken !== undefined ? "set spec.requests.recreate to a new value to create a new one, or delete this resource" : "delete this resource";
    const reason = gone?.reason ?? R.ExternalResourceGone;
    const message = gone?.message ?? `the ${this.kind.type.kind} ${m.externalId ?? ""} this resource manages no longer exists in Linode; it is not replaced by itself: ${recreate}`;
    const previous = getCondition(m.obj.status?.conditions, "Ready");
    await pass.status.write([
      { type: "Ready", status: "False", reason, message },
      { type: "Synced", status: "False", reason, message },
    ], pass.generation);
    if (previous?.reason !== reason) this.deps.events.warning(m.obj, reason, EventActions.Reconcile, message);
    // Looked at again on the drift cadence, in case it was a passing error of the API.
    return { requeueAfterMillis: this.pollMillis(true) };
  }

  /** Publishes the connection Secret; returns true when it is in place (written now or already), else why not. */
  private async publishConnection(m: M, observed: Observed<unknown, unknown>, status: StatusWriter, signal: AbortSignal): Promise<true | { reason: string; message: string }> {
    const source = this.kind.connection;
    const publisher = this.deps.connections;
    if (source === undefined || publisher === undefined) return { reason: R.SecretPending, message: "no connection publisher" };
    const name = source.secretName(m);
    const conflict = await publisher.conflict(m.obj, name);
    if (conflict !== undefined) return { reason: R.SecretConflict, message: conflict };
    const published = publisher.read(m.obj, name);
    const details = await source.details(m, observed, published, signal);
    if (details === undefined) {
      if (published === undefined) return { reason: R.SecretPending, message: "the connection Secret is not published yet" };
      status.merge({ connectionSecretName: name });
      return true;
    }
    const outcome = await publisher.publish(m.obj, name, details);
    if (outcome === "conflict") return { reason: R.SecretConflict, message: `a Secret named ${name} was created by someone else meanwhile; it is not written` };
    if (outcome === "written") this.deps.events.normal(m.obj, EventReasons.ConnectionSecretPublished, EventActions.PublishSecret, `wrote the connection Secret ${name}`);
    for (const old of await publisher.removeOthers(m.obj, name)) {
      this.deps.events.normal(m.obj, EventReasons.ConnectionSecretRemoved, EventActions.PublishSecret, `removed the connection Secret ${old} (now ${name})`);
    }
    status.merge({ connectionSecretName: name });
    return true;
  }

  private pollMillis(settled: boolean): number {
    return jittered(settled ? this.kind.poll.readyMillis : this.kind.poll.pendingMillis);
  }

  private async reportError(m: M, pass: Pass, err: unknown): Promise<void> {
    const reason = err instanceof TerminalError || err instanceof RetryAfterError ? err.reason : R.ReconcileError;
    const message = errorMessage(err);
    const previous = getCondition(m.obj.status?.conditions, "Synced");
    if (err instanceof RetryAfterError && err.unsent && pass.acting !== true && previous?.status === "True" && previous.observedGeneration === pass.generation) {
      // A re-check of an object with nothing to do, held back by the operator's own call budget
      // before anything was sent: the cloud object is as last reported, so Synced stays as it
      // is (a flap to False and back per object would be news about nothing); what the pass did
      // observe is still written. It is retried after the wait and counted as "deferred".
      await pass.status.write(pass.ready !== undefined ? [pass.ready] : [], pass.generation);
      return;
    }
    // What the pass observed before it failed is the truth about the cloud object: write it too.
    await pass.status.write([...(pass.ready !== undefined ? [pass.ready] : []), { type: "Synced", status: "False", reason, message }], pass.generation);
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

  /** Writes annotations (null removes one) and keeps the pass's copy in step. */
  private async annotate(m: M, annotations: Record<string, string | null>): Promise<void> {
    const updated = await this.deps.kube.mergePatchCustom(this.kind.type, m.key, { metadata: { annotations } });
    m.obj.metadata.annotations = updated.metadata.annotations;
    m.obj.metadata.resourceVersion = updated.metadata.resourceVersion;
    this.wrote(m.obj, updated.metadata.resourceVersion, false);
  }

  /**
   * Records the intent to create (through the status subresource, with what the create targets),
   * on the condition that the object is still the version this pass read: a pass that runs on a
   * cache older than its own last write (the id recorded a moment ago) fails here as a conflict
   * and runs again, instead of creating a second object.
   */
  private async markCreatePending(m: M, pass: Pass): Promise<void> {
    const pending: CreatePending = { ...this.kind.external.intent?.(m), at: now() };
    await pass.status.commit({ createPending: pending }, m.obj.metadata.resourceVersion);
    m.createPending = pending;
  }

  private async clearCreatePending(m: M, pass: Pass): Promise<void> {
    await pass.status.commit({ createPending: null }, undefined);
    m.createPending = undefined;
    if (m.obj.metadata.annotations?.[CREATE_PENDING_ANNOTATION] !== undefined) await this.annotate(m, { [CREATE_PENDING_ANNOTATION]: null });
  }

  /** The record first (the truth), then its copy in the annotation. */
  private async recordExternalId(m: M, pass: Pass, externalId: string): Promise<void> {
    await pass.status.commit({ externalId, createPending: null }, undefined);
    m.externalId = externalId;
    m.createPending = undefined;
    await this.annotate(m, { [EXTERNAL_ID_ANNOTATION]: externalId, [CREATE_PENDING_ANNOTATION]: null });
  }

  /** The copy first, so an annotation never outlives the record it copies. */
  private async forgetExternalId(m: M, pass: Pass): Promise<void> {
    await this.annotate(m, { [EXTERNAL_ID_ANNOTATION]: null });
    await pass.status.commit({ externalId: null }, m.obj.metadata.resourceVersion);
    m.externalId = undefined;
  }

  /**
   * The annotation is a copy for people and tools; one that disagrees with the record was
   * written by someone else, and following it would act on another object (someone else's).
   */
  private refuseForgedId(m: M): void {
    const copy = m.obj.metadata.annotations?.[EXTERNAL_ID_ANNOTATION];
    if (copy === undefined || copy === m.externalId) return;
    const reason = this.kind.idMismatchReason ?? R.ExternalIdMismatch;
    throw new TerminalError(reason, `the annotation ${EXTERNAL_ID_ANNOTATION} says ${copy}, but this resource recorded ${m.externalId ?? "no cloud object"}: the annotation is only a copy of status.externalId and is never followed, so nothing was done; remove it${m.externalId !== undefined ? ` (or set it back to ${m.externalId})` : ""}. To manage an existing ${this.kind.type.kind} on purpose, name its id in the spec`);
  }

  /** Which id this pass would act on is recorded by another resource that owns it, if any. */
  private claimedElsewhere(m: M): { id: string } | undefined {
    const named = this.kind.namedId?.(m.spec);
    for (const id of new Set([m.externalId, named])) {
      if (id !== undefined && this.ownerOtherThan(m, id) !== undefined) return { id };
    }
    return undefined;
  }

  /**
   * Another object of this kind that owns cloud id `id`, if any: one that records it, where this
   * one does not; where both do (two adoptions racing within the caches' delay, or records
   * made before ids were exclusive), the one that created it over one that adopted it, then the
   * oldest.
   */
  private ownerOtherThan(m: M, id: string): ManagedObject | undefined {
    const others = (this.deps.recorders?.(id) ?? []).filter((o) => o.metadata.uid !== m.obj.metadata.uid && recordedIdOf(this.kind, o) === id);
    if (others.length === 0) return undefined;
    if (m.externalId !== id) return others[0];
    const rank = (o: ManagedObject): string => {
      let adopted: boolean;
      try {
        adopted = this.kind.namedId?.(this.kind.parseSpec(o.spec)) === id;
      } catch {
        adopted = true;
      }
      return `${adopted ? 1 : 0}|${String(o.metadata.creationTimestamp ?? "")}|${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    };
    const mine = rank(m.obj);
    return others.find((o) => rank(o) < mine);
  }

  /**
   * A cloud object another resource manages: nothing is read from or written to it for this one,
   * and a connection Secret this one published from it (before the other recorded it, or by an
   * operator before ids were exclusive) is removed: it holds another resource's credentials.
   */
  private async reportInUse(m: M, pass: Pass, claimed: { id: string }): Promise<ReconcileResult> {
    const message = `the ${this.kind.type.kind} ${claimed.id} is managed by another resource in this cluster; a cloud object belongs to one resource, so nothing is read from or written to it for this one (no connection Secret, no change, no delete): remove its id from the spec, or delete this resource (which then deletes nothing in Linode)`;
    if (this.deps.connections !== undefined) {
      for (const old of await this.deps.connections.removeOthers(m.obj, "")) {
        this.deps.events.normal(m.obj, EventReasons.ConnectionSecretRemoved, EventActions.PublishSecret, `removed the connection Secret ${old}: its cloud object is managed by another resource`);
      }
    }
    // Free again when the other resource lets go of it: looked at on the drift cadence.
    return this.reportBlocked(m, pass, { reason: R.ExternalIdInUse, message });
  }

  /**
   * Nothing may be done with the cloud object from here (it cannot be seen, or another resource
   * owns it) and it must not be presumed gone: nothing is created, recreated or deleted; Ready and
   * Synced say why (a Warning Event when that is news), and it is looked at on the drift cadence.
   */
  private async reportBlocked(m: M, pass: Pass, blocked: { reason: string; message: string }): Promise<ReconcileResult> {
    const previous = getCondition(m.obj.status?.conditions, "Synced");
    await pass.status.write([
      { type: "Ready", status: "False", reason: blocked.reason, message: blocked.message },
      { type: "Synced", status: "False", reason: blocked.reason, message: blocked.message },
    ], pass.generation);
    if (previous?.reason !== blocked.reason) this.deps.events.warning(m.obj, blocked.reason, EventActions.Reconcile, blocked.message);
    return { requeueAfterMillis: this.pollMillis(true) };
  }

  private wrote(obj: ManagedObject, resourceVersion: string | undefined, status: boolean): void {
    this.deps.onWrite?.({ key: `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, resourceVersion, status });
  }
}

function readyOf(observed: Observed<unknown, unknown>): ConditionInput {
  return observed.ready
    ? { type: "Ready", status: "True", reason: R.Available }
    : { type: "Ready", status: "False", reason: observed.readyReason ?? R.Unavailable, message: observed.readyMessage ?? "" };
}

export { LAST_REQUESTS };
