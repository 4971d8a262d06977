// The database state machine, evaluated lazily against the emulated clock: a transition in
// flight is stored with the time it completes, and every read settles what is due. So a
// frozen clock freezes every database, and advancing it runs exactly the transitions due.
// A list settles what is due among the databases it shows, in their order; it knows when the
// next of them is due (nextChange), so between transitions it settles nothing.
import { apiTime, DAY_MS } from "../clock.ts";
import type { EmulatorContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { nextId, noteStateChange, type DatabaseMap, type DatabaseRecord, type DbEngine, type DbStatus, type PendingTransition } from "../store.ts";

const AUTO_BACKUP_DAYS = 7;

/** Applies what is due at `now` (default: the emulated clock's now). */
export function settle(ctx: EmulatorContext, db: DatabaseRecord, now = ctx.clock.now()): void {
  if (nextChange(db, now) > now) return;
  // What lists remember (when the next change is due, the pages they made) is redone.
  noteStateChange();
  if (db.pendingPassword !== null && db.pendingPassword.at <= now) {
    db.password = db.pendingPassword.value;
    // The record changed: clients that cache credentials see it in `updated` (lists included).
    db.updated = Math.max(db.updated, db.pendingPassword.at);
    db.pendingPassword = null;
  }
  const p = db.pending;
  if (p !== null && p.until <= now) {
    db.pending = null;
    db.status = p.next;
    db.updated = p.until;
    if (p.effect === "snapshot" && p.snapshot !== undefined) {
      db.backups.push({ id: nextId(ctx.state, "backup"), type: "snapshot", label: p.snapshot.label, created: p.until });
    }
    // Spec: "In all cases where a credentials reset happened before a restore, the restore
    // leaves the cluster in failed state."
    if (p.effect === "restore" && db.credentialsReset) db.status = "failed";
  }
  // The current platform keeps its daily backups out of sight (restore points for a fork).
  if (db.status !== "provisioning" && db.platform === "legacy") autoBackups(ctx, db, now);
}

/**
 * The earliest emulated time at which settle() would change the record (Infinity: never, until
 * something else changes it; -Infinity: at every look). Up to then settle() does nothing.
 */
export function nextChange(db: DatabaseRecord, now: number): number {
  let next = Number.POSITIVE_INFINITY;
  if (db.pendingPassword !== null) next = db.pendingPassword.at;
  if (db.pending !== null && db.pending.until < next) next = db.pending.until;
  if (db.status !== "provisioning" && db.platform === "legacy") {
    // autoBackups() does nothing until the day after its last look (a last look ahead of now,
    // from a clock started earlier than a state file's, makes it look every time).
    if (db.autoBackupsUntil > now) return Number.NEGATIVE_INFINITY;
    const nextDay = (Math.floor(db.autoBackupsUntil / DAY_MS) + 1) * DAY_MS;
    if (nextDay < next) next = nextDay;
  }
  return next;
}

/**
 * Settles, in order, what is due at `now` among `shown`: the databases a list of `map` shows
 * (engine: one engine's list, null: all engines'). `complete`: `shown` is the whole list (not a
 * restricted user's part of it), so when the next of them is due is remembered, and until then,
 * or until the map or any record changes otherwise, such a list settles nothing.
 */
export function settleList(ctx: EmulatorContext, map: DatabaseMap, engine: DbEngine | null, shown: readonly DatabaseRecord[], complete: boolean, now: number): void {
  if (now < map.quietUntil(engine)) return;
  let quietUntil = Number.POSITIVE_INFINITY;
  for (const db of shown) {
    settle(ctx, db, now);
    const next = nextChange(db, now);
    if (next < quietUntil) quietUntil = next;
  }
  if (complete) map.setQuietUntil(engine, quietUntil);
}

/** Daily automatic backups at 00:00 UTC, each kept 7 days, at most 7 stored. */
function autoBackups(ctx: EmulatorContext, db: DatabaseRecord, now: number): void {
  // Automatic backups are made, and expire, only at 00:00 UTC: within the day of the last look
  // there is nothing to do (nextChange() says the same).
  if (Math.floor(now / DAY_MS) === Math.floor(db.autoBackupsUntil / DAY_MS) && db.autoBackupsUntil <= now) return;
  const firstDay = Math.max(Math.floor(db.autoBackupsUntil / DAY_MS) + 1, Math.floor(now / DAY_MS) - AUTO_BACKUP_DAYS);
  for (let day = firstDay; day * DAY_MS <= now; day++) {
    const at = day * DAY_MS;
    if (at <= db.created + ctx.transitionMs) continue;
    db.backups.push({ id: nextId(ctx.state, "backup"), type: "auto", label: `auto${apiTime(at).slice(0, 10).replaceAll("-", "")}`, created: at });
  }
  db.autoBackupsUntil = Math.max(db.autoBackupsUntil, now);
  if (db.backups.some((b) => b.type === "auto")) {
    const cutoff = now - AUTO_BACKUP_DAYS * DAY_MS;
    db.backups = db.backups.filter((b) => b.type !== "auto" || b.created > cutoff);
    const autos = db.backups.filter((b) => b.type === "auto");
    if (autos.length > AUTO_BACKUP_DAYS) {
      const drop = new Set(autos.slice(0, autos.length - AUTO_BACKUP_DAYS).map((b) => b.id));
      db.backups = db.backups.filter((b) => !drop.has(b.id));
    }
  }
}

export function requireStatus(db: DatabaseRecord, allowed: readonly DbStatus[], action: string): void {
  if (!allowed.includes(db.status)) {
    throw badRequest(`Cannot ${action} while the database is ${db.status}; it must be ${allowed.join(", ")}.`);
  }
}

export function requireNotStatus(db: DatabaseRecord, forbidden: DbStatus, action: string): void {
  if (db.status === forbidden) throw badRequest(`Cannot ${action} while the database is ${forbidden}.`);
}

export function begin(ctx: EmulatorContext, db: DatabaseRecord, during: DbStatus, next: DbStatus, extra: Partial<PendingTransition> = {}): void {
  const now = ctx.clock.now();
  db.status = during;
  db.updated = now;
  db.pending = { until: now + ctx.transitionMs, next, ...extra };
  noteStateChange();
}
