// Which Linode account an object acts in: the token its spec.credentialsRef names (a Secret in
// its own namespace), else the operator's own token. Everything a kind keeps about the cloud
// (list caches, readers, the client's rate-limit budget) is built per token, so two accounts
// never see each other's objects or spend each other's limits. A token is never logged or
// recorded: an account is known by a hash of it.
//
// The account a cloud object lives in is recorded on its resource (status.account: the hash,
// and the Secret the token came from) and never switches by itself:
// - a token that changed but still sees the object is the same account (a rotation): the record
//   follows it;
// - one that does not see it is never taken to mean the object is gone (AccountChanged): nothing
//   is created, recreated or deleted, in either account, until the credentials point back;
// - a resource being deleted acts with the Secret its record names (kept from being deleted
//   first by the in-use finalizer), so a namespace deletion or a switched reference never
//   orphans what it created.
// Adopting an existing object by id with the operator's own token is for namespaces the admin
// allows: on a shared token every namespace reaches every object of the account.
//
// Status is the operator's record, but a Role that may write `*/status` could forge it (the
// chart's admission policy refuses that; not every cluster has it). So the cloud object a record
// names is acted on (changed, deleted, its credentials published) only when this resource
// provably owns it: status.externalIdProof, an HMAC of the resource's uid and the cloud id under
// the install's ownership key (a Secret only the operator reads: runtime/ownership-key.ts; where
// it cannot have one, the account's token), which no tenant can compute; or, where there is none yet (a create whose answer was lost, a record written by
// an earlier version, a token rotated, a restored resource), the cloud object's label is the one
// this resource creates with and it was created after this resource (and after the create it
// announced); or the spec names it by id where naming is allowed. Anything else is
// OwnershipUnproven: nothing is read from it into status, changed or deleted.
import { createHmac, createSecretKey } from "node:crypto";
import { tokenId, type LinodeClient } from "../../linode/index.ts";
import type { CacheEntries, Untrack } from "../../metrics/cache-entries.ts";
import { reference, TerminalError, type ConnectionSource, type ExternalClient, type ExternalReader, type KubeObject, type Managed, type ManagedObject, type Observation, type Observed, type Reference, type Read, type SecretObject, type Selectors, secretsType } from "../../runtime/contract.ts";
import { parseApiTime } from "./api-time.ts";
import { KindTimings } from "./constants.ts";

import { accountRecordSchema, specRefName, type AccountRecord, type CredentialsRef } from "./schema.ts";
import { SharedReasons } from "./reasons.ts";

export type { AccountRecord } from "./schema.ts";

export const CREDENTIALS_REFERENCE = "credentials";
/**
 * Token Secrets carry this label (as Argo CD's repository Secrets carry theirs): only they are
 * watched, not every Secret of the watched namespaces.
 */
export const CREDENTIALS_LABEL = "linode.operator.dev/credentials";
/**
 * The most a token Secret's data may hold (keys and base64 values) for the operator to read it: a
 * Linode token is 64 characters. Anyone may label a Secret, so the label says nothing of its
 * size: a larger one is CredentialsInvalid, saying so, and costs the operator nothing.
 */
export const CREDENTIALS_MAX_BYTES = 4096;
/**
 * Watched as metadata only (a label anyone can set selects them); a Secret's token is read by
 * name while a resource names it (by its credentialsRef, or its record), so a changed token is
 * still read again and wakes the resources that use it.
 */
export const CREDENTIALS_SECRETS: Selectors = { labelSelector: `${CREDENTIALS_LABEL}=true`, content: { byName: { maxBytes: CREDENTIALS_MAX_BYTES } } };

/** The token Secrets a credentialsRef names: every kind with accounts declares this read. */
export const credentialsRead: Read = {
  type: secretsType, scope: "namespaces", selectors: CREDENTIALS_SECRETS,
  why: `token Secrets spec.credentialsRef names (labelled ${CREDENTIALS_LABEL}=true): listed and watched as metadata only, the one named read by name and protected by a finalizer`,
};
const HOW_TO = `kubectl create secret generic NAME --from-literal=token=... && kubectl label secret NAME ${CREDENTIALS_LABEL}=true`;

