// Request bodies of the database endpoints, with the spec's rules and the API's field names.
import { z } from "zod";
import { normalizeCidr } from "../ip.ts";
import { intRange, label, oneOf } from "../validation.ts";

export const MYSQL_REPLICATION = ["none", "asynch", "semi_synch"] as const;
export const PG_REPLICATION = ["none", "asynch"] as const;
export const PG_COMMIT = ["on", "local", "remote_write", "remote_apply", "off"] as const;

const allowListEntry = z.string().refine((v) => normalizeCidr(v) !== null, {
  error: "Must be a valid IP address or CIDR range",
});

export const allowListSchema = z.array(allowListEntry, { error: "Must be an array of IP addresses or CIDR ranges" });

export const databaseLabel = label(3, 32);

const positiveId = z.number({ error: (i) => (i.input === undefined ? undefined : "Must be a positive integer") })
  .int({ error: "Must be a positive integer" })
  .positive({ error: "Must be a positive integer" });

/**
 * The current platform's VPC attachment. There are no VPCs in the emulator: any positive
 * integer ids are accepted (the real API checks that the VPC and subnet exist and are in the
 * database's region). public_access defaults to false (SNEW).
 */
export const privateNetworkSchema = z.object({
  vpc_id: positiveId,
  subnet_id: positiveId,
  public_access: z.boolean({ error: "Must be a boolean" }).nullish(),
}, { error: "Must be an object" });

/** The current platform's point-in-time restore into a new database (`fork` on create: linodego, Terraform `_v2`). */
export const forkSchema = z.object({
  source: positiveId,
  // A date-time (the API's `YYYY-MM-DDTHH:MM:SS`, UTC, or ISO 8601 with a zone); checked in model.ts.
  restore_time: z.string({ error: "Must be a date-time string" }).nullish(),
}, { error: "Must be an object" });

const base = {
  label: databaseLabel,
  region: z.string({ error: (i) => (i.input === undefined ? "region is required" : "Must be a string") }),
  type: z.string({ error: (i) => (i.input === undefined ? "type is required" : "Must be a string") }),
  engine: z.string({ error: (i) => (i.input === undefined ? "engine is required" : "Must be a string") }),
  // 2 is the current platform's (dedicated plans only); checkCreate refuses it on legacy.
  cluster_size: z.union([z.literal(1), z.literal(2), z.literal(3)], { error: "Must be 1, 2 or 3" }).nullish(),
  encrypted: z.boolean({ error: "Must be a boolean" }).nullish(),
  ssl_connection: z.boolean({ error: "Must be a boolean" }).nullish(),
  allow_list: allowListSchema.nullish(),
  // Current platform only (model.ts refuses them on legacy): engine parameters, checked against
  // the engine's catalogue (engine-config.ts), a VPC, and a fork's source and restore point.
  engine_config: z.unknown().optional(),
  private_network: privateNetworkSchema.nullish(),
  fork: forkSchema.nullish(),
};

export const mysqlCreateSchema = z.object({
  ...base,
  replication_type: oneOf(MYSQL_REPLICATION).nullish(),
  replication_commit_type: z.unknown().optional(),
});

export const postgresCreateSchema = z.object({
  ...base,
  replication_type: oneOf(PG_REPLICATION).nullish(),
  // The spec's enum lists on/off mangled into true/false by YAML; accept both spellings.
  replication_commit_type: z.union([oneOf(PG_COMMIT), z.boolean()]).nullish(),
});

/** Valkey (current platform only): no replication fields (the current platform's create has none). */
export const valkeyCreateSchema = z.object(base);

export const updatesSchema = z.object({
  frequency: oneOf(["weekly", "monthly"]).nullish(),
  // The spec documents 1..3 hours; the live API returns and accepts 4 (recorded), so 4 is allowed.
  duration: intRange(1, 4).nullish(),
  hour_of_day: intRange(0, 23).nullish(),
  day_of_week: intRange(1, 7).nullish(),
  week_of_month: intRange(1, 4).nullable().optional(),
  pending: z.unknown().optional(),
});

export const updateSchema = z.object({
  label: databaseLabel.nullish(),
  allow_list: allowListSchema.nullish(),
  type: z.string({ error: "Must be a string" }).nullish(),
  updates: updatesSchema.nullish(),
  // Current platform only (routes.ts refuses a change of them on legacy).
  cluster_size: z.union([z.literal(1), z.literal(2), z.literal(3)], { error: "Must be 1, 2 or 3" }).nullish(),
  version: z.string({ error: "Must be a string" }).nullish(),
  engine_config: z.unknown().optional(),
  // Absent: unchanged; null: detached; an object: set or replaced.
  private_network: privateNetworkSchema.nullable().optional(),
});

export const snapshotSchema = z.object({
  label: z.string({ error: (i) => (i.input === undefined ? "label is required" : "Must be a string") })
    .min(1, { error: "Length must be 1-30 characters" })
    .max(30, { error: "Length must be 1-30 characters" })
    .regex(/^[A-Za-z0-9]+$/, { error: "Must only contain ASCII letters or numbers" }),
  target: oneOf(["primary", "secondary"]).nullish(),
});
