// `node main.js run`, started without the #! line (an image's own CMD, a debugging session),
// starts again as the same process with the #! line's memory settings: the V8 flags it lacked
// and glibc's two malloc arenas. A user's own settings stand, and one asking for V8's defaults
// gets them.
import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_FLAGS } from "../../src/cli/main.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

describe("a plain start of the operator", () => {
  const cluster = useTestCluster("plainstart");
  let emulator: RunningEmulator | undefined;
  let operator: OperatorProcess | undefined;
  afterEach(async () => {
    operator?.child.kill("SIGKILL");
    await operator?.exited;
    await emulator?.close();
  });

  const start = async (env: Record<string, string>, nodeArgs: string[] = []): Promise<{ node: { pid: number; flags: string[]; mallocArenaMax: string } }> => {
    emulator = await startEmulator({ tokens: ["plain-token"], timeScale: 0 });
    await installCrds(cluster);
    operator = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_API_URL: emulator.url, LINODE_TOKEN: "plain-token", WATCH_NAMESPACES: cluster.namespace,
      CLUSTER_ID: "plain-start", LEADER_ELECT: "false", HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", ...env,
    }, { nodeArgs });
    return await operator.waitForLog((l) => l.msg === "operator started", 60_000) as unknown as { node: { pid: number; flags: string[]; mallocArenaMax: string } };
  };

  it("runs as the same process with the #! line's V8 flags and two malloc arenas", async () => {
    const { node } = await start({});
    expect(node.pid).toBe(operator?.child.pid);
    expect(node.flags).toEqual(expect.arrayContaining([...MEMORY_FLAGS]));
    expect(node.mallocArenaMax).toBe("2");
  });

  it("keeps the user's own arenas and young generation, adding only what is missing", async () => {
    const { node } = await start({ MALLOC_ARENA_MAX: "4" }, ["--max-semi-space-size=8"]);
    expect(node.pid).toBe(operator?.child.pid);
    expect(node.flags).toContain("--max-semi-space-size=8");
    expect(node.flags).not.toContain("--optimize-for-size");
    expect(node.flags).toContain("--heap-growing-percent=10");
    expect(node.mallocArenaMax).toBe("4");
  });

  it("is left as started when asked for V8's defaults", async () => {
    const { node } = await start({ LINODE_OPERATOR_V8_DEFAULTS: "1" });
    expect(node.flags).toEqual([]);
    expect(node.mallocArenaMax).toBe("glibc's default");
  });
});
