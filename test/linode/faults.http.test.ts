// Error classes, retries, rate limits, timeouts and cancellation, against the emulator's
// fault injection over real HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LinodeClient, LinodeTransportError, type LinodeError } from "../../src/linode/index.ts";
import { translateLinodeError } from "../../src/resources/shared/linode-errors.ts";
import { eventually, label, makeClient, metricValue, startTestEmulator, TOKEN, type Emulator, type TestClient } from "./helpers.ts";

let emu: Emulator;
let tc: TestClient;
let client: LinodeClient;

beforeAll(async () => {
  emu = await startTestEmulator({ seed: 7 });
  tc = makeClient(emu);
  client = tc.client;
});

afterEach(() => {
  emu.setFaults({});
  emu.resetRequestCounts();
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

const GET_NB = "GET /nodebalancers/{nodeBalancerId}";

async function fails(p: Promise<unknown>): Promise<LinodeError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (err === undefined) throw new Error("expected the call to fail");
  return err as LinodeError;
}

async function newNb(): Promise<number> {
  return (await client.nodeBalancers.create({ region: "us-east", label: label("f-nb") })).id;
}

describe("error classes", () => {
  it("401 bad token is terminal and not retried", async () => {
    const bad = new LinodeClient({ token: "wrong-token", baseUrl: emu.url });
    const err = await fails(bad.nodeBalancers.list());
    expect(err).toMatchObject({ kind: "terminal", status: 401, reasons: ["Invalid Token"] });
    expect(emu.requestCounts()["GET /nodebalancers"]).toBe(1);
    await bad.close();
  });

  it("400 bad input is terminal, with the API's reasons and fields", async () => {
    const err = await fails(client.nodeBalancers.create({ region: "no-such-region", label: label("bad") }));
    expect(err).toMatchObject({ kind: "terminal", status: 400, route: "/nodebalancers", method: "POST" });
    expect((err as unknown as { fields: string[] }).fields).toContain("region");
  });

  it("404 is notFound", async () => {
    const err = await fails(client.databases.mysql.get(999_999));
    expect(err).toMatchObject({ kind: "notFound", status: 404 });
    expect(err.message).not.toMatch(/API URL/);
  });

  it("a 404 on a collection says the API URL is wrong (here /v4 twice)", async () => {
    const wrong = new LinodeClient({ token: TOKEN, baseUrl: `${emu.url}/v4` });
    const err = await fails(wrong.databases.mysql.list());
    expect(err).toMatchObject({ kind: "notFound", status: 404 });
    expect(err.message).toMatch(/check the Linode API URL/);
    await wrong.close();
  });

  it("an operation the object's state does not allow yet is a precondition", async () => {
    const db = await client.databases.postgresql.create({ label: label("pre"), region: "us-east", type: "g6-nanode-1", version: "16" });
    // Pin it in provisioning so the race with the emulator's transition cannot matter.
    await fetch(`${emu.adminUrl}/databases/${db.id}/status`, { method: "PUT", body: JSON.stringify({ status: "provisioning" }), headers: { "content-type": "application/json" } });
    const err = await fails(client.databases.postgresql.patch(db.id));
    expect(err).toMatchObject({ kind: "precondition", status: 400 });
    expect(emu.requestCounts()["POST /databases/postgresql/instances/{instanceId}/patch"]).toBe(1);
  });
});

describe("rate limits", () => {
  it("waits exactly Retry-After on a 429 and then succeeds", async () => {
    const id = await newNb();
    emu.setFaults({ burst429: 1, retryAfterSeconds: 1, routes: [GET_NB] });
    const started = performance.now();
    const nb = await client.nodeBalancers.get(id);
    const waited = performance.now() - started;
    expect(nb.id).toBe(id);
    expect(waited).toBeGreaterThanOrEqual(990);
    expect(waited).toBeLessThan(1800);
    expect(emu.requestCounts()[GET_NB]).toBe(2);
    expect(await metricValue(tc.registry, "linode_api_requests_total", { route: "/nodebalancers/{nodeBalancerId}", status: "429" })).toBe(1);
    expect(await metricValue(tc.registry, "linode_api_retries_total", { reason: "rateLimited" })).toBeGreaterThanOrEqual(1);
    const latency = await tc.registry.getSingleMetric("linode_api_request_duration_seconds")?.get();
    const count = latency?.values.find((v) => (v as { metricName?: string }).metricName === "linode_api_request_duration_seconds_count" && v.labels.route === "/nodebalancers/{nodeBalancerId}");
    expect(count?.value).toBeGreaterThanOrEqual(2);
  });

  it("runs each wait before a retry (a 429's Retry-After, a 5xx's backoff) through aroundRetryWait, and none before a first attempt", async () => {
    const waits: string[] = [];
    const own = makeClient(emu, { aroundRetryWait: async (wait) => { waits.push("begin"); await wait(); waits.push("end"); } });
    try {
      const id = (await own.client.nodeBalancers.create({ region: "us-east", label: label("around") })).id;
      expect(waits).toEqual([]);
      emu.setFaults({ burst429: 1, retryAfterSeconds: 1, routes: [GET_NB] });
      const started = performance.now();
      expect((await own.client.nodeBalancers.get(id)).id).toBe(id);
      // The wrapped wait is the Retry-After itself.
      expect(performance.now() - started).toBeGreaterThanOrEqual(990);
      expect(waits).toEqual(["begin", "end"]);
      emu.setFaults({ errorRate: 1, errorStatus: 503, routes: [GET_NB] });
      await fails(own.client.nodeBalancers.get(id));
      // maxAttempts 4: three waits between four attempts.
      expect(waits).toHaveLength(2 + 3 * 2);
    } finally {
      await own.client.close();
    }
  });

  it("retries even a create after a 429 (the server refused it) ", async () => {
    emu.setFaults({ burst429: 1, retryAfterSeconds: 1, routes: ["POST /nodebalancers"] });
    const nb = await client.nodeBalancers.create({ region: "us-east", label: label("after429") });
    expect(nb.id).toBeGreaterThan(0);
    expect(emu.requestCounts()["POST /nodebalancers"]).toBe(2);
  });

  it("hands a wait longer than the cap back to the caller as rateLimited with the wait", async () => {
    const id = await newNb();
    emu.setFaults({ burst429: 1, retryAfterSeconds: 5, routes: [GET_NB] });
    const started = performance.now();
    const err = await fails(client.nodeBalancers.get(id, { retry: { maxRateLimitWaitMs: 1000 } }));
    expect(performance.now() - started).toBeLessThan(500);
    expect(err).toMatchObject({ kind: "rateLimited", status: 429, retryAfterMs: 5000 });
    // The API refused it: RateLimited is news for the object, whatever it was doing.
    expect(translateLinodeError(err, "reading")).toMatchObject({ reason: "RateLimited", unsent: false, delayMillis: 5000 });
  });

  it("paces itself from X-RateLimit-* so a small server budget produces no 429", async () => {
    const small = await startTestEmulator({ rateLimits: { default: { limit: 4, windowSeconds: 1 } } });
    const { client: paced, registry } = makeClient(small);
    try {
      const started = performance.now();
      for (let i = 0; i < 10; i++) await paced.nodeBalancers.list();
      expect(performance.now() - started).toBeGreaterThan(1000);
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
      expect(await metricValue(registry, "linode_api_requests_total", { status: "200" })).toBe(10);
      const remaining = await metricValue(registry, "linode_api_ratelimit_remaining", { group: "list" });
      expect(remaining).toBeGreaterThanOrEqual(0);
      expect(remaining).toBeLessThanOrEqual(4);
    } finally {
      await paced.close();
      await small.close();
    }
  });
});

describe("the call budget", () => {
  it("lists, reads and writes together spend at most the configured share of the token's limit, and draw no 429", async () => {
    // One token-wide limit of 20 a minute for every route, as the emulator (and the API's general limit) counts.
    const small = await startTestEmulator({ rateLimits: { default: { limit: 20, windowSeconds: 60 } } });
    const { client: paced, registry } = makeClient(small, { rateLimit: { share: 0.5 }, retry: { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 1_000 } });
    try {
      const id = (await paced.nodeBalancers.create({ region: "us-east", label: label("budget-nb") })).id;
      expect(paced.budgetNearlySpent()).toBe(false);
      const outcomes = await Promise.allSettled(Array.from({ length: 15 }, (_, i) => (i % 3 === 0
        ? paced.nodeBalancers.list()
        : i % 3 === 1 ? paced.nodeBalancers.get(id) : paced.nodeBalancers.update(id, { clientConnThrottle: i }))));
      const sent = await metricValue(registry, "linode_api_requests_total", {});
      // Half of 20: the create and 9 more were sent; the rest were handed back, never sent.
      expect(sent).toBe(10);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(9);
      // What a settled object's next look is spaced by (ExternalReader.contended).
      expect(paced.budgetNearlySpent()).toBe(true);
      expect(outcomes.filter((o) => o.status === "rejected").every((o) => (o.reason as { kind?: string }).kind === "rateLimited")).toBe(true);
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
    } finally {
      await paced.close();
      await small.close();
    }
  });
});

describe("the call budget of the paginated lists", () => {
  it("a burst of one object's lists near the token's share of the 200-a-minute class counts as the budget nearly spent, though the general limit is far", async () => {
    const emu = await startTestEmulator({});
    const { client: paced, registry } = makeClient(emu, { rateLimit: { share: 0.5 } });
    try {
      expect(paced.budgetNearlySpent()).toBe(false);
      for (let i = 0; i < 80; i++) await paced.nodeBalancers.list();
      expect(paced.budgetNearlySpent()).toBe(false);
      for (let i = 0; i < 6; i++) await paced.nodeBalancers.list();
      // 86 of the 95 lists a minute the share allows them while no sweep runs (5 are left to sweeps): under a tenth of 100 left.
      expect(paced.budgetNearlySpent()).toBe(true);
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
    } finally {
      await paced.close();
      await emu.close();
    }
  });
});

describe("rate limits per route class", () => {
  // The list route's own budget: 2 per minute; everything else has plenty.
  const listLimited = { routes: { "GET /nodebalancers": { limit: 2, windowSeconds: 60 } } };

  it("a spent list budget does not hold up single reads or writes", async () => {
    const small = await startTestEmulator({ rateLimits: listLimited });
    const { client: paced } = makeClient(small);
    try {
      const id = (await paced.nodeBalancers.create({ region: "us-east", label: label("rc-nb") })).id;
      await paced.nodeBalancers.list();
      await paced.nodeBalancers.list(); // the list budget is now 0 until the window resets (a minute)
      const started = performance.now();
      await paced.nodeBalancers.get(id);
      await paced.nodeBalancers.update(id, { clientConnThrottle: 5 });
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      await paced.close();
      await small.close();
    }
  });

  it("a burst of statistics reads before any answer keeps to the documented 50 a minute (its share of them): never a 429", async () => {
    // The emulator's stats limit is the real one (50/min); nothing has told the client so yet.
    const emu = await startTestEmulator();
    const { client: paced, registry } = makeClient(emu, { rateLimit: { share: 0.5 }, retry: { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 1_000 } });
    try {
      const ids = await Promise.all([0, 1, 2].map(async (i) => (await paced.nodeBalancers.create({ region: "us-east", label: label(`stats-${String(i)}`) })).id));
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => paced.nodeBalancers.getStats(ids[i % 3] ?? 0)));
      const refusedHere = outcomes.filter((o) => o.status === "rejected" && o.reason instanceof Error && /stats rate-limit budget/.test(o.reason.message)).length;
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
      // Half of 50 went out (answered 200 or 400 "unavailable"); the rest waited for the bucket and were handed back unsent.
      expect(40 - refusedHere).toBe(25);
    } finally {
      await paced.close();
      await emu.close();
    }
  });

  it.each(["general", "class"] as const)("a burst of one object's lists spends at most their part of the share of the paginated class (200 a minute), whatever window the headers report (%s): never a 429", async (headers) => {
    // The API's own figures: 1840 general, 200 for paginated GETs, their answers reporting the general window (as recorded) or their own.
    const emu = await startTestEmulator({ rateLimits: { paginated: { limit: 200, windowSeconds: 60, headers } } });
    const { client: paced, registry } = makeClient(emu, { rateLimit: { share: 0.5 }, retry: { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 300 } });
    try {
      const started = performance.now();
      const outcomes = await Promise.allSettled(Array.from({ length: 220 }, () => paced.nodeBalancers.list()));
      const elapsedMs = performance.now() - started;
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
      const sent = emu.requestCounts()["GET /nodebalancers"] ?? 0;
      // Half of 200, less the headroom one object's lists leave to sweeps (5, none sent), and what
      // the bucket refilled meanwhile (100 a minute); the rest handed back unsent.
      expect(sent).toBeGreaterThanOrEqual(95);
      expect(sent).toBeLessThanOrEqual(95 + Math.ceil(elapsedMs / 600));
      expect(outcomes.filter((o) => o.status === "rejected").every((o) => o.reason instanceof Error && /list rate-limit budget/.test(o.reason.message))).toBe(true);
    } finally {
      await paced.close();
      await emu.close();
    }
  });

  it("a list budget spent for longer than the wait cap is handed back as rateLimited at once, never sent", async () => {
    const small = await startTestEmulator({ rateLimits: listLimited });
    const { client: paced, registry } = makeClient(small, { retry: { baseDelayMs: 20, maxDelayMs: 200, maxRateLimitWaitMs: 2_000 } });
    try {
      await paced.nodeBalancers.list();
      await paced.nodeBalancers.list();
      const started = performance.now();
      const err = await fails(paced.nodeBalancers.list());
      expect(performance.now() - started).toBeLessThan(500);
      expect(err.kind).toBe("rateLimited");
      expect(err.retryAfterMs).toBeGreaterThan(2_000);
      expect(err.message).toMatch(/list rate-limit budget/);
      // Never sent: an object with nothing to do keeps its conditions (the reconciler's decision table).
      expect(translateLinodeError(err, "listing")).toMatchObject({ reason: "RateLimited", unsent: true });
      // Known from the headers: the server was never asked, so never said 429.
      expect(await metricValue(registry, "linode_api_requests_total", { status: "429" })).toBe(0);
    } finally {
      await paced.close();
      await small.close();
    }
  });
});

