// A 2xx answer whose body is not JSON or does not match the schema: transient (retried with
// backoff, never parked), resent within the call only when the request is idempotent (a
// create that was answered 2xx happened), and named by paths, never by values.
import { afterEach, describe, expect, it } from "vitest";
import { classifyError, LinodeResponseError, wasNeverSent, type LinodeError } from "../../src/linode/index.ts";
import { isRetryable } from "../../src/linode/retry.ts";
import { makeClient, metricValue, sendJson, startScriptedServer, type ScriptedServer } from "./helpers.ts";

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(answer: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer & ReturnType<typeof makeClient>> {
  const srv = await startScriptedServer(answer);
  const tc = makeClient(srv, { rateLimit: false, retry: { baseDelayMs: 20, maxDelayMs: 200, maxAttempts: 3 } });
  cleanups.push(() => srv.close(), () => tc.client.close());
  return { ...srv, ...tc };
}

async function fails(p: Promise<unknown>): Promise<LinodeError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (err === undefined) throw new Error("expected the call to fail");
  return err as LinodeError;
}

const SECRET = "s3cr3t-value-never-in-a-message";
const emptyPage = { data: [], page: 1, pages: 1, results: 0 };

describe("a 2xx answer that does not parse", () => {
  it("is transient, and a read is resent within the call until one parses", async () => {
    const t = await setup((n, _req, res) => {
      if (n === 1) {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html>a proxy's page</html>");
      } else {
        sendJson(res, 200, emptyPage);
      }
    });
    expect((await t.client.nodeBalancers.list()).results).toBe(0);
    expect(t.received).toHaveLength(2);
    expect(await metricValue(t.registry, "linode_api_retries_total", { reason: "transient", method: "GET" })).toBe(1);
  });

  it("a read that never parses gives up after maxAttempts as transient, naming paths, never values", async () => {
    const t = await setup((_n, _req, res) => { sendJson(res, 200, { id: SECRET, label: 42, region: SECRET }); });
    const err = await fails(t.client.nodeBalancers.get(1));
    expect(err).toBeInstanceOf(LinodeResponseError);
    expect(err.kind).toBe("transient");
    expect(classifyError(err)).toMatchObject({ kind: "transient", status: 200 });
    expect((err as LinodeResponseError).issues.some((i) => i.startsWith("id: "))).toBe(true);
    expect(err.message).not.toContain(SECRET);
    expect(JSON.stringify((err as LinodeResponseError).issues)).not.toContain(SECRET);
    expect(t.logs.join("")).not.toContain(SECRET);
    expect(wasNeverSent(err)).toBe(false);
    expect(t.received).toHaveLength(3);
  });

  it("a create answered 2xx is not resent: it happened", async () => {
    const t = await setup((_n, _req, res) => { sendJson(res, 200, `{"id": 7, "label": "${SECRET}", "trunc`); });
    const err = await fails(t.client.nodeBalancers.create({ region: "us-east", label: "made-once" }));
    expect(err).toBeInstanceOf(LinodeResponseError);
    expect(err.kind).toBe("transient");
    expect((err as LinodeResponseError).issues).toEqual(["body is not JSON"]);
    expect(err.message).not.toContain(SECRET);
    expect(wasNeverSent(err)).toBe(false);
    expect(t.received).toEqual(["POST /v4/nodebalancers"]);
    expect(await metricValue(t.registry, "linode_api_retries_total", {})).toBe(0);
  });

  it("the retry policy resends it only for an idempotent request", () => {
    const err = new LinodeResponseError(200, ["body is not JSON"], { method: "POST", route: "/nodebalancers" });
    expect(isRetryable(err, true)).toBe(true);
    expect(isRetryable(err, false)).toBe(false);
  });
});
