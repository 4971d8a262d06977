// spec.allowListFrom: allow-list entries that follow the cluster — each selected Node's address
// (/32, or /128 for IPv6), and the entries a labelled ConfigMap's key lists (an egress gateway's
// addresses) — merged with spec.allowList into the one list the database gets, and where each
// entry came from, for status. A source that cannot be read holds the whole list back: sending
// it without that source's entries would lock out who it allows.
import { isIP } from "node:net";
import { reference, type ConfigMapObject, type Decoded, type KubeObject, type NodeObject, type ReadStore } from "../../runtime/contract.ts";
import { matchesSelector, selectorText } from "../shared/label-selector.ts";
import { normalizeAllowEntry, normalizeAllowList } from "./allow-list.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

/** Only ConfigMaps labelled so are read (and cached): the operator reads no other. */
export const ALLOW_LIST_LABEL = "linode.operator.dev/allow-list";

/** The ConfigMaps allowListFrom names: resolved each pass, a change wakes the database. */
export const allowListConfigMapReference = reference<ManagedDatabaseSpec, Readonly<Record<string, string>>>({
  name: "allowListConfigMap",
  target: { configMaps: { labelSelector: `${ALLOW_LIST_LABEL}=true` } },
  names: (spec) => (spec.allowListFrom ?? []).flatMap((s) => (s.cidrs !== undefined ? [s.cidrs.name] : [])),
  decode: (obj: KubeObject): Decoded<Readonly<Record<string, string>>> => ({ value: (obj as ConfigMapObject).data ?? {} }),
  // Its absence is said by the allow list's own reason (held, never sent without it).
  required: () => false,
});

export interface DesiredAllowList {
  /** The canonical, deduplicated, sorted list to send. */
  entries: string[];
  /** For each entry, where it came from (spec.allowList, node <name>, ConfigMap <name>/<key>). */
  from: Map<string, string[]>;
  /** The spec asks for entries from the cluster and nothing at all resolved (no static entries either). */
  empty: boolean;
}

/** Why the list cannot be made now; nothing about it is sent meanwhile. */
export interface HeldAllowList {
  held: { reason: string; message: string };
}

export type AllowListResolution = DesiredAllowList | HeldAllowList;

export interface AllowListSources {
  /** The cluster's Nodes; undefined when the operator may not read them. */
  nodes: ReadStore<NodeObject> | undefined;
  /** A labelled ConfigMap's data in the database's namespace, as this pass resolved it; undefined when there is none. */
  configMap(name: string): Readonly<Record<string, string>> | undefined;
}

/** The entries of a ConfigMap value: addresses or CIDRs separated by whitespace or commas; `#` starts a comment. */
export function parseCidrs(text: string): { entries: string[]; invalid: string[] } {
  const words = text.split("\n").map((l) => l.replace(/#.*$/, "")).join(" ").split(/[\s,]+/).filter((w) => w !== "");
  const valid = (w: string): boolean => {
    const [addr = "", bits, extra] = w.split("/");
    const family = isIP(addr);
    return extra === undefined && family !== 0 && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
  };
  return { entries: words.filter(valid), invalid: words.filter((w) => !valid(w)) };
}

/** What the database's allow list should be now. */
export function desiredAllowList(spec: Pick<ManagedDatabaseSpec, "allowList" | "allowListFrom">, sources: AllowListSources): AllowListResolution {
  const from = new Map<string, string[]>();
  const add = (entry: string, source: string): void => {
    const e = normalizeAllowEntry(entry);
    from.set(e, [...(from.get(e) ?? []), source]);
  };
  for (const e of spec.allowList) add(e, "spec.allowList");
  const list = spec.allowListFrom ?? [];
  const hold = (reason: string, message: string): HeldAllowList => ({ held: { reason, message: `${message}; the database's allow list is left as it is meanwhile` } });
  for (const source of list) {
    if (source.nodes !== undefined) {
      if (sources.nodes === undefined) {
        return hold(SharedReasons.NodesNotReadable, "spec.allowListFrom.nodes needs the operator to read the cluster's Nodes, and it may not: install the chart with rbac.readNodes=true (it grants get, list and watch on nodes and starts the operator with --read-nodes)");
      }
      const { selector, addressType } = source.nodes;
      for (const node of sources.nodes.list()) {
        if (node.metadata.deletionTimestamp !== undefined || !matchesSelector(node.metadata.labels, selector)) continue;
        for (const a of node.status?.addresses ?? []) {
          if (a.type === addressType) add(a.address, `node ${node.metadata.name} (${addressType}, ${selectorText(selector)})`);
        }
      }
    }
    if (source.cidrs !== undefined) {
      const { name, key } = source.cidrs;
      const data = sources.configMap(name);
      if (data === undefined) return hold(ManagedDatabaseReasons.AllowListSourceNotFound, `spec.allowListFrom names ConfigMap ${name}, which is not in this namespace with the label ${ALLOW_LIST_LABEL}: "true" (the operator reads only ConfigMaps labelled so)`);
      const text = data[key];
      if (text === undefined) return hold(ManagedDatabaseReasons.AllowListSourceNotFound, `ConfigMap ${name} has no key ${key} (spec.allowListFrom)`);
      const parsed = parseCidrs(text);
      if (parsed.invalid.length > 0) {
        return hold(ManagedDatabaseReasons.InvalidAllowListSource, `ConfigMap ${name} key ${key} holds what is not an IP address or CIDR range: ${parsed.invalid.slice(0, 5).map((w) => JSON.stringify(w)).join(", ")}${parsed.invalid.length > 5 ? `, and ${String(parsed.invalid.length - 5)} more` : ""}`);
      }
      for (const e of parsed.entries) add(e, `ConfigMap ${name}/${key}`);
    }
  }
  const entries = normalizeAllowList([...from.keys()]);
  return { entries, from, empty: entries.length === 0 && list.length > 0 };
}

/** Whether a Node with these labels is selected by any of the spec's sources (a change to it concerns the database). */
export function selectsNode(spec: Pick<ManagedDatabaseSpec, "allowListFrom">, labels: Readonly<Record<string, string>> | undefined): boolean {
  return (spec.allowListFrom ?? []).some((s) => s.nodes !== undefined && matchesSelector(labels, s.nodes.selector));
}
