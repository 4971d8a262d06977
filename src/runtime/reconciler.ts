// The one generic reconciler: finalizers, deletion and management policies, references,
// create/update/delete through the kind's ExternalClient, the connection Secret, Ready/Synced
// conditions, status written only when it changed, Events on transitions. Kinds add only what
// differs (managed.ts).
//
// A pass is a list of stages over one explicit state (Pass): each stage either goes on or ends
// the pass with an Outcome, and the conditions, Events and the requeue are derived from that
// outcome once, at the end (outcome.ts).
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
// - whatever fails in a pass, what was observed (status fields and Ready) is written;
// - adopting a cloud object it did not create sends nothing the user did not write: the fields
//   the spec leaves unset take the object's values first, written to the spec once (lateInit).
import { isConflict, isInvalid } from "../kube/errors.ts";
import { keyOf, objectKey, type KubeApi } from "../kube/types.ts";
import { Actions, LAST_REQUESTS } from "./actions.ts";
import { FINALIZER, INITIALIZED_FROM_ANNOTATION, isPaused } from "./annotations.ts";
import { getCondition } from "./conditions.ts";
import { planLateInit } from "./late-init.ts";
import type { ConnectionSecrets } from "./connection-secrets.ts";
import { NotSentError, RetryAfterError, TerminalError, errorMessage } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import { canWrite, type AnyManagedKind, type CreatePending, type Deferral, type ExternalClient, type Managed, type ManagedObject, type ManagedStatus, type Observation, type Observed, type PublishedConnection } from "./managed.ts";
import { ObjectWrites } from "./object-writes.ts";
import { conditionsOf, settled, type Findings, type Outcome } from "./outcome.ts";
import { Ownership, recordedIdOf } from "./ownership.ts";
import { combined } from "./problems.ts";
import type { ReferenceProtection } from "./protection.ts";
import { ConditionReasons as R, EventActions, EventReasons } from "./reasons.ts";
import type { References } from "./references.ts";
import { stableJson } from "./status-patch.ts";
import { StatusWriter } from "./status-writer.ts";
import { Timings, jittered } from "./timings.ts";


function createPendingOf(status: ManagedStatus | undefined): CreatePending | undefined {
  const p = status?.createPending;
  if (p === null || typeof p !== "object" || typeof (p as { at?: unknown }).at !== "string") return undefined;
  return Object.fromEntries(Object.entries(p).filter(([, v]) => typeof v === "string")) as CreatePending;
}

export interface ReconcileResult {
  /** Poll again after this long (level-triggered: an event may come sooner). Absent: wait for a change. */
  requeueAfterMillis?: number;
  /** That poll is a settled object's look at the drift cadence: it may wait behind what is not settled. */
  routine?: boolean;
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
  /** When this process began to manage the object under `key`, if after it started (Managed.managedSince). */
  managedSince?: (key: string) => number | undefined;
}

export interface OwnWrite { key: string; resourceVersion: string | undefined; status: boolean }

type M = Managed<unknown>;

/** One pass's explicit state: the object's view, the status being built, and what was found so far. */
interface Pass extends Findings {
  m: M;
  status: StatusWriter;
  generation: number | undefined;
  /** The pass set out to change something (create, update, delete): a failure of it is news. */
  acting: boolean;
  /** What observe found when there is no cloud object: the create stage decides what follows. */
  absent?: Extract<Observation<unknown, unknown>, { exists: false }>;
}

/** Ends a deletion pass: the finalizer goes (the one place it is removed), nothing else is written. */
const RELEASE = { type: "release" } as const;
type DeletionOutcome = Outcome | typeof RELEASE;
/** A stage of a deletion: goes on (undefined), ends it with an outcome, or releases the resource. */
type DeletionStage = (pass: Pass, signal: AbortSignal) => Promise<DeletionOutcome | undefined>;

/** A stage: goes on (undefined) or ends the pass with its outcome. */
type Stage = (pass: Pass, signal: AbortSignal) => Promise<Outcome | undefined>;

/** Whether a failed call got an answer from the API (an HTTP status), so it did not vanish in flight. */
const answered = (err: unknown): boolean => typeof (err as { status?: unknown } | null)?.status === "number";

