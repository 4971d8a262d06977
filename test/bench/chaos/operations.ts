// The operations the chaos benchmark kills the operator in: how each is triggered (one write
// to the API server), where its step was when the kill landed, and when it has converged to
// Ready or its documented terminal state.
import type { MutationRecord } from "../../../src/emulator/server.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { KubeObject } from "../../../src/kube/types.ts";
import { databaseSnapshotType as snapType } from "../../../src/resources/database-snapshot/index.ts";
import { managedDatabaseType as mdbType } from "../../../src/resources/managed-database/index.ts";
import { nodeBalancerType as nbType } from "../../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../../src/runtime/managed.ts";
import {
  recorded, backupIdOf, condition, dbByLabel, describe, isTrue, labelFor, namespaceOf, nbByLabel, settled, statusId, type World,
} from "./world.ts";

export const operations = [
  "create-mdb", "create-nb", "update-mdb", "update-nb", "delete-mdb", "delete-nb", "delete-snapshot", "snapshot", "restore", "reset-credentials", "patch",
] as const;
export type OpName = (typeof operations)[number];

export const titles: Record<OpName, string> = {
  "create-mdb": "create ManagedDatabase",
  "create-nb": "create NodeBalancer",
  "update-mdb": "update ManagedDatabase (allowList, PUT)",
  "update-nb": "update NodeBalancer (throttle + config, PUT + rebuild)",
  "delete-mdb": "delete ManagedDatabase",
  "delete-nb": "delete NodeBalancer",
  "delete-snapshot": "delete DatabaseSnapshot",
  snapshot: "snapshot (DatabaseSnapshot create)",
  restore: "restore (spec.requests.restore)",
  "reset-credentials": "spec.requests.resetCredentials",
  patch: "spec.requests.patch",
};

/** Short names for chart axes. */
export const shortNames: Record<OpName, string> = {
  "create-mdb": "mdb new", "create-nb": "nb new", "update-mdb": "mdb put", "update-nb": "nb put", "delete-mdb": "mdb del", "delete-nb": "nb del",
  "delete-snapshot": "snap del", snapshot: "snapshot", restore: "restore", "reset-credentials": "reset", patch: "patch",
};

/** Where the step was when the operator died. */
export const killPhases = ["before send", "sent, unrecorded", "recorded", "done"] as const;
export type KillPhase = (typeof killPhases)[number];
export const outcomes = ["converged", "reported unknown", "needs a human", "stuck finalizer"] as const;
export type Outcome = (typeof outcomes)[number];

export interface NbChange { throttle: number; algorithm: string; weight: number }

export interface Trial {
  op: OpName;
  round: number;
  slot: number;
  /** The resource the trigger writes. */
  name: string;
  /** The ManagedDatabase a snapshot or request is about, and its Linode id. */
  db?: string;
  dbId?: number;
  /** Request token, and the DatabaseSnapshot a restore uses. */
  token?: string;
  snapshot?: string;
  allowList?: string[];
  nb?: NbChange;
  /** The planned kill point: a seeded fraction of the operation's fault-free step time. */
  fraction: number;
  delayMs: number;
  /** When the trigger write was sent (ms since epoch). */
  triggerAt: number;
  killOffsetMs?: number;
  atKill?: KillPhase;
  atKillDetail?: string;
  outcome?: Outcome;
  detail?: string;
  /** Time from the trigger (calibration) or the restart to convergence. */
  settledAfterMs?: number;
  deadline?: number;
  /** Action requests (request tokens) the emulator received for this trial, and those it accepted (2xx). */
  sent: number;
  accepted: number;
  /** Those requests: received and answered, ms after the trigger, and the status. */
  requests?: string[];
  /** At the kill: the token's intent was recorded and its completion was not (its outcome is then unknown to any later process). */
  intentAtKill?: boolean;
  acceptedAtKill?: number;
  /** A create announced (create-pending) and not sent at the kill: the next process waits the create grace first. */
  graceWait?: boolean;
}

export const mdbSpec = (allowList: string[] = ["203.0.113.0/24"]): Record<string, unknown> =>
  ({ engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList });
const NODE = "192.168.50.1:80";
export const nbSpec = (c: NbChange = { throttle: 0, algorithm: "roundrobin", weight: 50 }): Record<string, unknown> => ({
  region: "us-east", clientConnThrottle: c.throttle,
  configs: [{ port: 80, protocol: "tcp", algorithm: c.algorithm, nodes: [{ label: "node-1", address: NODE, weight: c.weight }] }],
});

