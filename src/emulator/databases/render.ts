// Response shapes of database objects: the spec's (legacy platform) instance, the reduced
// all-engines shape with instance_uri, and backups.
import { apiTime } from "../clock.ts";
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

export function renderDatabase(db: DatabaseRecord): Record<string, unknown> {
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

export function renderBackup(b: BackupRecord): Record<string, unknown> {
  return { id: b.id, type: b.type, label: b.label, created: apiTime(b.created) };
}
