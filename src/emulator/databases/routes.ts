// Handlers of /databases/*: engines, types, the all-engines list, and for each engine the
// instance CRUD, backups, credentials, patch, SSL, the engine parameters catalogue and (current
// platform) suspend/resume, forks, engine parameters, private networks and in-place resizes.
import { grantCreated, requireEntity, requireGlobalGrant, requireUnrestricted, entityPermission } from "../auth.ts";
import { DATABASE_TYPES, findDatabaseType, offeredEngines, renderDatabaseType } from "../catalog.ts";
import { RawJson, type RequestContext, type Route, type RouteResult } from "../context.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { applyFilter, type Filterable } from "../filter.ts";
import { pageRequest, paginate } from "../pagination.ts";
import { intParam } from "../router.ts";
import { noteStateChange, type DatabaseRecord, type DbEngine, type DbStatus } from "../store.ts";
import { parseBody } from "../validation.ts";
import { checkEngineConfig, engineConfigCatalogue, mergeEngineConfig } from "./engine-config.ts";
import { begin, requireNotStatus, requireStatus, settle, settleList } from "./lifecycle.ts";
import {
  checkCreate, checkFork, checkResize, checkVersionUpgrade, createRecord, findDatabase, labelTaken, legacyRefusal, normalizeAllowList, privateNetwork,
} from "./model.ts";
import { databaseJson, keptDatabaseJson, keptPage, listItemJson, listJson, pageJson } from "./render-cache.ts";
import { renderBackup, renderDatabase } from "./render.ts";
import { mysqlCreateSchema, postgresCreateSchema, snapshotSchema, updateSchema, valkeyCreateSchema } from "./schemas.ts";

const DB_FILTERS: Filterable = {
  id: (d: DatabaseRecord) => d.id,
  engine: (d: DatabaseRecord) => d.engine,
  label: (d: DatabaseRecord) => d.label,
  region: (d: DatabaseRecord) => d.region,
  status: (d: DatabaseRecord) => d.status,
  type: (d: DatabaseRecord) => d.type,
  version: (d: DatabaseRecord) => d.version,
  platform: (d: DatabaseRecord) => (d.platform === "current" ? "rdbms-default" : "rdbms-legacy"),
  cluster_size: (d: DatabaseRecord) => d.cluster_size,
};

const OK: RouteResult = { body: {} };

function list<T>(req: RequestContext, items: readonly T[], filters: Filterable, render: (item: T) => unknown): RouteResult {
  const page = pageRequest(req.query);
  const filtered = applyFilter(items, req.header("x-filter"), filters);
  return { body: paginate(filtered, page, render) };
}

/**
 * GET /databases/instances (engine null: items in renderListItem's shape) or an engine's
 * instances (renderDatabase's): the databases the caller may see, in id order, each settled
 * first (only those with something due: settleList), filtered (X-Filter) and paged. Read from
 * the account's per-engine order and rendered from each record's kept JSON (render-cache.ts);
 * the answer is what list() with renderDatabase/renderListItem would write.
 */
function databaseList(req: RequestContext, engine: DbEngine | null): RouteResult {
  const { ctx, principal } = req;
  const now = ctx.clock.now();
  const map = ctx.state.databases;
  const inOrder = map.inOrder(engine);
  let shown = inOrder;
  if (principal.user.restricted) {
    // What entityPermission() grants: any entity grant of the database's id.
    const granted = new Set(principal.user.grants.database.map((g) => g.id));
    shown = inOrder.filter((db) => granted.has(db.id));
  }
  settleList(ctx, map, engine, shown, shown === inOrder, now);
  const page = pageRequest(req.query);
  const filter = req.header("x-filter");
  const unfiltered = filter === undefined || filter.trim() === "";
  // Pages of a whole list are kept; filtered ones (e.g. a label looked up) and a restricted
  // user's are only made.
  const key = unfiltered && shown === inOrder ? `${engine ?? "*"} ${String(page.page)} ${String(page.pageSize)}` : null;
  const kept = key === null ? null : keptPage(map, key, now);
  if (kept !== null) return { body: new RawJson(kept) };
  const items = unfiltered ? shown : applyFilter(shown, filter, DB_FILTERS);
  const results = items.length;
  const pages = Math.max(1, Math.ceil(results / page.pageSize));
  const start = (page.page - 1) * page.pageSize;
  const end = Math.min(results, start + page.pageSize);
  const data: Buffer[] = [];
  let timed = false;
  for (let i = start; i < end; i++) {
    const db = items[i] as DatabaseRecord;
    data.push(engine === null ? listItemJson(db, now) : databaseJson(db, now));
    if (db.platform === "current") timed = true;
  }
  return {
    body: new RawJson(key !== null
      ? pageJson(map, key, data, page.page, pages, results, timed, now)
      : listJson(data, page.page, pages, results)),
  };
}

