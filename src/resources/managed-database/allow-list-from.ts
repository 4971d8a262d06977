// spec.allowListFrom: allow-list entries that follow the cluster — each selected Node's address
// (/32, or /128 for IPv6) — merged with spec.allowList into the one list the database gets, and
// where each entry came from, for status.
import type { NodeObject, ReadStore } from "../../runtime/contract.ts";
import { matchesSelector, selectorText } from "../shared/label-selector.ts";
import { normalizeAllowEntry, normalizeAllowList } from "./allow-list.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

export interface DesiredAllowList {
  /** The canonical, deduplicated, sorted list to send. */
  entries: string[];
  /** For each entry, where it came from (spec.allowList, node <name>). */
  from: Map<string, string[]>;
  /** The spec asks for entries from the cluster and nothing at all resolved (no static entries either). */
  empty: boolean;
}

export type AllowListResolution = DesiredAllowList | { unreadable: string };

/** What the database's allow list should be now; `nodes` undefined: the operator may not read Nodes. */
export function desiredAllowList(spec: Pick<ManagedDatabaseSpec, "allowList" | "allowListFrom">, nodes: ReadStore<NodeObject> | undefined): AllowListResolution {
  const from = new Map<string, string[]>();
  const add = (entry: string, source: string): void => {
    const e = normalizeAllowEntry(entry);
    from.set(e, [...(from.get(e) ?? []), source]);
  };
  for (const e of spec.allowList) add(e, "spec.allowList");
  const sources = spec.allowListFrom ?? [];
  if (sources.length > 0 && nodes === undefined) {
    return { unreadable: "spec.allowListFrom.nodes needs the operator to read the cluster's Nodes, and it may not: install the chart with rbac.readNodes=true (it grants get, list and watch on nodes and starts the operator with --read-nodes); nothing is sent meanwhile" };
  }
  for (const source of sources) {
    const { selector, addressType } = source.nodes;
    for (const node of nodes?.list() ?? []) {
      if (node.metadata.deletionTimestamp !== undefined || !matchesSelector(node.metadata.labels, selector)) continue;
      for (const a of node.status?.addresses ?? []) {
        if (a.type === addressType) add(a.address, `node ${node.metadata.name} (${addressType}, ${selectorText(selector)})`);
      }
    }
  }
  const entries = normalizeAllowList([...from.keys()]);
  return { entries, from, empty: entries.length === 0 && sources.length > 0 };
}

/** Whether a Node with these labels is selected by any of the spec's sources (a change to it concerns the database). */
export function selectsNode(spec: Pick<ManagedDatabaseSpec, "allowListFrom">, labels: Readonly<Record<string, string>> | undefined): boolean {
  return (spec.allowListFrom ?? []).some((s) => matchesSelector(labels, s.nodes.selector));
}
