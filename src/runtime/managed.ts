// The contract between the generic reconciler and each kind (Crossplane's ExternalClient,
// ACK's ReadOne → Update(desired, latest, delta)). A kind says how to observe, create, update
// and delete its cloud object, what it refers to and what connection details it publishes;
// the runtime does everything else: finalizers, policies, references, conditions, Events,
// status patches, the connection Secret, backoff.
import type { KubeObject, ObjectKey, ResourceType } from "../kube/types.ts";
import type { Actions } from "./actions.ts";
import type { EventRecorder } from "./events.ts";
import type { KindDefinition } from "./kind-definition.ts";
import type { ManagedObject } from "./managed-object.ts";
import type { Problem } from "./problems.ts";
import type { Read } from "./reads.ts";
import type { ReadStore } from "./stores.ts";
import type { PollIntervals } from "./timings.ts";

/** The object shapes kinds see (kinds never import src/kube). */
export type { ConfigMapObject, EndpointSliceObject, KubeObject, NodeObject, ResourceType, SecretObject, ServiceObject } from "../kube/types.ts";

export type { ManagedObject, ManagedStatus } from "./managed-object.ts";

export interface Policies {
  deletion: "Delete" | "Retain";
  management: "Manage" | "Observe";
}

/**
 * What a reference makes of an object it found, once per pass: the value the kind works with
 * (when one can be made), and why it cannot be used yet (when it cannot).
 */
export type Decoded<V> = { value: V; notReady?: string } | { value?: undefined; notReady: string };

/** One referenced object of this pass: as found, and decoded by its reference. */
export interface ResolvedRef { obj: KubeObject; decoded: Decoded<unknown> }

/** Referenced objects that resolved, by reference name, then by object name (read through a Reference's typed accessors). */
export type ResolvedRefs = Readonly<Record<string, ReadonlyMap<string, ResolvedRef>>>;

/** The record of a create about to be sent (status.createPending). */
export type CreatePending = { at: string } & Readonly<Record<string, string>>;

/** One reconcile's view of an object. */
export interface Managed<Spec> {
  /**
   * A private copy of the object as the cache had it. Its `status` is the status this pass is
   * building: fields a step returns are merged into it before the next step runs.
   */
  obj: ManagedObject;
  key: ObjectKey;
  spec: Spec;
  /**
   * The cloud id this resource recorded (status.externalId, written by the operator through the
   * status subresource), if any: the one object it acts on. Never taken from an annotation.
   */
  externalId: string | undefined;
  /**
   * A create that was about to be sent and whose id is not recorded yet, if so: when, and what
   * it targeted (the kind's `intent`, e.g. its label and account). Only then may observe look for
   * an object this resource created but never heard back about, and only for exactly that.
   */
  createPending: CreatePending | undefined;
  /**
   * This process knows the create `createPending` announces was never sent (the call budget held
   * it back before it left), and looked for what any earlier one may have made before announcing
   * it: there is no lost create to look for, and a look by label (a paginated call) is not needed.
   */
  createUnsent?: boolean;
  /**
   * When this process began to manage the object, if that was after it started (a shard took it
   * over from another), or earlier: when this replica saw the dead shard it came from dead
   * (that shard had stopped acting by then). A shared list of the account begun before this
   * moment may predate what the previous owner saw, and wrote to status, so it must not stand
   * for the cloud object. See `cachedReadAge`.
   */
  managedSince?: number;
  policies: Policies;
  refs: ResolvedRefs;
  /** One-shot actions (request tokens), checked and recorded against the API server, not the cache. */
  actions: Actions;
}

/**
 * What observe found: the cloud object itself travels with it to update, delete and afterObserve.
 * `Delta` is what the kind's observe computed of how the cloud object differs from the spec (its
 * typed plan, ACK's delta): update receives it instead of computing it again.
 */
export type Observed<Ext, Status, Delta = undefined> = ObservedObject<Ext, Status> & (undefined extends Delta ? { delta?: Delta } : { delta: Delta });