function load(req: RequestContext, engine: DbEngine, level: "read_only" | "read_write"): DatabaseRecord {
  const db = findDatabase(req.ctx, engine, intParam(req.params, "instanceId"));
  requireEntity(req.principal, "database", db.id, level);
  settle(req.ctx, db);
  return db;
}

/**
 * The backups routes (list, view, snapshot, restore, delete) on a current-platform database.
 * The current platform has no backups (no such routes in its OpenAPI description, none in the
 * official Go client; the Python client calls them unsupported off legacy) and nothing of what
 * the real API answers is recorded. GUESS: the route exists for legacy databases, so the API
 * finds the database and checks access as on any database route (a missing database or one the
 * caller may not see is 404, read-only access to a write is 403), then finds no backups of this
 * database: 404 with the API's usual body {"errors":[{"reason":"Not found"}]}, as for any
 * missing object or path. To answer otherwise (e.g. 400 "not supported"), change this function.
 */
function refuseBackupsOnCurrentPlatform(db: DatabaseRecord): void {
  if (db.platform === "current") throw notFound();
}

/** A database the backups routes may act on: found, visible to the caller, on the legacy platform. */
function loadForBackups(req: RequestContext, engine: DbEngine, level: "read_only" | "read_write"): DatabaseRecord {
  const db = load(req, engine, level);
  refuseBackupsOnCurrentPlatform(db);
  return db;
}

/**
 * Suspend and resume on a legacy database. The spec (the legacy platform's) has no such routes
 * and nothing is recorded; the emulator's choice: 400 with a reason, the database unchanged.
 */
function refuseOnLegacy(db: DatabaseRecord, what: string): void {
  if (db.platform === "legacy") {
    throw badRequest(`${what} is not available on the legacy database platform (rdbms-legacy); only databases on the current platform (rdbms-default) can be suspended and resumed`);
  }
}

/** A suspended cluster (or one on its way in or out) has no running nodes. */
const SUSPENDED: readonly DbStatus[] = ["suspending", "suspended", "resuming"];

function findBackup(db: DatabaseRecord, req: RequestContext) {
  const id = intParam(req.params, "backupId");
  const backup = db.backups.find((b) => b.id === id);
  if (backup === undefined) throw notFound();
  return backup;
}

