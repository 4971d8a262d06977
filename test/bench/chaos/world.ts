// What the chaos benchmark looks at: every resource of the three kinds (from the API server) and every cloud object (from the emulator's state, in-process, settled
// as any API read would settle it), plus the ownership audit: cloud objects two of which
// belong to one resource (duplicates), and cloud objects no resource owns (orphans).
import type { RunningEmulator } from "../../../src/emulator/index.ts";
import { settle } from "../../../src/emulator/databases/lifecycle.ts";
import type { DatabaseRecord, NodeBalancerRecord } from "../../../src/emulator/store.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import { isNotFound } from "../../../src/kube/errors.ts";
import type { ResourceType, SecretObject } from "../../../src/kube/types.ts";
import { databaseSnapshotType as snapType } from "../../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../../src/resources/node-balancer/index.ts";
import { derivedLabel } from "../../../src/resources/shared/derived-label.ts";
import type { ManagedObject } from "../../../src/runtime/managed.ts";

export const NAMESPACE = "bench";
export const CLUSTER_ID = "chaos-bench";

/**
 * Where a resource lives, by its name: `t<N>-…` in the tenant namespace `tenant-<N>` (the
 * shards' chaos bench spreads its objects over namespaces, which are what shards split), any
 * other name in NAMESPACE. Names are unique across namespaces, so the world is keyed by name.
 */
export const namespaceOf = (name: string): string => {
  const tenant = /^t(\d+)-/.exec(name)?.[1];
  return tenant === undefined ? NAMESPACE : tenantNamespace(Number(tenant));
};
/** The namespace of tenant `i`: where `t<i>-…` names live. */
export const tenantNamespace = (i: number): string => `tenant-${String(i)}`;

/** The cloud label a resource gets by default (the operator runs with --cluster-id CLUSTER_ID). */
export const labelFor = {
  mdb: (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: namespaceOf(name), name }),
  nb: (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: namespaceOf(name), name }),
  snap: (name: string): string => derivedLabel({ clusterId: CLUSTER_ID, namespace: namespaceOf(name), name }, { max: 30, allowed: /[^a-zA-Z0-9]/g, separator: "" }),
};

export interface World {
  mdbs: Map<string, ManagedObject>;
  nbs: Map<string, ManagedObject>;
  snaps: Map<string, ManagedObject>;
  /** Cloud objects by id. */
  dbs: Map<number, DatabaseRecord>;
  nodeBalancers: Map<number, NodeBalancerRecord>;
  /** Connection Secrets asked for, by name (absent: not found). */
  secrets: Map<string, SecretObject>;
}

async function listAll(kube: KubeClient, t: ResourceType): Promise<Map<string, ManagedObject>> {
  const out = new Map<string, ManagedObject>();
  let token: string | undefined;
  do {
    const page = await kube.list<ManagedObject>(t, token !== undefined ? { continueToken: token } : {});
    for (const o of page.items) out.set(o.metadata.name, o);
    token = page.continueToken;
  } while (token !== undefined);
  return out;
}

