// The emulator's database lists read their pages from a per-engine order, settle only what is
// due, and send JSON kept per record and per page: what they send must be exactly what
// rendering each record afresh would send, whoever changed a record and however.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../../src/emulator/clock.ts";
import { createRecord } from "../../src/emulator/databases/model.ts";
import { NOT_RENDERED_FIELDS, RENDERED_FIELDS, databaseJson, keptDatabaseJson, keptPage, listItemJson, listJson, pageJson } from "../../src/emulator/databases/render-cache.ts";
import { renderDatabase, renderListItem } from "../../src/emulator/databases/render.ts";
import { nextChange, settle } from "../../src/emulator/databases/lifecycle.ts";
import type { RunningEmulator } from "../../src/emulator/index.ts";
import { DatabaseMap, emptyState, noteStateChange, type DatabaseRecord, type DbEngine } from "../../src/emulator/store.ts";
import { TOKEN, client, start } from "./helpers.ts";

let emu: RunningEmulator;
beforeAll(async () => { emu = await start({ provisionSeconds: 10, rateLimits: false }); });
afterAll(async () => { await emu.close(); });

/** Where record() makes its records: not the emulator's state. */
const scratch = emptyState();

/** A record made as the API makes one, active (each with an id of its own). */
function record(engine: DbEngine, platform: "legacy" | "current"): DatabaseRecord {
  const db = createRecord({ ...emu.context, state: scratch }, engine, {
    label: `lx-${Math.random().toString(36).slice(2, 10)}`, region: "us-east", type: "g6-dedicated-2",
    engine: engine === "mysql" ? "mysql/8" : "postgresql/16", cluster_size: 3,
    ...(platform === "current" ? { private_network: { vpc_id: 1, subnet_id: 2 } } : {}),
  }, "someone", platform);
  db.status = "active";
  db.pending = null;
  return db;
}

/** Each rendered field changed to another value a record could hold. */
const CHANGE: Record<(typeof RENDERED_FIELDS)[number], (db: DatabaseRecord) => void> = {
  id: (db) => { db.id += 1; },
  platform: (db) => { db.platform = db.platform === "legacy" ? "current" : "legacy"; },
  engine: (db) => { db.engine = db.engine === "mysql" ? "postgresql" : "mysql"; },
  version: (db) => { db.version = `${db.version}.1`; },
  label: (db) => { db.label = `${db.label}-x`; },
  region: (db) => { db.region = "us-west"; },
  type: (db) => { db.type = "g6-dedicated-4"; },
  cluster_size: (db) => { db.cluster_size = db.cluster_size === 3 ? 1 : 3; },
  encrypted: (db) => { db.encrypted = !db.encrypted; },
  ssl_connection: (db) => { db.ssl_connection = !db.ssl_connection; },
  allow_list: (db) => { db.allow_list = [...db.allow_list, "203.0.113.9/32"]; },
  replication_type: (db) => { db.replication_type = db.replication_type === "asynch" ? "semi_synch" : "asynch"; },
  replication_commit_type: (db) => { db.replication_commit_type = db.replication_commit_type === "on" ? "off" : "on"; },
  port: (db) => { db.port += 1; },
  hostTag: (db) => { db.hostTag += 1; },
  memberBase: (db) => { db.memberBase += 1; },
  status: (db) => { db.status = db.status === "active" ? "degraded" : "active"; },
  created: (db) => { db.created -= 1000; },
  updated: (db) => { db.updated += 1000; },
  updates: (db) => { db.updates = { ...db.updates, hour_of_day: (db.updates.hour_of_day + 1) % 24 }; },
  total_disk_size_gb: (db) => { db.total_disk_size_gb += 1; },
  used_disk_size_gb: (db) => { db.used_disk_size_gb += 1; },
  engine_config: (db) => { db.engine_config = { ...db.engine_config, extra: { a: 1 } }; },
  private_network: (db) => { db.private_network = { vpc_id: 7, subnet_id: 8, public_access: true }; },
  fork: (db) => { db.fork = { source: 1, restore_time: db.created }; },
  pending_updates: (db) => { db.pending_updates = [{ description: "patch", planned_for: null, deadline: null }]; },
};

/** What each rendering would send now, afresh. */
function fresh(db: DatabaseRecord, now: number): { full: string; item: string } {
  return { full: JSON.stringify(renderDatabase(db, { now })), item: JSON.stringify(renderListItem(db, now)) };
}