interface ObservedObject<Ext, Status> {
  exists: true;
  /** The cloud object as read in this pass. */
  external: Ext;
  externalId: string;
  /** Status fields mirrored from the cloud object. */
  status: Status;
  /** The cloud object is usable (e.g. the API says active). */
  ready: boolean;
  /** Why it is not ready yet: a Ready reason such as Creating or Updating, plus a message. */
  readyReason?: string;
  readyMessage?: string;
  /** The cloud object matches the spec. */
  upToDate: boolean;
  /** What differs, for the Synced message and the Event. */
  diff?: string;
  /**
   * What the spec asks that the API cannot do (e.g. an adopted database in another region),
   * every one found, most important first (problems()): Synced=False with the first one's
   * reason and a message naming them all, and no update is sent. Empty: none.
   */
  unfixable?: readonly Problem[];
  /** When to look again; the reconciler picks a default from readiness otherwise. */
  pollMillis?: number;
}

/**
 * Nothing to observe. `gone` says why, when the kind knows (e.g. the database a snapshot
 * belonged to no longer exists): the condition it reports if the object was recorded.
 * `blocked` says the object cannot be seen from here and must not be presumed gone (e.g. the
 * credentials now name another account): nothing is created, recreated or deleted, and
 * Ready and Synced say why, until it clears.
 */
export type Observation<Ext, Status, Delta = undefined> =
  | {
    exists: false; gone?: { reason: string; message: string };
    /** `letGo`: being deleted, the resource lets go of it (its finalizer removed, the cloud object left alone), as it is not provably its own. */
    blocked?: { reason: string; message: string; letGo?: boolean };
  }
  | Observed<Ext, Status, Delta>;

/** Not now: what a create waits for (an API limit, a busy parent), reported as Ready=False until it clears. */
export interface Deferral {
  reason: string;
  message: string;
  /** Status fields to show meanwhile (e.g. phase: Waiting). */
  status?: Record<string, unknown>;
  /** A look again even if nothing wakes it (default: the ready poll). */
  retryAfterMillis?: number;
}

export interface Created {
  /** The new object's id; absent when the API does not say (it is found on the next observe). */
  externalId?: string;
  /** Status fields to record at once (e.g. the id under the kind's own field name). */
  status?: Record<string, unknown>;
  /** When the new object is first worth a look (e.g. its first health check is due); sooner otherwise. */
  lookAfterMillis?: number;
}

export interface AfterObserve {
  /** Status fields to merge. */
  status?: Record<string, unknown>;
  /**
   * What this pass just did took the cloud object out of service (e.g. a restore): Ready says so,
   * and the connection Secret is left as it is until an observation after it.
   */
  notReady?: { reason: string; message: string };
  /** Something the spec asks for cannot be done (e.g. a request whose outcome is unknown). */
  notSynced?: { reason: string; message: string };
  /** Look again sooner than the observation said (e.g. an action just started). */
  pollMillis?: number;
}

/** What every kind does with its cloud object: look at it (a read-only kind does only this). */
export interface ExternalReader<Spec, Ext, Status, Delta = undefined> {
  /**
   * Refuses (throws a TerminalError) what the spec names by id that this object may not name
   * (e.g. adopting with a token every namespace shares, where the admin has not allowed it).
   * Asked before anything else is decided of a named id, whether another resource records it
   * included: a refusal says nothing of what exists elsewhere.
   */
  admit?(m: Managed<Spec>): void;
  observe(m: Managed<Spec>, signal: AbortSignal): Promise<Observation<Ext, Status, Delta>>;
  /** Work that follows a successful observation (e.g. one-shot request tokens), before the Secret is published. */
  afterObserve?(m: Managed<Spec>, observed: Observed<Ext, Status, Delta>, signal: AbortSignal): Promise<AfterObserve | undefined>;
  /**
   * Whether the calls this object's passes make are contended now (e.g. its account's call
   * budget is nearly spent): a settled object's next routine look then waits one more interval,
   * so the budget goes first to what is not Ready yet. Cheap and sending nothing.
   */
  contended?(m: Managed<Spec>): boolean;
}

/** A create may go ahead, with what readyToCreate prepared for it (e.g. the fork it checked): handed to create in the same pass. */
export interface ReadyToCreate<Prepared> {
  prepared: Prepared;
}

