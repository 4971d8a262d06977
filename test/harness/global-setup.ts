// Vitest global setup for the "cluster" project: one control plane for the whole run; each
// test file then works in a namespace of its own (see cluster.ts).
import type { TestProject } from "vitest/node";
import { startControlPlane } from "./control-plane.ts";

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: { server: string; adminKubeconfig: string; binDir: string; caFile: string; version: string; startMillis: number; dir: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cp = await startControlPlane();
  const { server, adminKubeconfig, binDir, caFile, version, startMillis, dir } = cp;
  project.provide("controlPlane", { server, adminKubeconfig, binDir, caFile, version, startMillis, dir });
  // A crashed run must not leave etcd and the apiserver behind.
  const killAll = (): void => { for (const pid of cp.pids()) { try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } } };
  process.once("exit", killAll);
  return async () => {
    process.off("exit", killAll);
    await cp.stop();
  };
}
