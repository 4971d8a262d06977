// What kinds that follow the cluster's Nodes read of one, so that a watch wakes them only when
// that changed: labels, addresses, cordon, readiness, deletion — not the periodic status
// heartbeats every node sends.
import type { KubeObject, NodeObject } from "../../runtime/contract.ts";

const view = (n: KubeObject): string => {
  const node = n as NodeObject;
  return JSON.stringify([
    node.metadata.labels ?? {}, node.metadata.deletionTimestamp !== undefined, node.spec?.unschedulable === true,
    node.status?.addresses ?? [], node.status?.conditions?.find((c) => c.type === "Ready")?.status,
  ]);
};

export const nodeChanged = (obj: KubeObject, old: KubeObject): boolean => view(obj) !== view(old);
