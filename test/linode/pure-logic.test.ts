// Pure logic of the client: case conversion, error classification, backoff, the token
// bucket, the X-Filter builder, redaction and page collection.
import { describe, expect, it } from "vitest";
import { camelize, snakify, toCamelKey, toSnakeKey } from "../../src/linode/case.ts";
import {
  LinodeApiError, LinodeTransportError, classifyError, classifyStatus, isPreconditionReason, transportError,
} from "../../src/linode/errors.ts";
import { and, compare, or, orderBy, serializeFilter, where } from "../../src/linode/filter.ts";
import { collectAllPages } from "../../src/linode/pagination.ts";
import { parseRateLimitHeaders, retryAfterMs, TokenBucket } from "../../src/linode/rate-limiter.ts";
import { redact, REDACTED } from "../../src/linode/redact.ts";
import { backoffDelay, isRetryable, sleep } from "../../src/linode/retry.ts";

describe("case conversion", () => {
  it("converts keys both ways, deeply, leaving data keys alone", () => {
    expect(toCamelKey("hour_of_day")).toBe("hourOfDay");
    expect(toCamelKey("total_disk_size_gb")).toBe("totalDiskSizeGb");
    expect(toSnakeKey("totalDiskSizeGb")).toBe("total_disk_size_gb");
    expect(toCamelKey("192.0.2.0~dup2")).toBe("192.0.2.0~dup2");
    expect(toSnakeKey("X-Filter")).toBe("X-Filter");
    const wire = { allow_list: ["10.0.0.1/32"], updates: { hour_of_day: 3, pending: [{ planned_for: null }] }, members: { "192.0.2.1": "primary" } };
    const edge = camelize(wire);
    expect(edge).toEqual({ allowList: ["10.0.0.1/32"], updates: { hourOfDay: 3, pending: [{ plannedFor: null }] }, members: { "192.0.2.1": "primary" } });
    expect(snakify(edge)).toEqual(wire);
  });

  it("drops undefined members on the way out", () => {
    expect(snakify({ clusterSize: 3, replicationType: undefined, sslCert: null })).toEqual({ cluster_size: 3, ssl_cert: null });
  });
});

describe("error classification", () => {
  const init = { method: "PUT", route: "/databases/mysql/instances/{instanceId}" };
  it.each([
    [400, "Label must be unique", "terminal"],
    [400, "Database must be active", "precondition"],
    [400, "Database status must be active, failed or degraded to delete.", "precondition"],
    [400, "Linode busy.", "precondition"],
    [400, "Another backup is in progress", "precondition"],
    [400, "Stats are unavailable at this time.", "precondition"],
    [400, "A maximum of 3 snapshots is allowed", "precondition"],
    [400, "Cannot filter on foo", "terminal"],
    [401, "Invalid Token", "terminal"],
    [403, "Unauthorized", "terminal"],
    [404, "Not found", "notFound"],
    [409, "Conflict", "precondition"],
    [422, "check_timeout must be less than check_interval", "terminal"],
    [429, "Too many requests", "rateLimited"],
    [500, "Internal server error", "transient"],
    [503, "Service not yet available. Please try again later.", "transient"],
  ])("%i %s -> %s", (status, reason, kind) => {
    const err = new LinodeApiError(status, [{ reason }], init);
    expect(err.kind).toBe(kind);
    expect(classifyError(err).kind).toBe(kind);
  });

  it("a mix of input errors and state errors is terminal", () => {
    expect(classifyStatus(400, [{ reason: "Database must be active" }, { reason: "label too long", field: "label" }])).toBe("terminal");
    expect(isPreconditionReason("Invalid label")).toBe(false);
  });

  it("exposes reasons, fields and the route template", () => {
    const err = new LinodeApiError(400, [{ reason: "bad", field: "label" }, { reason: "worse" }], init);
    expect(err.reasons).toEqual(["bad", "worse"]);
    expect(err.fields).toEqual(["label"]);
    expect(err.message).toContain("/databases/mysql/instances/{instanceId}");
    expect(classifyError(err)).toMatchObject({ status: 400, reason: "bad", kind: "terminal" });
  });

  it("classifies transport failures", () => {
    const reset = transportError(Object.assign(new Error("socket"), { code: "ECONNRESET" }), "GET", "/x");
    expect(reset.kind).toBe("transient");
    expect((reset as LinodeTransportError).notSent).toBe(false);
    const refused = transportError(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }), "POST", "/x");
    expect((refused as LinodeTransportError).notSent).toBe(true);
    expect(transportError(Object.assign(new Error("t"), { code: "UND_ERR_HEADERS_TIMEOUT" }), "GET", "/x").kind).toBe("transient");
    const ac = new AbortController();
    ac.abort();
    expect(transportError(new Error("aborted"), "GET", "/x", ac.signal).kind).toBe("cancelled");
    expect(classifyError(new TypeError("boom")).kind).toBe("transient");
  });
});

