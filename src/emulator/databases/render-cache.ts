// Databases rendered as JSON, kept per record as the UTF-8 bytes sent and rendered again only
// when a field they show changed: a list page is then its kept items copied into one buffer,
// with no date formatting, JSON.stringify or UTF-8 encoding per item (a page made afresh after
// one of its records changed renders that record alone). A kept text is checked against the record on every use (every field
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
  /** renderDatabase(db, { now }) as JSON (UTF-8), and the restore point's second it shows. */
  full: Buffer | null = null;
  fullRestore: number | null = null;
  /** renderReduced(db) as JSON (UTF-8). */
  reduced: Buffer | null = null;

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

/**
 * Where a record holds its Kept: a property of its own no one else sees (a symbol, not
 * enumerable: not in Object.keys(), JSON.stringify(), a spread or a state file), read faster
 * than a WeakMap is looked up, which a list does for each of its items.
 */
const KEPT = Symbol("kept JSON");
type Holder = DatabaseRecord & { [KEPT]?: Kept };

function keptOf(db: DatabaseRecord): Kept | undefined {
  return (db as Holder)[KEPT];
}

function keptFor(db: DatabaseRecord): Kept {
  let k = keptOf(db);
  if (k === undefined || !k.shows(db)) {
    k = new Kept(db);
    Object.defineProperty(db, KEPT, { value: k, writable: true, configurable: true, enumerable: false });
  }
  return k;
}

/**
 * The text as UTF-8 in memory of its own: Buffer.from() would cut a small one from a shared 8 KiB
 * block, which stays whole while any text cut from it lives, so texts replaced one at a time
 * over a long run could keep many blocks for a few live texts each.
 */
function utf8(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** JSON.stringify(renderDatabase(db, { now })) as UTF-8. */
export function databaseJson(db: DatabaseRecord, now: number): Buffer {
  const k = keptFor(db);
  const restore = restoreSecond(db, now);
  if (k.full === null || k.fullRestore !== restore) {
    k.full = utf8(JSON.stringify(renderDatabase(db, { now })));
    k.fullRestore = restore;
  }
  return k.full;
}

/**
 * databaseJson(db, now) if it is kept already (the database was listed since it last changed),
 * else null: a GET of one database uses it, but does not keep a text of its own (rendered once
 * and dropped, as a first look is, it costs less than rendering and keeping).
 */
export function keptDatabaseJson(db: DatabaseRecord, now: number): Buffer | null {
  const k = keptOf(db);
  if (k?.full == null || !k.shows(db) || k.fullRestore !== restoreSecond(db, now)) return null;
  return k.full;
}

/** JSON.stringify(renderListItem(db, now)) as UTF-8: an item of GET /databases/instances. */
export function listItemJson(db: DatabaseRecord, now: number): Buffer {
  if (db.platform === "current") return databaseJson(db, now);
  const k = keptFor(db);
  k.reduced ??= utf8(JSON.stringify(renderReduced(db)));
  return k.reduced;
}

/**
 * Items in a kept run of a page: a page made again after one of its items changed copies that
 * run alone and sends the others as kept (a page is its runs sent one after another), so a
 * change costs a few KiB copied, not the whole page (~320 KiB for 500 items) allocated anew.
 */
const RUN_ITEMS = 32;

/** A run of a page's items: their texts (by identity) and the bytes they make, comma-separated. */
interface Run {
  items: readonly Buffer[];
  bytes: Buffer;
}

interface KeptPage {
  runs: readonly Run[];
  page: number;
  pages: number;
  results: number;
  /** The page as sent: HEAD, each run's bytes, the envelope's end. */
  chunks: readonly Buffer[];
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
export function keptPage(map: DatabaseMap, key: string, now: number): readonly Buffer[] | null {
  const last = keptPages.get(map)?.get(key);
  if (last?.revision !== map.revision || last.changes !== stateChangeCount()) return null;
  if (last.second !== null && last.second !== Math.floor(now / 1000)) return null;
  return last.chunks;
}

/**
 * The list envelope ({data, page, pages, results}, as JSON.stringify() writes it) of these
 * items' JSON, as UTF-8 chunks sent one after another, kept as the page `key` names
 * (keptPage). Each run of RUN_ITEMS items whose texts are the ones it was made of last time
 * is used again as it is; the chunks made last time are used again while every item's text is
 * the same. `timed`: an item shows a time that moves with the clock (a current-platform
 * database's oldest_restore_time).
 */
export function pageJson(map: DatabaseMap, key: string, items: readonly Buffer[], page: number, pages: number, results: number, timed: boolean, now: number): readonly Buffer[] {
  let kept = keptPages.get(map);
  if (kept === undefined) {
    kept = new Map();
    keptPages.set(map, kept);
  }
  const last = kept.get(key);
  const runs: Run[] = [];
  let same = last !== undefined && last.page === page && last.pages === pages && last.results === results;
  for (let start = 0; start < items.length; start += RUN_ITEMS) {
    const end = Math.min(items.length, start + RUN_ITEMS);
    const before = last?.runs[runs.length];
    if (before !== undefined && holds(before.items, items, start, end)) runs.push(before);
    else {
      same = false;
      const run = items.slice(start, end);
      runs.push({ items: run, bytes: joined(run, start > 0) });
    }
  }
  if (last !== undefined && runs.length !== last.runs.length) same = false;
  const chunks = same && last !== undefined ? last.chunks : [HEAD, ...runs.map((r) => r.bytes), envelopeEnd(page, pages, results)];
  kept.delete(key);
  kept.set(key, { runs, page, pages, results, chunks, revision: map.revision, changes: stateChangeCount(), second: timed ? Math.floor(now / 1000) : null });
  if (kept.size > PAGES_KEPT) {
    const oldest = kept.keys().next().value;
    if (oldest !== undefined) kept.delete(oldest);
  }
  return chunks;
}

/** The list envelope of these items' JSON (UTF-8) in one buffer: what pageJson() sends, for a page not kept. */
export function listJson(items: readonly Buffer[], page: number, pages: number, results: number): Buffer {
  return Buffer.concat([HEAD, joined(items, false), envelopeEnd(page, pages, results)]);
}

const HEAD = Buffer.from('{"data":[');
const COMMA = 0x2c;

function envelopeEnd(page: number, pages: number, results: number): Buffer {
  return Buffer.from(`],"page":${String(page)},"pages":${String(pages)},"results":${String(results)}}`);
}

/** The items comma-separated in one buffer, after a comma when `lead` (a run after the first). */
function joined(items: readonly Buffer[], lead: boolean): Buffer {
  let size = lead ? items.length : Math.max(0, items.length - 1);
  for (const item of items) size += item.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Buffer;
    if (lead || i > 0) out[at++] = COMMA;
    out.set(item, at);
    at += item.length;
  }
  return out;
}

/** Whether `run` is items[start..end) (each text by identity). */
function holds(run: readonly Buffer[], items: readonly Buffer[], start: number, end: number): boolean {
  if (run.length !== end - start) return false;
  for (let i = start; i < end; i++) if (run[i - start] !== items[i]) return false;
  return true;
}