function engineRoutes(engine: DbEngine): Route[] {
  const base = `/databases/${engine}/instances`;
  const one = `${base}/{instanceId}`;
  const createSchema = engine === "mysql" ? mysqlCreateSchema : engine === "postgresql" ? postgresCreateSchema : valkeyCreateSchema;
  return [
    {
      method: "GET", template: base, area: "databases", level: "read_only", paginated: true,
      handler: (req) => databaseList(req, engine),
    },
    {
      method: "POST", template: base, area: "databases", level: "read_write",
      handler: (req) => {
        requireGlobalGrant(req.principal, "add_databases");
        const input = parseBody(createSchema, req.body);
        // A new database is created on the server's platform (--platform) and keeps it; Valkey,
        // which exists only on the current platform, always there.
        const platform = engine === "valkey" ? "current" : req.ctx.platform;
        checkCreate(req.ctx, engine, input, platform, req.body);
        // A fork (current platform; checkCreate refused it on legacy): its source as the caller may see it.
        const fork = checkFork(req.ctx, engine, input, (id) => entityPermission(req.principal, "database", id));
        const db = createRecord(req.ctx, engine, input, req.principal.user.username, platform, fork);
        grantCreated(req.principal, "database", db.id);
        return { body: renderDatabase(db, { createResponse: true }) };
      },
    },
    {
      method: "GET", template: one, area: "databases", level: "read_only",
      handler: (req) => {
        const db = load(req, engine, "read_only");
        const now = req.ctx.clock.now();
        const kept = keptDatabaseJson(db, now);
        return { body: kept === null ? renderDatabase(db, { now }) : new RawJson(kept) };
      },
    },
    {
      method: "PUT", template: one, area: "databases", level: "read_write",
      handler: (req) => updateDatabase(req, engine),
    },
    {
      method: "DELETE", template: one, area: "databases", level: "read_write",
      handler: (req) => {
        const db = load(req, engine, "read_write");
        requireUnrestricted(req.principal);
        requireStatus(db, ["active", "failed", "degraded"], "delete the database");
        req.ctx.state.databases.delete(db.id);
        return OK;
      },
    },
    {
      method: "GET", template: `${one}/backups`, area: "databases", level: "read_write", paginated: true,
      handler: (req) => {
        const db = loadForBackups(req, engine, "read_only");
        requireNotStatus(db, "provisioning", "list backups");
        return list(req, db.backups, { type: (b: { type: string }) => b.type, label: (b: { label: string }) => b.label }, renderBackup);
      },
    },
    {
      method: "POST", template: `${one}/backups`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadForBackups(req, engine, "read_write");
        const input = parseBody(snapshotSchema, req.body);
        if (db.status === "backing_up" || db.pending?.effect === "snapshot") {
          throw badRequest("Another backup is in progress; wait for it to finish.");
        }
        requireStatus(db, ["active"], "create a snapshot");
        if (db.backups.filter((b) => b.type === "snapshot").length >= 3) {
          throw badRequest("A database can have at most 3 snapshots; delete one first.");
        }
        begin(req.ctx, db, "backing_up", "active", { effect: "snapshot", snapshot: { label: input.label, target: input.target ?? "primary" } });
        return OK;
      },
    },
    {
      method: "GET", template: `${one}/backups/{backupId}`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadForBackups(req, engine, "read_only");
        requireNotStatus(db, "provisioning", "view a backup");
        return { body: renderBackup(findBackup(db, req)) };
      },
    },
    {
      method: "DELETE", template: `${one}/backups/{backupId}`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadForBackups(req, engine, "read_write");
        requireNotStatus(db, "provisioning", "delete a backup");
        const backup = findBackup(db, req);
        db.backups = db.backups.filter((b) => b.id !== backup.id);
        return OK;
      },
    },
    {
      method: "POST", template: `${one}/backups/{backupId}/restore`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadForBackups(req, engine, "read_write");
        findBackup(db, req);
        requireStatus(db, ["active", "degraded", "failed"], "restore a backup");
        begin(req.ctx, db, "restoring", "active", { effect: "restore" });
        return OK;
      },
    },
    {
      method: "GET", template: `${one}/credentials`, area: "databases", level: "read_only",
      handler: (req) => {
        const db = load(req, engine, "read_only");
        requireStatus(db, ["active"], "view credentials");
        return { body: { username: db.username, password: db.password } };
      },
    },
    {
      method: "POST", template: `${one}/credentials/reset`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = load(req, engine, "read_write");
        requireUnrestricted(req.principal);
        requireNotStatus(db, "provisioning", "reset credentials");
        // Not while suspended (no running nodes to change the password on): a choice, the sources are silent.
        for (const status of SUSPENDED) requireNotStatus(db, status, "reset credentials");
        // The new password takes several (emulated) seconds to appear.
        db.pendingPassword = { value: req.ctx.random.string(24), at: req.ctx.clock.now() + req.ctx.transitionMs };
        db.updated = req.ctx.clock.now();
        db.credentialsReset = true;
        // A change lists settle at a time of its own (lifecycle.ts nextChange).
        noteStateChange();
        return OK;
      },
    },
    {
      method: "POST", template: `${one}/patch`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = load(req, engine, "read_write");
        requireStatus(db, ["active"], "patch the database");
        begin(req.ctx, db, "updating", "active");
        return OK;
      },
    },
    {
      method: "GET", template: `${one}/ssl`, area: "databases", level: "read_only",
      handler: (req) => {
        const db = load(req, engine, "read_only");
        requireStatus(db, ["active"], "view the SSL certificate");
        return { body: { ca_certificate: Buffer.from(req.ctx.caCertPem).toString("base64") } };
      },
    },
    {
      method: "POST", template: `${one}/suspend`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = load(req, engine, "read_write");
        refuseOnLegacy(db, "Suspending a database");
        requireStatus(db, ["active"], "suspend the database");
        begin(req.ctx, db, "suspending", "suspended");
        return OK;
      },
    },
    {
      method: "POST", template: `${one}/resume`, area: "databases", level: "read_write",
      handler: (req) => {
        const db = load(req, engine, "read_write");
        refuseOnLegacy(db, "Resuming a database");
        requireStatus(db, ["suspended"], "resume the database");
        begin(req.ctx, db, "resuming", "active");
        return OK;
      },
    },
  ];
}

