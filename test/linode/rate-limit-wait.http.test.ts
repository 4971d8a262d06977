// How long requests waited for the client's own budget, as an SRE reads it from /metrics: a
// class whose budget is spent shows its waits, and a class with room shows none.
import type { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/linode/index.ts";
import { makeClient, sendJson, startScriptedServer, type ScriptedServer } from "./helpers.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c(); });

async function waits(registry: Registry, group: string): Promise<{ count: number; sum: number }> {
  const metric = await registry.getSingleMetric("linode_api_ratelimit_wait_seconds")?.get();
  const of = (suffix: string): number => metric?.values.find((v) => (v as { metricName?: string }).metricName === `linode_api_ratelimit_wait_seconds_${suffix}` && v.labels.group === group)?.value ?? 0;
  return { count: of("count"), sum: of("sum") };
}

describe("the rate-limit wait metric", () => {
  it("records each attempt's wait for the client's own budget, by class", async () => {
    const srv: ScriptedServer = await startScriptedServer((_n, _req, res) => { sendJson(res, 200, { id: 1, label: "lb", region: "us-east", hostname: "h", ipv4: "203.0.113.1", client_conn_throttle: 0, created: "2024-01-01T00:00:00", updated: "2024-01-01T00:00:00", tags: [], transfer: { in: null, out: null, total: null } }); });
    cleanups.push(() => srv.close());
    // One read a 2 s window: the second waits for the first's token to come back, less however
    // long the first took to answer (a loaded machine can take hundreds of milliseconds).
    const windowSeconds = 2;
    const tc = makeClient({ url: srv.url }, { rateLimit: new RateLimiter({ capacity: 1, windowMs: windowSeconds * 1000 }) });
    cleanups.push(() => tc.client.close());
    const started = performance.now();
    await tc.client.nodeBalancers.get(1).catch(() => undefined);
    const first = await waits(tc.registry, "read");
    expect(first.count).toBe(1);
    expect(first.sum).toBeLessThan(0.2);
    const secondAt = performance.now();
    await tc.client.nodeBalancers.get(1).catch(() => undefined);
    const both = await waits(tc.registry, "read");
    expect(both.count).toBe(2);
    expect(both.sum - first.sum).toBeGreaterThan(windowSeconds - (secondAt - started) / 1000 - 0.25);
    expect(both.sum - first.sum).toBeLessThan(windowSeconds + 0.5);
    expect((await waits(tc.registry, "list")).count).toBe(0);
  });
});

/** A server answering every list empty, and a client allowed `perMinute` paginated GETs. */
async function emptyListsServed(perMinute: number): Promise<{ srv: ScriptedServer; tc: ReturnType<typeof makeClient> }> {
  const srv = await startScriptedServer((_n, _req, res) => { sendJson(res, 200, { data: [], page: 1, pages: 1, results: 0 }); });
  cleanups.push(() => srv.close());
  const tc = makeClient({ url: srv.url }, { rateLimit: new RateLimiter({ listLimitPerMinute: perMinute }) });
  cleanups.push(() => tc.client.close());
  return { srv, tc };
}

describe("a sweep and the paginated class", () => {
  it("a sweep leaves the lists one object waits on what they used and a little more: a lookup is not held behind sweeps", async () => {
    // Ten paginated GETs a minute, and no lookup yet: sweeps leave the headroom, one.
    const { srv, tc } = await emptyListsServed(10);
    const dbs = tc.client.databases.engine("mysql");
    const once = { retry: { maxRateLimitWaitMs: 0 } };
    const sweep = (): Promise<unknown> => dbs.listAll({ sweep: true, ...once });
    expect(tc.client.sweepHeldMillis()).toBe(0);
    for (let i = 0; i < 9; i++) await sweep();
    // Until the first sweep's send leaves the minute: what a database cache weighs against a GET.
    expect(tc.client.sweepHeldMillis()).toBeGreaterThan(50_000);
    const held = await sweep().then(() => undefined, (e: unknown) => e);
    expect(held).toMatchObject({ kind: "rateLimited", neverSent: true });
    // A lookup after a lost create is not held behind the sweeps.
    expect(await dbs.findByLabel("db-1", once)).toBeUndefined();
    expect(srv.received.length).toBe(10);
    const spent = await dbs.findByLabel("db-2", once).then(() => undefined, (e: unknown) => e);
    expect(spent).toMatchObject({ kind: "rateLimited" });
  });

  it("one object's lists leave the sweeps what they used and a little more: a sweep still goes when lookups have filled the rest", async () => {
    // Twenty paginated GETs a minute, and no sweep yet: one object's lists leave the headroom, one.
    const { srv, tc } = await emptyListsServed(20);
    const dbs = tc.client.databases.engine("mysql");
    const once = { retry: { maxRateLimitWaitMs: 0 } };
    for (let i = 0; i < 19; i++) expect(await dbs.findByLabel(`db-${String(i)}`, once)).toBeUndefined();
    const held = await dbs.findByLabel("db-19", once).then(() => undefined, (e: unknown) => e);
    expect(held).toMatchObject({ kind: "rateLimited", neverSent: true });
    // The sweep that finds the drift of every database is not held behind them.
    expect(tc.client.sweepHeldMillis()).toBe(0);
    await dbs.listAll({ sweep: true, ...once });
    expect(srv.received.length).toBe(20);
  });
});
