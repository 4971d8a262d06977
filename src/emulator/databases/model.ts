// Creating database records: defaults, per-engine rules and uniqueness. Shared by the POST
// handlers and the admin bulk seeder.
import type { Permission } from "../auth.ts";
import { apiTime, DAY_MS } from "../clock.ts";
import type { EmulatorContext } from "../context.ts";
import { findDatabaseType, findRegion, offeredEngines, type DatabaseType } from "../catalog.ts";
import { ApiError, badRequest, forbidden, type ApiErrorItem } from "../errors.ts";
import { normalizeCidr } from "../ip.ts";
import { nextId, type DatabasePlatform, type DatabaseRecord, type DbEngine, type ForkRecord, type PrivateNetwork, type Updates } from "../store.ts";
import { checkEngineConfig, engineConfigOnCreate } from "./engine-config.ts";
import { settle } from "./lifecycle.ts";

export function normalizeAllowList(list: readonly string[]): string[] {
  // The live API appends /32 to bare addresses and returns the list sorted.
  return list.map((v) => normalizeCidr(v) ?? v).sort();
}

export function labelTaken(ctx: EmulatorContext, engine: DbEngine, label: string, exceptId?: number): boolean {
  // Labels are unique per engine (facts: S189, SNEW). The engine's own list, kept in order, is
  // walked faster than the map.
  for (const db of ctx.state.databases.inOrder(engine)) {
    if (db.label === label && db.id !== exceptId) return true;
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
  engine_config?: unknown;
  private_network?: { vpc_id: number; subnet_id: number; public_access?: boolean | null | undefined } | null | undefined;
  fork?: { source: number; restore_time?: string | null | undefined } | null | undefined;
}

const ENGINE_NAMES: Record<DbEngine, string> = { mysql: "MySQL", postgresql: "PostgreSQL", valkey: "Valkey" };

/**
 * A field only the current platform has, given to a legacy database (a create on a server
 * whose --platform is legacy, or an update of a legacy database). What the real legacy platform
 * answers is not recorded (it is no longer sold); the emulator's choice: 400 naming the field.
 * null (or absent) asks for nothing and passes.
 */
export function legacyRefusal(field: string, what: string): ApiErrorItem {
  return { field, reason: `${what} is not available on the legacy database platform (rdbms-legacy); only databases on the current platform (rdbms-default) have it` };
}

/**
 * Each engine's administrative user. GUESS (databases/facts.md): Valkey's credentials shape is
 * not recorded; assumed the MySQL/PostgreSQL one ({username, password}) with Valkey's built-in
 * ACL user, `default`.
 */
const USERNAMES: Record<DbEngine, string> = { mysql: "linroot", postgresql: "linpostgres", valkey: "default" };

/** A private_network as stored: public_access defaults to false (SNEW). */
export function privateNetwork(input: NonNullable<CreateInput["private_network"]>): PrivateNetwork {
  return { vpc_id: input.vpc_id, subnet_id: input.subnet_id, public_access: input.public_access ?? false };
}

/**
 * The current platform's create body (spec 4.234.0, "Create PostgreSQL database",
 * additionalProperties false; its fork variant has the same keys): what it may carry. MySQL's is
 * assumed to match (linodego's MySQLCreateOptions has the same fields).
 */
const CURRENT_CREATE_FIELDS = new Set(["label", "region", "type", "engine", "cluster_size", "allow_list", "engine_config", "private_network", "ssl_connection", "fork"]);

/**
 * A create body's keys the current platform's create schema does not have (encrypted,
 * replication_type, replication_commit_type, updates, …), and `ssl_connection: false` ("Currently
 * required to be `true`."). GUESS (facts.md): what the real API answers to either is not recorded;
 * the schema says additionalProperties false, so a 400 naming each field, with texts of our own.
 */
export function currentCreateRefusals(body: unknown, input: CreateInput): ApiErrorItem[] {
  const keys = body !== null && typeof body === "object" ? Object.keys(body) : [];
  return [
    ...keys.filter((k) => !CURRENT_CREATE_FIELDS.has(k)).sort().map((field) => ({ field, reason: `${field} is not a valid field for a database on the current platform (rdbms-default)` })),
    ...(input.ssl_connection === false ? [{ field: "ssl_connection", reason: "ssl_connection must be true" }] : []),
  ];
}

/** `platform`: the one the new database gets (the server's --platform). `body`: the request body as sent. */
export function checkCreate(ctx: EmulatorContext, engine: DbEngine, input: CreateInput, platform: DatabasePlatform = ctx.platform, body?: unknown): void {
  const errors: ApiErrorItem[] = platform === "current" && body !== undefined ? currentCreateRefusals(body, input) : [];
  const engines = offeredEngines(ctx.valkey);
  const engineInfo = engines.find((e) => e.id === input.engine);
  const ids = engines.filter((e) => e.engine === engine).map((e) => e.id);
  if (engineInfo?.engine !== engine) errors.push({ field: "engine", reason: ids.length > 0 ? `Invalid engine ${input.engine}; must be one of ${ids.join(", ")}` : `Invalid engine ${input.engine}; ${ENGINE_NAMES[engine]} is not available to this account` });
  const region = findRegion(input.region);
  if (region === undefined) errors.push({ field: "region", reason: "Region not found" });
  else if (!region.capabilities.includes("Managed Databases")) errors.push({ field: "region", reason: "Managed Databases are not available in this region" });
  const type = findDatabaseType(input.type);
  if (type === undefined) errors.push({ field: "type", reason: "Type not found" });
  const size = input.cluster_size ?? 1;
  // Two nodes: the current platform only, on dedicated plans (the current API's cluster_size: 1, 2 or 3, 2 only on dedicated plans).
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
  if (platform === "legacy") {
    if (input.engine_config != null) errors.push(legacyRefusal("engine_config", "Engine parameters (engine_config)"));
    if (input.private_network != null) errors.push(legacyRefusal("private_network", "A private network (private_network)"));
    if (input.fork != null) errors.push(legacyRefusal("fork", "Point-in-time restore (fork)"));
  } else {
    errors.push(...checkEngineConfig(engine, input.engine_config));
  }
  if (errors.length > 0) throw new ApiError(400, errors);
}

/**
 * The earliest restore point a fork of this current-platform database may ask for: its creation
 * (no data before it), but at most seven days back from now (restore points for each day of the
 * past week, as Linode describes them). null while it provisions (no data yet).
 */
export function oldestRestoreTime(db: DatabaseRecord, now: number): number | null {
  if (db.status === "provisioning") return null;
  return Math.max(db.created, now - 7 * DAY_MS);
}

/**
 * A date-time as the API writes it (`2025-01-02T03:04:05`, UTC; the current OpenAPI example
 * writes `2024-10-03 20:48:05`) or ISO 8601 with fractions and a zone (what clients that format
 * a time value send). Epoch ms, or null when it is none of these.
 */
export function parseDateTime(value: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim());
  if (m === null) return null;
  const zone = m[4] === undefined ? "Z" : m[4].toUpperCase() === "Z" ? "Z" : m[4].includes(":") ? m[4] : `${m[4].slice(0, 3)}:${m[4].slice(3)}`;
  const ms = Date.parse(`${m[1] ?? ""}T${m[2] ?? ""}${m[3] ?? ""}${zone}`);
  return Number.isNaN(ms) ? null : ms;
}