/**
 * An account no object records (status.account, or a create announced in it) and unused this
 * long has its client and caches released: long enough for any pass that resolved it to have
 * sent its calls (a create is abandoned after a minute), short enough that a rotated-away
 * token's connections and caches do not outlive the rotation by much.
 */
const UNUSED_RELEASE_MILLIS = 5 * 60_000;
/** An account unused this long is released even while objects record it (they can no longer act with it, e.g. AccountChanged). */
const IDLE_RELEASE_MILLIS = 60 * 60_000;
const SWEEP_MILLIS = 60_000;

/** Where the spec asks an object to live now: the Secret its token comes from, or none (the operator's token). */
export interface AccountSource { credentialsRef?: CredentialsRef | undefined }

export { tokenId } from "../../linode/index.ts";

/** One token's client, and what kinds build on it (released together). */
export class Account {
  /** A hash of the token: what caches are keyed by, what status records and logs may show. */
  readonly id: string;
  readonly linode: LinodeClient;
  /** The operator's own token. */
  readonly operator: boolean;
  lastUsed = Date.now();
  private readonly parts = new Map<object, unknown>();
  private readonly entries: CacheEntries | undefined;
  private readonly untracks: Untrack[] = [];
  private readonly releasing = new AbortController();
  private readonly sign: (text: string) => string;

  /** `key`: what proofs are made with (the install's ownership key; else this account's token). */
  constructor(id: string, linode: LinodeClient, operator: boolean, entries: CacheEntries | undefined, key: string | Uint8Array) {
    this.id = id;
    this.linode = linode;
    this.operator = operator;
    this.entries = entries;
    // The key stays inside this closure: the HMAC shows nothing of it. Made a KeyObject once:
    // from raw bytes, every HMAC would import the key again (about 8 times the HMAC itself, on
    // every look at every object).
    const secret = createSecretKey(typeof key === "string" ? Buffer.from(key, "utf8") : key);
    this.sign = (text) => createHmac("sha256", secret).update(text).digest("base64url").slice(0, 32);
  }

  /** The proof that `text` was written by the operator (whoever holds the key). */
  prove(text: string): string {
    return this.sign(text);
  }

  /** What `owner` built for this account, if it has (nothing is built). */
  peek(owner: object): unknown {
    return this.parts.get(owner);
  }

  /** What `owner` built for this account, built on first use. */
  part<T>(owner: object, make: () => T): T {
    if (!this.parts.has(owner)) this.parts.set(owner, make());
    return this.parts.get(owner) as T;
  }

  /**
   * Counts a map a part keeps under `map` in linode_operator_cache_entries (summed over
   * accounts), until the account is released.
   */
  track(map: string, size: () => number): void {
    if (this.entries !== undefined) this.untracks.push(this.entries.track(map, size));
  }

  /** Aborted when the account is released: what its parts run on their own (a sweep's timer) stops. */
  get released(): AbortSignal {
    return this.releasing.signal;
  }

  /** Forgets the parts and their tracked maps, and closes the client. */
  async release(): Promise<void> {
    this.releasing.abort();
    for (const untrack of this.untracks.splice(0)) untrack();
    this.parts.clear();
    await this.linode.close();
  }
}

export interface AccountsOptions {
  /** The operator's own token and client; absent when every object must name one. */
  operator?: { token: string; client: LinodeClient };
  /** A client for another token (its own rate limits and connections). */
  clientFor(token: string): LinodeClient;
  /** Namespaces whose objects must name their credentials (no fallback to the operator's token). */
  requireRef(namespace: string): boolean;
  /** Namespaces whose objects may adopt an existing cloud object by id with the operator's token. */
  adoptionAllowed?(namespace: string): boolean;
  /** How long a token's client no object records is kept after its last use (default 5 min). */
  unusedReleaseMillis?: number;
  /** How long an unused token's client is kept even while objects record it (default an hour). */
  idleReleaseMillis?: number;
  /** Where the accounts held, and the maps their parts keep, are counted. */
  entries?: CacheEntries;
  /** The install's ownership key (runtime/ownership-key.ts): proofs are made with it; without it, with each account's token. */
  proofKey?: Uint8Array | undefined;
}

