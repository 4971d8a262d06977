// ManagedDatabase helpers for integration tests on a real API server and the emulator: apply
// through kubectl, read back, wait for Ready or a reason, read the Secret, count the emulator's
// POSTs under one database.
import { expect } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { managedDatabaseType as mdb } from "../../src/resources/managed-database/index.ts";
import type { TestCluster } from "./cluster.ts";
import type { OperatorEnv, startOperatorEnv } from "./operator-env.ts";
import { waitFor } from "./operator-runtime.ts";

export const mysql = { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.7"] };

/** An env on one platform, with provisioning quick and a 2 s drift window. */
export const envOptions = (platform: "legacy" | "current"): Parameters<typeof startOperatorEnv>[1] => ({ platform, provisionSeconds: 0.3, poll: { pendingMillis: 300, readyMillis: 2_000 } });

export function databaseHelpers(cluster: TestCluster, envOf: () => OperatorEnv) {
  const ns = (): string => cluster.namespace;
  const key = (name: string): string => `${ns()}/${name}`;
  const apply = async (name: string, spec: Record<string, unknown>): Promise<void> => {
    const res = await cluster.kubectl(["-n", ns(), "apply", "-f", "-"], { input: JSON.stringify({ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name }, spec }) });
    expect(res.code, res.stderr).toBe(0);
  };
  const get = (name: string): Promise<ManagedObject> => envOf().deps.kube.getCustom<ManagedObject>(mdb, { namespace: ns(), name });
  const condition = (o: ManagedObject, type: string): { status: string; reason: string; message?: string } | undefined => o.status?.conditions?.find((c) => c.type === type);
  const readyAt = async (name: string, pred: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject | undefined> => {
    const o = await get(name);
    return condition(o, "Ready")?.status === "True" && o.status?.observedGeneration === o.metadata.generation && pred(o) ? o : undefined;
  };
  const readyDatabase = async (name: string, spec: Record<string, unknown> = mysql): Promise<ManagedObject> => {
    await apply(name, spec);
    return waitFor(`${name} Ready`, () => readyAt(name), 60_000, 200);
  };
  const secret = async (name: string): Promise<Record<string, string>> => {
    const s = await cluster.core.readNamespacedSecret({ namespace: ns(), name });
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
  };
  /** Waits until condition `type` of `name` has `reason`; answers it. */
  const reasonOf = (name: string, type: string, reason: string, timeoutMillis = 60_000): Promise<{ status: string; reason: string; message?: string }> =>
    waitFor(`${name} ${type} ${reason}`, async () => { const c = condition(await get(name), type); return c?.reason === reason ? c : undefined; }, timeoutMillis, 100);
  /** Creates the emulator answered (or refused) for an engine: POST /databases/{engine}/instances. */
  const creates = (engine = "mysql"): number => envOf().emulator.mutations().filter((m) => m.method === "POST" && m.path === `/databases/${engine}/instances`).length;
  /** POSTs the emulator answered under one database's path, ending in `suffix`. */
  const posts = (id: number, suffix: string): number => envOf().emulator.mutations().filter((m) => m.method === "POST" && m.path === `/databases/mysql/instances/${String(id)}${suffix}`).length;
  return { key, apply, get, condition, readyAt, readyDatabase, reasonOf, creates, secret, posts };
}

