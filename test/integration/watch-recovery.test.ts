// A watch broken by restarting the API server recovers without restarting the operator.
// This file runs its own control plane: restarting the shared one would disturb other files.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Controller } from "../../src/runtime/controller.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { execCapture } from "../harness/cluster.ts";
import { startControlPlane, type ControlPlane } from "../harness/control-plane.ts";
import { metricValue, runtimeDeps, waitFor } from "../harness/operator-runtime.ts";
import { GadgetCloud, gadgetCrd, gadgetType } from "../fixtures/gadget-kind.ts";
import { join } from "node:path";

describe("watch recovery", () => {
  let cp: ControlPlane;
  let deps: ReturnType<typeof runtimeDeps>;
  let controller: Controller;
  const cloud = new GadgetCloud();
  const ns = "default";

  beforeAll(async () => {
    cp = await startControlPlane({ controllerManager: false });
    const applied = await execCapture(join(cp.binDir, "kubectl"), ["--kubeconfig", cp.adminKubeconfig, "apply", "--server-side", "-f", "-"], { input: JSON.stringify(gadgetCrd) });
    expect(applied.code, applied.stderr).toBe(0);
    await execCapture(join(cp.binDir, "kubectl"), ["--kubeconfig", cp.adminKubeconfig, "wait", "--for=condition=Established", `crd/${gadgetCrd.metadata.name}`]);
    deps = runtimeDeps(cp.adminKubeconfig);
    controller = new Controller(cloud.kind({ readyMillis: 60_000 }), deps, { concurrency: 1, coalesceMillis: 50, watchdogMillis: 60_000 });
    await controller.start();
  }, 120_000);
  afterAll(async () => {
    await controller.stop();
    await cp.stop();
  }, 60_000);

  const isReady = async (name: string): Promise<true | undefined> => {
    const o = await deps.kube.getCustom<ManagedObject>(gadgetType, { namespace: ns, name });
    return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true ? true : undefined;
  };
  const create = (name: string): Promise<ManagedObject> => deps.kube.createCustom(gadgetType, ns, { apiVersion: `${gadgetType.group}/${gadgetType.version}`, kind: gadgetType.kind, metadata: { name }, spec: { size: 1 } });

  it("keeps reconciling new objects after the API server restarts", async () => {
    await create("before");
    await waitFor("before ready", () => isReady("before"));
    const restartedAt = Date.now();
    await cp.restartApiServer();
    const upMillis = Date.now() - restartedAt;
    await create("after");
    await waitFor("after ready", () => isReady("after"), 60_000, 200);
    const recoveredMillis = Date.now() - restartedAt;
    expect(await metricValue(deps.metrics, "linode_operator_informer_restarts_total", { informer: "gadgets", reason: "error" })).toBeGreaterThanOrEqual(1);
    process.stdout.write(`apiserver restart: back up in ${upMillis} ms; a new object reconciled ${recoveredMillis} ms after the restart began\n`);
  });
});
