// PostgreSQL connection pools (PgBouncer): /databases/postgresql/instances/{id}/connection-pools
// and …/{poolName}, under /v4 and /v4beta like every route. What the spec (4.234.0; no
// client or recording has pools) says is followed: a pool has no id and is addressed by its label; label 1..63 characters
// of letters, digits, `_` and `-`, not starting with `-`, unique in its database, never changed;
// database default "defaultdb"; mode session | statement | transaction, default transaction;
// size default 10, at most the plan's connections; username null (the default) reuses the
// inbound user; PUT takes database, mode, size and username; DELETE answers {}; the list has
// the pagination envelope; scopes: the list read_write (sic, as the spec says), one pool
// read_only, writes read_write.
//
// Facts this emulator assumes (nothing recorded: no client, provider or recording has pools):
//  - the plan's connection limit is 25 per GiB of the plan's memory, at least 25, at most 1000
//    (Aiven's figure for small plans; the spec gives no number): poolConnectionLimit;
//  - each pool's size is checked against it on its own (not the sum of the pools'); size >= 1;
//  - a duplicate label is 400 `A connection pool with this label already exists` on `label`
//    (Linode answers a taken label with 400 elsewhere; not 409);
//  - POST, PUT and DELETE need an active database (the spec says so of POST only): any other
//    status (provisioning, suspended, resizing, …) is 400 as requireStatus words it; reads
//    answer in any status;
//  - a legacy-platform database and a MySQL database have no pools: every pool route there is
//    404 `Not found` (as a path the API does not have);
//  - deleting the database deletes its pools with it (they live in its record);
//  - error texts are the emulator's own.
import { requireEntity } from "../auth.ts";
import { findDatabaseType } from "../catalog.ts";
import type { RequestContext, Route, RouteResult } from "../context.ts";
import { badRequest, notFound } from "../errors.ts";
import { pageRequest, paginate } from "../pagination.ts";
import { intParam } from "../router.ts";
import type { DatabaseRecord, DbEngine } from "../store.ts";
import { z } from "zod";
import { parseBody, label, oneOf } from "../validation.ts";
import { requireStatus, settle } from "./lifecycle.ts";
import { findDatabase } from "./model.ts";

const POOL_MODES = ["session", "statement", "transaction"] as const;
const poolLabel = label(1, 63, /^[A-Za-z0-9_][A-Za-z0-9_-]*$/);
const poolFields = {
  database: z.string({ error: "Must be a string" }).min(1, { error: "Length must be 1-63 characters" }).max(63, { error: "Length must be 1-63 characters" }),
  mode: oneOf(POOL_MODES),
  size: z.number().int({ error: "Must be an integer" }).min(1, { error: "Must be at least 1" }),
  username: z.string({ error: "Must be a string or null" }).min(1).max(63).nullable(),
};
/** POST: label required; the rest take the spec's defaults. */
const poolCreateSchema = z.object({
  label: poolLabel,
  database: poolFields.database.default("defaultdb"),
  mode: poolFields.mode.default("transaction"),
  size: poolFields.size.default(10),
  username: poolFields.username.default(null),
});
/** PUT: no label (it cannot change; an unknown key is refused as the spec's additionalProperties false says), nothing required. */
const poolUpdateSchema = z.strictObject({
  database: poolFields.database.optional(),
  mode: poolFields.mode.optional(),
  size: poolFields.size.optional(),
  username: poolFields.username.optional(),
});

export interface ConnectionPoolRecord {
  label: string;
  database: string;
  mode: "session" | "statement" | "transaction";
  size: number;
  username: string | null;
}

/** The most connections one pool of a database of this plan may have (assumed: see the header). */
export function poolConnectionLimit(db: DatabaseRecord): number {
  const memoryGib = (findDatabaseType(db.type)?.memory ?? 1024) / 1024;
  return Math.min(1000, Math.max(25, Math.floor(25 * memoryGib)));
}

const renderPool = (p: ConnectionPoolRecord): ConnectionPoolRecord => ({ database: p.database, label: p.label, mode: p.mode, size: p.size, username: p.username });

/** The database whose pools a route acts on: found, visible, PostgreSQL on the current platform; else 404. */
function loadDatabase(req: RequestContext, engine: DbEngine, level: "read_only" | "read_write"): DatabaseRecord {
  const db = findDatabase(req.ctx, engine, intParam(req.params, "instanceId"));
  requireEntity(req.principal, "database", db.id, level);
  settle(req.ctx, db);
  if (engine !== "postgresql" || db.platform !== "current") throw notFound();
  return db;
}

function findPool(db: DatabaseRecord, req: RequestContext): ConnectionPoolRecord {
  const pool = db.pools?.find((p) => p.label === req.params.poolName);
  if (pool === undefined) throw notFound();
  return pool;
}

function checkSize(db: DatabaseRecord, size: number): void {
  const limit = poolConnectionLimit(db);
  if (size > limit) throw badRequest(`Size cannot exceed the ${String(limit)} connections available for this database's plan`, "size");
}

const OK: RouteResult = { body: {} };

/** The routes of one engine: PostgreSQL's serve pools; MySQL's exist only to answer 404 (assumed), as the other engine routes are written once for both. */
function poolRoutes(engine: DbEngine): Route[] {
  const base = `/databases/${engine}/instances/{instanceId}/connection-pools`;
  const one = `${base}/{poolName}`;
  return [
    {
      method: "GET", template: base, area: "databases", level: "read_write", paginated: true,
      handler: (req) => {
        const db = loadDatabase(req, engine, "read_only");
        return { body: paginate(db.pools ?? [], pageRequest(req.query), renderPool) };
      },
    },
    {
      method: "POST", template: base, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadDatabase(req, engine, "read_write");
        const input = parseBody(poolCreateSchema, req.body);
        requireStatus(db, ["active"], "create a connection pool");
        if (db.pools?.some((p) => p.label === input.label) === true) throw badRequest("A connection pool with this label already exists", "label");
        checkSize(db, input.size);
        const pool: ConnectionPoolRecord = { label: input.label, database: input.database, mode: input.mode, size: input.size, username: input.username };
        db.pools = [...db.pools ?? [], pool];
        return { body: renderPool(pool) };
      },
    },
    {
      method: "GET", template: one, area: "databases", level: "read_only",
      handler: (req) => ({ body: renderPool(findPool(loadDatabase(req, engine, "read_only"), req)) }),
    },
    {
      method: "PUT", template: one, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadDatabase(req, engine, "read_write");
        const pool = findPool(db, req);
        const input = parseBody(poolUpdateSchema, req.body);
        requireStatus(db, ["active"], "update a connection pool");
        if (input.size !== undefined) checkSize(db, input.size);
        if (input.database !== undefined) pool.database = input.database;
        if (input.mode !== undefined) pool.mode = input.mode;
        if (input.size !== undefined) pool.size = input.size;
        if (input.username !== undefined) pool.username = input.username;
        return { body: renderPool(pool) };
      },
    },
    {
      method: "DELETE", template: one, area: "databases", level: "read_write",
      handler: (req) => {
        const db = loadDatabase(req, engine, "read_write");
        const pool = findPool(db, req);
        requireStatus(db, ["active"], "delete a connection pool");
        db.pools = (db.pools ?? []).filter((p) => p !== pool);
        return OK;
      },
    },
  ];
}

export function connectionPoolRoutes(): Route[] {
  return [...poolRoutes("postgresql"), ...poolRoutes("mysql")];
}
