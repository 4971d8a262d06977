// `neverSent` across the attempts of one request: true only when no attempt can have reached
// the API (held by the client's own budget, cancelled before dispatch, connections refused),
// false as soon as one may have, whatever the final attempt's failure. Against real loopback
// servers, counting what reached them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { LinodeApiError, LinodeTransportError, RateLimiter, wasNeverSent, type LinodeError } from "../../src/linode/index.ts";
import { translateLinodeError } from "../../src/resources/shared/linode-errors.ts";
import { NotSentError } from "../../src/runtime/errors.ts";
import { closedPortUrl, eventually, makeClient, metricValue, sendJson, startScriptedServer, TOKEN, type ScriptedServer } from "./helpers.ts";

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(answer: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer> {
  const s = await startScriptedServer(answer);
  cleanups.push(() => s.close());
  return s;
}

function client(url: string, opts: Parameters<typeof makeClient>[1] = {}): ReturnType<typeof makeClient> {
  const tc = makeClient({ url }, opts);
  cleanups.push(() => tc.client.close());
  return tc;
}

async function fails(p: Promise<unknown>): Promise<LinodeError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (err === undefined) throw new Error("expected the call to fail");
  return err as LinodeError;
}

/** A limiter whose read budget is already spent: the next token is `windowMs` away. */
function spentLimiter(windowMs: number): RateLimiter {
  const limiter = new RateLimiter({ capacity: 1, windowMs });
  limiter.bucket(TOKEN, "read").tryTake();
  return limiter;
}

/** Resolves once the client counted a retry: it does so as its backoff begins. */
const inBackoff = (registry: Parameters<typeof metricValue>[0]): Promise<true> =>
  eventually(async () => ((await metricValue(registry, "linode_api_retries_total", { method: "GET" })) >= 1 ? true : undefined));

const internalError = { errors: [{ reason: "Internal server error" }] };
const retry = { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 1_000 };
/** Backoff as long as the policy allows (full jitter draws from Math.random), so an abort lands in it. */
const longBackoff = { baseDelayMs: 5_000, maxDelayMs: 5_000 };

describe("never sent: the API saw no attempt", () => {
  it("a call the client's own budget holds back", async () => {
    const srv = await server((_n, _req, res) => { sendJson(res, 200, {}); });
    const { client: c } = client(srv.url, { rateLimit: spentLimiter(60_000), retry });
    const err = await fails(c.nodeBalancers.get(1));
    expect(err.kind).toBe("rateLimited");
    expect(err.message).toMatch(/read rate-limit budget/);
    expect(err.neverSent).toBe(true);
    expect(wasNeverSent(err)).toBe(true);
    expect(srv.received).toEqual([]);
  });

  it("connections refused on every attempt (a create is still resent, as before)", async () => {
    const { client: c, registry } = client(await closedPortUrl(), { retry: { ...retry, maxAttempts: 3 } });
    const err = await fails(c.nodeBalancers.create({ region: "us-east", label: "refused" }));
    expect(err).toBeInstanceOf(LinodeTransportError);
    expect(err).toMatchObject({ kind: "transient", code: "ECONNREFUSED", notSent: true });
    expect(wasNeverSent(err)).toBe(true);
    expect(await metricValue(registry, "linode_api_retries_total", { method: "POST" })).toBe(2);
  });

  it("a signal aborted before the call", async () => {
    const srv = await server((_n, _req, res) => { sendJson(res, 200, {}); });
    const { client: c } = client(srv.url, { retry });
    const err = await fails(c.nodeBalancers.get(1, { signal: AbortSignal.abort() }));
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(true);
    expect(srv.received).toEqual([]);
  });

  it("cancelled while waiting for the budget", async () => {
    const srv = await server((_n, _req, res) => { sendJson(res, 200, {}); });
    const limiter = spentLimiter(5_000);
    // Held once the bucket answers a wait: the client sleeps on it from there.
    const bucket = limiter.bucket(TOKEN, "read");
    const take = bucket.tryTake.bind(bucket);
    let waiting!: () => void;
    const held = new Promise<void>((resolve) => { waiting = resolve; });
    vi.spyOn(bucket, "tryTake").mockImplementation(() => { const wait = take(); if (wait > 0) waiting(); return wait; });
    const { client: c } = client(srv.url, { rateLimit: limiter, retry: { ...retry, maxRateLimitWaitMs: 10_000 } });
    const ac = new AbortController();
    const call = fails(c.nodeBalancers.get(1, { signal: ac.signal }));
    await held;
    const started = performance.now();
    ac.abort(new Error("shutdown"));
    const err = await call;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(true);
    expect(srv.received).toEqual([]);
  });

  it("cancelled while waiting for a connection (a create included), and the next in line sent once one is free", async () => {
    const nodeBalancer = (id: number): object => ({ id, label: `nb-${String(id)}`, region: "us-east", client_conn_throttle: 0, created: "2026-07-17T10:00:00", updated: "2026-07-17T10:00:00" });
    let answerFirst!: () => void;
    const srv = await server((n, _req, res) => {
      if (n === 1) answerFirst = () => { sendJson(res, 200, nodeBalancer(1)); };
      else sendJson(res, 200, nodeBalancer(n));
    });
    // One connection: the first call holds it until the server answers.
    const { client: c } = client(srv.url, { connections: 1, retry });
    const first = c.nodeBalancers.get(1);
    await eventually(() => Promise.resolve(srv.received.length === 1 ? true : undefined));
    const ac = new AbortController();
    const cancelled = fails(c.nodeBalancers.create({ region: "us-east", label: "queued" }, { signal: ac.signal }));
    const next = c.nodeBalancers.get(3);
    // Long enough for the create to be past the budget and waiting for the connection.
    await new Promise((resolve) => setTimeout(resolve, 100));
    ac.abort(new Error("shutdown"));
    const err = await cancelled;
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(true);
    // What the reconciler is told: nothing can land, so the create's announcement is taken back.
    expect(translateLinodeError(err, "creating")).toBeInstanceOf(NotSentError);
    answerFirst();
    await first;
    await next;
    // The cancelled create never reached the server; the call behind it did, after the first.
    expect(srv.received).toEqual(["GET /v4/nodebalancers/1", "GET /v4/nodebalancers/3"]);
  });

  it("cancelled in the backoff after a refused connection", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    const { client: c, registry } = client(await closedPortUrl(), { retry: { ...retry, ...longBackoff } });
    const ac = new AbortController();
    const call = fails(c.nodeBalancers.get(1, { signal: ac.signal }));
    await inBackoff(registry);
    ac.abort();
    const err = await call;
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(true);
  });
});