export class ManagedReconciler {
  private readonly kind: AnyManagedKind;
  private readonly deps: ReconcilerDeps;
  private readonly writes: ObjectWrites;
  private readonly ownership: Ownership;
  /** The kind's writers; undefined for a read-only kind (it only mirrors its cloud object). */
  private readonly writer: ExternalClient<unknown, unknown, unknown, unknown> | undefined;
  /** Keys whose last create this process sent got an answer (an error): nothing of it can still be in flight. */
  private readonly answeredCreates = new Set<string>();
  /**
   * Keys whose announced create (createPending.at, the value) the call budget held back before it
   * was sent: Managed.createUnsent. At 10,000 databases over three replicas, each such create's
   * next pass looked by label first, a paginated call, and the paginated class (a third of 100 a
   * minute each) held back the creates and the lists behind them.
   */
  private readonly unsentCreates = new Map<string, string>();
  /**
   * Per key, the last update sent and how many passes running sent it unchanged: an update that
   * never takes (the API stores the value in another form, or someone puts it back) is sent
   * MAX_IDENTICAL_UPDATES times, then no more until something changes. Dropped once in step.
   */
  private readonly repeats = new Map<string, { fingerprint: string; sent: number; generation: number | undefined }>();
  /** The live pass, in order. */
  private readonly live: Stage[] = [
    (p) => this.guard(p),
    (p) => this.resolve(p),
    (p) => this.claims(p),
    (p, s) => this.observe(p, s),
    (p, s) => this.createIfAbsent(p, s),
    (p) => this.lateInit(p),
    (p, s) => this.update(p, s),
    (p, s) => this.afterObserve(p, s),
    (p, s) => this.publish(p, s),
  ];

  /**
   * A deletion, in order; once every stage goes on, the cloud object is gone or left in place as
   * the policy says, and the resource is released (its finalizer removed, in `release`).
   */
  private readonly deletion: DeletionStage[] = [
    (p) => this.deletionPolicy(p),
    (p) => this.ownedElsewhere(p),
    (p, s) => this.deleteCloudObject(p, s),
  ];

  constructor(kind: AnyManagedKind, deps: ReconcilerDeps) {
    if (kind.connection !== undefined && deps.connections === undefined) throw new Error(`${kind.type.kind}: a kind with a connection needs a connection publisher`);
    this.kind = kind;
    this.deps = deps;
    this.writes = new ObjectWrites(deps.kube, kind.type, (obj, rv) => { this.wrote(obj, rv, false); });
    this.ownership = new Ownership(kind, deps.recorders);
    this.writer = canWrite(kind.external) ? kind.external : undefined;
  }

  /** Keys whose last create got an answer, held until they create again or are gone. */
  get answeredCreateCount(): number {
    return this.answeredCreates.size;
  }

  /** The object is gone: nothing of it is kept. */
  forget(key: string): void {
    this.answeredCreates.delete(key);
    this.unsentCreates.delete(key);
    this.repeats.delete(key);
  }

  /** Keys whose announced create was held back unsent. */
  get unsentCreateCount(): number {
    return this.unsentCreates.size;
  }

  /** The keys of `unsentCreateCount`. */
  unsentCreateKeys(): string[] {
    return [...this.unsentCreates.keys()];
  }

  /**
   * Takes back the announcement of a create this process held back unsent, as the object leaves
   * it (a handover, a stop), with no pass of it running: only this process knew it was never
   * sent, and its next owner would otherwise look for it by label and wait out the grace. Only
   * if the object is still the version that says so.
   */
  async withdrawUnsentCreate(obj: ManagedObject): Promise<void> {
    const key = objectKey(obj);
    const at = this.unsentCreates.get(key);
    if (at === undefined) return;
    this.unsentCreates.delete(key);
    // The cached copy may miss this process's own last writes: a stopping process closes its
    // watches before its last passes end, so the condition saying the create was held back
    // never reaches the cache. Then the API server's copy is read, once, and the announcement
    // taken back only if that copy still says it.
    let current = obj;
    for (let fresh = false; ; fresh = true) {
      const rv = current.metadata.resourceVersion;
      if (createPendingOf(current.status)?.at === at && rv !== undefined) {
        try {
          const updated = await this.deps.kube.patchCustomStatus(this.kind.type, keyOf(current), { createPending: null }, { resourceVersion: rv });
          // Its event is this process's own write, as every other status write is.
          this.wrote(current, updated.metadata.resourceVersion, true);
          return;
        } catch (err) {
          if (fresh || !isConflict(err)) throw err;
        }
      } else if (fresh) return;
      current = await this.deps.kube.getCustom<ManagedObject>(this.kind.type, keyOf(obj));
    }
  }