describe("transient faults", () => {
  it("retries 5xx on reads with backoff until they succeed", async () => {
    const id = await newNb();
    emu.setFaults({ errorRate: 0.5, routes: [GET_NB], seed: 3 });
    for (let i = 0; i < 20; i++) {
      expect((await client.nodeBalancers.get(id, { retry: { maxAttempts: 10 } })).id).toBe(id);
    }
    expect(emu.requestCounts()[GET_NB]).toBeGreaterThan(20);
    expect(await metricValue(tc.registry, "linode_api_retries_total", { reason: "transient", method: "GET" })).toBeGreaterThan(0);
  });

  it("gives up after maxAttempts with a transient error", async () => {
    const id = await newNb();
    emu.setFaults({ errorRate: 1, errorStatus: 503, routes: [GET_NB] });
    const err = await fails(client.nodeBalancers.get(id, { retry: { maxAttempts: 3 } }));
    expect(err).toMatchObject({ kind: "transient", status: 503 });
    expect(emu.requestCounts()[GET_NB]).toBe(3);
  });

  it("never resends a create after a 5xx or a lost response; the caller finds it by label", async () => {
    emu.setFaults({ errorRate: 1, routes: ["POST /nodebalancers"] });
    const err500 = await fails(client.nodeBalancers.create({ region: "us-east", label: label("c500") }));
    expect(err500).toMatchObject({ kind: "transient", status: 500 });
    expect(emu.requestCounts()["POST /nodebalancers"]).toBe(1);

    emu.setFaults({ dropRate: 1, routes: ["POST /nodebalancers"] });
    const name = label("dropped");
    const lost = await fails(client.nodeBalancers.create({ region: "us-east", label: name }));
    expect(lost).toBeInstanceOf(LinodeTransportError);
    expect(lost.kind).toBe("transient");
    expect(emu.requestCounts()["POST /nodebalancers"]).toBe(2);
    emu.setFaults({});
    // The create happened although its response was lost: exactly why it is not retried.
    expect(await client.nodeBalancers.findByLabel(name)).toMatchObject({ label: name });
  });

  it("a DELETE whose response was lost is retried, and the 404 that follows counts as done", async () => {
    const id = await newNb();
    emu.setFaults({ dropRate: 0.5, routes: ["DELETE /nodebalancers/{nodeBalancerId}"], seed: 11 });
    await client.nodeBalancers.delete(id, { retry: { maxAttempts: 10 } });
    emu.setFaults({});
    await expect(client.nodeBalancers.get(id)).rejects.toMatchObject({ kind: "notFound" });
  });
});