describe("retry policy", () => {
  it("backs off exponentially with full jitter under a cap", () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, () => 0.999)).toBe(399);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(2, policy, () => 0)).toBe(0);
  });

  it("never resends a create after an ambiguous failure", () => {
    const route = { method: "POST", route: "/nodebalancers" };
    const lost = new LinodeTransportError("ECONNRESET", false, { ...route, kind: "transient" });
    const refused = new LinodeTransportError("ECONNREFUSED", true, { ...route, kind: "transient" });
    const fiveHundred = new LinodeApiError(500, [{ reason: "oops" }], route);
    const tooMany = new LinodeApiError(429, [{ reason: "Too many requests" }], route);
    expect(isRetryable(lost, false)).toBe(false);
    expect(isRetryable(fiveHundred, false)).toBe(false);
    expect(isRetryable(refused, false)).toBe(true);
    expect(isRetryable(tooMany, false)).toBe(true);
    expect(isRetryable(fiveHundred, true)).toBe(true);
    expect(isRetryable(new LinodeApiError(400, [{ reason: "Database must be active" }], route), true)).toBe(false);
  });

  it("sleep is cancelled by the signal", async () => {
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal);
    ac.abort(new Error("shutdown"));
    await expect(p).rejects.toThrow("shutdown");
  });
});