/** One consistent-enough look at both sides. `secretNames`: the connection Secrets to read too. */
export async function look(kube: KubeClient, emulator: RunningEmulator, secretNames: readonly string[] = []): Promise<World> {
  const [mdbs, nbs, snaps] = await Promise.all([listAll(kube, mdbType), listAll(kube, nbType), listAll(kube, snapType)]);
  const secrets = new Map<string, SecretObject>();
  await Promise.all(secretNames.map(async (name) => {
    try {
      secrets.set(name, await kube.getSecret({ namespace: namespaceOf(name), name }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }));
  const ctx = emulator.context;
  // What a GET would show now: transitions that are due (backups taken, passwords applied) are applied.
  for (const db of ctx.state.databases.values()) settle(ctx, db);
  return { mdbs, nbs, snaps, dbs: new Map(ctx.state.databases), nodeBalancers: new Map(ctx.state.nodebalancers), secrets };
}

export interface Condition { status: string; reason: string; message?: string }

export const condition = (o: ManagedObject | undefined, type: string): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);
export const isTrue = (o: ManagedObject | undefined, type: string): boolean => condition(o, type)?.status === "True";
/** Ready and Synced, for the generation the spec is at. */
export const settled = (o: ManagedObject | undefined): boolean =>
  o !== undefined && isTrue(o, "Ready") && isTrue(o, "Synced") && o.status?.observedGeneration === o.metadata.generation;
export const statusId = (o: ManagedObject | undefined): number | undefined => {
  const id = o?.status?.id;
  return typeof id === "number" ? id : undefined;
};
export const backupIdOf = (o: ManagedObject | undefined): number | undefined => {
  const id = o?.status?.backupId;
  return typeof id === "number" ? id : undefined;
};
/** What the resource recorded: status.externalId, or when status.createPending announced a create. */
export const recorded = (o: ManagedObject | undefined, key: "externalId" | "createPending"): string | undefined => {
  if (key === "externalId") return typeof o?.status?.externalId === "string" ? o.status.externalId : undefined;
  const pending = o?.status?.createPending;
  return typeof pending === "object" && pending !== null && typeof (pending as { at?: unknown }).at === "string" ? (pending as { at: string }).at : undefined;
};

/** What Ready and Synced say, for a report. */
export function describe(o: ManagedObject | undefined): string {
  if (o === undefined) return "resource gone";
  const c = (t: string): string => { const x = condition(o, t); return x === undefined ? `${t}=?` : `${t}=${x.status}/${x.reason}${x.message !== undefined ? ` (${x.message.slice(0, 160)})` : ""}`; };
  return `${c("Ready")}; ${c("Synced")}; generation ${String(o.metadata.generation)} observed ${String(o.status?.observedGeneration)}${o.metadata.deletionTimestamp !== undefined ? "; being deleted" : ""}`;
}

export const dbByLabel = (w: World, label: string): DatabaseRecord[] => [...w.dbs.values()].filter((d) => d.label === label);
export const nbByLabel = (w: World, label: string): NodeBalancerRecord[] => [...w.nodeBalancers.values()].filter((n) => n.label === label);

/** A cloud object nobody owns, or a resource with more than one. `name`: the resource it is (or was) for, when its label says. */
export interface AuditFinding { kind: "duplicate" | "orphan"; what: string; name: string | undefined }

/**
 * Every cloud object must belong to exactly one live resource: by the id the resource recorded
 * or by the label it derives. `names`: every resource name used so far, by kind, to say whose
 * an orphan was.
 */
export function audit(w: World, names: { mdb: Iterable<string>; nb: Iterable<string>; snap: Iterable<string> }): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const whose = (all: Iterable<string>, label: (n: string) => string): Map<string, string> => new Map([...all].map((n) => [label(n), n]));
  const check = (kind: string, objects: readonly { id: number; label: string }[], owners: Map<string, ManagedObject>, ownedId: (o: ManagedObject) => number | undefined,
    label: (n: string) => string, byLabel: Map<string, string>): void => {
    const claimed = new Map<number, string>();
    for (const [name, o] of owners) {
      const id = ownedId(o);
      const mine = objects.filter((x) => x.id === id || x.label === label(name));
      if (mine.length > 1) findings.push({ kind: "duplicate", what: `${kind} ${name}: ${mine.map((x) => `${String(x.id)} (${x.label})`).join(", ")}`, name });
      for (const x of mine) claimed.set(x.id, name);
    }
    for (const x of objects) {
      if (!claimed.has(x.id)) findings.push({ kind: "orphan", what: `${kind} ${String(x.id)} labelled ${x.label}`, name: byLabel.get(x.label) });
    }
  };
  check("database", [...w.dbs.values()], w.mdbs, statusId, labelFor.mdb, whose(names.mdb, labelFor.mdb));
  check("NodeBalancer", [...w.nodeBalancers.values()], w.nbs, statusId, labelFor.nb, whose(names.nb, labelFor.nb));
  const backups = [...w.dbs.values()].flatMap((d) => d.backups.filter((b) => b.type === "snapshot"));
  check("snapshot backup", backups, w.snaps, backupIdOf, labelFor.snap, whose(names.snap, labelFor.snap));
  return findings;
}
