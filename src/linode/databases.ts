// Managed databases. MySQL and PostgreSQL expose the same operations under
// /databases/{engine}/instances, so one class serves both, parameterised by engine. Valkey
// (spec 4.234.0, limited availability) is assumed to follow the same pattern
// (/databases/valkey/instances, …/credentials {username, password}, …/ssl): its instance routes
// were not read in the spec; only /databases/valkey/config was.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { CallOptions, Transport } from "./http.ts";
import { httpDate } from "./http-date.ts";
import { listAll, listPage, type ListAllOptions, type ListOptions } from "./listing.ts";
import type { Page } from "./pagination.ts";
import { emptySchema } from "./schemas/common.ts";
import {
  engineConfigCatalogueSchema, backupListSchema, backupSchema, credentialsSchema, databaseListSchema, databaseSchema, databaseTypeListSchema,
  databaseTypeSchema, engineListSchema, engineSchema, sslCertificateSchema, type DatabaseEngine,
} from "./schemas/databases.ts";

export type Database = Camelize<z.output<typeof databaseSchema>>;
export type DatabaseBackup = Camelize<z.output<typeof backupSchema>>;
export type DatabaseCredentials = Camelize<z.output<typeof credentialsSchema>>;
/** Credentials and when the API served them (epoch milliseconds, whole seconds), if it said. */
export type ServedCredentials = DatabaseCredentials & { servedAt?: number };
export type DatabaseSslCertificate = Camelize<z.output<typeof sslCertificateSchema>>;
export type DatabaseEngineInfo = Camelize<z.output<typeof engineSchema>>;
export type DatabaseType = Camelize<z.output<typeof databaseTypeSchema>>;
export type MaintenanceWindow = NonNullable<Database["updates"]>;

/**
 * Which database platform a database is on: `legacy` (rdbms-legacy, the spec's: backups and
 * in-place restore) or `current` (rdbms-default and anything newer: restore by fork, suspend,
 * engine parameters, private networks). A database without the field predates it: legacy.
 */
export type DatabasePlatform = "legacy" | "current";


export const databasePlatform = (db: Pick<Database, "platform">): DatabasePlatform =>
  (db.platform === undefined || db.platform === "rdbms-legacy" ? "legacy" : "current");

export interface MaintenanceWindowInput {
  frequency: "weekly" | "monthly" | (string & {});
  /** Hours (omitted: unchanged). */
  duration?: number;
  /** 0..23 UTC. */
  hourOfDay: number;
  /** 1..7, 1 = Monday. */
  dayOfWeek: number;
  weekOfMonth?: number | null;
}

export interface DatabaseCreateRequest {
  label: string;
  region: string;
  type: string;
  /** Engine version, e.g. "8" or "16"; sent as `engine: "<engine>/<version>"`. */
  version: string;
  /** 1 or 3; the current platform also 2 (dedicated plans only). */
  clusterSize?: 1 | 2 | 3;
  encrypted?: boolean;
  sslConnection?: boolean;
  replicationType?: "none" | "asynch" | "semi_synch" | (string & {});
  /** PostgreSQL only. */
  replicationCommitType?: "on" | "local" | "remote_write" | "remote_apply" | "off" | (string & {});
  allowList?: string[];
  /** Current platform: the VPC subnet the cluster joins. */
  privateNetwork?: PrivateNetworkInput;
  /** Current platform: the engine's parameters. */
  engineConfig?: Record<string, unknown>;
  /** Current platform: a point-in-time restore of `source` into the new cluster (restore is a fork). */
  fork?: ForkInput;
}

export interface ForkInput {
  /** The id of the database to fork (same engine and major version, same account). */
  source: number;
  /** The point in time, as the API writes times (UTC, `2025-01-02T03:04:05`); omitted: the latest. */
  restoreTime?: string;
}

export interface PrivateNetworkInput {
  vpcId: number;
  subnetId: number;
  /** Whether the cluster stays reachable from the internet too (default false). */
  publicAccess?: boolean;
}

