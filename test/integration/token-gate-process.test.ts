// The real `linode-operator run` process on a real API server with a token Secret holding a
// revoked token: not Ready (its /readyz says why), exactly one log line about it (never the
// token) and one Warning Event on its Deployment, however long it waits; then the Secret is fixed
// and it becomes Ready without a restart.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const GOOD = "gate-good-token-0123456789";
const REVOKED = "gate-revoked-token-0123456789";

const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const s = createServer();
  s.once("error", reject);
  s.listen(0, "127.0.0.1", () => {
    const addr = s.address();
    s.close(() => { resolve(typeof addr === "object" && addr !== null ? addr.port : 0); });
  });
});

describe("the operator with a token that cannot work", () => {
  const cluster = useTestCluster("tokengate");
  let emulator: RunningEmulator;
  let operator: OperatorProcess | undefined;
  const ns = (): string => cluster.namespace;
  const secret = (token: string): Promise<unknown> => cluster.kubectl(["-n", ns(), "apply", "-f", "-"], {
    input: JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "op-token" }, stringData: { token } }),
  });
  const warnings = async (): Promise<{ reason: string; note: string; regarding: { kind: string; name: string; uid?: string }; series?: unknown }[]> => {
    const r = await cluster.kubectl(["-n", ns(), "get", "events.events.k8s.io", "-o", "json"]);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { items: { reason: string; note: string; type: string; regarding: { kind: string; name: string; uid?: string }; series?: unknown }[] }).items
      .filter((e) => e.type === "Warning" && e.regarding.kind === "Deployment");
  };

  beforeAll(async () => {
    emulator = await startEmulator({ tokens: [GOOD], timeScale: 0 });
    await installCrds(cluster);
    await secret(REVOKED);
    const created = await cluster.kubectl(["-n", ns(), "create", "deployment", "op", "--image=registry.invalid/linode-operator:test", "--replicas=0"]);
    expect(created.code, created.stderr).toBe(0);
  });
  afterAll(async () => {
    operator?.child.kill("SIGKILL");
    await operator?.exited;
    await emulator.close();
  });

  it("is not Ready, says so once in the log and once in an Event on its Deployment, and becomes Ready once the Secret is fixed", async () => {
    const port = await freePort();
    operator = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_API_URL: emulator.url, LINODE_TOKEN_SECRET: "op-token", DEPLOYMENT_NAME: "op",
      POD_NAMESPACE: ns(), POD_NAME: "op-abc", WATCH_NAMESPACES: ns(), CLUSTER_ID: "token-gate", LEADER_ELECT: "false",
      HEALTH_PORT: String(port), METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", TOKEN_RECHECK_SECONDS: "0.2",
    });
    const p = operator;
    const readyz = async (): Promise<{ status: number; body: string } | undefined> => {
      try {
        const res = await fetch(`http://127.0.0.1:${String(port)}/readyz`);
        return { status: res.status, body: await res.text() };
      } catch {
        return undefined;
      }
    };
    const notReady = await waitFor("/readyz saying why", async () => { const r = await readyz(); return r?.body.includes("refused the operator's token") === true ? r : undefined; }, 30_000, 100);
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatch(/linode-token: the Linode API refused the operator's token \(Invalid Token\).*fix the Secret .*\/op-token \(key token\)/);
    // Many looks later (one every 0.2 s), still one line and one Event.
    const looks = emulator.requestCounts()["GET /profile"] ?? 0;
    await waitFor("ten more looks", () => Promise.resolve((emulator.requestCounts()["GET /profile"] ?? 0) >= looks + 10 ? true : undefined), 30_000, 50);
    expect((await readyz())?.status).toBe(503);
    const lines = p.logs.filter((l) => l.check === "linode-token");
    expect(lines).toEqual([expect.objectContaining({ level: "error", verdict: "invalid", msg: expect.stringMatching(/^not Ready: the Linode API refused the operator's token/) as unknown })]);
    expect(JSON.stringify(p.logs) + p.stderr.join("")).not.toContain(REVOKED);
    const events = await waitFor("the Warning Event", async () => { const e = await warnings(); return e.length > 0 ? e : undefined; }, 10_000, 100);
    expect(events).toEqual([expect.objectContaining({ reason: "LinodeTokenUnusable", regarding: expect.objectContaining({ name: "op", uid: expect.any(String) as unknown }) as unknown })]);
    expect(events[0]?.series).toBeUndefined();
    expect(events[0]?.note).not.toContain(REVOKED);
    expect(p.logs.some((l) => l.msg === "operator started")).toBe(false);

    await secret(GOOD);
    await p.waitForLog((l) => l.msg === "the operator's Linode token works now", 30_000);
    await p.waitForLog((l) => l.msg === "operator started", 30_000);
    await waitFor("/readyz 200", async () => ((await readyz())?.status === 200 ? true : undefined), 30_000, 100);
    expect(p.logs.filter((l) => l.level === "error")).toHaveLength(1);
    expect(await warnings()).toHaveLength(1);
    expect(p.child.exitCode).toBeNull();
  });
});
