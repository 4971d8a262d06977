// Decision table of the DatabaseSnapshot queue: the snapshots of one database are taken in
// creation order, one backup at a time. Each case gives one other snapshot of the same database
// in some state and asks the later one's readyToCreate (its database Ready and active, as its
// ManagedDatabase last saw it, and no snapshots yet): does it wait its turn, or go? An earlier
// one goes first unless it cannot move by itself (paused, refused, without credentials); one
// that only waits for something that passes keeps its place, or two backups are sent at once and
// the API refuses the second. One whatever its state whose announced backup may be being taken
// makes the later one ask the API, not trust what its ManagedDatabase saw before.
import { describe, expect, it } from "vitest";
import type { LinodeClient } from "../../src/linode/index.ts";
import { DatabaseSnapshotExternal } from "../../src/resources/database-snapshot/external.ts";
import { databaseReference } from "../../src/resources/database-snapshot/database-reference.ts";
import type { DatabaseSnapshotSpec } from "../../src/resources/database-snapshot/schema.ts";
import type { DatabaseListCache } from "../../src/resources/managed-database/database-cache.ts";
import { databaseView } from "../../src/resources/managed-database/reference-view.ts";
import { PAUSED_ANNOTATION } from "../../src/runtime/annotations.ts";
import type { Condition } from "../../src/runtime/condition-schema.ts";
import { referrersIndex, type Managed, type ManagedObject } from "../../src/runtime/managed.ts";
import type { ReadStore } from "../../src/runtime/stores.ts";

const ns = "queue";
const EARLIER = "2026-01-01T00:00:00Z";
const LATER = "2026-01-01T00:00:05Z";

type Cond = [status: "True" | "False", reason: string];

interface Sibling {
  ready?: Cond;
  synced?: Cond;
  status?: Record<string, unknown>;
  annotations?: Record<string, string>;
  deleting?: boolean;
  created?: string;
}

const conditions = (s: Sibling): Condition[] => [
  ...(s.ready !== undefined ? [{ type: "Ready", status: s.ready[0], reason: s.ready[1], message: "", lastTransitionTime: EARLIER }] : []),
  ...(s.synced !== undefined ? [{ type: "Synced", status: s.synced[0], reason: s.synced[1], message: "", lastTransitionTime: EARLIER }] : []),
];

const snapshotObject = (name: string, created: string, more: Sibling = {}): ManagedObject => ({
  apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot",
  metadata: {
    name, namespace: ns, creationTimestamp: created,
    ...(more.annotations !== undefined ? { annotations: more.annotations } : {}),
    ...(more.deleting === true ? { deletionTimestamp: LATER } : {}),
  },
  spec: { databaseRef: { name: "db" } },
  status: { ...more.status, conditions: conditions(more) },
});

/** The ManagedDatabase both refer to: Ready, its database active as it last observed it. */
const database: ManagedObject = {
  apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase",
  metadata: { name: "db", namespace: ns },
  spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" },
  status: { id: 7, status: "active", conditions: [{ type: "Ready", status: "True", reason: "Available", message: "", lastTransitionTime: EARLIER }] },
};

/** One readyToCreate of "later" beside `earlier`, the API saying the database is `api` if asked; the Linode calls it made, by method. */
async function decide(earlier: Sibling, api: string | undefined): Promise<{ reason: string | undefined; message: string | undefined; calls: string[] }> {
  const sibling = snapshotObject("earlier", earlier.created ?? EARLIER, earlier);
  const later = snapshotObject("later", LATER);
  const self: ReadStore<ManagedObject> = {
    get: (_namespace, name) => [sibling, later].find((o) => o.metadata.name === name),
    list: () => [sibling, later],
    byIndex: (index, value) => (index === referrersIndex(databaseReference.name) && value === `${ns}/db` ? [sibling, later] : []),
  };
  const calls: string[] = [];
  const refuse = (what: string): unknown => new Proxy({}, { get: (_t, method) => () => { calls.push(`${what}.${String(method)}`); throw new Error(`${what}.${String(method)} called`); } });
  const external = new DatabaseSnapshotExternal({
    linode: { databases: { engine: () => refuse("api") } } as unknown as LinodeClient,
    self, clusterId: "table", poll: { pendingMillis: 40, readyMillis: 60_000 },
    databases: {
      fresh: (_engine: string, _id: number, maxAgeMillis: number) => {
        calls.push(`databases.fresh(${maxAgeMillis <= 40 ? "fresh" : "stale"})`);
        return api === undefined ? Promise.reject(new Error("the database was read")) : Promise.resolve({ status: api });
      },
    } as unknown as DatabaseListCache,
    shownSnapshots: () => [],
  });
  const spec: DatabaseSnapshotSpec = { databaseRef: { name: "db" }, target: "primary", deletionPolicy: "Delete" };
  const m = {
    obj: later, key: { namespace: ns, name: "later" }, spec, externalId: undefined, createPending: undefined,
    policies: { deletion: "Delete", management: "Manage" },
    refs: { [databaseReference.name]: new Map([["db", { obj: database, decoded: databaseView(database) }]]) },
  } as unknown as Managed<DatabaseSnapshotSpec>;
  const deferral = await external.readyToCreate(m, new AbortController().signal);
  return { reason: deferral?.reason, message: deferral?.message, calls };
}