describe("token bucket", () => {
  it("spends its capacity, then paces at capacity per window", () => {
    let now = 0;
    const b = new TokenBucket({ capacity: 2, windowMs: 1000, now: () => now });
    expect(b.tryTake()).toBe(0);
    expect(b.tryTake()).toBe(0);
    expect(b.tryTake()).toBe(500);
    now = 500;
    expect(b.tryTake()).toBe(0);
  });

  it("adapts to the server's limit and remaining, and blocks until reset at zero", () => {
    let now = 1_000_000;
    const b = new TokenBucket({ capacity: 800, windowMs: 60_000, now: () => now });
    b.observe({ limit: 100, remaining: 3 });
    expect(b.limit).toBe(100);
    expect(Math.floor(b.available)).toBe(3);
    b.observe({ limit: 100, remaining: 0, resetAtMs: now + 7_000 });
    expect(b.tryTake()).toBe(7_000);
    now += 7_000;
    expect(b.tryTake()).toBe(0);
  });

  it("is whole again once the server's window has reset", () => {
    let now = 0;
    const b = new TokenBucket({ capacity: 4, windowMs: 60_000, now: () => now });
    b.observe({ limit: 4, remaining: 1, resetAtMs: 1_000 });
    expect(b.tryTake()).toBe(0);
    expect(b.tryTake()).toBeGreaterThan(1_000);
    now = 1_000;
    for (let i = 0; i < 4; i++) expect(b.tryTake()).toBe(0);
  });

  it("a 429's Retry-After empties the bucket for exactly that long", () => {
    let now = 0;
    const b = new TokenBucket({ capacity: 10, windowMs: 1000, now: () => now });
    b.observe({ retryAfterMs: 2_000 });
    expect(b.tryTake()).toBe(2_000);
    now = 2_000;
    expect(b.tryTake()).toBe(0);
  });

  it("a 429 whose headers say the budget is not spent holds up only its own request, not the bucket", () => {
    let now = 0;
    const b = new TokenBucket({ capacity: 10, windowMs: 60_000, share: 0.5, now: () => now });
    b.observe({ limit: 10, remaining: 9, resetAtMs: 60_000, retryAfterMs: 1_000 });
    expect(b.tryTake()).toBe(0);
    // The same 429 with the budget spent (or no headers to tell) stops everyone.
    b.observe({ limit: 10, remaining: 5, resetAtMs: 60_000, retryAfterMs: 1_000 });
    expect(b.tryTake()).toBeGreaterThanOrEqual(1_000);
    now = 60_000;
    b.observe({ retryAfterMs: 1_000 });
    expect(b.tryTake()).toBe(1_000);
  });

  it("a sliding bucket sends at most its capacity in any window, whatever it refilled; headers of a larger limit leave it alone", () => {
    let now = 0;
    // A paginated class's: 200 a minute documented, half of it ours, answers reporting the general window.
    const b = new TokenBucket({ capacity: 200, windowMs: 60_000, share: 0.5, maxLimit: 200, sliding: true, now: () => now });
    const sendsWithin = (until: number): number => {
      let n = 0;
      for (; now < until; now += 100) while (b.tryTake() === 0) n++;
      return n;
    };
    b.observe({ limit: 1840, remaining: 1800, resetAtMs: 60_000 });
    expect(b.limit).toBe(100);
    // A plain bucket would send 100 at once and 100 more as it refills within the same minute.
    expect(sendsWithin(60_000)).toBe(100);
    expect(b.tryTake()).toBe(0);
    // A smaller limit reported by the class itself resizes it.
    b.observe({ limit: 20 });
    expect(b.limit).toBe(10);
  });

  it("sweeps and one object's lists each leave the other what it used and a little more, up to a cap: neither starves the other, and an unused part costs nothing", () => {
    let now = 0;
    const b = new TokenBucket({ capacity: 200, windowMs: 60_000, share: 0.5, maxLimit: 200, sliding: true, now: () => now });
    const sweep = { name: "sweep", other: "object", most: 0.2 };
    const object = { name: "object", other: "sweep", most: 0.25 };
    const take = (part: typeof sweep, most = Number.POSITIVE_INFINITY): number => { let n = 0; while (n < most && b.tryTake(part) === 0) n++; return n; };
    // Sweeps alone: they leave one object's lists only the headroom (5 of 100).
    expect(take(sweep)).toBe(95);
    now = 10_000;
    // The sweep's wait: until its first send leaves the window.
    expect(b.waitFor(sweep)).toBe(50_000);
    expect(take(object)).toBe(5);
    // A minute on: the sweeps leave what the object lists used (5) and the headroom.
    now = 60_000;
    expect(take(sweep)).toBe(90);
    expect(take(object)).toBe(5);
    expect(b.tryTake()).toBeGreaterThan(0);
    // Both busy: the sweeps sent 18; one object's lists leave them 18 and the headroom (23), never more than a quarter.
    now = 200_000;
    expect(take(sweep, 18)).toBe(18);
    expect(take(object)).toBe(77);
    expect(take(sweep)).toBe(5);
    // What a part leaves the other is capped: sweeps that sent 22 are left a quarter (25), not 27.
    now = 260_000;
    expect(take(sweep, 22)).toBe(22);
    expect(take(object)).toBe(75);
    // And object lists that sent 17 are left a fifth (20), not 22: the sweeps stop at 80.
    now = 320_000;
    expect(take(object, 17)).toBe(17);
    expect(take(sweep)).toBe(80);
    expect(b.tryTake()).toBe(0);
    // A part that must leave as much as the bucket holds still sends one at a time.
    const small = new TokenBucket({ capacity: 2, windowMs: 60_000, share: 0.5, maxLimit: 2, sliding: true, now: () => now });
    const greedy = { name: "sweep", other: "object", most: 1 };
    expect(small.tryTake(greedy)).toBe(0);
    expect(small.tryTake(greedy)).toBeGreaterThan(0);
  });

  it("a routine caller gives way to another of its part waiting for a token, however long it has waited itself; a waiter of the other part takes nothing from it", async () => {
    const b = new TokenBucket({ capacity: 1, windowMs: 300 });
    const object = { name: "object", other: "sweep", most: 0.5 };
    expect(b.tryTake(object)).toBe(0);
    const order: string[] = [];
    // The routine look waits first; the drift put back comes after it, and goes first.
    const routine = b.acquireWithin(5_000, undefined, object, true).then(() => order.push("routine"));
    await new Promise((r) => setTimeout(r, 20));
    const urgent = b.acquireWithin(5_000, undefined, object).then(() => order.push("urgent"));
    await Promise.all([routine, urgent]);
    expect(order).toEqual(["urgent", "routine"]);
    // A sweep waiting (at its part's cap) is not of its part: the routine look takes the token free now.
    const other = new TokenBucket({ capacity: 10, windowMs: 60_000, sliding: true });
    const capped = { name: "sweep", other: "object", most: 0.5 };
    const objects = { name: "object", other: "sweep", most: 0.9 };
    let swept = 0;
    while (other.tryTake(capped) === 0) swept++;
    expect(swept).toBe(9);
    const stop = new AbortController();
    const held = other.acquireWithin(120_000, stop.signal, capped).catch(() => "stopped");
    await new Promise((r) => setTimeout(r, 20));
    expect(await other.acquireWithin(0, undefined, objects, true)).toBe(0);
    stop.abort();
    expect(await held).toBe("stopped");
  });

  it("replicas spending one token divide a class no header reports: each sends its part of the share, the whole again when alone or once the class reports itself", () => {
    let now = 0;
    let peers = 3;
    const b = new TokenBucket({ capacity: 200, windowMs: 60_000, share: 0.5, maxLimit: 200, sliding: true, peers: () => peers, now: () => now });
    const sendsWithin = (until: number): number => {
      let n = 0;
      for (; now < until; now += 100) while (b.tryTake() === 0) n++;
      return n;
    };
    // Three replicas: 100 a minute of the paginated class between them, 33 each.
    expect(b.limit).toBe(33);
    expect(sendsWithin(60_000)).toBe(33);
    // A replica gone: half each.
    peers = 2;
    expect(b.limit).toBe(50);
    // Headers of the general window change nothing.
    b.observe({ limit: 1840, remaining: 1800, resetAtMs: 120_000 });
    expect(b.limit).toBe(50);
    // The class's own headers: their remaining counts every replica's calls, so the whole share is this one's to pace.
    b.observe({ limit: 200, remaining: 150 });
    expect(b.limit).toBe(100);
  });

  it("parses rate-limit headers (seconds and HTTP dates)", () => {
    const obs = parseRateLimitHeaders({ "x-ratelimit-limit": "1840", "x-ratelimit-remaining": "12", "x-ratelimit-reset": "1700000000", "retry-after": "3" });
    expect(obs).toEqual({ limit: 1840, remaining: 12, resetAtMs: 1_700_000_000_000, retryAfterMs: 3000 });
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs("garbage")).toBeUndefined();
  });
});