describe("timeouts and cancellation", () => {
  it("a slow server trips the headers timeout (transient, retried, bounded)", async () => {
    const slow = makeClient(emu, { timeouts: { headersMs: 200 } });
    const id = await newNb();
    emu.setFaults({ latencyMs: 1500, routes: [GET_NB] });
    const started = performance.now();
    const err = await fails(slow.client.nodeBalancers.get(id, { retry: { maxAttempts: 2 } }));
    const elapsed = performance.now() - started;
    expect(err).toMatchObject({ kind: "transient", code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(1500);
    emu.setFaults({});
    await slow.client.close();
  });

  it("an AbortSignal cancels an in-flight call at once", async () => {
    const id = await newNb();
    emu.setFaults({ latencyMs: 3000, routes: [GET_NB] });
    const ac = new AbortController();
    const asked = emu.requestCounts()[GET_NB] ?? 0;
    const call = fails(client.nodeBalancers.get(id, { signal: ac.signal }));
    // The emulator counts a request as it arrives, before its 3 s of latency.
    await eventually(() => Promise.resolve((emu.requestCounts()[GET_NB] ?? 0) > asked ? true : undefined));
    const started = performance.now();
    ac.abort(new Error("shutdown"));
    expect(await call).toMatchObject({ kind: "cancelled" });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("an AbortSignal also cancels a rate-limit wait", async () => {
    const id = await newNb();
    emu.setFaults({ burst429: 1, retryAfterSeconds: 10, routes: [GET_NB] });
    const ac = new AbortController();
    const retried = await metricValue(tc.registry, "linode_api_retries_total", { method: "GET" });
    const call = fails(client.nodeBalancers.get(id, { signal: ac.signal, retry: { maxRateLimitWaitMs: 60_000 } }));
    // The client counts the retry as its 10 s wait begins.
    await eventually(async () => ((await metricValue(tc.registry, "linode_api_retries_total", { method: "GET" })) > retried ? true : undefined));
    const started = performance.now();
    ac.abort();
    expect(await call).toMatchObject({ kind: "cancelled" });
    expect(performance.now() - started).toBeLessThan(1000);
    // Only this request waited: the 429's headers said the token's budget was not spent.
  });
});

describe("pagination", () => {
  it("fetches every page, and reads everything in one request at page_size 500", async () => {
    const seeded = await startTestEmulator();
    const { client: c } = makeClient(seeded);
    try {
      const res = await fetch(`${seeded.adminUrl}/seed`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ nodebalancers: { count: 60 } }) });
      expect(res.ok).toBe(true);
      const first = await c.nodeBalancers.list({ pageSize: 25 });
      expect(first).toMatchObject({ page: 1, pages: 3, results: 60 });
      expect(first.data).toHaveLength(25);
      const third = await c.nodeBalancers.list({ page: 3, pageSize: 25 });
      expect(third.data).toHaveLength(10);
      seeded.resetRequestCounts();
      const all = await c.nodeBalancers.listAll({ pageSize: 25 });
      expect(new Set(all.map((n) => n.id)).size).toBe(60);
      expect(seeded.requestCounts()["GET /nodebalancers"]).toBe(3);
      seeded.resetRequestCounts();
      expect(await c.nodeBalancers.listAll()).toHaveLength(60);
      expect(seeded.requestCounts()["GET /nodebalancers"]).toBe(1);
    } finally {
      await c.close();
      await seeded.close();
    }
  });
});