/** What the kept texts send now. */
function kept(db: DatabaseRecord, now: number): { full: string; item: string } {
  return { full: databaseJson(db, now).toString("utf8"), item: listItemJson(db, now).toString("utf8") };
}

describe("kept JSON of a database", () => {
  it("names every field of a record as rendered or not", () => {
    const db = record("postgresql", "current");
    db.pending_updates = [];
    const named = new Set<string>([...RENDERED_FIELDS, ...NOT_RENDERED_FIELDS]);
    expect(Object.keys(db).filter((k) => !named.has(k))).toEqual([]);
  });

  it("renders again when any rendered field changes, on either platform and engine", () => {
    const now = emu.now();
    for (const field of RENDERED_FIELDS) {
      const shown: boolean[] = [];
      for (const [engine, platform] of [["mysql", "legacy"], ["postgresql", "legacy"], ["postgresql", "current"]] as const) {
        const db = record(engine, platform);
        const before = fresh(db, now);
        expect(kept(db, now)).toEqual(before);
        CHANGE[field](db);
        const after = fresh(db, now);
        expect(kept(db, now), field).toEqual(after);
        shown.push(after.full !== before.full || after.item !== before.item);
      }
      // A field in RENDERED_FIELDS that no rendering shows belongs in NOT_RENDERED_FIELDS.
      expect(shown.some(Boolean), field).toBe(true);
    }
  });

  it("shows none of the fields it does not render", () => {
    const now = emu.now();
    for (const field of NOT_RENDERED_FIELDS) {
      const db = record("postgresql", "legacy");
      const before = fresh(db, now);
      const r = db as unknown as Record<string, unknown>;
      r[field] = field === "backups" ? [{ id: 1, type: "snapshot", label: "x", created: now }] : field === "credentialsReset" ? true : field === "autoBackupsUntil" ? now + 1 : { value: "x", at: now };
      expect(fresh(db, now), field).toEqual(before);
    }
  });

  it("moves oldest_restore_time with the clock once the database is older than seven days", () => {
    const db = record("mysql", "current");
    db.created -= 8 * DAY_MS;
    const now = emu.now();
    const first = databaseJson(db, now);
    expect(first.toString("utf8")).toBe(fresh(db, now).full);
    expect(databaseJson(db, now + 999 - (now % 1000))).toBe(first);
    const later = databaseJson(db, now + 1000);
    expect(later).not.toBe(first);
    expect(later.toString("utf8")).toBe(fresh(db, now + 1000).full);
  });
});

describe("a GET of one database", () => {
  it("sends a kept text only while it is what rendering would send, and keeps none of its own", () => {
    const db = record("mysql", "current");
    db.created -= 8 * DAY_MS;
    const now = emu.now() - (emu.now() % 1000);
    expect(keptDatabaseJson(db, now)).toBeNull();
    expect(keptDatabaseJson(db, now)).toBeNull();
    const listed = databaseJson(db, now);
    expect(keptDatabaseJson(db, now + 999)).toBe(listed);
    expect(keptDatabaseJson(db, now + 1000)).toBeNull();
    CHANGE.label(db);
    expect(keptDatabaseJson(db, now)).toBeNull();
  });
});

