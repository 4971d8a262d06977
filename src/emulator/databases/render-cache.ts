// Databases rendered as JSON text, kept per record and rendered again only when a field they
// show changed: a list page is then a join of kept strings, with no date formatting or
// JSON.stringify per item. A kept text is checked against the record on every use (every field
// it shows, compared as it was when rendered), so whoever changes a record, by assigning a field
// (settle, a route, the admin endpoint, a test), is seen without telling this cache. Changing
// an array or object a record holds in place (allow_list.push()) is not seen: every writer
// assigns a new one. A whole page is kept too, as the bytes sent: used as it is while nothing
// can have changed (no change counted since), else while its items' texts are the same.
import { stateChangeCount, type DatabaseMap, type DatabaseRecord } from "../store.ts";
import { oldestRestoreTime } from "./model.ts";
import { renderDatabase, renderReduced } from "./render.ts";

/**
 * The record's fields renderDatabase() and renderReduced() read. The test of this cache checks
 * that each one, changed, renders again, and that every field of a record is here or in
 * NOT_RENDERED_FIELDS; a new field shown in render.ts goes here and in Kept below.
 */
export const RENDERED_FIELDS = [
  "id", "platform", "engine", "version", "label", "region", "type", "cluster_size", "encrypted", "ssl_connection",
  "allow_list", "replication_type", "replication_commit_type", "port", "hostTag", "memberBase", "status", "created",
  "updated", "updates", "total_disk_size_gb", "used_disk_size_gb", "engine_config", "private_network", "fork",
  "pending_updates",
] as const satisfies readonly (keyof DatabaseRecord)[];

/** The record's fields no rendering shows. */
export const NOT_RENDERED_FIELDS = [
  "username", "password", "credentialsReset", "pendingPassword", "pending", "autoBackupsUntil", "backups", "owner",
] as const satisfies readonly (keyof DatabaseRecord)[];

/** What oldest_restore_time shows (only the current platform's full shape has it): its second, or null. */
function restoreSecond(db: DatabaseRecord, now: number): number | null {
  if (db.platform !== "current") return null;
  const at = oldestRestoreTime(db, now);
  // apiTime() shows whole seconds (toISOString() floors).
  return at === null ? null : Math.floor(at / 1000);
}

/** A record's texts, with the fields they show as they were when rendered (RENDERED_FIELDS). */
class Kept {
  readonly id: number;
  readonly platform: DatabaseRecord["platform"];
  readonly engine: DatabaseRecord["engine"];
  readonly version: string;
  readonly label: string;
  readonly region: string;
  readonly type: string;
  readonly cluster_size: number;
  readonly encrypted: boolean;
  readonly ssl_connection: boolean;
  readonly allow_list: readonly string[];
  readonly replication_type: string;
  readonly replication_commit_type: string | null;
  readonly port: number;
  readonly hostTag: number;
  readonly memberBase: number;
  readonly status: DatabaseRecord["status"];
  readonly created: number;
  readonly updated: number;
  readonly updates: DatabaseRecord["updates"];
  readonly total_disk_size_gb: number;
  readonly used_disk_size_gb: number;
  readonly engine_config: DatabaseRecord["engine_config"];
  readonly private_network: DatabaseRecord["private_network"];
  readonly fork: DatabaseRecord["fork"];
  readonly pending_updates: DatabaseRecord["pending_updates"];
  /** renderDatabase(db, { now }) as JSON, and the restore point's second it shows. */
  full: string | null = null;
  fullRestore: number | null = null;
  /** renderReduced(db) as JSON. */
  reduced: string | null = null;

  constructor(db: DatabaseRecord) {
    this.id = db.id;
    this.platform = db.platform;
    this.engine = db.engine;
    this.version = db.version;
    this.label = db.label;
    this.region = db.region;
    this.type = db.type;
    this.cluster_size = db.cluster_size;
    this.encrypted = db.encrypted;
    this.ssl_connection = db.ssl_connection;
    this.allow_list = db.allow_list;
    this.replication_type = db.replication_type;
    this.replication_commit_type = db.replication_commit_type;
    this.port = db.port;
    this.hostTag = db.hostTag;
    this.memberBase = db.memberBase;
    this.status = db.status;
    this.created = db.created;
    this.updated = db.updated;
    this.updates = db.updates;
    this.total_disk_size_gb = db.total_disk_size_gb;
    this.used_disk_size_gb = db.used_disk_size_gb;
    this.engine_config = db.engine_config;
    this.private_network = db.private_network;
    this.fork = db.fork;
    this.pending_updates = db.pending_updates;
  }

