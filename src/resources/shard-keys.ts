// What replicas sharing the work (--shards) hash to place an object, with --shard-by account:
// the Linode account its work spends, known by its token's id (a hash, as status.account.id),
// so every object of one account, whatever its namespace, is on one shard and one account's
// call budget is spent by one replica. The leader's sharder and each shard compute it alike,
// from the object and the token Secret it names (a label a tenant writes never decides it).
// Which Secret: spec.credentialsRef, else the one status recorded, else (a snapshot, a pool)
// its database's, else the operator's own token: all of those objects are one key.
import type { KubeApi, KubeObject, SecretObject } from "../kube/types.ts";
import { isNotFound } from "../kube/errors.ts";
import type { ManagedObject } from "../runtime/managed.ts";
import { tokenId } from "../linode/token-id.ts";
import { managedDatabaseType } from "./managed-database/public.ts";
import { CREDENTIALS_LABEL, recordedAccount } from "./shared/credentials.ts";
import { credentialsRefSchema, specRefName } from "./shared/schema.ts";

/** The key of every object acting with the operator's own token. */
export const OPERATOR_KEY = "operator";

export interface ShardKeyOptions {
  /** The operator's own token's id: a Secret holding that token is the operator's account. */
  operatorTokenId?: string;
  /** How long a token's id (and a database's key) is reused before it is read again: a rotation moves an object within it. */
  ttlMillis?: number;
  now?: () => number;
}

interface Cached { key: string; at: number }

export class AccountShardKeys {
  private readonly kube: KubeApi;
  private readonly opts: ShardKeyOptions;
  private readonly secrets = new Map<string, Cached>();
  private readonly databases = new Map<string, Cached>();
  private sweptAt = 0;

  constructor(kube: KubeApi, opts: ShardKeyOptions = {}) {
    this.kube = kube;
    this.opts = opts;
  }

  /** Token Secrets and databases remembered (a gauge: bounded by what is named). */
  get size(): number {
    return this.secrets.size + this.databases.size;
  }

  /** The account key of an object of any of the operator's kinds. */
  async keyOf(obj: KubeObject): Promise<string> {
    const namespace = obj.metadata.namespace ?? "";
    const own = credentialsRefSchema.safeParse((obj as { spec?: { credentialsRef?: unknown } }).spec?.credentialsRef);
    if (own.success) return this.secretKey(namespace, own.data.name, own.data.key);
    const recorded = recordedAccount(obj);
    if (recorded !== undefined) return recorded.credentialsRef === undefined ? OPERATOR_KEY : this.secretKey(namespace, recorded.credentialsRef.name, recorded.credentialsRef.key);
    const database = specRefName(obj, "databaseRef");
    return database !== undefined ? this.databaseKey(namespace, database) : OPERATOR_KEY;
  }

  private fresh(map: Map<string, Cached>, id: string): string | undefined {
    const c = map.get(id);
    const now = this.now();
    if (c === undefined || now - c.at > (this.opts.ttlMillis ?? 30_000)) return undefined;
    return c.key;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private async databaseKey(namespace: string, name: string): Promise<string> {
    const id = `${namespace}/${name}`;
    const cached = this.fresh(this.databases, id);
    if (cached !== undefined) return cached;
    let key: string;
    try {
      const db = await this.kube.getCustom<ManagedObject>(managedDatabaseType, { namespace, name });
      // A database names no database: its own key.
      key = await this.keyOf({ ...db, spec: { ...(db.spec ?? {}), databaseRef: undefined } });
    } catch (err) {
      // No such database (yet): the snapshot's own key until it exists; it waits for it anyway.
      if (!isNotFound(err)) throw err;
      key = OPERATOR_KEY;
    }
    this.databases.set(id, { key, at: this.now() });
    this.forgetStale();
    return key;
  }

  /**
   * The id of the token a Secret holds; a Secret missing, not labelled as credentials (never
   * read) or without the key is known by its name: its objects fail on it anyway.
   */
  private async secretKey(namespace: string, name: string, field: string): Promise<string> {
    const id = `${namespace}/${name}/${field}`;
    const cached = this.fresh(this.secrets, id);
    if (cached !== undefined) return cached;
    const byName = `secret:${id}`;
    let key = byName;
    try {
      const secret: SecretObject = await this.kube.getSecret({ namespace, name });
      const value = secret.metadata.labels?.[CREDENTIALS_LABEL] === "true" && Object.hasOwn(secret.data ?? {}, field) ? secret.data?.[field] : undefined;
      const token = value !== undefined ? Buffer.from(value, "base64").toString("utf8").trim() : "";
      if (token !== "" && !/\s/.test(token)) {
        const tid = tokenId(token);
        key = tid === this.opts.operatorTokenId ? OPERATOR_KEY : tid;
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.secrets.set(id, { key, at: this.now() });
    this.forgetStale();
    return key;
  }

  /**
   * Entries past their time are dropped, at most once a time-to-live: what a namespace names
   * (however many Secrets or databases) is held no longer than that after it was last read.
   */
  private forgetStale(): void {
    const ttl = this.opts.ttlMillis ?? 30_000;
    const now = this.now();
    if (now - this.sweptAt < ttl) return;
    this.sweptAt = now;
    for (const map of [this.secrets, this.databases]) for (const [k, c] of map) if (now - c.at > ttl) map.delete(k);
  }
}