describe("kept pages", () => {
  it("are sent again only while nothing changed: no change counted, no record added or removed, the same second when timed", () => {
    const map = new DatabaseMap();
    const now = 1_000_000;
    const items = [Buffer.from("1"), Buffer.from("2")];
    const bytes = pageJson(map, "k", items, 1, 1, 2, false, now);
    expect(Buffer.concat(bytes).toString("utf8")).toBe(JSON.stringify({ data: [1, 2], page: 1, pages: 1, results: 2 }));
    expect(keptPage(map, "k", now + 5000)).toBe(bytes);
    expect(keptPage(map, "other", now)).toBeNull();
    noteStateChange();
    expect(keptPage(map, "k", now)).toBeNull();
    // The same items again: the bytes made before are used, and kept anew.
    expect(pageJson(map, "k", [...items], 1, 1, 2, true, now)).toBe(bytes);
    expect(keptPage(map, "k", now + 999)).toBe(bytes);
    expect(keptPage(map, "k", now + 1000)).toBeNull();
    map.set(1, record("mysql", "legacy"));
    expect(keptPage(map, "k", now)).toBeNull();
  });

  it("are made again when an item's text is another, showing it", () => {
    const map = new DatabaseMap();
    const now = 1_000_000;
    const first = pageJson(map, "k", [Buffer.from("1"), Buffer.from("2")], 1, 1, 2, false, now);
    noteStateChange();
    const again = pageJson(map, "k", [Buffer.from("1"), Buffer.from("3")], 1, 1, 2, false, now);
    expect(again).not.toBe(first);
    expect(Buffer.concat(again).toString("utf8")).toBe(JSON.stringify({ data: [1, 3], page: 1, pages: 1, results: 2 }));
  });

  it("of many items, made again after some changed, show the items as they are now", () => {
    const map = new DatabaseMap();
    const now = 1_000_000;
    const items = Array.from({ length: 100 }, (_, i) => Buffer.from(`{"n":${String(i)}}`));
    const text = (chunks: readonly Buffer[]) => Buffer.concat(chunks).toString("utf8");
    const expected = (list: readonly Buffer[], results: number) =>
      JSON.stringify({ data: list.map((b) => JSON.parse(b.toString("utf8")) as unknown), page: 2, pages: 3, results });
    expect(text(pageJson(map, "k", items, 2, 3, 250, false, now))).toBe(expected(items, 250));
    // The first item, one inside, one at a run's edge, the last: each shown as it is now.
    for (const at of [0, 50, 31, 32, 99]) {
      items[at] = Buffer.from(`{"n":${String(at)},"changed":true}`);
      expect(text(pageJson(map, "k", [...items], 2, 3, 250, false, now)), String(at)).toBe(expected(items, 250));
    }
    // The same items, the envelope's counts changed; then fewer items.
    expect(text(pageJson(map, "k", [...items], 2, 3, 251, false, now))).toBe(expected(items, 251));
    expect(text(pageJson(map, "k", items.slice(0, 40), 2, 3, 251, false, now))).toBe(expected(items.slice(0, 40), 251));
  });

  it("are written as JSON.stringify() writes the envelope, UTF-8 items included", () => {
    const items = ['{"label":"é-ß"}', "[1,2]", "null"];
    expect(listJson(items.map((i) => Buffer.from(i)), 3, 4, 99).toString("utf8"))
      .toBe(JSON.stringify({ data: items.map((i) => JSON.parse(i) as unknown), page: 3, pages: 4, results: 99 }));
    expect(listJson([], 1, 1, 0).toString("utf8")).toBe(JSON.stringify({ data: [], page: 1, pages: 1, results: 0 }));
  });
});

