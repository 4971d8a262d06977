// The operator settings that grant kinds' reads (a Read's `gate`, src/runtime/reads.ts): for
// each, the flag that turns it on in the operator and the chart value that both grants its RBAC
// and sets that flag. What a gate grants is what the kinds' reads name it for (`gatedReads`):
// its help, the chart's rules and doctor all say that, not a hand-kept list.
import type { OperatorConfig } from "../config/operator-config.ts";
import type { KindDefinition } from "../runtime/kind-definition.ts";
import type { Read } from "../runtime/reads.ts";
import { READ_NODES_GATE } from "./shared/nodes.ts";

export interface ReadGate {
  /** `linode-operator run` flag (and its environment variable). */
  flag: string;
  env: string;
  /** The chart value that grants it (its RBAC) and turns it on (the env). */
  chartValue: string;
  on(config: Pick<OperatorConfig, "readNodes">): boolean;
}

export const readGateSettings: Readonly<Record<string, ReadGate>> = {
  // One name kept for what grew beyond Nodes: existing installs set rbac.readNodes for nodesFrom.serviceRef too.
  [READ_NODES_GATE]: { flag: "read-nodes", env: "READ_NODES", chartValue: "rbac.readNodes", on: (c) => c.readNodes },
};

/** The read gates the operator's settings turn on. */
export function readGates(config: Pick<OperatorConfig, "readNodes">): ReadonlySet<string> {
  return new Set(Object.entries(readGateSettings).filter(([, g]) => g.on(config)).map(([name]) => name));
}

/** The reads of `kinds` that `gate` grants. */
export const gatedReads = (kinds: readonly KindDefinition[], gate: string): Read[] => kinds.flatMap((k) => (k.reads ?? []).filter((r) => r.gate === gate));