export interface DatabaseUpdateRequest {
  label?: string;
  /** Replaces the whole list. */
  allowList?: string[];
  /** Resize (to a larger type only). */
  type?: string;
  updates?: MaintenanceWindowInput;
  /** Current platform: set, replace, or (null) leave the VPC. */
  privateNetwork?: PrivateNetworkInput | null;
  /** Current platform: the parameters to change (the API merges them; null removes one). */
  engineConfig?: Record<string, unknown>;
  /** Current platform: nodes added or removed in place (1, 2 or 3). */
  clusterSize?: 1 | 2 | 3;
  /** Current platform: a major version upgrade in place, e.g. "16". */
  version?: string;
}

export interface SnapshotCreateRequest {
  /** 1..30 ASCII letters or digits. */
  label: string;
  target?: "primary" | "secondary";
}

const instances = (engine: DatabaseEngine): string => `/databases/${engine}/instances`;

export class DatabaseEngineApi {
  readonly engine: DatabaseEngine;
  private readonly transport: Transport;
  private readonly base: string;

  constructor(transport: Transport, engine: DatabaseEngine) {
    this.transport = transport;
    this.engine = engine;
    this.base = instances(engine);
  }

  list(opts?: ListOptions): Promise<Page<Database>> {
    return listPage(this.transport, this.base, {}, databaseListSchema, opts);
  }

  listAll(opts?: ListAllOptions): Promise<Database[]> {
    return listAll(this.transport, this.base, {}, databaseListSchema, opts);
  }

  /** Labels are unique per engine, so at most one match. */
  async findByLabel(label: string, opts?: CallOptions): Promise<Database | undefined> {
    const found = await this.listAll({ ...opts, filter: { label } });
    return found.find((d) => d.label === label);
  }

  get(instanceId: number, opts?: CallOptions): Promise<Database> {
    return this.transport.request({ method: "GET", route: `${this.base}/{instanceId}`, params: { instanceId }, schema: databaseSchema }, opts);
  }

  /** Never retried after an ambiguous failure: look up by label before creating again. */
  create(req: DatabaseCreateRequest, opts?: CallOptions): Promise<Database> {
    const { version, ...rest } = req;
    return this.transport.request({ method: "POST", route: this.base, body: { ...rest, engine: `${this.engine}/${version}` }, schema: databaseSchema }, opts);
  }

  update(instanceId: number, req: DatabaseUpdateRequest, opts?: CallOptions): Promise<Database> {
    return this.transport.request({ method: "PUT", route: `${this.base}/{instanceId}`, params: { instanceId }, body: req, schema: databaseSchema }, opts);
  }