  /** Whether every field the texts show is what it was (each by identity). */
  shows(db: DatabaseRecord): boolean {
    return this.updated === db.updated && this.status === db.status && this.label === db.label && this.id === db.id
      && this.platform === db.platform && this.engine === db.engine && this.version === db.version && this.region === db.region
      && this.type === db.type && this.cluster_size === db.cluster_size && this.encrypted === db.encrypted
      && this.ssl_connection === db.ssl_connection && this.allow_list === db.allow_list && this.replication_type === db.replication_type
      && this.replication_commit_type === db.replication_commit_type && this.port === db.port && this.hostTag === db.hostTag
      && this.memberBase === db.memberBase && this.created === db.created && this.updates === db.updates
      && this.total_disk_size_gb === db.total_disk_size_gb && this.used_disk_size_gb === db.used_disk_size_gb
      && this.engine_config === db.engine_config && this.private_network === db.private_network && this.fork === db.fork
      && this.pending_updates === db.pending_updates;
  }
}

const kept = new WeakMap<DatabaseRecord, Kept>();

function keptFor(db: DatabaseRecord): Kept {
  let k = kept.get(db);
  if (k === undefined || !k.shows(db)) {
    k = new Kept(db);
    kept.set(db, k);
  }
  return k;
}

/** JSON.stringify(renderDatabase(db, { now })). */
export function databaseJson(db: DatabaseRecord, now: number): string {
  const k = keptFor(db);
  const restore = restoreSecond(db, now);
  if (k.full === null || k.fullRestore !== restore) {
    k.full = JSON.stringify(renderDatabase(db, { now }));
    k.fullRestore = restore;
  }
  return k.full;
}

/**
 * databaseJson(db, now) if it is kept already (the database was listed since it last changed),
 * else null: a GET of one database uses it, but does not keep a text of its own (rendered once
 * and dropped, as a first look is, it costs less than rendering and keeping).
 */
export function keptDatabaseJson(db: DatabaseRecord, now: number): string | null {
  const k = kept.get(db);
  if (k?.full == null || !k.shows(db) || k.fullRestore !== restoreSecond(db, now)) return null;
  return k.full;
}

/** JSON.stringify(renderListItem(db, now)): an item of GET /databases/instances. */
export function listItemJson(db: DatabaseRecord, now: number): string {
  if (db.platform === "current") return databaseJson(db, now);
  const k = keptFor(db);
  k.reduced ??= JSON.stringify(renderReduced(db));
  return k.reduced;
}

interface KeptPage {
  items: readonly string[];
  page: number;
  pages: number;
  results: number;
  bytes: Buffer;
  /** The map's revision and the count of changes when made: while both stay, so does every item. */
  revision: number;
  changes: number;
  /** The emulated second it was made in, when an item shows one (oldest_restore_time); else null. */
  second: number | null;
}

/** Pages kept per account's databases, at most this many (the oldest kept goes first). */
const PAGES_KEPT = 256;
const keptPages = new WeakMap<DatabaseMap, Map<string, KeptPage>>();

/**
 * The page `key` names within the account's databases (list, page, size) as made last time,
 * when nothing can have changed since: no database added or removed, no change counted
 * (noteStateChange(): every request or admin call that may change something, every settle that
 * does), and the same emulated second if it shows one. Otherwise null: make it (pageJson).
 */
export function keptPage(map: DatabaseMap, key: string, now: number): Buffer | null {
  const last = keptPages.get(map)?.get(key);
  if (last?.revision !== map.revision || last.changes !== stateChangeCount()) return null;
  if (last.second !== null && last.second !== Math.floor(now / 1000)) return null;
  return last.bytes;
}

/**
 * The list envelope ({data, page, pages, results}, as JSON.stringify() writes it) of these
 * items' texts, as UTF-8, kept as the page `key` names (keptPage). The bytes made last time
 * for it are used again while every item's text is the same. `timed`: an item shows a time
 * that moves with the clock (a current-platform database's oldest_restore_time).
 */
export function pageJson(map: DatabaseMap, key: string, items: readonly string[], page: number, pages: number, results: number, timed: boolean, now: number): Buffer {
  let kept = keptPages.get(map);
  if (kept === undefined) {
    kept = new Map();
    keptPages.set(map, kept);
  }
  const last = kept.get(key);
  const bytes = last !== undefined && last.page === page && last.pages === pages && last.results === results && sameItems(last.items, items)
    ? last.bytes
    : Buffer.from(`{"data":[${items.join(",")}],"page":${String(page)},"pages":${String(pages)},"results":${String(results)}}`);
  kept.delete(key);
  kept.set(key, { items, page, pages, results, bytes, revision: map.revision, changes: stateChangeCount(), second: timed ? Math.floor(now / 1000) : null });
  if (kept.size > PAGES_KEPT) {
    const oldest = kept.keys().next().value;
    if (oldest !== undefined) kept.delete(oldest);
  }
  return bytes;
}

function sameItems(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
