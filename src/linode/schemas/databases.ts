// Managed database responses (spec 4.176.0 plus what the real API returns on both the
// legacy `rdbms-legacy` and the newer `rdbms-default` platforms: the current one has no
// replication fields, secondary host or week_of_month, and adds a standby host, engine_config,
// private_network, updates.pending and oldest_restore_time; src/emulator/databases/facts.md).
import { z } from "zod";
import { envelope, openEnum, optionalNullableNumber, optionalNullableString } from "./common.ts";

// Valkey: spec 4.234.0, limited availability, on the current platform only.
export const databaseEngines = ["mysql", "postgresql", "valkey"] as const;
export type DatabaseEngine = (typeof databaseEngines)[number];

export const databaseStatuses = [
  "provisioning", "active", "suspending", "suspended", "resuming", "restoring",
  "failed", "degraded", "updating", "backing_up", "resizing",
] as const;

export const engineSchema = z.object({
  id: z.string(),
  engine: z.string(),
  version: z.string(),
  total_disk_size_gb: z.number().nullish(),
  used_disk_size_gb: z.number().nullish(),
});
export const engineListSchema = envelope(engineSchema);

const priceSchema = z.object({ hourly: z.number().nullish(), monthly: z.number().nullish() });
export const databaseTypeSchema = z.object({
  id: z.string(),
  label: z.string(),
  class: z.string().optional(),
  disk: z.number().optional(),
  memory: z.number().optional(),
  vcpus: z.number().optional(),
  deprecated: z.boolean().optional(),
  engines: z.record(z.string(), z.array(z.object({ quantity: z.number(), price: priceSchema.nullish() }))).optional(),
});
export const databaseTypeListSchema = envelope(databaseTypeSchema);

const pendingUpdateSchema = z.object({
  deadline: optionalNullableString,
  description: z.string().nullish(),
  planned_for: optionalNullableString,
});

export const maintenanceWindowSchema = z.object({
  frequency: openEnum(["weekly", "monthly"]),
  duration: z.number(),
  hour_of_day: z.number().nullable(),
  day_of_week: optionalNullableNumber,
  /** Legacy platform only (null unless monthly); absent on the new platform. */
  week_of_month: optionalNullableNumber,
  /** New platform only: platform updates waiting for the window. */
  pending: z.array(pendingUpdateSchema).optional().transform((v) => v ?? []),
});

// Legacy clusters report `secondary` (a private host), new ones `standby` (the replica);
// callers read `secondary`, which is whichever of the two exists.
export const hostsSchema = z
  .object({
    primary: z.string().nullish(),
    secondary: z.string().nullish(),
    standby: z.string().nullish(),
  })
  .nullish()
  .transform((h) => ({
    primary: h?.primary ?? null,
    secondary: h?.secondary ?? h?.standby ?? null,
    standby: h?.standby ?? null,
  }));

// The spec's enum for PostgreSQL commit type is mangled by YAML into true/false for on/off.
const replicationCommitTypeSchema = z
  .union([z.string(), z.boolean()])
  .nullish()
  .transform((v) => (v === true ? "on" : v === false ? "off" : (v ?? null)));

/**
 * One schema for MySQL, PostgreSQL and the reduced all-engines list shape: fields absent
 * from some of them (port, disk sizes, replication, instance_uri) are optional.
 */
export const databaseSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  engine: openEnum(databaseEngines),
  version: z.string(),
  region: z.string(),
  type: z.string(),
  status: openEnum(databaseStatuses),
  cluster_size: z.number().int(),
  encrypted: z.boolean().nullish().transform((v) => v ?? false),
  ssl_connection: z.boolean().nullish().transform((v) => v ?? true),
  allow_list: z.array(z.string()).nullish().transform((v) => v ?? []),
  hosts: hostsSchema,
  port: optionalNullableNumber,
  created: z.string(),
  updated: z.string(),
  updates: maintenanceWindowSchema.nullish().transform((v) => v ?? null),
  total_disk_size_gb: optionalNullableNumber,
  used_disk_size_gb: optionalNullableNumber,
  // The API has spelt PostgreSQL's asynchronous replication both `asynch` (the spec's enum) and
  // `async` (the spec's own sample): one spelling here, so no comparison ever sees a difference.
  replication_type: optionalNullableString.transform((v) => (v === "async" ? "asynch" : v)),
  replication_commit_type: replicationCommitTypeSchema,
  instance_uri: z.string().optional(),
  members: z.record(z.string(), z.string()).optional(),
  platform: z.string().optional(),
  oldest_restore_time: z.string().nullish(),
  // A forked database: what it was forked from, and the point in time.
  fork: z.object({ source: z.number().int(), restore_time: z.string().nullish() }).nullish(),
  engine_config: z.record(z.string(), z.unknown()).nullish(),
  private_network: z
    .object({ vpc_id: z.number().nullish(), subnet_id: z.number().nullish(), public_access: z.boolean().nullish() })
    .nullish(),
});
export const databaseListSchema = envelope(databaseSchema);

export const backupSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  type: openEnum(["snapshot", "auto"]),
  created: z.string(),
});
export const backupListSchema = envelope(backupSchema);

export const credentialsSchema = z.object({
  username: z.string(),
  password: z.string(),
});

/** `ca_certificate` is base64 PEM; null on legacy clusters that have none yet. */
export const sslCertificateSchema = z.object({
  ca_certificate: z.string().nullable(),
});

/** GET /databases/{engine}/config: parameters (objects with `type`) and groups of them, as the API nests them. */
export const engineConfigCatalogueSchema = z.record(z.string(), z.unknown());
