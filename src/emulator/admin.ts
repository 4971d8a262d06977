// Admin endpoints under /_emulator (outside /v4, no token: the emulator listens on loopback).
// They exist for tests, benchmarks and demos: request counts, faults, clock, tokens and
// users, rate limits, state dump/load/reset, bulk seeding, and forcing object states.
import { z } from "zod";
import type { MutationRecord } from "./server.ts";
import { userSchema } from "./auth.ts";
import { scopedTokenSchema } from "./config.ts";
import type { EmulatorContext } from "./context.ts";
import { createRecord } from "./databases/model.ts";
import { faultConfigSchema } from "./faults.ts";
import { defaultConfig, makeNode, newNodeBalancer } from "./nodebalancers/model.ts";
import { rateLimitConfigSchema } from "./rate-limit.ts";
import { allAccounts, deserializeState, emptyState, nextId, noteStateChange, serializeState, type SerializedState } from "./store.ts";
import { fieldPath } from "./validation.ts";

export interface AdminDeps {
  ctx: EmulatorContext;
  counts: Map<string, number>;
  mutations: MutationRecord[];
  onMutation: () => void;
}

type Result = { status: number; body: unknown };

class AdminError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    throw new AdminError(400, r.error.issues.map((i) => `${fieldPath(i.path) || "body"}: ${i.message}`).join("; "));
  }
  return r.data;
}

const pendingUpdatesSchema = z.array(z.object({
  description: z.string().min(1),
  planned_for: z.string().nullable().default(null),
  deadline: z.string().nullable().default(null),
})).max(20);

const seedDatabasesSchema = z.object({
  count: z.number().int().min(0).max(100_000),
  engine: z.enum(["mysql", "postgresql"]).default("mysql"),
  status: z.enum(["active", "provisioning"]).default("active"),
  region: z.string().default("us-east"),
  type: z.string().default("g6-nanode-1"),
  labelPrefix: z.string().default("seed"),
  /** The platform these databases are on (default: the server's --platform). */
  platform: z.enum(["legacy", "current"]).optional(),
});

const seedSchema = z.object({
  /** One group of databases, or several (e.g. one per platform), created in order. */
  databases: z.union([seedDatabasesSchema, z.array(seedDatabasesSchema)]).optional(),
  nodebalancers: z.object({
    count: z.number().int().min(0).max(100_000),
    region: z.string().default("us-east"),
    configsPerNodeBalancer: z.number().int().min(0).max(10).default(0),
    labelPrefix: z.string().default("seed-nb"),
  }).optional(),
});

const clockSchema = z.object({
  timeScale: z.number().min(0).optional(),
  now: z.union([z.number(), z.iso.datetime({ local: true, offset: true })]).optional(),
});

const advanceSchema = z.object({ seconds: z.number().min(0).optional(), ms: z.number().min(0).optional() });

const statusSchema = z.object({
  status: z.enum(["provisioning", "active", "suspending", "suspended", "resuming", "restoring", "failed", "degraded", "updating", "backing_up", "resizing"]),
});

/** Statuses the current platform does not have (its enum lacks them: no backups, restore is a fork). */
const LEGACY_ONLY_STATUSES: ReadonlySet<string> = new Set(["backing_up", "restoring"]);
/** Statuses the legacy platform does not have (the spec's enum lacks it: no in-place resize of the node count). */
const CURRENT_ONLY_STATUSES: ReadonlySet<string> = new Set(["resizing"]);

/** UP or DOWN stick until set again; unknown starts a new check; auto lets the checks decide again. */
const nodeStatusSchema = z.object({ status: z.enum(["unknown", "UP", "DOWN", "auto"]) });

