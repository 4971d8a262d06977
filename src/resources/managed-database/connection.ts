// What the connection Secret of a ManagedDatabase holds, and where its credentials come from:
// the published Secret while it is known to be current, else the API's credentials and CA
// certificate. Current means: the same database, not changed since the credentials were read
// (its `updated` time, from the list every poll already reads, is recorded on the Secret: a
// reset made anywhere moves it), and, after a reset of ours, the new password already read
// (it takes seconds to appear: until it differs from the published one, it is read again).
// `updated` has one-second resolution, so a change later in the second a read saw leaves it
// unmoved: a reset whose new password appears within the second it was sent in, or two resets
// landing close together (one sent by a replica killed before it recorded it, one by its
// successor). So credentials read anew for a database already published (its `updated` moved,
// or a reset of ours) are marked unconfirmed, and read again until a read at least a second
// after the first agrees: one more read for each such change. Not when `updated` moved with no
// reset of ours (a backup, a resize) and the API served the read seconds after `updated`'s
// second (its Date header): a change that read missed would have moved `updated` again.
// The CA certificate is read with the first credentials of a database and again whenever its
// credentials change; a move of `updated` that leaves them alone keeps the published one.
// The runtime writes and reads back the Secret.
import type { Database, LinodeClient } from "../../linode/index.ts";
import { decodeCaCertificate } from "../../linode/index.ts";
import { ConditionReasons as R, TerminalError, type ConnectionDetails, type ConnectionSource, type Managed, type Observed, type PublishedConnection } from "../../runtime/contract.ts";
import { servedSecondsAfter } from "../shared/api-time.ts";
import { nameWithSuffix } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { bindingSecretType, connectionSecretData } from "./connection-secret.ts";
import type { ObservedStatus } from "./external.ts";
import { recentReset } from "./requests.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

/** Which database the published credentials belong to. */
const DATABASE_ID_ANNOTATION = "linode.operator.dev/database-id";
/** The database's `updated` time when its credentials were read. */
const CREDENTIALS_AS_OF_ANNOTATION = "linode.operator.dev/credentials-as-of";
/** The reset token whose new password the Secret holds. */
const RESET_ANNOTATION = "linode.operator.dev/credentials-reset";
/** "true" while the credentials the Secret holds wait for a read CONFIRM_AFTER_MILLIS after them to agree. */
const UNCONFIRMED_ANNOTATION = "linode.operator.dev/credentials-unconfirmed";
/** When the credentials the Secret holds were first read (this process's clock, epoch milliseconds). */
const READ_AT_ANNOTATION = "linode.operator.dev/credentials-read-at";
/** `updated`'s resolution: a read this long after another saw every change made in that one's second. */
const CONFIRM_AFTER_MILLIS = 1_000;
/** How long a CA certificate read without its credentials waits for the pass that reads them (a deferred pass comes back within a budget window). */
const KEEP_CA_MILLIS = 5 * 60_000;

interface Credentials { username: string; password: string; caPem: string }

export const connectionSecretName = (m: Managed<ManagedDatabaseSpec>): string => m.spec.connectionSecret?.name ?? nameWithSuffix(m.key.name, "-connection");

export class DatabaseConnection implements ConnectionSource<ManagedDatabaseSpec, Database, ObservedStatus> {
  private readonly linode: LinodeClient;
  /** CA certificates read by a pass whose credentials read did not go through (readBoth), by database id. */
  private readonly keptCa = new Map<number, { pem: string; until: number }>();

  constructor(linode: LinodeClient) {
    this.linode = linode;
  }

  /**
   * A database's first credentials and CA certificate, read together. The call budget can take
   * the first of the two calls and hold the second back (its last token spent: the pass is
   * deferred): the CA certificate is asked first, so what goes alone is the certificate, kept
   * here for the next pass, which then reads the credentials only. Neither is read twice. The
   * certificate is public; a password is never kept here.
   */
  private async readBoth<C>(id: number, readCa: () => Promise<string>, readCredentials: () => Promise<C>): Promise<[string, C]> {
    const now = Date.now();
    // Expired ones go at every first read: a database deleted meanwhile leaves nothing behind for long.
    for (const [k, v] of this.keptCa) if (v.until <= now) this.keptCa.delete(k);
    const kept = this.keptCa.get(id);
    this.keptCa.delete(id);
    const ca = kept !== undefined ? Promise.resolve(kept.pem) : readCa();
    const [caRead, credentialsRead] = await Promise.allSettled([ca, readCredentials()]);
    if (credentialsRead.status === "rejected") {
      if (caRead.status === "fulfilled") this.keepCa(id, caRead.value);
      throw credentialsRead.reason;
    }
    if (caRead.status === "rejected") throw caRead.reason;
    return [caRead.value, credentialsRead.value];
  }

  private keepCa(id: number, pem: string): void {
    this.keptCa.set(id, { pem, until: Date.now() + KEEP_CA_MILLIS });
  }

  /** CA certificates kept for the pass that reads their credentials (the cache-entries gauge). */
  get keptCaCertificates(): number {
    return this.keptCa.size;
  }

  secretName(m: Managed<ManagedDatabaseSpec>): string {
    return connectionSecretName(m);
  }