describe("sent: some attempt may have reached the API", () => {
  it("a 500 that spends the budget, then a retry the budget holds back", async () => {
    const reset = String(Math.ceil(Date.now() / 1000) + 60);
    const srv = await server((_n, _req, res) => {
      sendJson(res, 500, internalError, { "x-ratelimit-limit": "10", "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset });
    });
    const { client: c } = client(srv.url, { retry });
    const err = await fails(c.nodeBalancers.get(1));
    // The last attempt was held back here, but the first one reached the API.
    expect(err.kind).toBe("rateLimited");
    expect(err.message).toMatch(/rate-limit budget/);
    expect(wasNeverSent(err)).toBe(false);
    expect(srv.received).toHaveLength(1);
  });

  it("a 500, then connections refused", async () => {
    const srv: ScriptedServer = await server((_n, _req, res) => {
      res.on("finish", () => { void srv.close(); });
      sendJson(res, 500, internalError);
    });
    const { client: c } = client(srv.url, { retry: { ...retry, maxAttempts: 3 } });
    const err = await fails(c.nodeBalancers.get(1));
    expect(err).toMatchObject({ kind: "transient", code: "ECONNREFUSED", notSent: true });
    expect(wasNeverSent(err)).toBe(false);
    expect(srv.received).toHaveLength(1);
  });

  it("a headers timeout", async () => {
    const srv = await server(() => undefined);
    const { client: c } = client(srv.url, { timeouts: { headersMs: 200 }, retry: { ...retry, maxAttempts: 2 } });
    const err = await fails(c.nodeBalancers.get(1));
    expect(err).toMatchObject({ kind: "transient", code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(wasNeverSent(err)).toBe(false);
    expect(srv.received).toHaveLength(2);
  });

  it("cancelled mid-request", async () => {
    const ac = new AbortController();
    // Cancelled once the server has the request, which it never answers.
    const srv = await server(() => { ac.abort(new Error("shutdown")); });
    const { client: c } = client(srv.url, { retry });
    const err = await fails(c.nodeBalancers.get(1, { signal: ac.signal }));
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(false);
    expect(translateLinodeError(err, "reading")).toBe(err);
    expect(srv.received).toHaveLength(1);
  });

  it("cancelled in the backoff after a 500", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    const srv = await server((_n, _req, res) => { sendJson(res, 500, internalError); });
    const { client: c, registry } = client(srv.url, { retry: { ...retry, ...longBackoff } });
    const ac = new AbortController();
    const call = fails(c.nodeBalancers.get(1, { signal: ac.signal }));
    await inBackoff(registry);
    ac.abort();
    const err = await call;
    expect(err.kind).toBe("cancelled");
    expect(wasNeverSent(err)).toBe(false);
    expect(srv.received).toHaveLength(1);
  });

  it("an API error, and anything that is not the client's", () => {
    expect(wasNeverSent(new LinodeApiError(429, [{ reason: "Too many requests" }], { method: "GET", route: "/x" }))).toBe(false);
    expect(wasNeverSent(new Error("boom"))).toBe(false);
    expect(wasNeverSent(undefined)).toBe(false);
  });
});
