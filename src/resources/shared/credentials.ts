// Which Linode account an object acts in: the token its spec.credentialsRef names (a Secret in
// its own namespace), else the operator's own token. Everything a kind keeps about the cloud
// (list caches, readers, the client's rate-limit budget) is built per token, so two accounts
// never see each other's objects or spend each other's limits. A token is never logged: an
// account is known by a hash of it.
import { createHash } from "node:crypto";
import type { LinodeClient } from "../../linode/index.ts";
import { TerminalError } from "../../runtime/errors.ts";
import type { ConnectionSource, ExternalClient, Managed, Reference, SecretObject } from "../../runtime/managed.ts";
import type { ReadStore, Selectors } from "../../runtime/stores.ts";
import { KindReasons } from "./constants.ts";
import type { CredentialsRef } from "./schema.ts";

export const CREDENTIALS_REFERENCE = "credentials";
/**
 * Token Secrets carry this label (as Argo CD's repository Secrets carry theirs): only they are
 * cached, not every Secret of the watched namespaces (an all-namespaces install would otherwise
 * hold the cluster's Secrets in memory).
 */
export const CREDENTIALS_LABEL = "linode.operator.dev/credentials";
export const CREDENTIALS_SECRETS: Selectors = { labelSelector: `${CREDENTIALS_LABEL}=true` };
const HOW_TO = `kubectl create secret generic NAME --from-literal=token=... && kubectl label secret NAME ${CREDENTIALS_LABEL}=true`;

export interface Account {
  /** "operator", or a hash of the token: what caches are keyed by and what logs may show. */
  id: string;
  linode: LinodeClient;
}

export interface AccountsOptions {
  /** The operator's own client; absent when it has no token and every object must name one. */
  operator?: LinodeClient;
  /** A client for another token (its own rate limits and connections). */
  clientFor(token: string): LinodeClient;
  /** Namespaces whose objects must name their credentials (no fallback to the operator's token). */
  requireRef(namespace: string): boolean;
}