  /** Keys whose identical updates are being counted. */
  get repeatedUpdateCount(): number {
    return this.repeats.size;
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
    const generation = obj.metadata.generation;
    let pass: Pass | undefined;
    // Whatever throws in this pass (a stage, a kind's code, a parser) ends this object's pass
    // with Synced=False, reported once, never the process.
    try {
      if (isPaused(obj)) {
        // Crossplane's crossplane.io/paused: the one write is the condition that tells why nothing happens.
        await status.write(conditionsOf({ type: "paused", deleting }, { observeOnly: false }), generation);
        return {};
      }

      let spec: unknown;
      try {
        spec = this.kind.parseSpec(obj.spec);
      } catch (err) {
        return await this.invalidSpec(obj, status, generation, err);
      }
      const policies = this.kind.policies(spec);
      const key = objectKey(obj);
      const createPending = createPendingOf(obj.status);
      // Remembered only for the announcement it was made for: a newer one (or none) forgets it.
      const unsent = this.unsentCreates.get(key);
      const createUnsent = unsent !== undefined && unsent === createPending?.at;
      if (unsent !== undefined && !createUnsent) this.unsentCreates.delete(key);
      pass = {
        status, generation, acting: false,
        observeOnly: policies.management === "Observe" || this.writer === undefined,
        m: { obj, key: keyOf(obj), spec, externalId: recordedIdOf(this.kind, obj), createPending, ...(createUnsent ? { createUnsent } : {}), managedSince: this.deps.managedSince?.(key), policies, refs: {}, actions: new Actions(status) },
      };
      const outcome = deleting ? await this.reconcileDelete(pass, signal) : await this.run(this.live, pass, signal) ?? { type: "observed" };
      return await this.report(pass, outcome);
    } catch (err) {
      if (isConflict(err) || signal.aborted || (err instanceof TerminalError && err.reason === R.InvalidSpec && pass === undefined)) throw err;
      if (pass !== undefined) await this.reportError(pass, err).catch(() => undefined);
      else {
        const message = errorMessage(err);
        await status.write(conditionsOf({ type: "failed", reason: R.ReconcileError, message, quiet: false }, { observeOnly: false }), generation).catch(() => undefined);
        try {
          this.deps.events.warning(obj, R.ReconcileError, EventActions.Reconcile, message);
        } catch { /* an Event is news, not a reason to fail harder */ }
      }
      throw err;
    }
  }

  /**
   * A spec that does not parse (stored before a rule the CRD has now, or written around it).
   * Nothing is acted on; being deleted, the finalizer stays unless the record says nothing was
   * ever created (no cloud id, no create announced): letting go would orphan the cloud object
   * whatever the deletion policy. Fixing the spec lets the deletion go on; a person who wants to
   * leave the cloud object in place removes the finalizer.
   */
  private async invalidSpec(obj: ManagedObject, status: StatusWriter, generation: number | undefined, err: unknown): Promise<ReconcileResult> {
    const deleting = obj.metadata.deletionTimestamp !== undefined;
    const nothingCreated = recordedIdOf(this.kind, obj) === undefined && createPendingOf(obj.status) === undefined;
    if (deleting && nothingCreated) return this.release(obj);
    const message = deleting
      ? `invalid spec: ${errorMessage(err)}; the deletion waits, as this resource's cloud object cannot be deleted (or retained) by a spec that does not parse: fix the spec, or remove the finalizer ${FINALIZER} by hand to leave the cloud object in place`
      : `invalid spec: ${errorMessage(err)}`;
    await status.write(conditionsOf({ type: "invalidSpec", message }, { observeOnly: false }), generation);
    throw new TerminalError(R.InvalidSpec, message);
  }

  /** The stages in order, until one ends the pass (its outcome) or all go on (undefined). */
  private async run<O>(stages: ((pass: Pass, signal: AbortSignal) => Promise<O | undefined>)[], pass: Pass, signal: AbortSignal): Promise<O | undefined> {
    for (const stage of stages) {
      const outcome = await stage(pass, signal);
      if (outcome !== undefined) return outcome;
    }
    return undefined;
  }

  // ── the live stages ──────────────────────────────────────────────────────────────────

  /** The finalizer as the policy wants it; no annotation followed. */
  private async guard(pass: Pass): Promise<Outcome | undefined> {
    const { m } = pass;
    if (!pass.observeOnly) await this.writes.ensureFinalizer(m.obj);
    else await this.writes.removeFinalizer(m.obj);
    this.ownership.refuseForgedId(m);
    // Taken over from an operator that recorded the id only in the annotation (and status.id).
    if (m.externalId !== undefined && m.obj.status?.externalId === undefined) pass.status.merge({ externalId: m.externalId });
    return undefined;
  }

