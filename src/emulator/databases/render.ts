// Response shapes of database objects, each in its own platform's shape (db.platform): the
// spec's (legacy platform) instance or the current platform's, the all-engines list's items (the
// spec's reduced shape for legacy databases), and backups.
import { apiTime } from "../clock.ts";
import { documentationIPv4 } from "../ip.ts";
import type { BackupRecord, DatabaseRecord } from "../store.ts";
import { renderEngineConfig } from "./engine-config.ts";
import { oldestRestoreTime } from "./model.ts";

export function hosts(db: DatabaseRecord): { primary: string | null; secondary: string | null } {
  if (db.status === "provisioning") return { primary: null, secondary: null };
  const kind = db.engine === "mysql" ? "mysql" : "pgsql";
  const stem = `lin-${db.id}-${db.hostTag}-${kind}-primary`;
  return { primary: `${stem}.servers.linodedb.net`, secondary: `${stem}-private.servers.linodedb.net` };
}

function members(db: DatabaseRecord): Record<string, string> {
  if (db.status === "provisioning") return {};
  const out: Record<string, string> = {};
  for (let i = 0; i < db.cluster_size; i++) out[documentationIPv4(db.memberBase + i)] = i === 0 ? "primary" : "failover";
  return out;
}

/**
 * The current platform's hosts (recorded): a primary and, for 2- and 3-node clusters, a standby
 * replica, already set in the create response (legacy: null until provisioned).
 */
function currentHosts(db: DatabaseRecord): { primary: string; standby: string | null } {
  const stem = `a${String(db.id)}-akamai-prod-${String(db.hostTag)}-default.g2a.akamaidb.net`;
  const primary = db.private_network !== null && !db.private_network.public_access ? privateHost(stem) : stem;
  return { primary, standby: db.cluster_size > 1 ? `replica-${primary}` : null };
}

/**
 * The host name of a database in a VPC without public access. GUESS: nothing recorded shows
 * the hosts of a database with a private network; the emulator prefixes `private-` to the
 * public name (so `hosts.primary` becomes `private-a<id>-akamai-prod-…`, the standby
 * `replica-private-a<id>-…`); with public_access true the public names stay. Change here.
 */
function privateHost(publicHost: string): string {
  return `private-${publicHost}`;
}

function currentUpdates(db: DatabaseRecord): Record<string, unknown> {
  const { week_of_month: _legacyOnly, ...rest } = db.updates;
  return { ...rest, pending: db.pending_updates ?? [] };
}

/** The major version a current-platform database was created with (`8.0.35` → `8`, `14.13` → `14`). */
function majorVersion(version: string): string {
  return version.split(".")[0] ?? version;
}

export interface RenderOptions {
  /** Emulated now (oldest_restore_time is at most seven days back from it). Default: the record's `updated`. */
  now?: number;
  /**
   * The answer to the create (POST) itself: on the current platform it shows the major version
   * asked for (later reads the full one) and no oldest_restore_time (recorded: TestDatabase_List,
   * TestDatabase_MySQL_Suite).
   */
  createResponse?: boolean;
}

function restorePoint(db: DatabaseRecord, now: number): string | null {
  const at = oldestRestoreTime(db, now);
  return at === null ? null : apiTime(at);
}

/** A database in its own platform's shape (db.platform). */
export function renderDatabase(db: DatabaseRecord, opts: RenderOptions = {}): Record<string, unknown> {
  if (db.platform === "current") {
    const provisioning = db.status === "provisioning";
    return {
      id: db.id, label: db.label, type: db.type, engine: db.engine,
      version: opts.createResponse === true ? majorVersion(db.version) : db.version, region: db.region,
      status: db.status, port: db.port, encrypted: db.encrypted, allow_list: [...db.allow_list],
      cluster_size: db.cluster_size, hosts: currentHosts(db), created: apiTime(db.created), updated: apiTime(db.updated),
      // Valkey: used_disk_size_gb and oldest_restore_time are null (spec 4.234.0).
      total_disk_size_gb: db.total_disk_size_gb, used_disk_size_gb: provisioning || db.engine === "valkey" ? null : db.used_disk_size_gb,
      members: members(db), ssl_connection: db.ssl_connection, updates: currentUpdates(db),
      platform: "rdbms-default", engine_config: renderEngineConfig(db.engine_config),
      private_network: db.private_network === null ? null : { ...db.private_network },
      // Not recorded on the current platform (linodego reads it: DatabaseFork{source, restore_time}).
      fork: db.fork === null ? null : { source: db.fork.source, restore_time: apiTime(db.fork.restore_time) },
      ...(opts.createResponse === true ? {} : { oldest_restore_time: db.engine === "valkey" ? null : restorePoint(db, opts.now ?? db.updated) }),
    };
  }
  const out: Record<string, unknown> = {
    id: db.id,
    label: db.label,
    type: db.type,
    engine: db.engine,
    version: db.version,
    region: db.region,
    status: db.status,
    port: db.port,
    encrypted: db.encrypted,
    allow_list: [...db.allow_list],
    cluster_size: db.cluster_size,
    hosts: hosts(db),
    created: apiTime(db.created),
    updated: apiTime(db.updated),
    total_disk_size_gb: db.total_disk_size_gb,
    used_disk_size_gb: db.used_disk_size_gb,
    members: members(db),
    ssl_connection: db.ssl_connection,
    replication_type: db.replication_type,
    updates: { ...db.updates },
    platform: "rdbms-legacy",
  };
  if (db.engine === "postgresql") out.replication_commit_type = db.replication_commit_type;
  return out;
}

/** The spec's reduced shape of GET /databases/instances (legacy databases). */
export function renderReduced(db: DatabaseRecord): Record<string, unknown> {
  return {
    allow_list: [...db.allow_list],
    cluster_size: db.cluster_size,
    created: apiTime(db.created),
    encrypted: db.encrypted,
    engine: db.engine,
    hosts: hosts(db),
    id: db.id,
    instance_uri: `/v4/databases/${db.engine}/instances/${db.id}`,
    label: db.label,
    region: db.region,
    status: db.status,
    type: db.type,
    updated: apiTime(db.updated),
    updates: { ...db.updates },
    version: db.version,
  };
}

/**
 * An item of GET /databases/instances: a current-platform database is the full object there
 * (recorded: TestDatabase_List), a legacy one the spec's reduced shape.
 */
export function renderListItem(db: DatabaseRecord, now?: number): Record<string, unknown> {
  return db.platform === "current" ? renderDatabase(db, now === undefined ? {} : { now }) : renderReduced(db);
}

export function renderBackup(b: BackupRecord): Record<string, unknown> {
  return { id: b.id, type: b.type, label: b.label, created: apiTime(b.created) };
}