/** The Linode clients of every account the operator acts in, one per token. */
export class LinodeAccounts {
  private readonly opts: AccountsOptions;
  private readonly byToken = new Map<string, Account>();
  private readonly sweeper: NodeJS.Timeout;
  /** What says which accounts objects record (one per kind, or one for all). */
  private readonly users: (() => Iterable<string>)[] = [];

  /** The operator's own account, when it has a token. */
  readonly operator: Account | undefined;

  constructor(opts: AccountsOptions) {
    this.opts = opts;
    this.operator = opts.operator === undefined ? undefined : new Account(tokenId(opts.operator.token), opts.operator.client, true, opts.entries, opts.proofKey ?? opts.operator.token);
    this.sweeper = setInterval(() => { void this.releaseIdle(); }, Math.min(SWEEP_MILLIS, this.unusedMillis, this.idleMillis));
    this.sweeper.unref();
    opts.entries?.track("linode.accounts", () => this.byToken.size);
  }

  requireRef(namespace: string): boolean {
    return this.opts.requireRef(namespace);
  }

  adoptionAllowed(namespace: string): boolean {
    return this.opts.adoptionAllowed?.(namespace) ?? false;
  }

  forToken(token: string): Account {
    const id = tokenId(token);
    if (this.operator?.id === id) return this.touch(this.operator);
    let account = this.byToken.get(id);
    if (account === undefined) {
      account = new Account(id, this.opts.clientFor(token), false, this.opts.entries, this.opts.proofKey ?? token);
      this.byToken.set(id, account);
    }
    return this.touch(account);
  }

  /**
   * Adds a source of the account ids objects record (accountsRecordedBy over a kind's cache):
   * an account one of them names is not released for being unused a while, as it is where
   * that object lives (a Ready object may not be looked at for a drift window or two).
   */
  usedBy(ids: () => Iterable<string>): void {
    this.users.push(ids);
  }

  /** How many tokens' clients are held (the operator's excepted). */
  get held(): number {
    return this.byToken.size;
  }

  /** The account an object's status recorded, if its client is held (none is made). */
  recordedBy(obj: ManagedObject): Account | undefined {
    const id = recordedAccount(obj)?.id;
    if (id === undefined) return undefined;
    return this.operator?.id === id ? this.operator : this.byToken.get(id);
  }

  /** Whether the client of the account with this id (a token's hash) is held. */
  holds(id: string): boolean {
    return this.byToken.has(id);
  }

  /**
   * Closes and forgets the clients of tokens no longer used (a rotated-away token once every
   * object has recorded the new one, a team gone): unused for 5 minutes and recorded by no
   * object, or unused for an hour. Never one with a call still in flight (waiting for the
   * budget included), whoever made it. An object that needs one again gets a new client and
   * fresh caches.
   */
  async releaseIdle(now = Date.now()): Promise<void> {
    if (this.byToken.size === 0) return;
    const recorded = new Set<string>();
    for (const ids of this.users) for (const id of ids()) recorded.add(id);
    const gone = [...this.byToken.values()].filter((a) => {
      if (a.linode.inFlight > 0) return false;
      const unused = now - a.lastUsed;
      return unused >= this.idleMillis || (unused >= this.unusedMillis && !recorded.has(a.id));
    });
    for (const a of gone) this.byToken.delete(a.id);
    await Promise.all(gone.map((a) => a.release().catch(() => undefined)));
  }

  /** Closes the clients made for tokens (the operator's own client is its owner's to close). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.byToken.values()].map((a) => a.release()));
    this.byToken.clear();
  }

  private get unusedMillis(): number {
    return this.opts.unusedReleaseMillis ?? UNUSED_RELEASE_MILLIS;
  }

  private get idleMillis(): number {
    return this.opts.idleReleaseMillis ?? IDLE_RELEASE_MILLIS;
  }

  private touch(a: Account): Account {
    a.lastUsed = Date.now();
    return a;
  }
}

/**
 * The accounts these objects record: the one each cloud object lives in (status.account), and
 * the one a create was announced in and not seen yet (status.createPending.account).
 */
export function accountsRecordedBy(objects: Iterable<ManagedObject>): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    const id = recordedAccount(o)?.id;
    if (id !== undefined) out.add(id);
    const pending = (o.status?.createPending as { account?: unknown } | undefined)?.account;
    if (typeof pending === "string") out.add(pending);
  }
  return out;
}