  /**
   * Nothing acted on that this resource does not own: what the spec names by id, only where it
   * may name it (asked first, so that whether another resource records an id is told only to
   * those allowed to name it), and never an id another resource records.
   */
  private async claims(pass: Pass): Promise<Outcome | undefined> {
    const { m } = pass;
    this.kind.external.admit?.(m);
    const claimed = this.ownership.claimedElsewhere(m);
    if (claimed === undefined) return undefined;
    // Nothing is read from or written to it for this one, and a connection Secret this one
    // published from it (before the other recorded it, or by an operator before ids were
    // exclusive) is removed: it holds another resource's credentials.
    for (const old of await this.deps.connections?.removeOthers(m.obj, "") ?? []) {
      this.deps.events.normal(m.obj, EventReasons.ConnectionSecretRemoved, EventActions.PublishSecret, `removed the connection Secret ${old}: its cloud object is managed by another resource`);
    }
    // Free again when the other resource lets go of it: looked at on the drift cadence.
    return held(R.ExternalIdInUse, `the ${this.kind.type.kind} ${claimed} is managed by another resource in this cluster; a cloud object belongs to one resource, so nothing is read from or written to it for this one (no connection Secret, no change, no delete): remove its id from the spec, or delete this resource (which then deletes nothing in Linode)`);
  }

  /** References resolved and decoded; what must outlive this resource protected before anything is done. */
  private async resolve(pass: Pass): Promise<Outcome | undefined> {
    const references = this.deps.references;
    if (references === undefined) return undefined;
    const resolution = references.resolve(pass.m, false);
    pass.m.refs = resolution.refs;
    // Nothing to poll for: a change to the referenced object reconciles this one.
    if (resolution.unresolved !== undefined) return { type: "held", ...resolution.unresolved, warn: false, poll: false };
    if (!pass.observeOnly) for (const o of references.protectedOf(pass.m)) await this.deps.protection?.ensure(o);
    return undefined;
  }

  /** The cloud object as it is, or why there is none (for the create stage). */
  private async observe(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    const { m } = pass;
    const observed = await this.kind.external.observe(m, signal);
    if (!observed.exists) {
      if (observed.blocked !== undefined) return held(observed.blocked.reason, observed.blocked.message);
      pass.absent = observed;
      return undefined;
    }
    if (m.externalId !== observed.externalId || m.createPending !== undefined) await this.writes.recordExternalId(m, pass.status, observed.externalId);
    this.found(pass, observed);
    if (!pass.observeOnly) await this.spendIdleRecreateToken(m);
    return undefined;
  }

  /**
   * Late initialization on adoption: the first Manage pass bound to a cloud object the spec
   * names by id writes the object's values to the fields the spec leaves unset, with the mark
   * (INITIALIZED_FROM_ANNOTATION) in the same conditional patch, and ends: nothing is sent, and
   * the next pass works from the spec as written. The mark makes it once: a field the user
   * removes later is the desired state, not filled again. A crash after the patch leaves both
   * written; a failed patch leaves neither, and nothing was sent. What the spec cannot express
   * is refused (CannotExpress), nothing written or sent. Observe mode writes nothing.
   */
  private async lateInit(pass: Pass): Promise<Outcome | undefined> {
    const { m, observed } = pass;
    if (observed === undefined || pass.observeOnly || this.kind.lateInit === undefined) return undefined;
    const id = observed.externalId;
    if (this.kind.namedId?.(m.spec) !== id || m.obj.metadata.annotations?.[INITIALIZED_FROM_ANNOTATION] === id) return undefined;
    const what = `the ${this.kind.type.kind} ${id}`;
    const plan = planLateInit(this.kind, m.obj.spec, observed.external);
    if (plan.refused !== undefined) return held(R.CannotExpress, cannotExpress(what, plan.refused));
    try {
      await this.writes.initializeSpec(m, pass.generation, plan.fields, id);
    } catch (err) {
      // A rule of the CRD (CEL) refuses what the object has: said as such, nothing sent.
      if (isInvalid(err)) return held(R.CannotExpress, cannotExpress(what, [errorMessage(err)]));
      throw err;
    }
    const names = Object.keys(plan.fields);
    if (names.length === 0) return undefined;
    this.deps.events.normal(m.obj, EventReasons.LateInitialized, EventActions.Update, `adopted ${what}: the spec left ${names.map((n) => `spec.${n}`).join(", ")} unset, so they now say what it has (written once; from now on the spec is what is kept)`);
    return { type: "recheck" };
  }

