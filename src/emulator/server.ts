// The HTTP front: node:http with keep-alive, JSON in and out, the /v4 and /v4beta
// prefixes, then per request: route match, auth, rate limit, faults, scope, handler.
// Admin endpoints (outside /v4) go to admin.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { DEFAULT_ACCOUNT, acceptedScope, requireScope, type Principal } from "./auth.ts";
import { RawJson, type EmulatorContext, type RequestContext } from "./context.ts";
import { ApiError } from "./errors.ts";
import type { Router } from "./router.ts";
import { accountState, noteStateChange } from "./store.ts";
import type { RequestLog } from "./request-log.ts";

export const MAX_BODY_BYTES = 1 << 20;

export interface RequestCounts {
  counts: Map<string, number>;
}

export type AdminHandler = (method: string, url: URL, body: unknown) => { status: number; body: unknown };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) reject(new ApiError(413, [{ reason: "Request body too large" }]));
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, [{ reason: "Invalid JSON" }]);
  }
}

const BASE_HEADERS = {
  "Content-Type": "application/json",
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Headers": "Authorization, Origin, X-Requested-With, Content-Type, Accept, X-Filter",
  "Access-Control-Expose-Headers": "X-OAuth-Scopes, X-Accepted-OAuth-Scopes, X-Status",
  Vary: "Authorization, X-Filter",
  "X-Spec-Version": "4.176.0",
};

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const payload = body instanceof RawJson ? body.json : JSON.stringify(body);
  if (typeof payload === "string" || Buffer.isBuffer(payload)) {
    res.writeHead(status, { ...BASE_HEADERS, ...headers, "Content-Length": typeof payload === "string" ? Buffer.byteLength(payload) : payload.length });
    res.end(payload);
    return;
  }
  let length = 0;
  for (const chunk of payload) length += chunk.length;
  res.writeHead(status, { ...BASE_HEADERS, ...headers, "Content-Length": length });
  // One write to the socket for them all (end() uncorks).
  res.cork();
  for (const chunk of payload) res.write(chunk);
  res.end();
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A request that could change state (POST, PUT, DELETE), as the emulator handled it. */
export interface MutationRecord {
  /** Wall-clock milliseconds when it arrived and when it was answered. */
  receivedAt: number;
  answeredAt: number;
  method: string;
  route: string;
  path: string;
  status: number;
  user: string;
  /** The token's first characters only. */
  token: string;
  /** The client's User-Agent (the operator names its replica there: which one sent a write). */
  userAgent: string;
}

/** The mutation log keeps this many entries (the oldest go first). */
export const MUTATION_LOG_SIZE = 10_000;

export interface ServerDeps {
  ctx: EmulatorContext;
  router: Router;
  counts: Map<string, number>;
  mutations: MutationRecord[];
  requests: RequestLog;
  admin: AdminHandler;
  onMutation: () => void;
}