describe("a page among many, made afresh after a change", () => {
  let big: RunningEmulator;
  let first = 0;
  beforeAll(async () => {
    big = await start({ rateLimits: false });
    const seeded = await client(big).admin("POST", "/seed", { databases: { count: 1200, labelPrefix: "afresh" } });
    first = (seeded.body as { databases: { first_id: number } }).databases.first_id;
  });
  afterAll(async () => { await big.close(); });

  /** The page as sent, as text. */
  const page = async (path: string): Promise<string> => {
    const res = await fetch(`${big.url}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  /** What rendering every database of the page afresh would send now. */
  const rendered = (engine: DbEngine | null, n: number): string => {
    const all = big.context.state.databases.inOrder(engine);
    const now = big.now();
    return JSON.stringify({
      data: all.slice((n - 1) * 500, n * 500).map((db) => (engine === null ? renderListItem(db, now) : renderDatabase(db, { now }))),
      page: n, pages: Math.ceil(all.length / 500), results: all.length,
    });
  };
  const engineList = "/databases/mysql/instances?page=2&page_size=500";
  const allList = "/databases/instances?page=2&page_size=500";

  it("shows each change to one of its databases in the next page, as rendering afresh would", async () => {
    const api = client(big);
    // Made once and kept: the next page would be sent as made unless something shows the change.
    expect(await page(engineList)).toBe(rendered("mysql", 2));
    expect(await page(allList)).toBe(rendered(null, 2));
    const changes: [number, Record<string, unknown>][] = [
      [first + 500, { label: "afresh-renamed-1" }],
      [first + 777, { allow_list: ["203.0.113.7/32"] }],
      [first + 999, { label: "afresh-renamed-2", updates: { hour_of_day: 5 } }],
    ];
    for (const [id, body] of changes) {
      expect((await api.put(`/databases/mysql/instances/${String(id)}`, body)).status).toBe(200);
      const text = await page(engineList);
      expect(text).toBe(rendered("mysql", 2));
      const shown = (JSON.parse(text) as { data: Record<string, unknown>[] }).data.find((d) => d.id === id);
      expect(shown).toMatchObject(body.allow_list === undefined ? { label: body.label } : { allow_list: body.allow_list, status: "updating" });
      expect(await page(allList)).toBe(rendered(null, 2));
    }
  });

  it("shows a change made in the emulator's process (a field assigned, the change counted), as settle() makes one", async () => {
    expect(await page(engineList)).toBe(rendered("mysql", 2));
    const db = big.context.state.databases.get(first + 600) as DatabaseRecord;
    db.status = "degraded";
    db.updated += 1000;
    noteStateChange();
    const text = await page(engineList);
    expect(text).toBe(rendered("mysql", 2));
    expect((JSON.parse(text) as { data: { id: number; status: string }[] }).data.find((d) => d.id === db.id)?.status).toBe("degraded");
  });
});

describe("the per-engine order", () => {
  it("follows the map through adds, replacements and deletes", () => {
    const map = new DatabaseMap();
    const a = record("mysql", "legacy");
    const b = record("postgresql", "legacy");
    const c = record("mysql", "current");
    for (const db of [a, b, c]) map.set(db.id, db);
    expect(map.inOrder("mysql")).toEqual([a, c]);
    expect(map.inOrder("postgresql")).toEqual([b]);
    expect(map.inOrder(null)).toEqual([a, b, c]);
    map.delete(a.id);
    expect(map.inOrder("mysql")).toEqual([c]);
    const b2 = { ...b, label: "replaced" };
    map.set(b.id, b2);
    expect(map.inOrder(null)).toEqual([b2, c]);
    map.set(a.id, a);
    expect(map.inOrder(null)).toEqual([b2, c, a]);
    expect(new DatabaseMap(map).inOrder("mysql")).toEqual([c, a]);
    map.clear();
    expect(map.inOrder(null)).toEqual([]);
  });
});

describe("settling", () => {
  it("knows when a record next changes, and settle() changes nothing before", () => {
    const db = record("mysql", "legacy");
    const now = Date.UTC(2030, 0, 1, 12);
    db.created = now - DAY_MS;
    db.autoBackupsUntil = now;
    expect(nextChange(db, now)).toBe((Math.floor(now / DAY_MS) + 1) * DAY_MS);
    db.pending = { until: now + 5000, next: "active" };
    db.status = "updating";
    expect(nextChange(db, now)).toBe(now + 5000);
    const before = JSON.stringify(db);
    settle(emu.context, db, now + 4999);
    expect(JSON.stringify(db)).toBe(before);
    settle(emu.context, db, now + 5000);
    expect(db.status).toBe("active");
  });

  it("a list shows transitions as they fall due, and changes made through the API at once", async () => {
    const api = client(emu);
    const made = await api.post("/databases/mysql/instances", { label: "lx-listed", region: "us-east", type: "g6-nanode-1", engine: "mysql/8" });
    const id = (made.body as { id: number }).id;
    const status = async (): Promise<string> => {
      const list = await api.get("/databases/mysql/instances?page_size=500");
      return (list.body as { data: { id: number; status: string }[] }).data.find((d) => d.id === id)?.status ?? "absent";
    };
    expect(await status()).toBe("provisioning");
    expect(await status()).toBe("provisioning");
    emu.advance(9);
    expect(await status()).toBe("provisioning");
    emu.advance(1);
    expect(await status()).toBe("active");
    expect((await api.admin("PUT", `/databases/${String(id)}/status`, { status: "degraded" })).status).toBe(200);
    expect(await status()).toBe("degraded");
    expect((await api.put(`/databases/mysql/instances/${String(id)}`, { label: "lx-listed-2" })).status).toBe(400);
    expect((await api.admin("PUT", `/databases/${String(id)}/status`, { status: "active" })).status).toBe(200);
    expect((await api.put(`/databases/mysql/instances/${String(id)}`, { allow_list: ["198.51.100.1"] })).status).toBe(200);
    expect(await status()).toBe("updating");
    emu.advance(10);
    expect(await status()).toBe("active");
    expect((await api.del(`/databases/mysql/instances/${String(id)}`)).status).toBe(200);
    expect(await status()).toBe("absent");
  });
});