  /** Changed to match the spec when it differs in what can be changed, then observed again. */
  private async update(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    const observed = pass.observed;
    const writer = this.writer;
    const key = `${pass.m.key.namespace}/${pass.m.key.name}`;
    if (observed?.upToDate === true) this.repeats.delete(key);
    // Nothing is sent while the spec asks for what cannot be: a partial update would pretend otherwise.
    if (observed === undefined || writer === undefined || pass.observeOnly || combined(observed.unfixable) !== undefined || observed.upToDate) return undefined;
    // The kind's typed delta is what it would send (the runtime sees every kind's as unknown).
    const fingerprint = stableJson([observed.diff ?? "", (observed as { delta?: unknown }).delta]);
    const last = this.repeats.get(key);
    const again = last !== undefined && last.fingerprint === fingerprint && last.generation === pass.generation;
    if (again && last.sent >= MAX_IDENTICAL_UPDATES) {
      const message = `the same update (${observed.diff ?? "the cloud object"}) was sent ${String(last.sent)} passes running and the cloud object still differs: the API stores it in another form, or something outside changes it back. Nothing more is sent until the spec or the cloud object changes; set the spec to the value the API keeps`;
      if (getCondition(pass.m.obj.status?.conditions, "Synced")?.reason !== R.NotConverging) this.deps.events.warning(pass.m.obj, R.NotConverging, EventActions.Update, message);
      pass.observed = { ...observed, unfixable: [{ reason: R.NotConverging, message }], pollMillis: this.pollMillis(true) };
      return undefined;
    }
    pass.acting = true;
    await writer.update(pass.m, observed, signal);
    this.repeats.set(key, { fingerprint, sent: again ? last.sent + 1 : 1, generation: pass.generation });
    this.deps.events.normal(pass.m.obj, EventReasons.Updated, EventActions.Update, `updated ${observed.diff ?? "the cloud object"}`);
    const after = await this.kind.external.observe(pass.m, signal);
    if (!after.exists) return { type: "recheck" };
    if (after.upToDate) this.repeats.delete(key);
    this.found(pass, after);
    return undefined;
  }

  /** The kind's work that follows an observation (e.g. one-shot request tokens). */
  private async afterObserve(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    if (pass.observed === undefined) return undefined;
    const after = await this.kind.external.afterObserve?.(pass.m, pass.observed, signal);
    if (after === undefined) return undefined;
    pass.after = after;
    if (after.status !== undefined) pass.status.merge(after.status);
    return undefined;
  }

  /** The connection Secret in place, or why it is not (Ready promises a usable Secret). */
  private async publish(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    const source = this.kind.connection;
    const publisher = this.deps.connections;
    // The observation predates what afterObserve just did; publishing from it could read what is no longer there.
    if (source === undefined || publisher === undefined || pass.observed === undefined || pass.after?.notReady !== undefined) return undefined;
    const { m } = pass;
    const name = source.secretName(m);
    let published: PublishedConnection | undefined;
    try {
      const found = await publisher.find(m.obj, name);
      if ("conflict" in found) return unpublished(pass, { reason: R.SecretConflict, message: found.conflict });
      published = publisher.contentOf(found.ours);
      const details = await source.details(m, pass.observed, published, signal);
      if (details === undefined && published === undefined) return unpublished(pass, { reason: R.SecretPending, message: "the connection Secret is not published yet" });
      if (details !== undefined) {
        const outcome = await publisher.publish(m.obj, name, details, found.ours);
        if (outcome === "conflict") return unpublished(pass, { reason: R.SecretConflict, message: `a Secret named ${name} was created by someone else meanwhile; it is not written` });
        if (outcome === "written") this.deps.events.normal(m.obj, EventReasons.ConnectionSecretPublished, EventActions.PublishSecret, `wrote the connection Secret ${name}`);
        for (const old of await publisher.removeOthers(m.obj, name)) {
          this.deps.events.normal(m.obj, EventReasons.ConnectionSecretRemoved, EventActions.PublishSecret, `removed the connection Secret ${old} (now ${name})`);
        }
      }
    } catch (err) {
      // A pass that could not publish the first one must not write Ready=True on its way out.
      if (published === undefined) pass.unpublished = { reason: R.SecretPending, message: `the connection Secret is not published yet: ${errorMessage(err)}` };
      throw err;
    }
    // binding.name: the Service Binding spec's Provisioned Service, so a ServiceBinding can name this resource.
    pass.status.merge({ connectionSecretName: name, binding: { name } });
    return undefined;
  }

