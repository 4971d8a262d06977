// Response shapes of database objects: the spec's (legacy platform) instance or the current
// platform's, the reduced all-engines shape, and backups.
import { apiTime } from "../clock.ts";
import type { DatabasePlatform } from "../context.ts";
import { documentationIPv4 } from "../ip.ts";
import type { BackupRecord, DatabaseRecord } from "../store.ts";

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

/** The current platform's hosts (facts §3): a primary and, for 3 nodes, a standby replica. */
function currentHosts(db: DatabaseRecord): { primary: string | null; standby: string | null } {
  if (db.status === "provisioning") return { primary: null, standby: null };
  const stem = `a${String(db.id)}-akamai-prod-${String(db.hostTag)}-default.g2a.akamaidb.net`;
  return { primary: stem, standby: db.cluster_size === 3 ? `replica-${stem}` : null };
}

function currentUpdates(db: DatabaseRecord): Record<string, unknown> {
  const { week_of_month: _legacyOnly, ...rest } = db.updates;
  return { ...rest, pending: [] };
}

export function renderDatabase(db: DatabaseRecord, platform: DatabasePlatform = "legacy"): Record<string, unknown> {
  if (platform === "current") {
    return {
      id: db.id, label: db.label, type: db.type, engine: db.engine, version: db.version, region: db.region,
      status: db.status, port: db.port, encrypted: db.encrypted, allow_list: [...db.allow_list],
      cluster_size: db.cluster_size, hosts: currentHosts(db), created: apiTime(db.created), updated: apiTime(db.updated),
      total_disk_size_gb: db.total_disk_size_gb, used_disk_size_gb: db.status === "provisioning" ? null : db.used_disk_size_gb,
      members: members(db), ssl_connection: db.ssl_connection, updates: currentUpdates(db),
      platform: "rdbms-default", engine_config: {}, private_network: null,
      oldest_restore_time: db.status === "provisioning" ? null : apiTime(db.created),
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

export function renderReduced(db: DatabaseRecord, platform: DatabasePlatform = "legacy"): Record<string, unknown> {
  return {
    allow_list: [...db.allow_list],
    cluster_size: db.cluster_size,
    created: apiTime(db.created),
    encrypted: db.encrypted,
    engine: db.engine,
    hosts: platform === "current" ? currentHosts(db) : hosts(db),
    id: db.id,
    ...(platform === "current" ? {} : { instance_uri: `/v4/databases/${db.engine}/instances/${db.id}` }),
    label: db.label,
    region: db.region,
    status: db.status,
    type: db.type,
    updated: apiTime(db.updated),
    updates: platform === "current" ? currentUpdates(db) : { ...db.updates },
    version: db.version,
  };
}

export function renderBackup(b: BackupRecord): Record<string, unknown> {
  return { id: b.id, type: b.type, label: b.label, created: apiTime(b.created) };
}
