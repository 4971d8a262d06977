// Watch timing against a local HTTP server that answers and then stays silent, or never
// answers at all. client-node 2.x aborts a watch after 30 s without data, but the apiserver
// sends bookmarks only about once a minute: quiet watches were torn down and backed off every
// 30 s (seen from the operator pod in the real-cluster e2e); KubeClient.watch sets the limit.
// And an informer stopped while its watch is still connecting must stop at once (a leader
// that hangs in shutdown keeps renewing its Lease and delays the failover).
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { Informer } from "../../src/kube/informer.ts";
import { secretsType, type KubeObject } from "../../src/kube/types.ts";

describe("KubeClient.watch inactivity limit", () => {
  let server: Server;
  const open: ServerResponse[] = [];
  let client: KubeClient;
  let refusals = 0;
  /** What each request to /accept/… asked for (its Accept header). */
  const accepts: string[] = [];
  /** Requests held unanswered so far. */
  let neverAnswered = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      open.push(res);
      if (req.url?.startsWith("/never-answers") === true) { neverAnswered++; return; }
      if (req.url?.startsWith("/accept") === true || req.url?.startsWith("/api/v1/namespaces/accept/") === true) {
        accepts.push(req.headers.accept ?? "");
        res.writeHead(200, { "content-type": "application/json" });
        // As kube-apiserver answers an empty metadata-only list (items: null), or a watch's first event.
        if (req.url.includes("watch=true")) res.write(`${JSON.stringify({ type: "ADDED", object: { kind: "PartialObjectMetadata", metadata: { name: "s", namespace: "accept", resourceVersion: "2" } } })}\n`);
        else res.end(JSON.stringify({ kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", metadata: { resourceVersion: "1" }, items: null }));
        return;
      }
      if (req.url?.startsWith("/initializing") === true) {
        // As kube-apiserver answers watches while its watch cache initializes (KEP-4568).
        if (refusals++ < 2) {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
          res.end(JSON.stringify({ kind: "Status", status: "Failure", reason: "TooManyRequests", code: 429, message: "storage is (re)initializing" }));
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "p", namespace: "n", resourceVersion: "2" } } })}\n`);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    client = new KubeClient(kc, { fieldManager: "test" });
  });
  afterAll(async () => {
    for (const r of open) r.destroy();
    await new Promise((r) => server.close(r));
  });

  /** A silent watch with this inactivity limit: how it ends (a promise), and a way to stop it. */
  const silentWatch = async (inactivityMillis: number): Promise<{ ended: Promise<string>; state: () => string; abort: () => void }> => {
    let state = "still open";
    let settle: (why: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => { settle = resolve; });
    const controller = await client.watch("/api/v1/pods", {}, () => undefined, (err) => {
      state = err instanceof Error || err instanceof DOMException ? err.name : String(err);
      settle(state);
    }, { inactivityMillis });
    return { ended, state: () => state, abort: () => { controller.abort(); } };
  };

  it("a short limit aborts a silent watch with TimeoutError", async () => {
    const w = await silentWatch(300);
    expect(await w.ended).toBe("TimeoutError");
  });

  it("a long limit keeps a silent watch open", async () => {
    // Proved by a watch beside it, not by a wait: when the short-limit watch opened after it has
    // timed out, the long one has been silent longer than that and is still open.
    const long = await silentWatch(60_000);
    const short = await silentWatch(300);
    expect(await short.ended).toBe("TimeoutError");
    expect(long.state()).toBe("still open");
    long.abort();
  });

  it("an informer stopped while its watch is connecting stops at once", async () => {
    const informer = new Informer(client, {
      name: "silent", watchPath: "/never-answers/api/v1/pods",
      list: () => Promise.resolve({ items: [], resourceVersion: "1", continueToken: undefined }),
    });
    informer.start();
    await informer.synced;
    await expect.poll(() => neverAnswered).toBeGreaterThan(0); // its watch request is on its way
    const t0 = Date.now();
    await informer.stop();
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it("metadata only: lists and watches ask the API server for PartialObjectMetadata (client-node's Watch reads only the cluster and the credentials of the config it is given)", async () => {
    accepts.length = 0;
    const page = await client.list(secretsType, { namespace: "accept", metadataOnly: true });
    expect(page).toEqual({ items: [], resourceVersion: "1", continueToken: undefined });
    const seen: unknown[] = [];
    const handle = await client.watch("/accept/api/v1/secrets", {}, (type, obj) => seen.push([type, obj]), () => undefined, { metadataOnly: true });
    const t0 = Date.now();
    while (seen.length === 0 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 20));
    handle.abort();
    expect(seen).toEqual([["ADDED", { kind: "PartialObjectMetadata", metadata: { name: "s", namespace: "accept", resourceVersion: "2" } }]]);
    const plain = await client.watch("/accept/api/v1/secrets", {}, () => undefined, () => undefined);
    plain.abort();
    expect(accepts).toEqual([
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
      expect.not.stringContaining("PartialObjectMetadata") as string,
    ]);
  });

  it("a watch refused with 429 while the apiserver's cache initializes is retried quietly, and then delivers", async () => {
    const said: { level: string; msg: string }[] = [];
    const log = (level: string) => (_o: object, msg: string): void => { said.push({ level, msg }); };
    const informer = new Informer<KubeObject>(client, {
      name: "initializing", watchPath: "/initializing/api/v1/pods",
      list: () => Promise.resolve({ items: [], resourceVersion: "1", continueToken: undefined }),
    }, { backoffBaseMillis: 50, logger: { debug: log("debug"), info: log("info"), warn: log("warn") } });
    const seen: string[] = [];
    informer.onEvent((_e, o) => seen.push(o.metadata.name));
    informer.start();
    const t0 = Date.now();
    while (!seen.includes("p") && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 20));
    await informer.stop();
    expect(seen).toContain("p");
    expect(said.filter((s) => s.level === "info" && s.msg.includes("429"))).toHaveLength(2);
    expect(said.filter((s) => s.level === "warn")).toEqual([]);
  });
});