const SECOND = 1000;

/**
 * A create's `fork` on the current platform (its restore is a fork: linodego, Terraform `_v2`): the
 * source must exist in the caller's account (another account's is as missing), be one the caller
 * may change (read_write: 403 otherwise, as for any change of it), be of the same engine and
 * engine version (a point-in-time restore replays the source's own data files; asking another
 * version is refused — a choice, the sources are silent), be on the current platform, and be
 * active, degraded or failed. `restore_time` may not be before the source's oldest_restore_time
 * nor after now (compared to the second, the API's time resolution); omitted, it is now (the
 * latest restore point: an assumption, Terraform treats it as optional and computed).
 */
export function checkFork(ctx: EmulatorContext, engine: DbEngine, input: CreateInput, access: (id: number) => Permission | null): ForkRecord | null {
  const fork = input.fork;
  if (fork == null) return null;
  // GUESS (databases/facts.md): spec 4.234.0 gives Valkey no restore point (oldest_restore_time
  // null); what the API answers to a fork of one is not recorded: a 400 naming the field.
  if (engine === "valkey") throw badRequest("Point-in-time restore (fork) is not available for Valkey databases", "fork");
  const source = ctx.state.databases.get(fork.source);
  const permission = source === undefined ? null : access(source.id);
  if (source === undefined || permission === null) throw badRequest(`Database ${String(fork.source)} not found`, "fork.source");
  if (permission !== "read_write") throw forbidden("Unauthorized");
  settle(ctx, source);
  if (source.engine !== engine) {
    throw badRequest(`Database ${String(source.id)} is a ${ENGINE_NAMES[source.engine]} database; a fork must be of the same engine (${engine})`, "fork.source");
  }
  if (source.platform !== "current") {
    throw badRequest(`Database ${String(source.id)} is on the legacy database platform, which has no point-in-time restore; restore one of its backups instead`, "fork.source");
  }
  const sourceMajor = source.version.split(".")[0] ?? source.version;
  const askedMajor = offeredEngines(ctx.valkey).find((e) => e.id === input.engine)?.version ?? "";
  if (askedMajor !== sourceMajor) {
    throw badRequest(`A fork has its source's engine version: ${engine}/${sourceMajor} (database ${String(source.id)})`, "engine");
  }
  const allowed = ["active", "degraded", "failed"];
  if (!allowed.includes(source.status)) {
    throw badRequest(`Cannot fork database ${String(source.id)} while it is ${source.status}; it must be ${allowed.join(", ")}.`, "fork.source");
  }
  const now = ctx.clock.now();
  const oldest = oldestRestoreTime(source, now) ?? now;
  if (fork.restore_time == null) return { source: source.id, restore_time: now };
  const at = parseDateTime(fork.restore_time);
  if (at === null) throw badRequest("Must be a date-time, e.g. 2025-01-02T03:04:05", "fork.restore_time");
  const second = (ms: number) => Math.floor(ms / SECOND);
  if (second(at) < second(oldest)) {
    throw badRequest(`restore_time ${apiTime(at)} is before the source's oldest_restore_time ${apiTime(oldest)}`, "fork.restore_time");
  }
  if (second(at) > second(now)) throw badRequest(`restore_time ${apiTime(at)} is in the future`, "fork.restore_time");
  return { source: source.id, restore_time: at };
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

/**
 * `platform`: the new database's, for good (default: the server's --platform). `fork`: what
 * checkFork found (a fork is otherwise created as any database, from its own create fields).
 */
export function createRecord(ctx: EmulatorContext, engine: DbEngine, input: CreateInput, owner?: string, platform: DatabasePlatform = ctx.platform, fork: ForkRecord | null = null): DatabaseRecord {
  const now = ctx.clock.now();
  const id = nextId(ctx.state, "database");
  const size = input.cluster_size ?? 1;
  const type = findDatabaseType(input.type);
  const current = platform === "current";
  const major = offeredEngines(ctx.valkey).find((e) => e.id === input.engine)?.version ?? input.engine.split("/")[1] ?? "";
  const version = current ? fullVersion(input.engine, major) : major;
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
    username: USERNAMES[engine],
    password: ctx.random.string(24),
    credentialsReset: false,
    pendingPassword: null,
    pending: { until: now + ctx.transitionMs, next: "active" },
    autoBackupsUntil: now,
    backups: [],
    owner,
    engine_config: current ? engineConfigOnCreate(engine, input.engine_config) : {},
    private_network: current && input.private_network != null ? privateNetwork(input.private_network) : null,
    fork: current ? fork : null,
  };
  ctx.state.databases.set(id, record);
  return record;
}