  delete(instanceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: `${this.base}/{instanceId}`, params: { instanceId }, schema: emptySchema }, opts);
  }

  listBackups(instanceId: number, opts?: ListOptions): Promise<Page<DatabaseBackup>> {
    return listPage(this.transport, `${this.base}/{instanceId}/backups`, { instanceId }, backupListSchema, opts);
  }

  listAllBackups(instanceId: number, opts?: ListAllOptions): Promise<DatabaseBackup[]> {
    return listAll(this.transport, `${this.base}/{instanceId}/backups`, { instanceId }, backupListSchema, opts);
  }

  getBackup(instanceId: number, backupId: number, opts?: CallOptions): Promise<DatabaseBackup> {
    return this.transport.request({ method: "GET", route: `${this.base}/{instanceId}/backups/{backupId}`, params: { instanceId, backupId }, schema: backupSchema }, opts);
  }

  deleteBackup(instanceId: number, backupId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: `${this.base}/{instanceId}/backups/{backupId}`, params: { instanceId, backupId }, schema: emptySchema }, opts);
  }

  /** Returns nothing: the API answers `{}`; list backups to find the new snapshot by label. */
  createSnapshot(instanceId: number, req: SnapshotCreateRequest, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/backups`, params: { instanceId }, body: req, schema: emptySchema }, opts);
  }

  /** Erases the cluster's data and replaces it with the backup's. */
  restoreBackup(instanceId: number, backupId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/backups/{backupId}/restore`, params: { instanceId, backupId }, schema: emptySchema }, opts);
  }

  /** Current platform: stops the cluster (and its billing), keeping its data; it must be active. */
  suspend(instanceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/suspend`, params: { instanceId }, schema: emptySchema }, opts);
  }

  /** Current platform: starts a suspended cluster again. */
  resume(instanceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/resume`, params: { instanceId }, schema: emptySchema }, opts);
  }

  /** The engine's tunable parameters (current platform): their types, ranges and whether a change restarts the cluster. */
  getConfigCatalogue(opts?: CallOptions): Promise<Record<string, unknown>> {
    return this.transport.request({ method: "GET", route: `/databases/${this.engine}/config`, schema: engineConfigCatalogueSchema }, opts);
  }

  /**
   * With the time the API served them (its Date header, one-second resolution; absent when the
   * answer has none): a caller can tell a read made in a later second than a record's `updated`.
   */
  async getCredentials(instanceId: number, opts?: CallOptions): Promise<ServedCredentials> {
    let servedAt: number | undefined;
    const credentials = await this.transport.request({
      method: "GET", route: `${this.base}/{instanceId}/credentials`, params: { instanceId }, schema: credentialsSchema,
      onHeaders: (h) => { servedAt = httpDate(h["date"]); },
    }, opts);
    return servedAt === undefined ? credentials : { ...credentials, servedAt };
  }

  resetCredentials(instanceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/credentials/reset`, params: { instanceId }, schema: emptySchema }, opts);
  }

  patch(instanceId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "POST", route: `${this.base}/{instanceId}/patch`, params: { instanceId }, schema: emptySchema }, opts);
  }

  getSslCertificate(instanceId: number, opts?: CallOptions): Promise<DatabaseSslCertificate> {
    return this.transport.request({ method: "GET", route: `${this.base}/{instanceId}/ssl`, params: { instanceId }, schema: sslCertificateSchema }, opts);
  }
}

export class DatabasesApi {
  readonly mysql: DatabaseEngineApi;
  readonly postgresql: DatabaseEngineApi;
  readonly valkey: DatabaseEngineApi;
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
    this.mysql = new DatabaseEngineApi(transport, "mysql");
    this.postgresql = new DatabaseEngineApi(transport, "postgresql");
    this.valkey = new DatabaseEngineApi(transport, "valkey");
  }

  engine(engine: DatabaseEngine): DatabaseEngineApi {
    return this[engine];
  }

  listEngines(opts?: ListOptions): Promise<Page<DatabaseEngineInfo>> {
    return listPage(this.transport, "/databases/engines", {}, engineListSchema, opts);
  }

  listAllEngines(opts?: ListAllOptions): Promise<DatabaseEngineInfo[]> {
    return listAll(this.transport, "/databases/engines", {}, engineListSchema, opts);
  }

  /** `engineId` is `engine/version`, e.g. "mysql/8". */
  getEngine(engineId: string, opts?: CallOptions): Promise<DatabaseEngineInfo> {
    return this.transport.request({ method: "GET", route: "/databases/engines/{engineId}", params: { engineId }, schema: engineSchema }, opts);
  }

  listAllTypes(opts?: ListAllOptions): Promise<DatabaseType[]> {
    return listAll(this.transport, "/databases/types", {}, databaseTypeListSchema, opts);
  }

  getType(typeId: string, opts?: CallOptions): Promise<DatabaseType> {
    return this.transport.request({ method: "GET", route: "/databases/types/{typeId}", params: { typeId }, schema: databaseTypeSchema }, opts);
  }

  /** All engines at once, in the reduced shape (no port, disk sizes or replication). */
  listAllInstances(opts?: ListAllOptions): Promise<Database[]> {
    return listAll(this.transport, "/databases/instances", {}, databaseListSchema, opts);
  }
}

/** The API's base64 CA certificate as PEM text, for the connection Secret's `ca.crt`. */
export function decodeCaCertificate(base64: string): string {
  return Buffer.from(base64, "base64").toString("utf8");
}