export function createAdminHandler(deps: AdminDeps): (method: string, url: URL, body: unknown) => Result {
  const { ctx, counts } = deps;
  const routes: [string, RegExp, (m: RegExpExecArray, body: unknown, url: URL) => unknown][] = [
    ["GET", /^\/_emulator\/?$/, () => ({
      endpoints: [
        "GET /_emulator/health", "GET|DELETE /_emulator/requests", "GET|DELETE /_emulator/mutations", "GET|PUT|DELETE /_emulator/faults",
        "GET|PUT /_emulator/clock", "POST /_emulator/clock/advance", "GET|POST /_emulator/tokens",
        "DELETE /_emulator/tokens/{token}", "POST /_emulator/users", "GET|PUT /_emulator/rate-limits",
        "GET|PUT|DELETE /_emulator/state", "POST /_emulator/seed", "PUT /_emulator/databases/{id}/status",
        "PUT /_emulator/databases/{id}/pending-updates",
        "PUT /_emulator/nodes/{id}/status", "GET|PUT /_emulator/rejected-node-addresses",
      ],
    })],
    ["GET", /^\/_emulator\/health$/, () => ({ ok: true })],
    ["GET", /^\/_emulator\/requests$/, () => {
      const routesOut = Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
      return { total: [...counts.values()].reduce((a, b) => a + b, 0), routes: routesOut };
    }],
    ["DELETE", /^\/_emulator\/requests$/, () => { counts.clear(); return {}; }],
    ["GET", /^\/_emulator\/mutations$/, () => ({ mutations: deps.mutations })],
    ["DELETE", /^\/_emulator\/mutations$/, () => { deps.mutations.length = 0; return {}; }],
    ["POST", /^\/_emulator\/requests\/reset$/, () => { counts.clear(); return {}; }],
    ["GET", /^\/_emulator\/faults$/, () => ctx.faults.config],
    ["PUT", /^\/_emulator\/faults$/, (_m, body) => { ctx.faults.configure(parse(faultConfigSchema, body), ctx.seed); return ctx.faults.config; }],
    ["DELETE", /^\/_emulator\/faults$/, () => { ctx.faults.configure(faultConfigSchema.parse({}), ctx.seed); return ctx.faults.config; }],
    ["GET", /^\/_emulator\/clock$/, () => clockView(ctx)],
    ["PUT", /^\/_emulator\/clock$/, (_m, body) => {
      const input = parse(clockSchema, body);
      if (input.timeScale !== undefined) ctx.clock.setTimeScale(input.timeScale);
      if (input.now !== undefined) {
        const ms = typeof input.now === "number" ? input.now : Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(input.now) ? input.now : `${input.now}Z`);
        if (ms < ctx.clock.now()) throw new AdminError(400, "the clock cannot move backwards");
        ctx.clock.set(ms);
      }
      return clockView(ctx);
    }],
    ["POST", /^\/_emulator\/clock\/advance$/, (_m, body) => {
      const input = parse(advanceSchema, body);
      ctx.clock.advance((input.ms ?? 0) + (input.seconds ?? 0) * 1000);
      return clockView(ctx);
    }],
    ["GET", /^\/_emulator\/tokens$/, () => ctx.auth.snapshot()],
    ["POST", /^\/_emulator\/tokens$/, (_m, body) => {
      const token = parse(scopedTokenSchema, body);
      if (token.username !== undefined && !ctx.auth.users.has(token.username)) throw new AdminError(400, `unknown user ${token.username}`);
      try {
        ctx.auth.addToken(token);
      } catch (err) {
        throw new AdminError(400, (err as Error).message);
      }
      return { scopes: token.scopes, username: token.username ?? null, account: token.account ?? ctx.auth.users.get(token.username ?? "")?.account ?? "default" };
    }],
    ["DELETE", /^\/_emulator\/tokens\/(.+)$/, (m) => {
      const removed = ctx.auth.tokens.delete(decodeURIComponent(m[1] ?? ""));
      if (!removed) throw new AdminError(404, "no such token");
      return {};
    }],
    ["POST", /^\/_emulator\/users$/, (_m, body) => { const user = parse(userSchema, body); ctx.auth.addUser(user); return user; }],
    ["GET", /^\/_emulator\/rate-limits$/, () => ctx.rateLimiter.config],
    ["PUT", /^\/_emulator\/rate-limits$/, (_m, body) => { ctx.rateLimiter.configure(parse(rateLimitConfigSchema, body)); return ctx.rateLimiter.config; }],
    ["GET", /^\/_emulator\/state$/, () => serializeState(ctx.state, ctx.clock.now())],
    ["PUT", /^\/_emulator\/state$/, (_m, body) => {
      const data = body as SerializedState | undefined;
      if (data?.version !== 1 || !Array.isArray(data.databases) || !Array.isArray(data.nodebalancers)) throw new AdminError(400, "not an emulator state dump");
      Object.assign(ctx.state, deserializeState(data, ctx.platform));
      deps.onMutation();
      return {};
    }],
    ["DELETE", /^\/_emulator\/state$/, () => { Object.assign(ctx.state, emptyState()); deps.onMutation(); return {}; }],
    ["POST", /^\/_emulator\/seed$/, (_m, body) => { const r = seed(ctx, parse(seedSchema, body)); deps.onMutation(); return r; }],
    ["PUT", /^\/_emulator\/databases\/(\d+)\/status$/, (m, body) => {
      const db = allAccounts(ctx.state).map((a) => a.databases.get(Number(m[1]))).find((d) => d !== undefined);
      if (db === undefined) throw new AdminError(404, "no such database");
      const status = parse(statusSchema, body).status;
      if (db.platform === "current" && LEGACY_ONLY_STATUSES.has(status)) {
        throw new AdminError(400, `status ${status} does not exist on the current platform (database ${String(db.id)})`);
      }
      if (db.platform === "legacy" && CURRENT_ONLY_STATUSES.has(status)) {
        throw new AdminError(400, `status ${status} does not exist on the legacy platform (database ${String(db.id)})`);
      }
      db.status = status;
      db.pending = null;
      db.updated = ctx.clock.now();
      noteStateChange();
      deps.onMutation();
      return { id: db.id, status: db.status };
    }],
    // Maintenance Linode plans for a current-platform database (updates.pending): what only Linode decides.
    ["PUT", /^\/_emulator\/databases\/(\d+)\/pending-updates$/, (m, body) => {
      const db = allAccounts(ctx.state).map((a) => a.databases.get(Number(m[1]))).find((d) => d !== undefined);
      if (db === undefined) throw new AdminError(404, "no such database");
      if (db.platform !== "current") throw new AdminError(400, `the legacy platform lists no pending updates (database ${String(db.id)})`);
      db.pending_updates = parse(pendingUpdatesSchema, body);
      db.updated = ctx.clock.now();
      deps.onMutation();
      return { id: db.id, pending: db.pending_updates };
    }],
    ["GET", /^\/_emulator\/rejected-node-addresses$/, () => Object.fromEntries(ctx.rejectedNodeAddresses)],
    ["PUT", /^\/_emulator\/rejected-node-addresses$/, (_m, body) => {
      ctx.rejectedNodeAddresses = new Map(Object.entries(parse(z.record(z.string(), z.string()), body)));
      return Object.fromEntries(ctx.rejectedNodeAddresses);
    }],
    ["PUT", /^\/_emulator\/nodes\/(\d+)\/status$/, (m, body) => {
      const status = parse(nodeStatusSchema, body).status;
      for (const nb of allAccounts(ctx.state).flatMap((a) => [...a.nodebalancers.values()])) {
        for (const c of Object.values(nb.configs)) {
          const n = c.nodes[m[1] ?? ""];
          if (n === undefined) continue;
          if (status === "UP" || status === "DOWN") {
            n.status = status;
            n.forced = true;
          } else {
            n.forced = false;
            n.status = "unknown";
            n.checkFrom = status === "auto" ? 0 : ctx.clock.now();
          }
          deps.onMutation();
          return { id: n.id, status: n.status };
        }
      }
      throw new AdminError(404, "no such node");
    }],
  ];
  return (method, url, body) => {
    const path = url.pathname;
    let pathMatched = false;
    for (const [m, re, fn] of routes) {
      const match = re.exec(path);
      if (match === null) continue;
      pathMatched = true;
      if (m !== method) continue;
      // State loaded or reset, a status forced, objects seeded: lists settle afresh.
      if (method !== "GET") noteStateChange();
      try {
        return { status: 200, body: fn(match, body, url) };
      } catch (err) {
        if (err instanceof AdminError) return { status: err.status, body: { errors: [{ reason: err.message }] } };
        if (err instanceof RangeError) return { status: 400, body: { errors: [{ reason: err.message }] } };
        throw err;
      }
    }
    return pathMatched
      ? { status: 405, body: { errors: [{ reason: "Method Not Allowed" }] } }
      : { status: 404, body: { errors: [{ reason: "Not found" }] } };
  };
}