const tokenId = (token: string): string => `token-${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;

/** The Linode clients of every account the operator acts in, one per token. */
export class LinodeAccounts {
  private readonly opts: AccountsOptions;
  private readonly byToken = new Map<string, Account>();
  /**
   * The token each object (by uid) last acted with: a resource deleted together with its
   * namespace may lose its credentials Secret first, and still has a cloud object to delete.
   */
  private readonly lastToken = new Map<string, string>();

  /** The operator's own account, when it has a token. */
  readonly operator: Account | undefined;

  constructor(opts: AccountsOptions) {
    this.opts = opts;
    this.operator = opts.operator === undefined ? undefined : { id: "operator", linode: opts.operator };
  }


  requireRef(namespace: string): boolean {
    return this.opts.requireRef(namespace);
  }

  forToken(token: string): Account {
    const id = tokenId(token);
    let account = this.byToken.get(id);
    if (account === undefined) {
      account = { id, linode: this.opts.clientFor(token) };
      this.byToken.set(id, account);
    }
    return account;
  }

  remember(uid: string | undefined, token: string): void {
    if (uid !== undefined) this.lastToken.set(uid, token);
  }

  remembered(uid: string | undefined): string | undefined {
    return uid === undefined ? undefined : this.lastToken.get(uid);
  }

  /** Closes the clients made for tokens (the operator's own client is its owner's to close). */
  async close(): Promise<void> {
    await Promise.all([...this.byToken.values()].map((a) => a.linode.close()));
    this.byToken.clear();
  }
}

/** The spec's credentialsRef as a reference: resolved before observe, and its Secret's changes wake the object. */
export function credentialsReference<Spec extends { credentialsRef?: CredentialsRef | undefined }>(): Reference<Spec> {
  return {
    name: CREDENTIALS_REFERENCE,
    target: { secrets: CREDENTIALS_SECRETS },
    names: (spec) => (spec.credentialsRef !== undefined ? [spec.credentialsRef.name] : []),
    reasons: { notFound: KindReasons.CredentialsNotFound, notReady: KindReasons.CredentialsInvalid },
    notFoundHint: `(a Secret labelled ${CREDENTIALS_LABEL}=true holding the Linode API token: ${HOW_TO})`,
  };
}

/**
 * The account `ref` (or, without one, the operator) stands for, for object `m`. Throws a
 * TerminalError with CredentialsNotFound / CredentialsInvalid, retried when the Secret changes.
 */
export function accountOf(accounts: LinodeAccounts, secrets: ReadStore<SecretObject>, m: Managed<unknown>, ref: CredentialsRef | undefined): Account {
  const namespace = m.key.namespace;
  if (ref === undefined) {
    const operator = accounts.operator;
    if (accounts.requireRef(namespace) || operator === undefined) {
      const why = operator === undefined ? "the operator has no Linode token of its own" : `the operator requires every resource in namespace ${namespace} to bring its own Linode token`;
      throw new TerminalError(KindReasons.CredentialsNotFound, `${why}: set spec.credentialsRef to a Secret in this namespace holding the token (key token)`);
    }
    return operator;
  }
  const uid = m.obj.metadata.uid;
  const secret = secrets.get(namespace, ref.name);
  if (secret === undefined) {
    const last = m.obj.metadata.deletionTimestamp !== undefined ? accounts.remembered(uid) : undefined;
    if (last !== undefined) return accounts.forToken(last);
    throw new TerminalError(KindReasons.CredentialsNotFound, `credentials Secret ${ref.name} (labelled ${CREDENTIALS_LABEL}=true) not found in namespace ${namespace}; the cloud object is not touched until it exists: ${HOW_TO}`);
  }
  const encoded = secret.data?.[ref.key];
  const token = encoded === undefined ? "" : Buffer.from(encoded, "base64").toString("utf8").trim();
  if (token === "" || /\s/.test(token)) {
    throw new TerminalError(KindReasons.CredentialsInvalid, `credentials Secret ${ref.name} has ${encoded === undefined ? "no" : "no usable"} ${ref.key} key: it must hold one Linode API token`);
  }
  accounts.remember(uid, token);
  return accounts.forToken(token);
}

/** Builds `make(account)` once per account, on first use. */
export class PerAccount<T> {
  private readonly make: (account: Account) => T;
  private readonly built = new Map<string, T>();

  constructor(make: (account: Account) => T) {
    this.make = make;
  }

  get(account: Account): T {
    let value = this.built.get(account.id);
    if (value === undefined) {
      value = this.make(account);
      this.built.set(account.id, value);
    }
    return value;
  }
}

/** An ExternalClient that sends each call to the one built for the object's account. */
export function perAccountExternal<Spec, Ext, Status>(
  account: (m: Managed<Spec>) => Account,
  client: (account: Account) => ExternalClient<Spec, Ext, Status>,
): ExternalClient<Spec, Ext, Status> {
  const of = (m: Managed<Spec>): ExternalClient<Spec, Ext, Status> => client(account(m));
  return {
    observe: (m, signal) => of(m).observe(m, signal),
    readyToCreate: async (m, signal) => of(m).readyToCreate?.(m, signal),
    create: (m, signal) => of(m).create(m, signal),
    update: (m, observed, signal) => of(m).update(m, observed, signal),
    delete: (m, observed, signal) => of(m).delete(m, observed, signal),
    afterObserve: async (m, observed, signal) => of(m).afterObserve?.(m, observed, signal),
  };
}

/** A ConnectionSource whose details are read with the object's account. */
export function perAccountConnection<Spec, Ext, Status>(
  secretName: (m: Managed<Spec>) => string,
  account: (m: Managed<Spec>) => Account,
  source: (account: Account) => ConnectionSource<Spec, Ext, Status>,
): ConnectionSource<Spec, Ext, Status> {
  return {
    // The name is the spec's: known without credentials (a conflict is reported even without them).
    secretName,
    details: (m, observed, published, signal) => source(account(m)).details(m, observed, published, signal),
  };
}