interface Case {
  name: string;
  earlier: Sibling;
  /** What the API says of the database, where the case expects it asked. */
  api?: string;
  /** Waits behind the other one (its turn), or because the database is busy (asked); or goes. */
  waits: "turn" | "busy" | false;
}
const sent = (at: string): Record<string, unknown> => ({ createPending: { at, label: "earlier" } });

const cases: Case[] = [
  { name: "not looked at yet", earlier: {}, waits: "turn" },
  { name: "waiting its turn behind the database's backup", earlier: { ready: ["False", "BackupInProgress"], synced: ["True", "ReconcileSuccess"] }, waits: "turn" },
  { name: "its create sent, being taken", earlier: { ready: ["False", "BackingUp"], synced: ["True", "ReconcileSuccess"], status: { createPending: { at: EARLIER, label: "x" } } }, waits: "turn" },
  { name: "its create refused as the database was busy, retried", earlier: { ready: ["False", "BackupInProgress"], synced: ["False", "Waiting"] }, waits: "turn" },
  // The regression (issue 43): held while the database was busy with the backup before it,
  // woken with this one when it turned Ready again; skipped, both sent a backup at once.
  { name: "held on the database while it was not Ready (ReferenceNotReady)", earlier: { ready: ["False", "ReferenceNotReady"], synced: ["False", "ReferenceNotReady"] }, waits: "turn" },
  { name: "held on the database while it did not exist (ReferenceNotFound)", earlier: { ready: ["False", "ReferenceNotFound"], synced: ["False", "ReferenceNotFound"] }, waits: "turn" },
  { name: "paused", earlier: { annotations: { [PAUSED_ANNOTATION]: "true" }, ready: ["False", "BackupInProgress"], synced: ["False", "Paused"] }, waits: false },
  { name: "its credentials Secret missing", earlier: { ready: ["False", "CredentialsNotFound"], synced: ["False", "CredentialsNotFound"] }, waits: false },
  { name: "refused by the API", earlier: { ready: ["False", "BackupInProgress"], synced: ["False", "ApiRejected"] }, waits: false },
  { name: "taken", earlier: { ready: ["True", "Available"], synced: ["True", "ReconcileSuccess"], status: { externalId: "mysql/7/1", backupId: 1 } }, waits: false },
  { name: "being deleted", earlier: { deleting: true, ready: ["False", "BackupInProgress"] }, waits: false },
  { name: "created after it", earlier: { created: "2026-01-01T00:00:09Z" }, waits: false },
  // Its backup announced and not found yet, and out of the queue: it may be being taken.
  { name: "paused after its create was sent", earlier: { annotations: { [PAUSED_ANNOTATION]: "true" }, ready: ["False", "BackingUp"], status: sent(EARLIER) }, api: "backing_up", waits: "busy" },
  { name: "deleted while its backup is taken", earlier: { deleting: true, ready: ["False", "BackingUp"], status: sent(EARLIER) }, api: "backing_up", waits: "busy" },
  { name: "created after it, its backup sent while this one was held", earlier: { created: "2026-01-01T00:00:09Z", ready: ["False", "BackingUp"], synced: ["True", "ReconcileSuccess"], status: sent(EARLIER) }, api: "backing_up", waits: "busy" },
  { name: "paused after its create was sent, the backup done since", earlier: { annotations: { [PAUSED_ANNOTATION]: "true" }, ready: ["False", "BackingUp"], status: sent(EARLIER) }, api: "active", waits: false },
];

describe("DatabaseSnapshot queue: a later snapshot of the same database beside an earlier one", () => {
  it.each(cases)("the other one $name", async ({ earlier, api, waits }) => {
    const { reason, message, calls } = await decide(earlier, api);
    if (waits === false) expect(reason).toBeUndefined();
    else expect(reason).toBe("BackupInProgress");
    if (waits === "turn") expect(message).toMatch(/DatabaseSnapshot earlier \(created earlier\) is taken first/);
    if (waits === "busy") expect(message).toMatch(/another backup of the database is in progress/);
    // Decided from what the cluster shows, unless a backup announced may be being taken: then
    // the API is asked, with a list no older than the poll interval.
    expect(calls).toEqual(api === undefined ? [] : ["databases.fresh(fresh)"]);
  });
});