function clockView(ctx: EmulatorContext): Record<string, unknown> {
  const s = ctx.clock.state();
  return { now: new Date(s.now).toISOString(), now_ms: s.now, time_scale: s.timeScale };
}

function seedDatabases(ctx: EmulatorContext, d: z.output<typeof seedDatabasesSchema>): Record<string, unknown> {
  let first = 0;
  let last = 0;
  const engineId = d.engine === "mysql" ? "mysql/8" : "postgresql/16";
  const platform = d.platform ?? ctx.platform;
  for (let i = 0; i < d.count; i++) {
    // Labels carry the next id so they stay unique without an O(n) uniqueness scan.
    const label = `${d.labelPrefix}-${ctx.state.counters.database + 1}`.slice(-32);
    const db = createRecord(ctx, d.engine, { label, region: d.region, type: d.type, engine: engineId }, undefined, platform);
    if (d.status === "active") { db.status = "active"; db.pending = null; }
    if (i === 0) first = db.id;
    last = db.id;
  }
  return { count: d.count, first_id: first, last_id: last, platform };
}

function seed(ctx: EmulatorContext, input: z.output<typeof seedSchema>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(input.databases)) out.databases = input.databases.map((d) => seedDatabases(ctx, d));
  else if (input.databases !== undefined && input.databases.count > 0) out.databases = seedDatabases(ctx, input.databases);
  if (input.nodebalancers !== undefined && input.nodebalancers.count > 0) {
    const n = input.nodebalancers;
    let first = 0;
    let last = 0;
    for (let i = 0; i < n.count; i++) {
      const nb = newNodeBalancer(ctx, n.region);
      nb.label = `${n.labelPrefix}-${nb.id}`.slice(-32);
      for (let p = 0; p < n.configsPerNodeBalancer; p++) {
        const c = defaultConfig(nextId(ctx.state, "config"), nb.id);
        c.port = 80 + p;
        const node = makeNode(ctx, c, { address: `192.168.${128 + (p % 100)}.${(i % 250) + 1}:80`, label: `node-${p}` });
        c.nodes[String(node.id)] = node;
        nb.configs[String(c.id)] = c;
      }
      ctx.state.nodebalancers.set(nb.id, nb);
      if (i === 0) first = nb.id;
      last = nb.id;
    }
    out.nodebalancers = { count: n.count, first_id: first, last_id: last };
  }
  return out;
}
