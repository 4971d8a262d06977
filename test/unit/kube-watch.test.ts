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

describe("KubeClient.watch inactivity limit", () => {
  let server: Server;
  const open: ServerResponse[] = [];
  let client: KubeClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      open.push(res);
      if (req.url?.startsWith("/never-answers") === true) return;
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

  const endedWithin = async (inactivityMillis: number, waitMillis: number): Promise<string> => {
    let ended = "still open";
    const controller = await client.watch("/api/v1/pods", {}, () => undefined, (err) => {
      ended = err instanceof Error || err instanceof DOMException ? err.name : String(err);
    }, { inactivityMillis });
    await new Promise((r) => setTimeout(r, waitMillis));
    controller.abort();
    return ended;
  };

  it("a short limit aborts a silent watch with TimeoutError", async () => {
    expect(await endedWithin(300, 1_200)).toBe("TimeoutError");
  });

  it("a long limit keeps a silent watch open", async () => {
    expect(await endedWithin(60_000, 1_200)).toBe("still open");
  });

  it("an informer stopped while its watch is connecting stops at once", async () => {
    const informer = new Informer(client, {
      name: "silent", watchPath: "/never-answers/api/v1/pods",
      list: () => Promise.resolve({ items: [], resourceVersion: "1", continueToken: undefined }),
    });
    informer.start();
    await informer.synced;
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await informer.stop();
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
