// The operator's requests to the API server share one bounded keep-alive pool: a burst of
// concurrent calls does not open a connection each (client-node's default), and the pool is
// reused afterwards instead of reconnecting.
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { openConnections } from "../harness/sockets.ts";

describe("connections to the API server", () => {
  const cluster = useTestCluster("conns");

  it("200 concurrent requests use at most the pool's 8 connections, and the next burst reuses them", async () => {
    const port = Number(new URL(cluster.server).port);
    const kube = new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "conn-test" });
    const before = await openConnections("self", port);
    let peak = 0;
    const burst = async (): Promise<void> => {
      let done = false;
      const sampling = (async () => {
        while (!done) {
          peak = Math.max(peak, await openConnections("self", port) - before);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await Promise.all(Array.from({ length: 200 }, () => kube.namespaceUid(cluster.namespace)));
      done = true;
      await sampling;
    };
    await burst();
    const afterFirst = await openConnections("self", port) - before;
    await burst();
    const afterSecond = await openConnections("self", port) - before;
    console.log(`[connections] peak ${String(peak)} during 2 × 200 concurrent requests; open after: ${String(afterFirst)}, then ${String(afterSecond)}`);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(8);
    expect(afterSecond).toBeLessThanOrEqual(8);
  });
});
