// The Kubernetes shape of a resource the runtime manages, apart from the contract in managed.ts,
// so what writes status (status-writer.ts, which actions.ts uses) does not depend on the
// contract that refers to them.
import type { KubeObject } from "../kube/types.ts";
import type { Condition } from "./condition-schema.ts";

export type ManagedStatus = { observedGeneration?: number; conditions?: Condition[] } & Record<string, unknown>;

export interface ManagedObject extends KubeObject {
  spec?: unknown;
  status?: ManagedStatus;
}