  /**
   * With no cloud object: nothing in Observe mode; a vanished one is reported (made again only
   * by a new recreate token); otherwise one is created.
   */
  private async createIfAbsent(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    const { m, absent } = pass;
    if (absent === undefined) return undefined;
    if (pass.observeOnly || this.writer === undefined) return { type: "absent" };
    if (m.externalId !== undefined && !(await this.recreateRequested(pass))) return this.gone(m, absent.gone);
    return this.create(pass, this.writer, signal);
  }

  /** Creates the cloud object, announced first; or waits, when the kind or a create in flight says so. */
  private async create(pass: Pass, writer: ExternalClient<unknown, unknown, unknown, unknown>, signal: AbortSignal): Promise<Outcome> {
    const { m } = pass;
    pass.acting = true;
    const ready = this.createMayBeInFlight(m) ?? await writer.readyToCreate?.(m, signal);
    if (ready !== undefined && !("prepared" in ready)) {
      pass.status.merge(ready.status ?? {});
      return { type: "waiting", deferral: ready };
    }
    // Announced first, every time: if the response is lost (or the process dies), the next
    // pass knows a create may have happened and looks for it; without the mark it never adopts
    // anything, and its time starts the grace period of this attempt.
    await this.writes.markCreatePending(m, pass.status, writer.intent?.(m) ?? {});
    const key = `${m.key.namespace}/${m.key.name}`;
    this.answeredCreates.delete(key);
    this.unsentCreates.delete(key);
    m.createUnsent = false;
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
      created = await writer.create(m, deadline.signal, ready?.prepared);
    } catch (err) {
      // The API refused it: nothing was created, so nothing may be looked for or adopted later.
      if (err instanceof TerminalError) await this.writes.clearCreatePending(m, pass.status).catch(() => undefined);
      // Cancelled before it left the process (the operator stopping mid-pass): nothing can land,
      // so the announcement is taken back and whoever passes next (another shard, after a
      // handover) creates at once instead of waiting out the grace. Only if no one wrote since
      // the announcement: a write of anyone else's may be their own announcement.
      else if (err instanceof NotSentError) await this.writes.clearCreatePending(m, pass.status, m.obj.metadata.resourceVersion).catch(() => undefined);
      else if (err instanceof RetryAfterError || answered(err)) this.answeredCreates.add(key);
      if (err instanceof RetryAfterError && err.unsent && m.createPending !== undefined) this.unsentCreates.set(key, m.createPending.at);
      throw err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", forward);
    }
    // What the create returned (its ids, the account, the ownership proof) is recorded with the id
    // in one write: a later write of this pass that meets a conflict cannot lose the proof.
    if (created.externalId !== undefined) await this.writes.recordExternalId(m, pass.status, created.externalId, created.status ?? {});
    this.deps.events.normal(m.obj, EventReasons.Created, EventActions.Create, created.externalId !== undefined
      ? `created ${this.kind.type.kind} ${created.externalId} on Linode`
      : `requested a new ${this.kind.type.kind} from Linode`);
    pass.status.merge(created.status ?? {});
    return { type: "created", lookAfterMillis: created.lookAfterMillis };
  }

  // ── deletion ─────────────────────────────────────────────────────────────────────────

  /** A deletion: its stages, then the resource released; undefined when it is let go of (nothing to write). */
  private async reconcileDelete(pass: Pass, signal: AbortSignal): Promise<Outcome | undefined> {
    const { m } = pass;
    if (!(m.obj.metadata.finalizers ?? []).includes(FINALIZER)) return undefined;
    pass.acting = true;
    const outcome = await this.run(this.deletion, pass, signal) ?? RELEASE;
    if (outcome.type !== "release") return outcome;
    await this.release(m.obj);
    return undefined;
  }

  /** The one place a resource is let go of: its finalizer removed (the cloud object deleted or left, as decided before). */
  private async release(obj: ManagedObject): Promise<ReconcileResult> {
    await this.writes.removeFinalizer(obj);
    return {};
  }

  /** Retain, Observe, or a kind that does not write: the cloud object stays, the resource goes. */
  private deletionPolicy(pass: Pass): Promise<DeletionOutcome | undefined> {
    const { m } = pass;
    const deletes = this.writer !== undefined && m.policies.deletion === "Delete" && m.policies.management === "Manage";
    return Promise.resolve(deletes ? undefined : RELEASE);
  }

  /**
   * Recorded by another resource too (a race of two adoptions, or a cluster upgraded from before
   * ids were exclusive): the one that owns it decides its fate, not this one.
   */
  private ownedElsewhere(pass: Pass): Promise<DeletionOutcome | undefined> {
    const { m } = pass;
    if (this.deps.references !== undefined) m.refs = this.deps.references.resolve(m, true).refs;
    const owner = m.externalId !== undefined ? this.ownership.ownerOtherThan(m, m.externalId) : undefined;
    if (owner === undefined) return Promise.resolve(undefined);
    this.deps.events.normal(m.obj, EventReasons.NotDeleted, EventActions.Delete, `the ${this.kind.type.kind} ${m.externalId ?? ""} is left in place: another resource in this cluster manages it`);
    return Promise.resolve(RELEASE);
  }

  /** The cloud object deleted, once it is seen; one that provably does not exist must not hold the resource hostage. */
  private async deleteCloudObject(pass: Pass, signal: AbortSignal): Promise<DeletionOutcome | undefined> {
    const { m } = pass;
    const writer = this.writer;
    if (writer === undefined) return RELEASE;
    const observed: Observation<unknown, unknown> = await this.kind.external.observe(m, signal).catch((err: unknown) => {
      if (err instanceof TerminalError && err.reason === R.NotFound) return { exists: false as const };
      throw err;
    });
    if (!observed.exists && observed.blocked?.letGo === true) {
      // Not provably its own (a forged record): never deleted by this resource, which lets go of it.
      this.deps.events.warning(m.obj, EventReasons.NotDeleted, EventActions.Delete, observed.blocked.message);
      return RELEASE;
    }
    if (!observed.exists && observed.blocked !== undefined) return held(observed.blocked.reason, observed.blocked.message);
    if (!observed.exists) return undefined;
    // Found by a create it announced: recorded before the delete, so the pass after it knows
    // which object to see gone instead of waiting out the announcement.
    if (observed.externalId !== m.externalId) await this.writes.recordExternalId(m, pass.status, observed.externalId);
    // What this look recorded of the object (the account whose credentials see it now, after a
    // token rotation; the ownership proof) is written before the delete: the pass after it finds
    // the object gone with these credentials, and only this record says that was theirs to see
    // (with the old one it would hold the resource as AccountChanged for good).
    pass.status.merge(observed.status as Record<string, unknown>);
    await pass.status.write([], undefined);
    const { gone } = await writer.delete(m, observed, signal);
    if (!gone) return { type: "deleting" };
    this.deps.events.normal(m.obj, EventReasons.Deleted, EventActions.Delete, `deleted ${this.kind.type.kind} ${observed.externalId} from Linode`);
    return undefined;
  }

  // ── reporting: conditions, Events and the requeue, derived from the outcome once ─────

  /** Writes what the outcome says (undefined: the object was let go of, nothing to write). */
  private async report(pass: Pass, outcome: Outcome | undefined): Promise<ReconcileResult> {
    if (outcome === undefined) return {};
    const previous = getCondition(pass.m.obj.status?.conditions, "Synced");
    if (outcome.type !== "recheck") await pass.status.write(conditionsOf(outcome, pass), pass.generation);
    if (outcome.type === "held" && outcome.warn && previous?.reason !== outcome.reason) this.deps.events.warning(pass.m.obj, outcome.reason, EventActions.Reconcile, outcome.message);
    return this.requeueOf(outcome, pass);
  }

  private requeueOf(outcome: Outcome, pass: Pass): ReconcileResult {
    if (outcome.type !== "observed") {
      const millis = this.requeueMillis(outcome);
      return millis === undefined ? {} : { requeueAfterMillis: millis };
    }
    const settledObject = settled(outcome, pass);
    const millis = pass.after?.pollMillis ?? pass.observed?.pollMillis ?? this.pollMillis(settledObject);
    // While its calls are contended (objects converging spend the account's budget), a settled
    // object's next routine look waits one more interval: the budget goes first to what is not
    // Ready yet, and drift is still put back within twice the interval. A change to it, or to
    // what it references, wakes it as ever. A settled object's look may also wait behind what is
    // not settled (routine).
    if (!settledObject) return { requeueAfterMillis: millis };
    return { requeueAfterMillis: this.kind.external.contended?.(pass.m) === true ? 2 * millis : millis, routine: true };
  }

  private requeueMillis(outcome: Exclude<Outcome, { type: "observed" }>): number | undefined {
    switch (outcome.type) {
      // A reference waits for a change to what it names; the rest is looked at on the drift cadence, in case it was a passing error of the API.
      case "held": return outcome.poll ? this.pollMillis(true) : undefined;
      case "absent": return this.pollMillis(false) * Timings.observeMissingFactor;
      // Whatever it waits for usually wakes it (a referenced object changing); this is the backstop.
      case "waiting": return outcome.deferral.retryAfterMillis ?? this.pollMillis(true);
      case "created": return outcome.lookAfterMillis ?? Math.min(this.pollMillis(false), Timings.afterCreateMaxMillis);
      case "recheck": return Timings.afterUpdateMillis;
      case "deleting": return Timings.deletePollMillis;
      case "failed": return undefined;
    }
  }

  private async reportError(pass: Pass, err: unknown): Promise<void> {
    const reason = err instanceof TerminalError || err instanceof RetryAfterError ? err.reason : R.ReconcileError;
    const message = errorMessage(err);
    const previous = getCondition(pass.m.obj.status?.conditions, "Synced");
    // A re-check of an object with nothing to do, held back by the operator's own call budget
    // before anything was sent: the cloud object is as last reported, so Synced stays as it is
    // (a flap to False and back per object would be news about nothing); what the pass did
    // observe is still written. It is retried after the wait and counted as "deferred".
    const quiet = err instanceof RetryAfterError && err.unsent && !pass.acting && previous?.status === "True" && previous.observedGeneration === pass.generation;
    await pass.status.write(conditionsOf({ type: "failed", reason, message, quiet }, pass), pass.generation);
    if (quiet || (previous?.reason === reason && previous.message === message)) return;
    if (err instanceof RetryAfterError) this.deps.events.normal(pass.m.obj, reason, EventActions.Reconcile, message);
    else this.deps.events.warning(pass.m.obj, reason, EventActions.Reconcile, message);
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────

  /** An observation of the existing cloud object: its status fields mirrored, and kept for the stages after. */
  private found(pass: Pass, observed: Observed<unknown, unknown>): void {
    pass.status.merge(observed.status as Record<string, unknown>);
    pass.observed = observed;
  }

  /** The recorded object is gone, and that is not replaced by itself. */
  private gone(m: M, gone: { reason: string; message: string } | undefined): Outcome {
    const recreate = this.kind.recreateToken !== undefined ? "set spec.requests.recreate to a new value to create a new one, or delete this resource" : "delete this resource";
    return held(gone?.reason ?? R.ExternalResourceGone, gone?.message ?? `the ${this.kind.type.kind} ${m.externalId ?? ""} this resource manages no longer exists in Linode; it is not replaced by itself: ${recreate}`);
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
  private async recreateRequested(pass: Pass): Promise<boolean> {
    const { m } = pass;
    const token = this.kind.recreateToken?.(m.spec);
    if (token === undefined) return false;
    const outcome = await m.actions.run({
      name: "recreate", token, atMostOnce: false, refused: () => false,
      perform: async () => {
        await this.writes.forgetExternalId(m, pass.status);
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

  private pollMillis(settledObject: boolean): number {
    return jittered(settledObject ? this.kind.poll.readyMillis : this.kind.poll.pendingMillis);
  }

  private wrote(obj: ManagedObject, resourceVersion: string | undefined, status: boolean): void {
    this.deps.onWrite?.({ key: `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, resourceVersion, status });
  }
}

/** How many passes running the same update is sent before NotConverging stops it. */
const MAX_IDENTICAL_UPDATES = 3;

/** Why an adopted object is not managed: what of it the spec cannot express. */
const cannotExpress = (what: string, refused: string[]): string =>
  `${what} has what the spec cannot express, so it is not managed here and nothing is written to the spec or sent to it: ${refused.join("; ")}. Write these fields in the spec yourself (what you write is then kept, replacing what it has), or set managementPolicy: Observe to mirror it read-only`;

/** Nothing may be done until something changes; a Warning when that is news, looked at on the drift cadence. */
const held = (reason: string, message: string): Outcome => ({ type: "held", reason, message, warn: true, poll: true });

/** The connection Secret is not in place: the pass goes on to its end, and Ready says why. */
function unpublished(pass: Pass, why: { reason: string; message: string }): undefined {
  pass.unpublished = why;
  return undefined;
}

