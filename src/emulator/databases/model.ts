// Creating database records: defaults, per-engine rules and uniqueness. Shared by the POST
// handlers and the admin bulk seeder.
import type { EmulatorContext } from "../context.ts";
import { findDatabaseType, findRegion, ENGINES } from "../catalog.ts";
import { ApiError, badRequest, type ApiErrorItem } from "../errors.ts";
import { normalizeCidr } from "../ip.ts";
import { nextId, type DatabasePlatform, type DatabaseRecord, type DbEngine, type Updates } from "../store.ts";

export function normalizeAllowList(list: readonly string[]): string[] {
  // The live API appends /32 to bare addresses and returns the list sorted.
  return list.map((v) => normalizeCidr(v) ?? v).sort();
}

export function labelTaken(ctx: EmulatorContext, engine: DbEngine, label: string, exceptId?: number): boolean {
  // Labels are unique per engine (facts: S189, SNEW).
  for (const db of ctx.state.databases.values()) {
    if (db.engine === engine && db.label === label && db.id !== exceptId) return true;
  }
  return false;
}

export interface CreateInput {
  label: string;
  region: string;
  type: string;
  engine: string;
  cluster_size?: 1 | 2 | 3 | null | undefined;
  encrypted?: boolean | null | undefined;
  ssl_connection?: boolean | null | undefined;
  allow_list?: string[] | null | undefined;
  replication_type?: string | null | undefined;
  replication_commit_type?: unknown;
}

/** `platform`: the one the new database gets (the server's --platform). */
export function checkCreate(ctx: EmulatorContext, engine: DbEngine, input: CreateInput, platform: DatabasePlatform = ctx.platform): void {
  const errors: ApiErrorItem[] = [];
  const engineInfo = ENGINES.find((e) => e.id === input.engine);
  if (engineInfo?.engine !== engine) errors.push({ field: "engine", reason: `Invalid engine ${input.engine}; must be one of ${ENGINES.filter((e) => e.engine === engine).map((e) => e.id).join(", ")}` });
  const region = findRegion(input.region);
  if (region === undefined) errors.push({ field: "region", reason: "Region not found" });
  else if (!region.capabilities.includes("Managed Databases")) errors.push({ field: "region", reason: "Managed Databases are not available in this region" });
  const type = findDatabaseType(input.type);
  if (type === undefined) errors.push({ field: "type", reason: "Type not found" });
  const size = input.cluster_size ?? 1;
  // Two nodes: the current platform only, on dedicated plans (current-platform.md).
  if (size === 2 && platform === "legacy") errors.push({ field: "cluster_size", reason: "Must be 1 or 3" });
  else if (size === 2 && type !== undefined && type.class !== "dedicated") errors.push({ field: "cluster_size", reason: "A 2 node cluster needs a dedicated plan" });
  const repl = input.replication_type;
  if (repl !== undefined && repl !== null) {
    if (size === 1 && repl !== "none") errors.push({ field: "replication_type", reason: "Must be none for a single node cluster" });
    if (size === 3 && repl === "none") errors.push({ field: "replication_type", reason: engine === "mysql" ? "Must be asynch or semi_synch for a high availability cluster" : "Must be asynch for a high availability cluster" });
  }
  if (engine === "mysql" && input.replication_commit_type !== undefined && input.replication_commit_type !== null) {
    errors.push({ field: "replication_commit_type", reason: "Only supported for PostgreSQL databases" });
  }
  if (labelTaken(ctx, engine, input.label)) errors.push({ field: "label", reason: "Label must be unique among your databases" });
  if (errors.length > 0) throw new ApiError(400, errors);
}

function commitType(value: unknown): string {
  if (value === true) return "on";
  if (value === false) return "off";
  return typeof value === "string" ? value : "local";
}

/** The full version the current platform reports for a major version it was created with (facts §3: `8` → `8.0.35`). */
const FULL_VERSIONS: Record<string, string> = {
  "mysql/8": "8.0.35", "postgresql/13": "13.16", "postgresql/14": "14.13", "postgresql/15": "15.8", "postgresql/16": "16.4", "postgresql/17": "17.2",
};

/** `platform`: the new database's, for good (default: the server's --platform). */
export function createRecord(ctx: EmulatorContext, engine: DbEngine, input: CreateInput, owner?: string, platform: DatabasePlatform = ctx.platform): DatabaseRecord {
  const now = ctx.clock.now();
  const id = nextId(ctx.state, "database");
  const size = input.cluster_size ?? 1;
  const type = findDatabaseType(input.type);
  const current = platform === "current";
  const major = ENGINES.find((e) => e.id === input.engine)?.version ?? input.engine.split("/")[1] ?? "";
  const version = current ? (FULL_VERSIONS[input.engine] ?? major) : major;
  const updates: Updates = {
    frequency: "weekly",
    // The current platform picks a 4-hour window (recorded), the spec documents 1..3.
    duration: current ? 4 : 3,
    hour_of_day: ctx.random.int(0, 23),
    day_of_week: ctx.random.int(1, 7),
    week_of_month: null,
  };
  const record: DatabaseRecord = {
    id,
    platform,
    engine,
    version,
    label: input.label,
    region: input.region,
    type: input.type,
    cluster_size: size,
    // The current platform encrypts and requires TLS whether asked or not (recorded).
    encrypted: current ? true : input.encrypted ?? false,
    ssl_connection: current ? true : input.ssl_connection ?? true,
    allow_list: normalizeAllowList(input.allow_list ?? []),
    replication_type: input.replication_type ?? (size === 1 ? "none" : engine === "mysql" ? "semi_synch" : "asynch"),
    replication_commit_type: engine === "postgresql" ? commitType(input.replication_commit_type) : null,
    port: current ? ctx.random.int(10_000, 30_000) : engine === "mysql" ? 3306 : 5432,
    hostTag: ctx.random.int(10_000, 99_999),
    memberBase: ctx.random.int(0, 500),
    status: "provisioning",
    created: now,
    updated: now,
    updates,
    total_disk_size_gb: type?.totalDiskGb ?? 15,
    used_disk_size_gb: 0,
    username: engine === "mysql" ? "linroot" : "linpostgres",
    password: ctx.random.string(24),
    credentialsReset: false,
    pendingPassword: null,
    pending: { until: now + ctx.transitionMs, next: "active" },
    autoBackupsUntil: now,
    backups: [],
    owner,
  };
  ctx.state.databases.set(id, record);
  return record;
}

export function findDatabase(ctx: EmulatorContext, engine: DbEngine | null, id: number): DatabaseRecord {
  const db = ctx.state.databases.get(id);
  if (db === undefined || (engine !== null && db.engine !== engine)) throw new ApiError(404, [{ reason: "Not found" }]);
  return db;
}

export function checkResize(db: DatabaseRecord, typeId: string): void {
  const target = findDatabaseType(typeId);
  if (target === undefined) throw badRequest("Type not found", "type");
  const current = findDatabaseType(db.type);
  if (current !== undefined && target.disk <= current.disk) {
    throw badRequest("Can only resize to a type with more disk space", "type");
  }
}