/**
 * PUT …/instances/{id}. Both platforms: label, allow_list, updates, type (a larger plan). The
 * current platform also: cluster_size, version (a major upgrade), engine_config (merged; null
 * removes a parameter), private_network (set, replace, or null to detach). On legacy these four
 * are refused when they ask for a change (400 naming the field). The status must be active (spec
 * and SNEW), and engine_config has its own reason while suspended (SNEW: "cannot update
 * engine_config while suspended").
 *
 * Transitions: legacy as recorded (an allow_list change or resize answers `updating`). Current:
 * an update answers `active` (recorded), except a resize (type, cluster_size) which goes
 * `resizing` and a version upgrade which goes `updating`, each for the provisioning time, then
 * `active`. The new values show at once, in the answer and in reads during the transition (the
 * API records what was asked; nothing recorded says otherwise). engine_config and
 * private_network apply at once without a transition (not recorded either).
 */
function updateDatabase(req: RequestContext, engine: DbEngine): RouteResult {
  const db = load(req, engine, "read_write");
  const input = parseBody(updateSchema, req.body);
  const current = db.platform === "current";
  const major = (v: string) => (v.includes("/") ? v.split("/")[1] ?? "" : v).split(".")[0] ?? "";
  if (!current) {
    const refused = [
      ...(input.engine_config != null ? [legacyRefusal("engine_config", "Engine parameters (engine_config)")] : []),
      ...(input.private_network != null ? [legacyRefusal("private_network", "A private network (private_network)")] : []),
      ...(input.cluster_size != null && input.cluster_size !== db.cluster_size ? [legacyRefusal("cluster_size", "Changing the number of nodes in place (cluster_size)")] : []),
      ...(input.version != null && major(input.version) !== major(db.version) ? [legacyRefusal("version", "An in-place version upgrade (version); a new engine version needs a new cluster")] : []),
    ];
    if (refused.length > 0) throw new ApiError(400, refused);
  }
  if (input.engine_config != null && SUSPENDED.includes(db.status)) {
    throw badRequest(`Cannot update engine_config while the database is ${db.status}; resume it first.`, "engine_config");
  }
  requireStatus(db, ["active"], "update the database");
  if (input.label != null && labelTaken(req.ctx, engine, input.label, db.id)) {
    throw badRequest("Label must be unique among your databases", "label");
  }
  const configErrors = checkEngineConfig(engine, input.engine_config);
  if (configErrors.length > 0) throw new ApiError(400, configErrors);
  const newType = input.type != null && input.type !== db.type ? checkResize(db, input.type) : null;
  const newSize = current && input.cluster_size != null && input.cluster_size !== db.cluster_size ? input.cluster_size : null;
  if (newSize === 2 && (newType ?? findDatabaseType(db.type))?.class !== "dedicated") {
    throw badRequest("A 2 node cluster needs a dedicated plan", "cluster_size");
  }
  const newVersion = current && input.version != null ? checkVersionUpgrade(db, input.version) : null;
  const updates = { ...db.updates };
  if (input.updates != null) {
    const u = input.updates;
    if (u.frequency != null) updates.frequency = u.frequency;
    if (u.duration != null) updates.duration = u.duration;
    if (u.hour_of_day != null) updates.hour_of_day = u.hour_of_day;
    if (u.day_of_week != null) updates.day_of_week = u.day_of_week;
    if (u.week_of_month !== undefined && !current) updates.week_of_month = u.week_of_month;
    if (current && updates.frequency !== "weekly") {
      throw badRequest("frequency must be weekly", "updates.frequency");
    }
    // GUESS (facts.md): spec 4.234.0 says the duration "Currently can only be `4`"; what the
    // API answers to another is not recorded: a 400 in the style of the frequency's.
    if (current && u.duration != null && u.duration !== 4) {
      throw badRequest("duration must be 4", "updates.duration");
    }
    if (updates.frequency === "weekly") updates.week_of_month = null;
    else if (updates.week_of_month === null) {
      throw badRequest("week_of_month is required when frequency is monthly", "updates.week_of_month");
    }
  }
  let busy = false;
  if (input.label != null) db.label = input.label;
  db.updates = updates;
  if (input.allow_list != null) {
    // Allow-list changes take a short time to apply (spec), so the cluster is briefly updating.
    db.allow_list = normalizeAllowList(input.allow_list);
    busy = true;
  }
  if (newType !== null) {
    db.type = newType.id;
    db.total_disk_size_gb = newType.totalDiskGb;
  }
  if (newSize !== null) db.cluster_size = newSize;
  if (newVersion !== null) db.version = newVersion;
  if (current && input.engine_config != null) {
    const patch = input.engine_config as Record<string, unknown>;
    db.engine_config = mergeEngineConfig(db.engine_config, req.ctx.faults.config.normalizeEngineConfig ? canonicalStrings(patch) : patch);
  }
  if (current && input.private_network !== undefined) db.private_network = input.private_network === null ? null : privateNetwork(input.private_network);
  db.updated = req.ctx.clock.now();
  if (!current) {
    // Legacy: the answer and the next reads say `updating` (recorded).
    if (busy || newType !== null) begin(req.ctx, db, "updating", "active");
  } else if (newType !== null || newSize !== null) {
    begin(req.ctx, db, "resizing", "active");
  } else if (newVersion !== null) {
    begin(req.ctx, db, "updating", "active");
  }
  return { body: renderDatabase(db, { now: req.ctx.clock.now() }) };
}

