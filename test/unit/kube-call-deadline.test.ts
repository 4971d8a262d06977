// A Kubernetes call that gets no answer: over a real HTTP server that accepts and never answers,
// the client's timeout ends it as a transport failure, so a waiting operator keeps waiting.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError, KubeCallDeadlineError, kubeCall, toKubeError } from "../../src/kube/errors.ts";
import { isUnreachable, waitForApiServer } from "../../src/kube/wait-for-api-server.ts";

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => { if (server === undefined) r(); else server.close(() => { r(); }); });
  server = undefined;
});

/** An API server that answers only once `answering` is set; until then it holds every request. */
async function silentServer(): Promise<{ kube: KubeClient; answer: () => void; requests: () => number }> {
  let answering = false;
  let requests = 0;
  server = http.createServer((req, res) => {
    requests++;
    if (!answering) return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "NamespaceList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] }));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${String(port)}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }], contexts: [{ name: "x", cluster: "c", user: "u" }], currentContext: "x",
  });
  return { kube: new KubeClient(kc, { fieldManager: "test", timeoutMillis: 300 }), answer: () => { answering = true; }, requests: () => requests };
}

describe("a Kubernetes call that gets no answer", () => {
  it("ends at the client's timeout as a transport failure, never as an HTTP status", async () => {
    const { kube } = await silentServer();
    const t0 = Date.now();
    const err: unknown = await kube.ping().then(() => undefined, (e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(Error);
    // A DOMException's code (23 for a timeout) read as a status made this a refusal.
    expect(err).not.toBeInstanceOf(KubeApiError);
    expect(isUnreachable(err)).toBe(true);
  });

  it("keeps an operator waiting at startup until the API server answers", async () => {
    const { kube, answer, requests } = await silentServer();
    const warned: string[] = [];
    const waiting = waitForApiServer(() => kube.ping(), { warn: (_o, msg) => { warned.push(msg); }, info: () => undefined }, { maxDelayMillis: 100 });
    await expect.poll(requests, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    answer();
    await waiting;
    expect(warned).toEqual(["Kubernetes API server not reachable; waiting for it"]);
  });

  it("is ended by the call's deadline when the request's own timeout does not end it", async () => {
    const t0 = Date.now();
    const err: unknown = await kubeCall(() => new Promise<never>(() => undefined), 100).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(KubeCallDeadlineError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(95);
    expect(isUnreachable(err)).toBe(true);
  });

  it("still reads an API server's refusal as its status", () => {
    const refused = toKubeError(Object.assign(new Error("HTTP-Code: 403"), { code: 403, body: JSON.stringify({ reason: "Forbidden", message: "nope" }) }));
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).code).toBe(403);
    const timedOut = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    expect(toKubeError(timedOut)).toBe(timedOut);
  });
});