export function findDatabase(ctx: EmulatorContext, engine: DbEngine | null, id: number): DatabaseRecord {
  const db = ctx.state.databases.get(id);
  if (db === undefined || (engine !== null && db.engine !== engine)) throw new ApiError(404, [{ reason: "Not found" }]);
  return db;
}

/**
 * A resize to `typeId`: to a plan with more disk only (spec: "a compute instance type with more
 * disk space"; current platform: "clusters can't be resized to smaller plans"). A plan of the
 * same disk in another class is refused too.
 */
export function checkResize(db: DatabaseRecord, typeId: string): DatabaseType {
  const target = findDatabaseType(typeId);
  if (target === undefined) throw badRequest("Type not found", "type");
  const current = findDatabaseType(db.type);
  if (current !== undefined && target.disk <= current.disk) {
    throw badRequest(db.platform === "current"
      ? `Clusters can't be resized to smaller plans: ${target.id} has no more disk than ${current.id}`
      : "Can only resize to a type with more disk space", "type");
  }
  return target;
}

/** The full version the current platform reports for `engine/major` (the major itself if none is known). */
export function fullVersion(engineId: string, major: string): string {
  return FULL_VERSIONS[engineId] ?? major;
}

/**
 * An in-place major version upgrade of a current-platform database (SNEW: "major version upgrade
 * via version"): to a major version the engines list offers for this engine, above the one it
 * runs. The version given may be the major (`14`), the engine id (`postgresql/14`) or a full
 * version of that major (`14.13`). Answers the new full version, or null when it asks for the
 * version the database already runs (nothing to do).
 */
export function checkVersionUpgrade(db: DatabaseRecord, asked: string): string | null {
  const major = (asked.includes("/") ? asked.split("/")[1] ?? "" : asked).split(".")[0] ?? "";
  const runs = db.version.split(".")[0] ?? db.version;
  // The database exists: its engine is offered to its account (Valkey too).
  const offered = offeredEngines(true).filter((e) => e.engine === db.engine).map((e) => e.version);
  if (major === runs) return null;
  if (!offered.includes(major)) {
    throw badRequest(`Version ${asked} is not offered for ${db.engine}; the engines list offers ${offered.join(", ")}`, "version");
  }
  if (Number(major) < Number(runs)) {
    throw badRequest(`Only major version upgrades are possible in place: ${db.engine} ${runs} cannot go back to ${major}`, "version");
  }
  return fullVersion(`${db.engine}/${major}`, major);
}