/** A kind that manages its cloud object: creates, changes and deletes it too. */
export interface ExternalClient<Spec, Ext, Status, Delta = undefined, Prepared = unknown> extends ExternalReader<Spec, Ext, Status, Delta> {
  /**
   * Asked before a create is announced and sent: a Deferral waits (the API's limits are a
   * queue, not a failure: nothing is sent to find out); undefined, or what it prepared for the
   * create (ReadyToCreate), goes ahead.
   */
  readyToCreate?(m: Managed<Spec>, signal: AbortSignal): Promise<Deferral | ReadyToCreate<Prepared> | undefined>;
  /**
   * What a create about to be sent targets (e.g. its label, its account), recorded with the
   * create-pending mark before it is sent: a later pass looks for exactly that, whatever the
   * spec says by then.
   */
  intent?(m: Managed<Spec>): Record<string, string>;
  /** `prepared`: what readyToCreate returned for this create, in this pass. */
  create(m: Managed<Spec>, signal: AbortSignal, prepared?: Prepared): Promise<Created>;
  update(m: Managed<Spec>, observed: Observed<Ext, Status, Delta>, signal: AbortSignal): Promise<void>;
  /** Resolves `gone: true` once the cloud object no longer exists. */
  delete(m: Managed<Spec>, observed: Observed<Ext, Status, Delta>, signal: AbortSignal): Promise<{ gone: boolean }>;
}

/** Whether a kind's external client manages (writes) its cloud object, or only reads it. */
export const canWrite = <Spec, Ext, Status, Delta>(external: ExternalReader<Spec, Ext, Status, Delta>): external is ExternalClient<Spec, Ext, Status, Delta> => "create" in external;