  async details(m: Managed<ManagedDatabaseSpec>, observed: Observed<Database, ObservedStatus>, published: PublishedConnection | undefined, signal: AbortSignal): Promise<ConnectionDetails | undefined> {
    const db = observed.external;
    const host = db.hosts.primary;
    if (host === null || db.port === null) return undefined;
    const reset = recentReset(m);
    const unmoved = published?.annotations[DATABASE_ID_ANNOTATION] === String(db.id)
      && published.annotations[CREDENTIALS_AS_OF_ANNOTATION] === db.updated;
    // Unconfirmed credentials are read again once a second has passed since their first read, not
    // before (a read time that is not one, or in the future, as someone edited it: at once).
    const readAge = Date.now() - Number(published?.annotations[READ_AT_ANNOTATION]);
    const timed = Number.isFinite(readAge) && readAge >= 0;
    const confirmDue = published?.annotations[UNCONFIRMED_ANNOTATION] === "true" && !(timed && readAge < CONFIRM_AFTER_MILLIS);
    const current = unmoved && !confirmDue && (reset === undefined || published.annotations[RESET_ANNOTATION] === reset);
    let creds = current ? credentialsOf(published) : undefined;
    let asOf = published?.annotations[CREDENTIALS_AS_OF_ANNOTATION];
    let resetSeen = published?.annotations[RESET_ANNOTATION];
    let unconfirmed = published?.annotations[UNCONFIRMED_ANNOTATION];
    let readAt = published?.annotations[READ_AT_ANNOTATION];
    if (creds === undefined) {
      // The API serves credentials only for an active database; until then what is published stays.
      if (db.status !== "active") return undefined;
      const api = this.linode.databases.engine(m.spec.engine);
      // The same database whose `updated` moved (a backup, a resize, a reset): its CA certificate
      // is the one published unless its credentials changed too, so it is read only then — a
      // backup of a busy database costs one call, not two.
      const sameDatabase = published?.annotations[DATABASE_ID_ANNOTATION] === String(db.id) ? credentialsOf(published) : undefined;
      const readCa = (): Promise<string> => linodeCall("reading the CA certificate", () => api.getSslCertificate(db.id, { signal })).then((ssl) => (ssl.caCertificate === null ? "" : decodeCaCertificate(ssl.caCertificate)));
      const readCredentials = () => linodeCall("reading the credentials", () => api.getCredentials(db.id, { signal }));
      let caPem: string;
      let c: Awaited<ReturnType<typeof readCredentials>>;
      if (sameDatabase === undefined) [caPem, c] = await this.readBoth(db.id, readCa, readCredentials);
      else {
        c = await readCredentials();
        caPem = sameDatabase.username === c.username && sameDatabase.password === c.password ? sameDatabase.caPem : await readCa();
      }
      creds = { username: c.username, password: c.password, caPem };
      asOf = db.updated;
      const changed = published === undefined || published.data.password !== c.password;
      // The reset took effect once the password differs from the one published before it.
      if (reset !== undefined && changed) resetSeen = reset;
      // Once written, the mark stays as "false" (an annotation left out of a write is not removed).
      const settle = unconfirmed === undefined ? undefined : "false";
      // Its age as this pass began: the read just made came later still.
      if (!changed && unmoved && timed && readAge >= CONFIRM_AFTER_MILLIS) {
        // Unchanged, at the same `updated`, a second after it was first read: nothing hides behind it.
        unconfirmed = settle;
      } else if (changed || !unmoved || !timed) {
        // Read anew (or its time unset, or edited into no time or the future): confirmed by a read
        // a second from now, but a database's first credentials, which no earlier change can hide behind.
        // Taken once the answer is in: the confirming read then waits a second past when the API served this one.
        readAt = String(Date.now());
        const hidden = reset !== undefined || (sameDatabase !== undefined && !servedSecondsAfter(c.servedAt, db.updated));
        unconfirmed = hidden ? "true" : settle;
      }
    }
    let data: Record<string, string>;
    try {
      data = connectionSecretData({
        engine: m.spec.engine, host, port: db.port, ...creds, sslConnection: db.sslConnection,
        caPath: m.spec.connectionSecret?.caPath ?? `/bindings/${m.key.name}/ca.crt`,
        ...(db.hosts.secondary !== null ? { secondaryHost: db.hosts.secondary } : {}),
      }, m.spec.connectionSecret?.extraData);
    } catch (err) {
      throw new TerminalError(R.InvalidSpec, (err as Error).message);
    }
    return {
      data,
      type: bindingSecretType(m.spec.engine),
      ...(m.spec.connectionSecret?.labels !== undefined ? { labels: m.spec.connectionSecret.labels } : {}),
      annotations: {
        ...m.spec.connectionSecret?.annotations, [DATABASE_ID_ANNOTATION]: String(db.id),
        ...(asOf !== undefined ? { [CREDENTIALS_AS_OF_ANNOTATION]: asOf } : {}),
        ...(resetSeen !== undefined ? { [RESET_ANNOTATION]: resetSeen } : {}),
        ...(unconfirmed !== undefined ? { [UNCONFIRMED_ANNOTATION]: unconfirmed } : {}),
        ...(readAt !== undefined ? { [READ_AT_ANNOTATION]: readAt } : {}),
      },
    };
  }
}

/** The credentials a published connection Secret holds, if it holds them all. */
export function credentialsOf(published: PublishedConnection | undefined): Credentials | undefined {
  const d = published?.data;
  // A Valkey Secret (type redis) has no username key when the database has no user name.
  const username = d?.username ?? (d?.type === "redis" ? "" : undefined);
  const password = d?.password;
  const caPem = d?.["ca.crt"];
  return username !== undefined && password !== undefined && caPem !== undefined ? { username, password, caPem } : undefined;
}