describe("X-Filter builder", () => {
  it("serialises camelCase fields to snake_case and keeps operators", () => {
    expect(serializeFilter(where({ label: "db-1" }))).toBe('{"label":"db-1"}');
    const f = orderBy(and(compare("totalDiskSizeGb", "+gte", 10), or(where({ region: "us-east" }), where({ region: "us-west" }))), "createdAt", "desc");
    expect(JSON.parse(serializeFilter(f))).toEqual({
      "+and": [{ total_disk_size_gb: { "+gte": 10 } }, { "+or": [{ region: "us-east" }, { region: "us-west" }] }],
      "+order_by": "created_at",
      "+order": "desc",
    });
  });
});

describe("redaction", () => {
  it("replaces secret members at any depth", () => {
    const body = { label: "x", configs: [{ port: 443, ssl_key: "-----BEGIN PRIVATE KEY-----", ssl_cert: "CERT" }], password: "hunter2", caCertificate: "Q0E=" };
    const out = JSON.stringify(redact(body));
    expect(out).not.toContain("hunter2");
    expect(out).not.toContain("PRIVATE KEY");
    expect(out).not.toContain("CERT\"");
    expect(out).not.toContain("Q0E=");
    expect(out).toContain(REDACTED);
    expect(out).toContain("443");
  });
});

describe("collectAllPages", () => {
  it("reads every page and de-duplicates items that shifted between pages", async () => {
    const pages = [[{ id: 1 }, { id: 2 }], [{ id: 2 }, { id: 3 }], [{ id: 4 }]];
    const asked: number[] = [];
    const all = await collectAllPages(async (page) => {
      asked.push(page);
      return Promise.resolve({ data: pages[page - 1] ?? [], page, pages: 3, results: 5 });
    });
    expect(asked).toEqual([1, 2, 3]);
    expect(all.map((x) => x.id)).toEqual([1, 2, 3, 4]);
  });
});