const manifest = (kind: string, name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: "linode.operator.dev/v1alpha1", kind, metadata: { name, namespace: namespaceOf(name) }, spec });
export const createMdb = (kube: KubeClient, name: string): Promise<unknown> => kube.createCustom(mdbType, namespaceOf(name), manifest("ManagedDatabase", name, mdbSpec()));
export const createNb = (kube: KubeClient, name: string): Promise<unknown> => kube.createCustom(nbType, namespaceOf(name), manifest("NodeBalancer", name, nbSpec()));
export const createSnap = (kube: KubeClient, name: string, db: string): Promise<unknown> =>
  kube.createCustom(snapType, namespaceOf(name), manifest("DatabaseSnapshot", name, { databaseRef: { name: db } }));

const key = (name: string): { namespace: string; name: string } => ({ namespace: namespaceOf(name), name });
const need = <T>(v: T | undefined, what: string): T => { if (v === undefined) throw new Error(`trial without ${what}`); return v; };

/** The trigger: one write to the API server. */
export function trigger(kube: KubeClient, t: Trial): Promise<unknown> {
  switch (t.op) {
    case "create-mdb": return createMdb(kube, t.name);
    case "create-nb": return createNb(kube, t.name);
    case "update-mdb": return kube.mergePatchCustom(mdbType, key(t.name), { spec: { allowList: need(t.allowList, "allowList") } });
    case "update-nb": return kube.mergePatchCustom(nbType, key(t.name), { spec: nbSpec(need(t.nb, "change")) });
    case "delete-mdb": return kube.deleteCustom(mdbType, key(t.name));
    case "delete-nb": return kube.deleteCustom(nbType, key(t.name));
    case "delete-snapshot": return kube.deleteCustom(snapType, key(t.name));
    case "snapshot": return createSnap(kube, t.name, need(t.db, "database"));
    case "restore": return kube.mergePatchCustom(mdbType, key(t.name), { spec: { requests: { restore: { token: need(t.token, "token"), snapshotRef: { name: need(t.snapshot, "snapshot") } } } } });
    case "reset-credentials": return kube.mergePatchCustom(mdbType, key(t.name), { spec: { requests: { resetCredentials: need(t.token, "token") } } });
    case "patch": return kube.mergePatchCustom(mdbType, key(t.name), { spec: { requests: { patch: need(t.token, "token") } } });
  }
}

/** The connection Secret a trial's check reads (the credentials reset compares the password). */
export const secretOf = (t: Trial): string | undefined => (t.op === "reset-credentials" ? `${t.name}-connection` : undefined);

const actionNames = { restore: "restore", "reset-credentials": "resetCredentials", patch: "patch" } as const;
type RequestOp = keyof typeof actionNames;
const isRequestOp = (op: OpName): op is RequestOp => op in actionNames;
interface ActionRecord { token?: string; startedAt?: string; completedAt?: string }
const recordOf = (o: ManagedObject | undefined, op: RequestOp): ActionRecord | undefined =>
  (o?.status?.lastRequests as Record<string, ActionRecord | undefined> | undefined)?.[actionNames[op]];