/** What the owned connection Secret holds now (decoded), as the runtime's cache has it. */
export interface PublishedConnection {
  data: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

export interface ConnectionDetails {
  data: Record<string, string>;
  /** The Secret's type (default Opaque), e.g. servicebinding.io/mysql; a Secret of another type is replaced (the type is immutable). */
  type?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * A kind that hands applications connection details (crossplane's ConnectionPublisher): the
 * kind says what goes in the Secret; the runtime writes it (owned, labelled, only on change)
 * and reads it back for the next pass.
 */
export interface ConnectionSource<Spec, Ext, Status> {
  secretName(m: Managed<Spec>): string;
  /** The details to publish, or undefined when there is nothing to publish yet. */
  details(m: Managed<Spec>, observed: Observed<Ext, Status, unknown>, published: PublishedConnection | undefined, signal: AbortSignal): Promise<ConnectionDetails | undefined>;
}

/** Where referenced or watched objects live: one of the reads the kind's definition declares (its own type and the operator's other kinds need none: `kindRead`). */
export type Target = Read;

/**
 * A reference to other objects in the same namespace (a snapshot's databaseRef, a TLS Secret).
 * The runtime indexes who refers to what, reconciles the referrers when a referenced object
 * changes, resolves references before observe and decodes each object found once per pass.
 */
export interface ReferenceDefinition<Spec, V> {
  /** The name of the referrers index, and of this reference in messages. */
  name: string;
  target: Target;
  /** Names (same namespace) the spec refers to. */
  names(spec: Spec): string[];
  /** What the kind works with, made of an object found (never a cast of another kind's object). */
  decode(obj: KubeObject): Decoded<V>;
  /**
   * What the kind works with when the object was found but its content cannot be read (`why`:
   * e.g. it is larger than the operator keeps of such an object). Default: not ready, saying why.
   */
  unreadable?(why: string): Decoded<V>;
  /** Condition reasons; default ReferenceNotFound / ReferenceNotReady. */
  reasons?: { notFound?: string; notReady?: string };
  /** Appended to the not-found message: what the referenced object must be (e.g. its type). */
  notFoundHint?: string;
  /** Whether this pass needs the reference resolved (default: yes, except while deleting). */
  required?(m: Managed<Spec>): boolean;
  /**
   * Whether a change of a referenced object's view (`before` → `after`) concerns this referrer
   * (default: every change does); its creation and deletion always do.
   */
  wakes?(referrer: ManagedObject, before: Decoded<V>, after: Decoded<V>): boolean;
  /**
   * Names the object's status records it depends on (e.g. the credentials its cloud object was
   * created with): resolved too (never required), their changes wake it, and they are kept
   * protected like the spec's.
   */
  recorded?(obj: ManagedObject): string[];
  /**
   * The referenced objects must outlive their referrers (e.g. a token without which a cloud
   * object can never be deleted): a finalizer stays on each while anything refers to it.
   */
  protect?: boolean;
}

/** A reference with typed access to what it resolved in a pass. */
export interface Reference<Spec, V = unknown> extends ReferenceDefinition<Spec, V> {
  /** What `name` resolved to in this pass; undefined when it was not found (or not asked for). */
  get(m: { refs: ResolvedRefs }, name: string): Decoded<V> | undefined;
  /** The usable value `name` resolved to in this pass, if any. */
  value(m: { refs: ResolvedRefs }, name: string): V | undefined;
  /** Every usable value of this pass, by name. */
  values(m: { refs: ResolvedRefs }): ReadonlyMap<string, V>;
}

/** Declares a reference: what the runtime resolves and decodes, and how the kind reads it back typed. */
export function reference<Spec, V>(definition: ReferenceDefinition<Spec, V>): Reference<Spec, V> {
  // The one place decoded values regain their type: only this reference's decode put them there.
  const get = (m: { refs: ResolvedRefs }, name: string): Decoded<V> | undefined => m.refs[definition.name]?.get(name)?.decoded as Decoded<V> | undefined;
  return {
    ...definition,
    get,
    value: (m, name) => get(m, name)?.value,
    values: (m) => {
      const out = new Map<string, V>();
      for (const name of m.refs[definition.name]?.keys() ?? []) {
        const value = get(m, name)?.value;
        if (value !== undefined) out.set(name, value);
      }
      return out;
    },
  };
}

/** Another resource whose changes concern this kind's objects, and which of them. */
export interface Watch {
  /** A read the kind declares; one its gate leaves off wakes nothing. */
  target: Target;
  /** Keys (namespace/name) of this kind's objects an event on `obj` concerns. */
  map(obj: KubeObject): string[];
  /** Whether an update changed what the kind reads (e.g. a Node's addresses, not its heartbeat); default: every update does. */
  changed?(obj: KubeObject, old: KubeObject): boolean;
}

export interface ManagedKind<Spec, Ext, Status, Delta = undefined> {
  type: ResourceType;
  /** Parses and defaults the spec; throws (e.g. a ZodError) when it is invalid. */
  parseSpec(raw: unknown): Spec;
  policies(spec: Spec): Policies;
  /**
   * How the kind reaches its cloud object: an ExternalClient manages it; an ExternalReader only
   * mirrors it (a read-only kind: always observed, never created, changed or deleted, and
   * never holding a finalizer).
   */
  external: ExternalClient<Spec, Ext, Status, Delta> | ExternalReader<Spec, Ext, Status, Delta>;
  poll: PollIntervals;
  references?: Reference<Spec>[];
  connection?: ConnectionSource<Spec, Ext, Status>;
  watches?: Watch[];
  /**
   * The `spec.requests.recreate` token: a cloud object that vanished is never replaced silently
   * (ExternalResourceGone); a new token creates a new one, once.
   */
  recreateToken?(spec: Spec): string | undefined;
  /** The existing cloud object the spec names to adopt (e.g. spec.databaseId), as an external id. */
  namedId?(spec: Spec): string | undefined;
  /**
   * Late initialization on adoption: the cloud object (as observe found it) as spec fields.
   * Asked in Manage mode on the first pass bound to an object the spec names by id (namedId);
   * the runtime writes to the spec, once, the fields the user's spec leaves unset, so nothing
   * the user did not write is ever sent as a default. Only the mapping is the kind's.
   */
  lateInit?(external: Ext): LateInit;
  /** The Synced reason when the recorded id and what names another disagree (e.g. DatabaseIdMismatch). */
  idMismatchReason?: string;
  /**
   * The id an operator before status.externalId existed recorded, as the status it wrote then
   * confirms it (e.g. status.id equals the annotation): undefined where it does not, so a
   * forged annotation is never taken over.
   */
  legacyId?(obj: ManagedObject): string | undefined;
  /**
   * What the object's work depends on that may be slow for a while without the rest being so
   * (e.g. the Linode account it acts in: one account's API may answer late or 429): the
   * controller's workers are shared fairly among these flows, so one cannot hold them all.
   * Cheap: asked each time the object is queued. Default: the controller's (ControllerOptions.flowOf).
   */
  flow?(obj: ManagedObject): string;
  /**
   * The object is gone from the cluster, whatever its deletion policy: what the kind keeps of it
   * (by its cloud id, by its name) is dropped. Its delete dropped that with the cloud object;
   * Retain and Observe leave the cloud object, and nothing of the resource may stay behind.
   * `externalId`: the cloud id it recorded, unless another of the kind's objects records it too.
   */
  forget?(obj: ManagedObject, externalId: string | undefined): void;
}

/** A cloud object as spec fields (top-level), for late initialization on adoption. */
export interface LateInit {
  /**
   * Each field the kind can fill, with the object's value as a user would write it (checked
   * against the kind's schema before it is written). undefined: the object has none, which an
   * unset field says already (e.g. no VPC).
   */
  fields: Record<string, unknown>;
  /**
   * Fields whose value the spec cannot hold at all (not just a value the schema refuses, which
   * the runtime finds itself), each with what the object has there: e.g. an https config, whose
   * certificate only Linode holds. Adopting with such a field unset is refused (CannotExpress).
   */
  inexpressible?: Record<string, string>;
}

// The runtime handles every kind the same way; the kind's type parameters stay inside it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyManagedKind = ManagedKind<any, any, any, any>;

/**
 * What a kind builds: a ManagedKind whose spec parser and policies may be left to the runtime
 * (kind-defaults.ts: the definition's spec schema; deletionPolicy and managementPolicy read from
 * the spec, Delete and Manage where it has none), as may its recreate token (spec.requests.recreate).
 */
export type KindParts<Spec, Ext, Status, Delta = undefined> = Omit<ManagedKind<Spec, Ext, Status, Delta>, "parseSpec" | "policies"> & Partial<Pick<ManagedKind<Spec, Ext, Status, Delta>, "parseSpec" | "policies">>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as AnyManagedKind: kinds of any spec are listed together
export type AnyKindParts = KindParts<any, any, any, any>;

/** Read handles a kind receives when it is built. */
export interface KindStores {
  /** This kind's own objects. */
  self: ReadStore<ManagedObject>;
  /** Another of the operator's kinds' objects (no declaration needed: the kinds' rules grant each to every kind). */
  kind(t: ResourceType): ReadStore<ManagedObject>;
  /**
   * The cache of a read the kind's definition declares (throws at start otherwise); undefined
   * while the operator setting that grants it (its gate) is off. `T` is the caller's view of the
   * type's objects, as for any other store.
   */
  read<T extends KubeObject = KubeObject>(r: Read): ReadStore<T> | undefined;
}

export interface KindContext<Deps> {
  deps: Deps;
  stores: KindStores;
  events: EventRecorder;
  /** Reconciles one of this kind's objects ("namespace/name") soon: the kind saw its cloud object change. */
  wake: (key: string) => void;
  /** This kind's objects (any namespace the operator watches) whose recorded cloud id is `id`. */
  recorders: (id: string) => ManagedObject[];
}

/** What `src/resources/index.ts` lists: a kind's type and how to build it from shared parts. */
export interface KindModule<Deps> {
  type: ResourceType;
  /**
   * What Kubernetes sees of it: its `reads` are all the kind may read besides its own objects and
   * the operator's other kinds (nothing when absent); its `spec` schema parses the spec unless the
   * kind brings its own parseSpec.
   */
  definition?: Partial<Pick<KindDefinition, "reads" | "spec">>;
  build(ctx: KindContext<Deps>): AnyKindParts;
}

/** The name of the index on a kind's own store that maps a referenced object to its referrers. */
export const referrersIndex = (reference: string): string => `ref:${reference}`;

/**
 * The oldest a cached read of this object's cloud object may be: `maxAgeMillis`, and begun no
 * earlier than `managedSince`. Never 0 (a list shared by every object taken over at once, not a
 * GET each).
 */
export function cachedReadAge(m: Pick<Managed<unknown>, "managedSince">, maxAgeMillis: number, now = Date.now()): number {
  return m.managedSince === undefined ? maxAgeMillis : Math.max(1, Math.min(maxAgeMillis, now - m.managedSince));
}