export function databaseRoutes(): Route[] {
  return [
    {
      method: "GET", template: "/databases/engines", area: null, level: "read_only", paginated: true,
      handler: (req) => list(req, offeredEngines(req.ctx.valkey), { engine: (e: { engine: string }) => e.engine, version: (e: { version: string }) => e.version }, (e) => ({ ...e })),
    },
    {
      method: "GET", template: "/databases/engines/{engineId+}", area: null, level: "read_only",
      handler: (req) => {
        const engine = offeredEngines(req.ctx.valkey).find((e) => e.id === req.params.engineId);
        if (engine === undefined) throw notFound();
        return { body: { ...engine } };
      },
    },
    {
      method: "GET", template: "/databases/types", area: null, level: "read_only", paginated: true,
      handler: (req) => list(req, DATABASE_TYPES, { class: (t: { class: string }) => t.class, deprecated: () => false }, renderDatabaseType),
    },
    {
      method: "GET", template: "/databases/types/{typeId}", area: null, level: "read_only",
      handler: (req) => {
        const type = DATABASE_TYPES.find((t) => t.id === req.params.typeId);
        if (type === undefined) throw notFound();
        return { body: renderDatabaseType(type) };
      },
    },
    {
      method: "GET", template: "/databases/instances", area: "databases", level: "read_only", paginated: true,
      handler: (req) => databaseList(req, null),
    },
    // The engine parameters a current-platform database's engine_config may set (recorded:
    // X-Accepted-Oauth-Scopes `*`, like engines and types).
    ...(["mysql", "postgresql", "valkey"] as const).map((engine): Route => ({
      method: "GET", template: `/databases/${engine}/config`, area: null, level: "read_only",
      handler: () => ({ body: engineConfigCatalogue(engine) }),
    })),
    ...engineRoutes("mysql"),
    ...engineRoutes("postgresql"),
    // Valkey (spec 4.234.0, limited availability). GUESS (databases/facts.md): its instance routes
    // are assumed to follow MySQL's and PostgreSQL's (/databases/valkey/instances[/{id}[/…]]).
    ...engineRoutes("valkey"),
  ];
}

/** String parameters in the canonical form the normalizeEngineConfig fault stores (upper-case, list items sorted). */
function canonicalStrings(config: Record<string, unknown>): Record<string, unknown> {
  const canon = (v: unknown): unknown => {
    if (typeof v === "string") return v.split(",").map((s) => s.trim().toUpperCase()).sort().join(",");
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]));
    return v;
  };
  return canon(config) as Record<string, unknown>;
}
