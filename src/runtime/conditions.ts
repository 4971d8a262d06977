// Ready/Synced conditions (reasons in reasons.ts). lastTransitionTime moves only when a
// condition's status flips, so rewriting the same conditions is a no-op.
import type { Condition } from "./condition-schema.ts";

export type ConditionType = "Ready" | "Synced";

export interface ConditionInput {
  type: ConditionType;
  status: "True" | "False" | "Unknown";
  reason: string;
  message?: string;
}

export function setCondition(existing: readonly Condition[] | undefined, input: ConditionInput, generation: number | undefined, now: Date = new Date()): Condition[] {
  const list = [...(existing ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    ...(input.message !== undefined && input.message !== "" ? { message: truncate(input.message, 1024) } : {}),
    lastTransitionTime: prev !== undefined && prev.status === input.status ? prev.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list.sort((a, b) => a.type.localeCompare(b.type));
}

export function getCondition(list: readonly Condition[] | undefined, type: ConditionType): Condition | undefined {
  return list?.find((c) => c.type === type);
}

export const isTrue = (list: readonly Condition[] | undefined, type: ConditionType): boolean => getCondition(list, type)?.status === "True";

/** Ready as of the object's current generation: nothing asked of it since it last settled. */
export function readyAtGeneration(obj: { metadata: { generation?: number | undefined }; status?: { conditions?: readonly Condition[] | undefined; observedGeneration?: number | undefined } | undefined }): boolean {
  return isTrue(obj.status?.conditions, "Ready") && obj.status?.observedGeneration === obj.metadata.generation;
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
