// What a kind reads of Kubernetes besides its own objects, declared once in its definition: the
// runtime builds its caches from these (one per type and selectors, shared by every kind), checks
// at start that every reference and watch the kind makes is one of them, and the chart's RBAC
// (scripts/render-deploy.ts) and doctor's list of permissions (src/doctor/rbac-needs.ts) are
// derived from them. A new type to read is a new declaration in the kind's folder, nothing more.
import type { ResourceType } from "../kube/types.ts";
import type { Selectors } from "./stores.ts";

export interface Read {
  type: ResourceType;
  /**
   * namespaces: a namespaced type, read in the namespaces the operator watches (every one when
   * it watches all): a Role in each of those. cluster: a cluster-scoped type (Nodes), one cache
   * for the whole cluster: a ClusterRole.
   */
  scope: "namespaces" | "cluster";
  /** What of the type is cached (a label or field selector; what a Secret's or ConfigMap's cache keeps: Selectors.content). */
  selectors?: Selectors;
  /**
   * The operator setting (its flag, e.g. "read-nodes") that grants this read: while it is off
   * the chart grants nothing for it and the kind's store is undefined (the kind says why where
   * it needs it). Absent: always granted.
   */
  gate?: string;
  /** Why the kind reads it: the chart's RBAC comment and doctor's explanation. */
  why: string;
}

/**
 * A read of another of the operator's kinds. It needs no declaration: the chart's rules for the
 * kinds grant each of them whole, and the two database kinds read each other, so declaring
 * each other's type in their definitions would make their modules import each other.
 */
export const kindRead = (type: ResourceType, why: string): Read => ({ type, scope: "namespaces", why });

/** What makes two reads one cache: type, scope and selectors (not why, not the gate). */
export const readKey = (r: Read): string => `${r.scope}|${r.type.group}/${r.type.version}/${r.type.plural}?${JSON.stringify(r.selectors ?? {})}`;

/** How a read is named in messages. */
export const describeRead = (r: Read): string => {
  const s = r.selectors ?? {};
  const selected = [s.labelSelector, s.fieldSelector].filter((x) => x !== undefined && x !== "").join(",");
  return `${r.type.kind}${selected === "" ? "" : ` {${selected}}`}`;
};
