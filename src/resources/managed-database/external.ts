// ManagedDatabase ↔ Linode: how to observe, create, update and delete a managed MySQL or
// PostgreSQL cluster, plus what follows an observation (one-shot request tokens and the
// connection Secret). Everything else — finalizers, conditions, backoff — is the runtime's.
import type { Database, DatabaseCreateRequest, LinodeClient } from "../../linode/index.ts";
import { decodeCaCertificate } from "../../linode/index.ts";
import type { KubeClient, ResourceType } from "../../kube/client.ts";
import { Reasons } from "../../runtime/conditions.ts";
import { RetryAfterError, TerminalError } from "../../runtime/errors.ts";
import type { EventRecorder } from "../../runtime/events.ts";
import type { AfterObserve, ExternalClient, Managed, Observation } from "../../runtime/managed.ts";
import { publishSecret, type CachedSecret } from "../../runtime/owned-secrets.ts";
import { derivedLabel } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { normalizeAllowList } from "./allow-list.ts";
import { connectionSecretData, type ConnectionInfo } from "./connection-secret.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { diffDatabase, isEmptyDiff } from "./diff.ts";
import type { ManagedDatabaseSpec, ManagedDatabaseStatus } from "./schema.ts";

type Status = Omit<ManagedDatabaseStatus, "conditions" | "observedGeneration">;
type Observed = Extract<Observation<Status>, { exists: true }>;

export interface ManagedDatabaseDeps {
  linode: LinodeClient;
  kube: KubeClient;
  cache: DatabaseListCache;
  events: EventRecorder;
  type: ResourceType;
  /** The connection Secret as the operator's cache has it. */
  cachedSecret: (namespace: string, name: string) => CachedSecret | undefined;
  poll: { pendingMillis: number; readyMillis: number };
}

/** After a credentials reset the API serves the new password within seconds: re-read it for this long. */
const CREDENTIALS_REFRESH_MILLIS = 120_000;
const DATABASE_ID_ANNOTATION = "linode.operator.dev/database-id";

const deletable = new Set(["active", "failed", "degraded"]);
const pendingReason: Record<string, string> = {
  provisioning: Reasons.Creating, updating: Reasons.Updating, resizing: Reasons.Updating,
  backing_up: "BackingUp", restoring: "Restoring", resuming: Reasons.Updating,
};

/** A credentials reset finished recently: the new password may still be on its way. */
function resetIsRecent(m: Managed<ManagedDatabaseSpec>): boolean {
  const at = Date.parse((m.obj.status?.lastRequests as { resetCredentials?: { completedAt?: string } } | undefined)?.resetCredentials?.completedAt ?? "");
  return Number.isFinite(at) && Date.now() - at < CREDENTIALS_REFRESH_MILLIS;
}

export const labelFor = (m: Managed<ManagedDatabaseSpec>): string => m.spec.label ?? derivedLabel(m.key.namespace, m.key.name);
export const secretNameFor = (m: Managed<ManagedDatabaseSpec>): string => m.spec.connectionSecret?.name ?? `${m.key.name}-connection`;

export class ManagedDatabaseExternal implements ExternalClient<ManagedDatabaseSpec, Status> {
  private readonly d: ManagedDatabaseDeps;
  /** The cloud object each reconcile observed, for update/delete/afterObserve in the same pass. */
  private readonly seen = new WeakMap<Managed<ManagedDatabaseSpec>, Database>();

  constructor(deps: ManagedDatabaseDeps) {
    this.d = deps;
  }

