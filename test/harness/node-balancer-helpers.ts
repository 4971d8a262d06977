// NodeBalancer helpers for integration tests on a real API server and the emulator: create,
// read and patch through the API server, and wait until it is settled or shows a reason.
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import type { TestCluster } from "./cluster.ts";
import type { OperatorEnv } from "./operator-env.ts";
import { waitFor } from "./operator-runtime.ts";

export type Cond = { status: string; reason: string; message?: string };

/** `defaults`: spec fields every create starts from (region us-east is always there). */
export function nodeBalancerHelpers(cluster: TestCluster, envOf: () => OperatorEnv, defaults: Record<string, unknown> = {}) {
  const ns = (): string => cluster.namespace;
  const create = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> =>
    envOf().deps.kube.createCustom(nbType, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name }, spec: { region: "us-east", ...defaults, ...spec } });
  const get = (name: string): Promise<ManagedObject> => envOf().deps.kube.getCustom<ManagedObject>(nbType, { namespace: ns(), name });
  const patch = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> => envOf().deps.kube.mergePatchCustom(nbType, { namespace: ns(), name }, { spec });
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  /** Ready and Synced for the current generation, and `check` holds. */
  const settled = (name: string, check: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject> => waitFor(`${name} Ready and Synced`, async () => {
    const o = await get(name);
    return condOf(o, "Ready")?.status === "True" && condOf(o, "Synced")?.status === "True" && o.status?.observedGeneration === o.metadata.generation && check(o) ? o : undefined;
  }, 60_000, 100);
  const reason = (name: string, type: string, want: string): Promise<Cond> => waitFor(`${name} ${type} ${want}`, async () => {
    const c = condOf(await get(name), type);
    return c?.reason === want ? c : undefined;
  }, 60_000, 100);
  return { ns, create, get, patch, condOf, settled, reason };
}
