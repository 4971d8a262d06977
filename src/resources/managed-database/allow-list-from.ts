// spec.allowListFrom: allow-list entries that follow the cluster — each selected Node's address
// (/32, or /128 for IPv6), and the entries a labelled ConfigMap's key lists (an egress gateway's
// addresses) — merged with spec.allowList into the one list the database gets, and where each
// entry came from, for status. A source that cannot be read holds the whole list back: sending
// it without that source's entries would lock out who it allows. A Node's address that is not
// one host's unicast address (its status is input: `0.0.0.0/0` there would open the database to
// everyone) is never an entry: it is skipped, and said.
import { isIP } from "node:net";
import { configMapsType, reference, type ConfigMapObject, type Decoded, type KubeObject, type NodeObject, type Read, type ReadStore } from "../../runtime/contract.ts";
import { matchesSelector, selectorText } from "../shared/label-selector.ts";
import { hostAddressProblem, nodesRead } from "../shared/nodes.ts";
import { normalizeAllowEntry, normalizeAllowList } from "./allow-list.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

/** Only ConfigMaps labelled so are read: the operator reads no other. */
export const ALLOW_LIST_LABEL = "linode.operator.dev/allow-list";

/**
 * The most an allow-list ConfigMap's data may hold (keys and values) for the operator to read
 * it: a database allows at most a few hundred entries, a few KiB of text. Anyone may label a
 * ConfigMap, so a larger one is InvalidAllowListSource, saying so.
 */
export const ALLOW_LIST_MAX_BYTES = 64 * 1024;

/** A named ConfigMap as a pass sees it: its data, or why it cannot be read (e.g. it is too large). */
export type AllowListConfigMap = { data: Readonly<Record<string, string>>; unreadable?: undefined } | { data?: undefined; unreadable: string };

/**
 * Allow-list ConfigMaps: watched as metadata only (a label anyone can set selects them); the one
 * a database names is read by name and kept while it is named, and a change to it is read again
 * and wakes it.
 */
export const allowListConfigMapsRead: Read = {
  type: configMapsType, scope: "namespaces",
  selectors: { labelSelector: `${ALLOW_LIST_LABEL}=true`, content: { byName: { maxBytes: ALLOW_LIST_MAX_BYTES } } },
  why: `allow lists from ConfigMaps (spec.allowListFrom.cidrs; labelled ${ALLOW_LIST_LABEL}=true): listed and watched as metadata only, the one named read by name`,
};

/** The cluster's Nodes, for allow lists that follow them (granted by --read-nodes: otherwise NodesNotReadable). */
export const allowListNodesRead = nodesRead("database allow lists that follow the nodes (spec.allowListFrom.nodes)");