  async observe(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<Observation<Status>> {
    const { engine, databaseId } = m.spec;
    const label = labelFor(m);
    const known = databaseId ?? (m.externalId !== undefined ? Number(m.externalId) : undefined);
    const settled = m.obj.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
    let db = known !== undefined
      // A settled database may be read from a list a fraction of a poll interval old (one list
      // serves every database's poll); one still changing is read fresh.
      ? await linodeCall("reading the database", () => this.d.cache.get(engine, known, settled ? this.d.poll.readyMillis / 5 : 1_000, signal))
      : undefined;
    if (db === undefined && databaseId !== undefined) {
      if (m.policies.management === "Observe") return { exists: false };
      throw new TerminalError(Reasons.NotFound, `spec.databaseId ${String(databaseId)}: no ${engine} database with this id exists`);
    }
    // Not recorded yet (or gone): a create whose response was lost left a database with our label.
    db ??= await linodeCall("looking the database up by label", () => this.d.linode.databases.engine(engine).findByLabel(label, { signal }));
    if (db === undefined) return { exists: false };
    this.seen.set(m, db);

    const diff = diffDatabase(m.spec, databaseId !== undefined && m.spec.label === undefined ? db.label : label, db);
    const active = db.status === "active";
    return {
      exists: true,
      externalId: String(db.id),
      status: statusOf(db),
      ready: active,
      ...(active ? {} : { readyReason: pendingReason[db.status] ?? Reasons.Unavailable, readyMessage: `the database is ${db.status}` }),
      upToDate: isEmptyDiff(diff),
      diff: diff.summary,
      ...(active && isEmptyDiff(diff) && !resetIsRecent(m) ? {} : { pollMillis: this.d.poll.pendingMillis }),
    };
  }

  async create(m: Managed<ManagedDatabaseSpec>, signal: AbortSignal): Promise<{ externalId: string }> {
    const s = m.spec;
    const req: DatabaseCreateRequest = {
      label: labelFor(m), region: s.region, type: s.type, version: s.version,
      clusterSize: s.clusterSize, encrypted: s.encrypted, sslConnection: s.sslConnection,
      allowList: normalizeAllowList(s.allowList),
      ...(s.replicationType !== undefined ? { replicationType: s.replicationType } : {}),
      ...(s.replicationCommitType !== undefined ? { replicationCommitType: s.replicationCommitType } : {}),
    };
    const db = await linodeCall("creating the database", () => this.d.linode.databases.engine(s.engine).create(req, { signal }));
    this.d.cache.invalidate(s.engine);
    return { externalId: String(db.id) };
  }

  async update(m: Managed<ManagedDatabaseSpec>, _observed: Observed, signal: AbortSignal): Promise<void> {
    const db = this.seen.get(m);
    if (db === undefined) return;
    if (db.status !== "active") {
      throw new RetryAfterError(Reasons.Waiting, `the database is ${db.status}; changes are applied once it is active`, this.d.poll.pendingMillis);
    }
    const diff = diffDatabase(m.spec, labelFor(m), db);
    if (isEmptyDiff(diff)) return;
    await linodeCall(`updating ${diff.summary}`, () => this.d.linode.databases.engine(m.spec.engine).update(db.id, diff.update, { signal }));
    this.d.cache.invalidate(m.spec.engine, db.id);
  }

  async delete(m: Managed<ManagedDatabaseSpec>, _observed: Observed, signal: AbortSignal): Promise<{ gone: boolean }> {
    const db = this.seen.get(m);
    if (db === undefined) return { gone: true };
    if (!deletable.has(db.status)) {
      throw new RetryAfterError(Reasons.Waiting, `the database is ${db.status}; it is deleted as soon as its status allows`, this.d.poll.pendingMillis);
    }
    try {
      await linodeCall("deleting the database", () => this.d.linode.databases.engine(m.spec.engine).delete(db.id, { signal }));
    } catch (err) {
      if ((err as { kind?: string }).kind === "notFound") return { gone: true };
      throw err;
    }
    this.d.cache.invalidate(m.spec.engine, db.id);
    return { gone: false };
  }

  async afterObserve(m: Managed<ManagedDatabaseSpec>, _observed: Observed, signal: AbortSignal): Promise<AfterObserve | undefined> {
    const db = this.seen.get(m);
    if (db === undefined) return undefined;
    const status: Record<string, unknown> = {};
    const lastRequests = await this.performRequests(m, db, signal);
    if (lastRequests !== undefined) status.lastRequests = lastRequests;
    // An action just ran: its effects (new password, updating → active) show up soon.
    const pollMillis = lastRequests !== undefined ? this.d.poll.pendingMillis : undefined;

    const secretName = secretNameFor(m);
    const published = await this.publishConnection(m, db, secretName, signal);
    if (published) status.connectionSecretName = secretName;
    if (!published && db.status === "active") {
      return { status, notReady: { reason: "SecretPending", message: "the connection Secret is not published yet" }, ...(pollMillis !== undefined ? { pollMillis } : {}) };
    }
    return { status, ...(pollMillis !== undefined ? { pollMillis } : {}) };
  }

  /** Performs each request token not yet recorded in status, once; returns the new record. */
  private async performRequests(m: Managed<ManagedDatabaseSpec>, db: Database, signal: AbortSignal): Promise<ManagedDatabaseStatus["lastRequests"] | undefined> {
    const want = m.spec.requests;
    const done = (m.obj.status?.lastRequests ?? {}) as NonNullable<ManagedDatabaseStatus["lastRequests"]>;
    if (want === undefined || m.policies.management === "Observe") return undefined;
    const api = this.d.linode.databases.engine(m.spec.engine);
    const next = { ...done };
    const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    const needActive = (what: string): void => {
      if (db.status !== "active") throw new RetryAfterError(Reasons.Waiting, `${what} waits until the database is active (it is ${db.status})`, this.d.poll.pendingMillis);
    };
    if (want.resetCredentials !== undefined && want.resetCredentials !== done.resetCredentials?.token) {
      needActive("the credentials reset");
      await linodeCall("resetting the credentials", () => api.resetCredentials(db.id, { signal }));
      next.resetCredentials = { token: want.resetCredentials, completedAt: now() };
      this.d.events.normal(m.obj, "CredentialsReset", "ResetCredentials", `reset the root password (request ${want.resetCredentials})`);
    }
    if (want.patch !== undefined && want.patch !== done.patch?.token) {
      needActive("patching");
      await linodeCall("patching", () => api.patch(db.id, { signal }));
      next.patch = { token: want.patch, completedAt: now() };
      this.d.cache.invalidate(m.spec.engine, db.id);
      this.d.events.normal(m.obj, "Patched", "Patch", `applied operating-system patches (request ${want.patch})`);
    }
    return JSON.stringify(next) === JSON.stringify(done) ? undefined : next;
  }

  /** Publishes the connection Secret; returns whether it is in place (written now or already). */
  private async publishConnection(m: Managed<ManagedDatabaseSpec>, db: Database, secretName: string, signal: AbortSignal): Promise<boolean> {
    const host = db.hosts.primary;
    if (host === null || db.port === null) return false;
    const cached = this.d.cachedSecret(m.key.namespace, secretName);
    const fromCache = cached?.metadata.annotations?.[DATABASE_ID_ANNOTATION] === String(db.id) && !resetIsRecent(m) ? secretValues(cached) : undefined;
    let creds: { username: string; password: string; caPem: string };
    if (fromCache !== undefined) {
      creds = fromCache;
    } else {
      if (db.status !== "active") return cached !== undefined;
      const api = this.d.linode.databases.engine(m.spec.engine);
      const [c, ssl] = await Promise.all([
        linodeCall("reading the credentials", () => api.getCredentials(db.id, { signal })),
        linodeCall("reading the CA certificate", () => api.getSslCertificate(db.id, { signal })),
      ]);
      creds = { username: c.username, password: c.password, caPem: ssl.caCertificate === null ? "" : decodeCaCertificate(ssl.caCertificate) };
    }
    const info: ConnectionInfo = {
      engine: m.spec.engine, host, port: db.port, ...creds, sslConnection: db.sslConnection,
      ...(db.hosts.secondary !== null ? { secondaryHost: db.hosts.secondary } : {}),
    };
    let data: Record<string, string>;
    try {
      data = connectionSecretData(info, m.spec.connectionSecret?.extraData);
    } catch (err) {
      throw new TerminalError(Reasons.InvalidSpec, (err as Error).message);
    }
    const written = await publishSecret(this.d.kube, cached, {
      owner: m.obj, ownerType: this.d.type, name: secretName, stringData: data,
      ...(m.spec.connectionSecret?.labels !== undefined ? { labels: m.spec.connectionSecret.labels } : {}),
      annotations: { ...m.spec.connectionSecret?.annotations, [DATABASE_ID_ANNOTATION]: String(db.id) },
    });
    if (written) this.d.events.normal(m.obj, "ConnectionSecretPublished", "PublishSecret", `wrote the connection Secret ${secretName}`);
    return true;
  }
}

function secretValues(s: CachedSecret): { username: string; password: string; caPem: string } | undefined {
  const d = s.data ?? {};
  const get = (k: string): string | undefined => (d[k] === undefined ? undefined : Buffer.from(d[k], "base64").toString("utf8"));
  const username = get("username");
  const password = get("password");
  const caPem = get("ca.crt");
  return username !== undefined && password !== undefined && caPem !== undefined ? { username, password, caPem } : undefined;
}

function statusOf(db: Database): Status {
  return {
    id: db.id,
    label: db.label,
    status: db.status,
    hosts: {
      ...(db.hosts.primary !== null ? { primary: db.hosts.primary } : {}),
      ...(db.hosts.secondary !== null ? { secondary: db.hosts.secondary } : {}),
    },
    ...(db.port !== null ? { port: db.port } : {}),
    engine: db.engine,
    version: db.version,
    region: db.region,
    type: db.type,
    clusterSize: db.clusterSize,
    ...(db.totalDiskSizeGb !== null ? { totalDiskSizeGb: db.totalDiskSizeGb } : {}),
    ...(db.usedDiskSizeGb !== null ? { usedDiskSizeGb: db.usedDiskSizeGb } : {}),
  };
}
