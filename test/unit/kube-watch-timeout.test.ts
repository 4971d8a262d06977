// client-node 2.x aborts a watch after 30 s without data, but the apiserver sends bookmarks
// only about once a minute: quiet watches were torn down and backed off every 30 s (seen from
// the operator pod in the real-cluster e2e). KubeClient.watch sets the inactivity limit; this
// proves, against a local HTTP server that answers and then stays silent, that it takes effect.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";

describe("KubeClient.watch inactivity limit", () => {
  let server: Server;
  const open: ServerResponse[] = [];
  let client: KubeClient;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      open.push(res);
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
});