/** The ConfigMaps allowListFrom names: resolved each pass, a change wakes the database. */
export const allowListConfigMapReference = reference<ManagedDatabaseSpec, AllowListConfigMap>({
  name: "allowListConfigMap",
  target: allowListConfigMapsRead,
  names: (spec) => (spec.allowListFrom ?? []).flatMap((s) => (s.cidrs !== undefined ? [s.cidrs.name] : [])),
  decode: (obj: KubeObject): Decoded<AllowListConfigMap> => ({ value: { data: (obj as ConfigMapObject).data ?? {} } }),
  // Found but unreadable is the allow list's to say (InvalidAllowListSource), as its absence is.
  unreadable: (why) => ({ value: { unreadable: why } }),
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
  /** Addresses of selected Nodes that are not one host's unicast address: never entries. */
  skipped: SkippedNodeAddress[];
}

/** A selected Node's address that is not used, and why. */
export interface SkippedNodeAddress {
  node: string;
  addressType: string;
  address: string;
  problem: string;
}

/** One skipped address, as an Event and a condition say it: the Node, the address and why. */
export const skippedText = (s: SkippedNodeAddress): string => `node ${s.node}: its ${s.addressType} ${JSON.stringify(s.address.slice(0, 64))} ${s.problem}, so it is not allowed`;

/** Why the list cannot be made now; nothing about it is sent meanwhile. */
export interface HeldAllowList {
  held: { reason: string; message: string };
  /** Held because every address found was skipped: those addresses. */
  skipped?: SkippedNodeAddress[];
}

export type AllowListResolution = DesiredAllowList | HeldAllowList;

export interface AllowListSources {
  /** The cluster's Nodes; undefined when the operator may not read them. */
  nodes: ReadStore<NodeObject> | undefined;
  /** A labelled ConfigMap in the database's namespace, as this pass resolved it; undefined when there is none. */
  configMap(name: string): AllowListConfigMap | undefined;
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
export function desiredAllowList(spec: Pick<ManagedDatabaseSpec, "allowList" | "allowListFrom" | "allowEmpty">, sources: AllowListSources): AllowListResolution {
  const from = new Map<string, string[]>();
  const skipped: SkippedNodeAddress[] = [];
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
          if (a.type !== addressType) continue;
          const problem = hostAddressProblem(a.address);
          if (problem === undefined) add(a.address, `node ${node.metadata.name} (${addressType}, ${selectorText(selector)})`);
          else if (!skipped.some((s) => s.node === node.metadata.name && s.address === a.address)) skipped.push({ node: node.metadata.name, addressType, address: a.address, problem });
        }
      }
    }
    if (source.cidrs !== undefined) {
      const { name, key } = source.cidrs;
      const found = sources.configMap(name);
      if (found === undefined) return hold(ManagedDatabaseReasons.AllowListSourceNotFound, `spec.allowListFrom names ConfigMap ${name}, which is not in this namespace with the label ${ALLOW_LIST_LABEL}: "true" (the operator reads only ConfigMaps labelled so)`);
      if (found.unreadable !== undefined) return hold(ManagedDatabaseReasons.InvalidAllowListSource, `ConfigMap ${name} (spec.allowListFrom) cannot be read: ${found.unreadable}`);
      const text = Object.hasOwn(found.data, key) ? found.data[key] : undefined;
      if (text === undefined) return hold(ManagedDatabaseReasons.AllowListSourceNotFound, `ConfigMap ${name} has no key ${key} (spec.allowListFrom)`);
      const parsed = parseCidrs(text);
      if (parsed.invalid.length > 0) {
        return hold(ManagedDatabaseReasons.InvalidAllowListSource, `ConfigMap ${name} key ${key} holds what is not an IP address or CIDR range: ${parsed.invalid.slice(0, 5).map((w) => JSON.stringify(w)).join(", ")}${parsed.invalid.length > 5 ? `, and ${String(parsed.invalid.length - 5)} more` : ""}`);
      }
      for (const e of parsed.entries) add(e, `ConfigMap ${name}/${key}`);
    }
  }
  const entries = normalizeAllowList([...from.keys()]);
  const empty = entries.length === 0 && list.length > 0;
  if (empty && skipped.length > 0 && !spec.allowEmpty) {
    // As a selector that matches nothing: never an empty list unless allowed, and the condition names what was skipped.
    const message = `spec.allowListFrom selects no node with an address that can be allowed and spec.allowList is empty (${skippedList(skipped)}): nothing is sent rather than blocking every connection (set spec.allowEmpty: true to allow nobody)`;
    return { ...hold(ManagedDatabaseReasons.AllowListWouldBeEmpty, message), skipped };
  }
  return { entries, from, empty, skipped };
}

/** The skipped addresses for a message: the first few in full, then how many more. */
function skippedList(skipped: readonly SkippedNodeAddress[]): string {
  const shown = skipped.slice(0, 3).map(skippedText).join("; ");
  return skipped.length > 3 ? `${shown}; and ${String(skipped.length - 3)} more` : shown;
}

/**
 * Says each skipped address once per database: a Warning Event naming the Node and why when it
 * is first seen (or seen again after it was fixed), never on every pass. What was said is kept
 * per database (a restart says it once more) and dropped with it.
 */
export class SkippedAnnouncer {
  private readonly said = new Map<string, ReadonlySet<string>>();
  private readonly warn: (obj: KubeObject, note: string) => void;

  constructor(warn: (obj: KubeObject, note: string) => void) {
    this.warn = warn;
  }

  /** `resolution`: this pass's; one held for another reason says nothing of the Nodes (what was said stays). */
  announce(key: string, obj: KubeObject, resolution: AllowListResolution): void {
    const skipped = resolution.skipped;
    if (skipped === undefined) return;
    const before = this.said.get(key);
    const now = new Set(skipped.map(skippedText));
    for (const note of now) if (before?.has(note) !== true) this.warn(obj, note);
    if (now.size > 0) this.said.set(key, now);
    else this.said.delete(key);
  }

  forget(key: string): void {
    this.said.delete(key);
  }

  get size(): number {
    return this.said.size;
  }
}

/** Whether a Node with these labels is selected by any of the spec's sources (a change to it concerns the database). */
export function selectsNode(spec: Pick<ManagedDatabaseSpec, "allowListFrom">, labels: Readonly<Record<string, string>> | undefined): boolean {
  return (spec.allowListFrom ?? []).some((s) => s.nodes !== undefined && matchesSelector(labels, s.nodes.selector));
}