/** Which request a mutation is, by its path: the action and the database id. */
export function actionOf(m: MutationRecord): { op: RequestOp; dbId: number } | undefined {
  const x = /^\/databases\/mysql\/instances\/(\d+)\/(patch|credentials\/reset|backups\/\d+\/restore)$/.exec(m.path);
  if (m.method !== "POST" || x === null) return undefined;
  const op: RequestOp = x[2] === "patch" ? "patch" : x[2] === "credentials/reset" ? "reset-credentials" : "restore";
  return { op, dbId: Number(x[1]) };
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => [...a].sort().join() === [...b].sort().join();
const cidr = (v: string): string => (v.includes("/") ? v : `${v}/32`);

function nbMatches(w: World, o: ManagedObject | undefined, c: NbChange): boolean {
  const nb = w.nodeBalancers.get(statusId(o) ?? -1);
  const config = nb === undefined ? undefined : Object.values(nb.configs).find((x) => x.port === 80);
  const node = config === undefined ? undefined : Object.values(config.nodes).find((n) => n.address === NODE);
  return nb?.client_conn_throttle === c.throttle && config?.algorithm === c.algorithm && node?.weight === c.weight;
}

function updateApplied(w: World, t: Trial, o: ManagedObject | undefined): boolean {
  if (t.op === "update-nb") return nbMatches(w, o, need(t.nb, "change"));
  const db = w.dbs.get(statusId(o) ?? -1);
  return db !== undefined && sameSet(db.allow_list, need(t.allowList, "allowList").map(cidr));
}

/** Where the step was when the operator died (looked at after the kill and after held requests landed). */
export function phaseAtKill(w: World, t: Trial): { phase: KillPhase; detail: string; intent?: boolean } {
  const at = (phase: KillPhase, detail: string, intent?: boolean): { phase: KillPhase; detail: string; intent?: boolean } => ({ phase, detail, ...(intent === true ? { intent } : {}) });
  switch (t.op) {
    case "create-mdb": case "create-nb": case "snapshot": {
      const o = (t.op === "create-mdb" ? w.mdbs : t.op === "create-nb" ? w.nbs : w.snaps).get(t.name);
      const cloud = t.op === "create-mdb" ? dbByLabel(w, labelFor.mdb(t.name)).length
        : t.op === "create-nb" ? nbByLabel(w, labelFor.nb(t.name)).length
          : [...w.dbs.values()].flatMap((d) => d.backups).filter((b) => b.label === labelFor.snap(t.name)).length
            + [...w.dbs.values()].filter((d) => d.pending?.snapshot?.label === labelFor.snap(t.name)).length;
      if (cloud === 0) return at("before send", o === undefined ? "not in the API server yet" : recorded(o, "createPending") !== undefined ? "create announced, not sent" : "create not announced");
      if (recorded(o, "externalId") === undefined) return at("sent, unrecorded", "cloud object exists, id not recorded");
      return t.op === "snapshot" ? (o?.status?.phase === "Available" ? at("done", "Available") : at("recorded", "id recorded"))
        : isTrue(o, "Ready") ? at("done", "Ready") : at("recorded", "id recorded, not Ready");
    }
    case "update-mdb": case "update-nb": {
      const o = (t.op === "update-mdb" ? w.mdbs : w.nbs).get(t.name);
      if (!updateApplied(w, t, o)) return at("before send", "cloud object unchanged");
      if (o?.status?.observedGeneration !== o?.metadata.generation) return at("sent, unrecorded", "cloud object changed, generation not observed");
      return settled(o) ? at("done", "Synced and Ready") : at("recorded", "observed, not settled");
    }
    case "delete-mdb": case "delete-nb": case "delete-snapshot": {
      const o = (t.op === "delete-mdb" ? w.mdbs : t.op === "delete-nb" ? w.nbs : w.snaps).get(t.name);
      if (o === undefined) return at("done", "resource gone");
      const id = t.op === "delete-snapshot" ? backupIdOf(o) : statusId(o);
      const cloud = t.op === "delete-mdb" ? w.dbs.has(id ?? -1) : t.op === "delete-nb" ? w.nodeBalancers.has(id ?? -1)
        : [...w.dbs.values()].some((d) => d.backups.some((b) => b.id === id));
      return cloud ? at("before send", "cloud object exists") : at("sent, unrecorded", "cloud object deleted, finalizer kept");
    }
    case "restore": case "reset-credentials": case "patch": {
      const r = recordOf(w.mdbs.get(t.name), t.op);
      const mine = r !== undefined && r.token === t.token;
      // A completion older than the intent is the previous token's, left in place: not this one's.
      const stale = r?.completedAt !== undefined && r.startedAt !== undefined && r.completedAt < r.startedAt;
      if (mine && r.completedAt !== undefined && !stale && t.accepted > 0) return at("recorded", "completion recorded");
      const record = r === undefined ? "" : `: ${JSON.stringify(r)}`;
      if (t.sent === 0) return at("before send", `${mine ? "intent recorded, not sent" : "not started"}${record}`, mine);
      return at("sent, unrecorded", `${mine ? "intent recorded, sent, completion not recorded" : "sent, nothing recorded"}${record}`, mine);
    }
  }
}

export interface Verdict { outcome: Outcome; detail: string }

/** Undefined while the trial is still on its way; else how it ended (checked until its deadline). */
export function verdict(w: World, t: Trial): Verdict | undefined {
  switch (t.op) {
    case "create-mdb": case "create-nb": {
      const o = (t.op === "create-mdb" ? w.mdbs : w.nbs).get(t.name);
      const id = statusId(o);
      const exists = t.op === "create-mdb" ? w.dbs.has(id ?? -1) : w.nodeBalancers.has(id ?? -1);
      return settled(o) && exists ? { outcome: "converged", detail: `Ready with ${String(id)}` } : undefined;
    }
    case "update-mdb": case "update-nb": {
      const o = (t.op === "update-mdb" ? w.mdbs : w.nbs).get(t.name);
      return settled(o) && updateApplied(w, t, o) ? { outcome: "converged", detail: "applied and Ready" } : undefined;
    }
    case "delete-mdb": case "delete-nb": case "delete-snapshot": {
      const o = (t.op === "delete-mdb" ? w.mdbs : t.op === "delete-nb" ? w.nbs : w.snaps).get(t.name);
      return o === undefined ? { outcome: "converged", detail: "gone" } : undefined;
    }
    case "snapshot": {
      const o = w.snaps.get(t.name);
      const id = backupIdOf(o);
      const exists = w.dbs.get(t.dbId ?? -1)?.backups.some((b) => b.id === id) === true;
      return o?.status?.phase === "Available" && isTrue(o, "Ready") && exists ? { outcome: "converged", detail: `Available as backup ${String(id)}` } : undefined;
    }
    case "restore": case "patch": case "reset-credentials": {
      const o = w.mdbs.get(t.name);
      const db = w.dbs.get(t.dbId ?? -1);
      if (!isTrue(o, "Ready") || db?.status !== "active") return undefined;
      const r = recordOf(o, t.op);
      if (r === undefined || r.token !== t.token) return undefined;
      if (r.completedAt !== undefined) {
        if (!isTrue(o, "Synced") || o?.status?.observedGeneration !== o?.metadata.generation) return undefined;
        if (t.op === "reset-credentials") {
          const password = w.secrets.get(`${t.name}-connection`)?.data?.password;
          if (db.pendingPassword !== null || password === undefined || Buffer.from(password, "base64").toString() !== db.password) return undefined;
        }
        return { outcome: "converged", detail: `recorded as performed: ${JSON.stringify(r)}` };
      }
      const synced = condition(o, "Synced");
      if (t.op !== "reset-credentials" && synced?.reason === "RequestOutcomeUnknown" && synced.message?.includes(`token ${t.token ?? ""}`) === true) {
        return { outcome: "reported unknown", detail: `RequestOutcomeUnknown after ${String(t.sent)} request(s) sent` };
      }
      return undefined;
    }
  }
}

/** How a trial that never converged looks, for the report. */
export function stuckDetail(w: World, t: Trial): string {
  const o = (t.op === "create-nb" || t.op === "update-nb" || t.op === "delete-nb" ? w.nbs : t.op === "snapshot" || t.op === "delete-snapshot" ? w.snaps : w.mdbs).get(t.name);
  const extra = isRequestOp(t.op) ? `; lastRequests.${actionNames[t.op]} ${JSON.stringify(recordOf(o, t.op) ?? null)}; ${String(t.sent)} sent, ${String(t.accepted)} accepted` : "";
  return `${describe(o)}${extra}`;
}

/**
 * What a finished request-token trial violates, if anything: a restore or patch the API
 * accepted more than once (repeated), or a completion recorded that no process can have seen
 * (false record): a token the API never accepted, or one whose process died between the
 * request and its answer (the documented outcome is then RequestOutcomeUnknown).
 */
export function actionViolation(t: Trial): { invariant: "repeated actions" | "false records"; detail: string } | undefined {
  if (!isRequestOp(t.op)) return undefined;
  const what = `${t.op} token ${t.token ?? "?"}`;
  if (t.op !== "reset-credentials" && t.accepted > 1) return { invariant: "repeated actions", detail: `${what} performed ${String(t.accepted)} times (${String(t.sent)} requests)` };
  if (t.outcome !== "converged") return undefined;
  if (t.accepted < 1) return { invariant: "false records", detail: `${what} recorded in status.lastRequests as completed, but the API never accepted it (${String(t.sent)} sent): the action is lost` };
  if (t.op !== "reset-credentials" && t.intentAtKill === true && t.accepted === t.acceptedAtKill) {
    return { invariant: "false records", detail: `${what} recorded as completed after a restart, though the process that sent it died before the answer (documented: RequestOutcomeUnknown); at the kill: ${t.atKillDetail ?? "?"}; after the restart: ${t.detail ?? "?"}` };
  }
  return undefined;
}

/** Attributes each action request the emulator saw to the trial of that database and action that came last before it. */
export class ActionLedger {
  private readonly seen = new WeakSet<MutationRecord>();
  private readonly trials: Trial[] = [];
  /** Action requests no trial explains (an action on a database nobody asked it of). */
  readonly strays: MutationRecord[] = [];

  track(t: Trial): void {
    if (isRequestOp(t.op)) this.trials.push(t);
  }

  scan(log: readonly MutationRecord[]): void {
    for (const m of log) {
      if (this.seen.has(m)) continue;
      this.seen.add(m);
      const a = actionOf(m);
      if (a === undefined) continue;
      let owner: Trial | undefined;
      for (const t of this.trials) {
        if (t.op === a.op && t.dbId === a.dbId && t.triggerAt > 0 && t.triggerAt <= m.receivedAt && (owner === undefined || t.triggerAt > owner.triggerAt)) owner = t;
      }
      if (owner === undefined) { this.strays.push(m); continue; }
      owner.sent += 1;
      (owner.requests ??= []).push(`${String(m.receivedAt - owner.triggerAt)}→${String(m.answeredAt - owner.triggerAt)} ms ${String(m.status)}`);
      if (m.status >= 200 && m.status < 300) owner.accepted += 1;
    }
  }
}