export function createEmulatorServer(deps: ServerDeps): Server {
  const server = createServer({ keepAlive: true, keepAliveTimeout: 65_000 }, (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { errors: [{ reason: "Internal server error" }] }, {});
      else res.destroy();
      process.emitWarning(`emulator: unhandled error: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  return server;
}

const VERSION_PREFIX = /^\/v4(beta)?(?=\/|$)/;

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx, router, counts } = deps;
  const method = req.method ?? "GET";
  const receivedAt = Date.now();
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  // Decode nothing here: the router needs the raw %2F to tell it from a real slash.
  const rawPath = (req.url ?? "/").split("?")[0] ?? "/";
  let text: string;
  try {
    text = await readBody(req);
  } catch (err) {
    if (err instanceof ApiError) return send(res, err.status, { errors: err.errors }, {});
    throw err;
  }

  if (rawPath.startsWith("/_emulator")) {
    let body: unknown;
    try {
      body = parseJson(text);
    } catch (err) {
      if (err instanceof ApiError) return send(res, 400, { errors: err.errors }, {});
      throw err;
    }
    const result = deps.admin(method, url, body);
    return send(res, result.status, result.body, {});
  }

  const prefix = VERSION_PREFIX.exec(rawPath);
  if (prefix === null) return send(res, 404, { errors: [{ reason: "Not found" }] }, {});
  // The API's response time, drawn in arrival order (so a seeded run replays it).
  const latency = ctx.latency.draw();
  if (latency > 0) await sleep(latency);
  const path = rawPath.slice(prefix[0].length) || "/";
  const match = router.match(method, path);
  if (match.kind === "none") return send(res, 404, { errors: [{ reason: "Not found" }] }, {});
  if (match.kind === "method") {
    return send(res, 405, { errors: [{ reason: "Method Not Allowed" }] }, { Allow: match.allowed.join(", ") });
  }
  const { route, params } = match;
  const routeKey = `${method} ${route.template.replace("+}", "}")}`;
  counts.set(routeKey, (counts.get(routeKey) ?? 0) + 1);
  // The answer's Date is the emulated clock's, as the records' times are: a client may compare them.
  const headers: Record<string, string> = { Date: new Date(ctx.clock.now()).toUTCString(), "X-Accepted-OAuth-Scopes": acceptedScope(route.area, route.level) };

  let principal: Principal;
  try {
    principal = ctx.auth.authenticate(req.headers.authorization);
  } catch (err) {
    if (err instanceof ApiError) return send(res, err.status, { errors: err.errors }, headers);
    throw err;
  }
  // As the API writes it: space-separated, whatever separators the configuration used.
  headers["X-OAuth-Scopes"] = principal.scopes.split(/[\s,]+/).filter((w) => w !== "").join(" ");

  const rate = ctx.rateLimiter.check(principal.token, routeKey, route.paginated === true);
  headers["X-RateLimit-Limit"] = String(rate.limit);
  headers["X-RateLimit-Remaining"] = String(rate.remaining);
  headers["X-RateLimit-Reset"] = String(rate.reset);
  const logged = (status: number): void => {
    deps.requests.add({ receivedAt, answeredAt: Date.now(), method, path: req.url ?? path, status, userAgent: req.headers["user-agent"] ?? "" });
  };
  if (!rate.allowed) {
    logged(429);
    return send(res, 429, { errors: [{ reason: "Too many requests" }] }, { ...headers, "Retry-After": String(rate.retryAfter) });
  }

  const fault = ctx.faults.plan(routeKey, principal.token);
  if (fault !== null) {
    if (fault.status429) {
      logged(429);
      return send(res, 429, { errors: [{ reason: "Too many requests" }] }, { ...headers, "Retry-After": String(fault.retryAfter) });
    }
    if (fault.delayMs > 0) await sleep(fault.delayMs);
    if (fault.errorStatus !== null) {
      logged(fault.errorStatus);
      const reason = fault.errorStatus === 503 ? "Service unavailable. Please try again later." : "Internal server error";
      return send(res, fault.errorStatus, { errors: [{ reason }] }, headers);
    }
  }

  let status: number;
  let body: unknown;
  try {
    const parsed = parseJson(text);
    requireScope(principal, route.area, route.level);
    const request: RequestContext = {
      // The handlers see only the caller's account.
      ctx: principal.account === DEFAULT_ACCOUNT ? ctx : { ...ctx, state: accountState(ctx.state, principal.account) },
      params,
      query: url.searchParams,
      body: parsed,
      header: (name) => {
        const v = req.headers[name.toLowerCase()];
        return Array.isArray(v) ? v.join(",") : v;
      },
      principal,
    };
    // Whatever a change does to records, lists settle afresh after it (lifecycle.ts settleList).
    if (method !== "GET") noteStateChange();
    const result = route.handler(request);
    status = result.status ?? 200;
    body = result.body;
    if (method !== "GET") deps.onMutation();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    status = err.status;
    body = { errors: err.errors };
    Object.assign(headers, err.headers);
  }
  headers["Date"] = new Date(ctx.clock.now()).toUTCString();
  logged(status);
  if (method !== "GET") {
    deps.mutations.push({ receivedAt, answeredAt: Date.now(), method, route: routeKey, path, status, user: principal.user.username, token: `${principal.token.slice(0, 4)}…`, userAgent: req.headers["user-agent"] ?? "" });
    if (deps.mutations.length > MUTATION_LOG_SIZE) deps.mutations.splice(0, deps.mutations.length - MUTATION_LOG_SIZE);
  }
  if (fault?.drop === true) {
    // The request took effect; the client just never hears about it.
    req.socket.destroy();
    return;
  }
  if (fault?.badBody === true && status >= 200 && status < 300) {
    // The request took effect; what comes back is someone else's page.
    res.writeHead(status, { ...headers, "Content-Type": "text/html" });
    res.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
    return;
  }
  send(res, status, body, headers);
}