/** What an object's status recorded of its account, if anything (valid). */
export function recordedAccount(obj: ManagedObject | undefined): AccountRecord | undefined {
  const parsed = accountRecordSchema.safeParse(obj?.status?.account);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The flow an object's work belongs to in its controller's queue (ManagedKind.flow): the
 * credentials it acts with, as the object itself says — spec.credentialsRef, else what its status
 * recorded, else `inherits` (e.g. a snapshot's database), else the operator's own token — so the
 * workers are shared fairly among accounts and one whose API answers late or 429 cannot hold
 * them all. Known by the Secret, not the token: nothing is read or hashed per queued key; two
 * Secrets holding one token are two flows (sharing that token's budget, as they would anyway).
 */
export function credentialsFlow(obj: ManagedObject, inherits?: ManagedObject): string {
  const own = specRefName(obj, "credentialsRef");
  if (own !== undefined) return `${obj.metadata.namespace ?? ""}/${own}`;
  const recorded = recordedAccount(obj);
  if (recorded !== undefined) return recorded.credentialsRef === undefined ? OPERATOR_FLOW : `${obj.metadata.namespace ?? ""}/${recorded.credentialsRef.name}`;
  return inherits !== undefined ? credentialsFlow(inherits) : OPERATOR_FLOW;
}
/** The flow of objects acting with the operator's own token (not a Secret's name: it has no slash). */
const OPERATOR_FLOW = "operator";

/** A token Secret's data, decoded once per pass (which key holds the token is the referrer's to say). */
export type SecretData = Readonly<Record<string, string>>;

const secretData = (obj: KubeObject): SecretData => Object.fromEntries(Object.entries((obj as SecretObject).data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));

/**
 * The spec's credentialsRef as a reference: resolved before observe, its Secret's changes wake
 * the object, and it (with the Secrets `recorded` names: the one the status recorded, and any
 * the kind inherits its account from) is kept from being deleted while the object exists.
 */
export function credentialsReference<Spec extends { credentialsRef?: CredentialsRef | undefined }>(inherited?: (obj: ManagedObject) => AccountSource[]): Reference<Spec, SecretData> {
  const refName = (source: AccountSource | undefined): string[] => (source?.credentialsRef !== undefined ? [source.credentialsRef.name] : []);
  return reference<Spec, SecretData>({
    name: CREDENTIALS_REFERENCE,
    target: credentialsRead,
    names: (spec) => refName(spec),
    decode: (obj) => ({ value: secretData(obj) }),
    recorded: (obj) => [...refName(recordedAccount(obj)), ...(inherited?.(obj) ?? []).flatMap(refName)],
    protect: true,
    reasons: { notFound: SharedReasons.CredentialsNotFound, notReady: SharedReasons.CredentialsInvalid },
    notFoundHint: `(a Secret labelled ${CREDENTIALS_LABEL}=true holding the Linode API token: ${HOW_TO})`,
  });
}

interface Resolved { account: Account; record: AccountRecord }

/** A function that builds one value per account, kept with the account (and released with it). */
export class PerAccount<T> {
  private readonly make: (account: Account) => T;

  constructor(make: (account: Account) => T) {
    this.make = make;
  }

  get(account: Account): T {
    return account.part(this, () => this.make(account));
  }

  /** What was built for this account, if anything was (nothing is built). */
  peek(account: Account | undefined): T | undefined {
    return account?.peek(this) as T | undefined;
  }
}

export interface AccountScopeOptions<Spec> {
  accounts: LinodeAccounts;
  /** Where the spec asks the object to live now. */
  wanted(m: Managed<Spec>): AccountSource;
  /** Accounts the object may take its credentials from besides its own spec and record (e.g. its database's). */
  inherited?(obj: ManagedObject): AccountSource[];
  /** The existing cloud object the spec names to adopt, if any. */
  namedId?(spec: Spec): string | undefined;
  /**
   * The existing cloud object this pass adopts on purpose, when its id is more than the spec
   * says (a connection pool: its label, in the database its databaseRef resolves to); asked
   * instead of namedId, and held to the same rules.
   */
  adopting?(m: Managed<Spec>): string | undefined;
  /** An existing cloud object the spec names by id to make the new one from (a fork's source), if any: allowed where adoption is. */
  sourceId?(spec: Spec): { id: string; field: string } | undefined;
  /** What the cloud object is called in messages, e.g. "database". */
  what: string;
  /**
   * What proves a cloud object without a valid proof was created by this resource: its label and
   * creation time, and the labels this resource creates with (the spec's, or the derived one).
   */
  identify(m: Managed<Spec>, external: unknown): { label: string; created: string; labels: string[] };
  /** The spec field that names a cloud object to adopt, for messages (e.g. "spec.databaseId"). */
  idField?: string;
}

export const OWNERSHIP_PROOF_FIELD = "externalIdProof";

/**
 * The account an object acts in, with its record checked: the ExternalClient and
 * ConnectionSource a kind builds per account, wrapped so every call goes to the right one.
 */
export class AccountScope<Spec extends AccountSource> {
  private readonly o: AccountScopeOptions<Spec>;
  /** The kind's credentials reference: the token Secrets this scope reads, as the runtime resolved them. */
  readonly credentials: Reference<Spec, SecretData>;

  constructor(opts: AccountScopeOptions<Spec>) {
    this.o = opts;
    this.credentials = credentialsReference<Spec>((obj) => opts.inherited?.(obj) ?? []);
  }

  /**
   * The account this pass acts in: what the spec wants; while the object is being deleted, the
   * one its record names (the Secret it was reached with), so it is deleted where it lives.
   */
  of(m: Managed<Spec>): Account {
    return this.resolved(m).account;
  }

  /** An ExternalClient whose every call goes to the object's account (the account recorded with what it creates). */
  external<Ext, Status, Delta = undefined>(client: (account: Account) => ExternalClient<Spec, Ext, Status, Delta>): ExternalClient<Spec, Ext, Status, Delta> {
    const of = (m: Managed<Spec>): ExternalClient<Spec, Ext, Status, Delta> => client(this.of(m));
    return {
      ...this.reader(client),
      readyToCreate: async (m, signal) => {
        const source = this.o.sourceId?.(m.spec);
        if (source !== undefined) this.mayName(m, `making the new ${this.o.what} from the existing one with id ${source.id} (${source.field})`);
        return of(m).readyToCreate?.(m, signal);
      },
      intent: (m) => {
        const r = this.resolved(m);
        return { ...client(r.account).intent?.(m), account: r.record.id };
      },
      create: async (m, signal, prepared) => {
        const r = this.resolved(m);
        const created = await client(r.account).create(m, signal, prepared);
        const proof = created.externalId !== undefined ? { [OWNERSHIP_PROOF_FIELD]: r.account.prove(this.claim(m, created.externalId)) } : {};
        return { ...created, status: { ...created.status, account: r.record, ...proof } };
      },
      update: (m, observed, signal) => of(m).update(m, observed, signal),
      delete: (m, observed, signal) => of(m).delete(m, observed, signal),
    };
  }

  /** An ExternalReader (a read-only kind's) whose calls go to the object's account. */
  reader<Ext, Status, Delta = undefined>(client: (account: Account) => ExternalReader<Spec, Ext, Status, Delta>): ExternalReader<Spec, Ext, Status, Delta> {
    return {
      admit: (m) => {
        const named = this.named(m);
        if (m.obj.metadata.deletionTimestamp === undefined && named !== undefined && m.externalId === undefined) this.mayName(m, `adopting the existing ${this.o.what} ${named} by id`);
      },
      observe: (m, signal) => this.observe(m, client, signal),
      afterObserve: async (m, observed, signal) => client(this.of(m)).afterObserve?.(m, observed, signal),
      contended: (m) => {
        try {
          return this.of(m).linode.budgetNearlySpent();
        } catch {
          // Its credentials do not resolve: nothing of an account is contended.
          return false;
        }
      },
    };
  }

  /** A ConnectionSource whose details are read in the object's account. */
  connection<Ext, Status>(secretName: (m: Managed<Spec>) => string, source: (account: Account) => ConnectionSource<Spec, Ext, Status>): ConnectionSource<Spec, Ext, Status> {
    return {
      // The name is the spec's: known without credentials (a conflict is reported even without them).
      secretName,
      details: (m, observed, published, signal) => source(this.of(m)).details(m, observed, published, signal),
    };
  }

  private async observe<Ext, Status, Delta>(m: Managed<Spec>, client: (account: Account) => ExternalReader<Spec, Ext, Status, Delta>, signal: AbortSignal): Promise<Observation<Ext, Status, Delta>> {
    const deleting = m.obj.metadata.deletionTimestamp !== undefined;
    const r = this.resolved(m);
    const named = this.named(m);
    // Asked by the runtime already (admit); again here for a caller that observes without it.
    if (!deleting && named !== undefined && m.externalId === undefined) this.mayName(m, `adopting the existing ${this.o.what} ${named} by id`);
    const observed = await client(r.account).observe(m, signal);
    if (observed.exists) {
      const proof = r.account.prove(this.claim(m, observed.externalId));
      const unproven = this.unproven(m, observed, proof);
      if (unproven !== undefined) return { exists: false, blocked: { reason: SharedReasons.OwnershipUnproven, message: unproven, letGo: true } };
      return { ...observed, status: { ...observed.status, account: r.record, [OWNERSHIP_PROOF_FIELD]: proof } };
    }
    // Not to be seen with these credentials: gone, or in the account they no longer reach?
    const recorded = recordedAccount(m.obj)?.id;
    const was = m.externalId !== undefined ? recorded : m.createPending?.account;
    if (was !== undefined && was !== r.record.id) {
      const where = r.record.credentialsRef !== undefined ? `the token in Secret ${r.record.credentialsRef.name}` : "the operator's own token";
      return {
        exists: false,
        blocked: {
          reason: SharedReasons.AccountChanged,
          message: `the ${this.o.what} ${m.externalId ?? "this resource was creating"} lives in the Linode account recorded in status.account, and ${where} belongs to another account (or cannot see it): nothing is created, changed or deleted in either account. Point spec.credentialsRef back to that account's token to resume; deleting this resource deletes (or retains) it in the recorded account`,
        },
      };
    }
    return observed;
  }

  /** The existing cloud object this pass names to adopt, if any. */
  private named(m: Managed<Spec>): string | undefined {
    return this.o.adopting !== undefined ? this.o.adopting(m) : this.o.namedId?.(m.spec);
  }

  /** What a proof is of: this resource (its uid: a restored or recreated one is another) and the cloud id. */
  private claim(m: Managed<Spec>, externalId: string): string {
    return `linode.operator.dev/owns\u0000${this.o.what}\u0000${m.key.namespace}/${m.key.name}\u0000${m.obj.metadata.uid ?? ""}\u0000${externalId}`;
  }

  /** Why this resource may not act on the cloud object it observed (undefined: it may). */
  private unproven<Ext, Status, Delta>(m: Managed<Spec>, observed: Observed<Ext, Status, Delta>, proof: string): string | undefined {
    if (m.obj.status?.[OWNERSHIP_PROOF_FIELD] === proof) return undefined;
    // Named in the spec where naming is allowed: adopted on purpose.
    if (this.named(m) === observed.externalId) return this.allowedToName(m) ? undefined : this.notOwned(m, observed.externalId);
    const { label, created, labels } = this.o.identify(m, observed.external);
    const made = parseApiTime(created);
    const born = new Date(m.obj.metadata.creationTimestamp ?? Number.NaN).getTime();
    const announced = m.createPending !== undefined ? Date.parse(m.createPending.at) : Number.NaN;
    // Made after this resource was (and after the create it announced, when one was lost: a
    // database renamed to the label meanwhile was made before), with the label it creates with.
    const after = Math.max(Number.isFinite(born) ? born : Number.POSITIVE_INFINITY, Number.isFinite(announced) ? announced : 0) - KindTimings.clockSkewMillis;
    if (labels.includes(label) && Number.isFinite(made) && made >= after) return undefined;
    return this.notOwned(m, observed.externalId);
  }

  private notOwned(m: Managed<Spec>, externalId: string): string {
    return `status.externalId names the ${this.o.what} ${externalId}, which this resource cannot prove it created or was allowed to adopt (no valid status.${OWNERSHIP_PROOF_FIELD}; not made by it after it was created, with its label; not named in ${this.o.idField ?? "its spec"} where adoption is allowed): nothing is read from it, changed in it or deleted from it, and deleting this resource leaves it in place. To manage it on purpose, name it in ${this.o.idField ?? "the spec"} (with spec.credentialsRef, or where the operator's admin allows adoption)`;
  }

  /** Whether this object may name an existing cloud object by id (its own account's token, or where the admin allows). */
  private allowedToName(m: Managed<Spec>): boolean {
    try {
      return !this.resolved(m).account.operator || this.o.accounts.adoptionAllowed(m.key.namespace);
    } catch {
      return false;
    }
  }

  /**
   * Naming an existing cloud object by id (to adopt it, to fork it, a VPC to join, a firewall to
   * attach) with the operator's own token reaches what every namespace on that token shares:
   * allowed only where the admin says. Throws AdoptionNotAllowed, whatever exists under that id.
   */
  mayName(m: Managed<Spec>, doing: string): void {
    if (!this.resolved(m).account.operator || this.o.accounts.adoptionAllowed(m.key.namespace)) return;
    throw new TerminalError(SharedReasons.AdoptionNotAllowed, `${doing} with the operator's own Linode token is not allowed in namespace ${m.key.namespace}: every namespace on that token shares one account, so naming an id would reach objects other teams manage. Nothing was read. Set spec.credentialsRef to a Secret holding your own account's token, or ask the operator's admin to allow adoption here (--adopt-namespaces, chart value adoptNamespaces)`);
  }

  private resolved(m: Managed<Spec>): Resolved {
    const recorded = recordedAccount(m.obj);
    if (m.obj.metadata.deletionTimestamp !== undefined && recorded !== undefined) {
      try {
        return this.resolve(m, recorded, true);
      } catch {
        // The recorded Secret is gone (it was not protected yet): what the spec names now, below.
      }
    }
    return this.resolve(m, this.o.wanted(m), false);
  }

  /**
   * The account `source` stands for, for object `m`. Throws a TerminalError with
   * CredentialsNotFound / CredentialsInvalid, retried when the Secret changes.
   */
  private resolve(m: Managed<Spec>, source: AccountSource, recorded: boolean): Resolved {
    const namespace = m.key.namespace;
    const ref = source.credentialsRef;
    if (ref === undefined) {
      const operator = this.o.accounts.operator;
      // What the operator's token created it may always delete, even where tokens are now required.
      if (operator === undefined || (!recorded && this.o.accounts.requireRef(namespace))) {
        const why = operator === undefined ? "the operator has no Linode token of its own" : `the operator requires every resource in namespace ${namespace} to bring its own Linode token`;
        throw new TerminalError(SharedReasons.CredentialsNotFound, `${why}: set spec.credentialsRef to a Secret in this namespace holding the token (key token)`);
      }
      return { account: operator, record: { id: operator.id } };
    }
    const data = this.credentials.value(m, ref.name);
    if (data === undefined) {
      throw new TerminalError(SharedReasons.CredentialsNotFound, `credentials Secret ${ref.name} (labelled ${CREDENTIALS_LABEL}=true) not found in namespace ${namespace}; the cloud object is not touched until it exists: ${HOW_TO}`);
    }
    // Only the Secret's own keys: a key named `toString` is a key it lacks.
    const held = Object.hasOwn(data, ref.key) ? data[ref.key] : undefined;
    const token = held?.trim() ?? "";
    if (token === "" || /\s/.test(token)) {
      throw new TerminalError(SharedReasons.CredentialsInvalid, `credentials Secret ${ref.name} has ${held === undefined ? "no" : "no usable"} ${ref.key} key: it must hold one Linode API token`);
    }
    const account = this.o.accounts.forToken(token);
    return { account, record: { id: account.id, credentialsRef: { name: ref.name, key: ref.key } } };
  }
}
