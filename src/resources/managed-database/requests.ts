// One-shot actions requested by token (`spec.requests`), run through the runtime's Actions:
// each new token is performed once and recorded in `status.lastRequests` as soon as it
// succeeded, so a later failure in the same pass never repeats it. A patch and a restore are
// at most once (an unknown outcome is reported, never sent again); a credentials reset at
// least once (only a crash between the reset and its record repeats it).
import { databasePlatform, isNotFound, LinodeApiError, wasNeverSent, type Database, type LinodeClient } from "../../linode/index.ts";
import { kindRead, ConditionReasons as R, reference, RetryAfterError, TerminalError, type ActionOutcome, type AfterObserve, type EventRecorder, type Managed, type PollIntervals } from "../../runtime/contract.ts";
import { KindTimings } from "../shared/constants.ts";
import { translateLinodeError } from "../shared/linode-errors.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { databaseSnapshotType, snapshotView, type SnapshotView } from "../database-snapshot/public.ts";
import { lastRequestsSchema, type ManagedDatabaseSpec, type ManagedDatabaseStatus } from "./schema.ts";
import { ManagedDatabaseReasons, ManagedDatabaseEvents } from "./reasons.ts";
import { SharedReasons } from "../shared/reasons.ts";

type LastRequests = NonNullable<ManagedDatabaseStatus["lastRequests"]>;

/** The actions already performed, as recorded in status. A record that does not parse throws: guessing could repeat an action. */
function lastRequestsOf(m: Managed<ManagedDatabaseSpec>): LastRequests {
  return lastRequestsSchema.parse(m.obj.status?.lastRequests ?? {});
}

/** The last restore performed (with the backup it used), if any. */
export function lastRestore(m: Managed<ManagedDatabaseSpec>): LastRequests["restore"] {
  const r = lastRequestsOf(m).restore;
  return r?.completedAt !== undefined ? r : undefined;
}

/** A restore from a DatabaseSnapshot: resolved (and woken when it changes), never blocking the database. */
export const restoreSnapshotReference = reference<ManagedDatabaseSpec, SnapshotView>({
  name: "restoreSnapshot",
  target: kindRead(databaseSnapshotType, "the snapshot a restore names"),
  names: (spec) => (spec.requests?.restore?.snapshotRef !== undefined ? [spec.requests.restore.snapshotRef.name] : []),
  decode: snapshotView,
  required: () => false,
});

/** States in which the API restores a backup (spec: active, degraded or failed). */
const restorable = new Set(["active", "degraded", "failed"]);

/** The token of a credentials reset that finished recently (its new password may still be on its way), if any. */
export function recentReset(m: Managed<ManagedDatabaseSpec>): string | undefined {
  const record = lastRequestsOf(m).resetCredentials;
  const at = Date.parse(record?.completedAt ?? "");
  return Number.isFinite(at) && Date.now() - at < KindTimings.credentialsRefreshMillis ? record?.token : undefined;
}

/** What Ready says once a restore or a patch is sent: the database is out of service until it is active again. */
const restoring = (backupId: number): { reason: string; message: string } =>
  ({ reason: ManagedDatabaseReasons.Restoring, message: `restoring backup ${String(backupId)}: the database is unavailable until it is active again` });
const patching = { reason: R.Updating, message: "applying operating-system patches: the database is updating" };

/**
 * The action provably did not happen, so the token may be tried again: the API refused it
 * (4xx), or the call never left the process (held back by the operator's own call budget, a
 * connection refused, cancelled before it was sent).
 */
const notPerformed = (err: unknown): boolean => (err instanceof LinodeApiError && err.status < 500) || wasNeverSent(err);

/** Runs an action and turns a Linode failure into the runtime's outcome (after Actions has judged the raw error). */
async function translated<T>(doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    // A 404 on an action names something that is not there (a backup id): retrying cannot help.
    if (isNotFound(err)) throw new TerminalError(R.ApiRejected, `${doing}: not found`);
    throw translateLinodeError(err, doing);
  }
}

export class DatabaseRequests {
  private readonly linode: LinodeClient;
  private readonly cache: DatabaseListCache;
  private readonly events: EventRecorder;
  private readonly poll: PollIntervals;

  constructor(deps: { linode: LinodeClient; cache: DatabaseListCache; events: EventRecorder; poll: PollIntervals }) {
    this.linode = deps.linode;
    this.cache = deps.cache;
    this.events = deps.events;
    this.poll = deps.poll;
  }

  /** Performs each request token not yet recorded; says what the status and conditions should show. */
  async perform(m: Managed<ManagedDatabaseSpec>, db: Database, signal: AbortSignal): Promise<AfterObserve | undefined> {
    const want = m.spec.requests;
    if (want === undefined || m.policies.management === "Observe") return undefined;
    const done = lastRequestsOf(m);
    const api = this.linode.databases.engine(m.spec.engine);
    const needActive = (what: string): void => {
      if (db.status !== "active") throw new RetryAfterError(R.Waiting, `${what} waits until the database is active (it is ${db.status})`, this.poll.pendingMillis);
    };
    const outcomes: { name: string; token: string; outcome: ActionOutcome }[] = [];
    const note = (name: string, token: string, outcome: ActionOutcome): void => { outcomes.push({ name, token, outcome }); };

    // Only a token that differs from the (cached) record costs a fresh read; the fresh read decides.
    if (want.resetCredentials !== undefined && want.resetCredentials !== done.resetCredentials?.token) {
      needActive("the credentials reset");
      const token = want.resetCredentials;
      note("credentials reset", token, await translated("resetting the credentials", () => m.actions.run({
        name: "resetCredentials", token, atMostOnce: false, refused: notPerformed,
        perform: async () => {
          await api.resetCredentials(db.id, { signal });
          this.events.normal(m.obj, ManagedDatabaseEvents.CredentialsReset.reason, ManagedDatabaseEvents.CredentialsReset.action, `reset the root password (request ${token})`);
          return undefined;
        },
      })));
    }
    if (want.patch !== undefined && (want.patch !== done.patch?.token || done.patch.completedAt === undefined)) {
      needActive("patching");
      const token = want.patch;
      note("patch", token, await translated("patching", () => m.actions.run({
        name: "patch", token, atMostOnce: true, refused: notPerformed, notReadyAfter: patching,
        perform: async () => {
          await api.patch(db.id, { signal });
          // The database is updating now: the next look must not come from an older list.
          this.cache.invalidate(m.spec.engine, db.id);
          this.events.normal(m.obj, ManagedDatabaseEvents.Patched.reason, ManagedDatabaseEvents.Patched.action, `applied operating-system patches (request ${token})`);
          return undefined;
        },
      })));
    }
    const restore = want.restore;
    // A reset recorded before, or asked for in the same edit (performed in this very pass, or
    // about to be): either way the restore would come after it.
    const resetToken = want.resetCredentials ?? done.resetCredentials?.token;
    let refused: { reason: string; message: string } | undefined;
    let lastSentRestore: number | undefined;
    if (restore !== undefined && (restore.token !== done.restore?.token || done.restore.completedAt === undefined)) {
      const backup = databasePlatform(db) === "current"
        ? { refused: { reason: SharedReasons.UnsupportedOnPlatform, message: `the restore requested by token ${restore.token} is not sent: the database is on Linode's current platform (status.platform: current), which has no backups to restore in place; a restore there is a point-in-time fork into a new cluster: create a new ManagedDatabase with spec.restoreFrom.pointInTime.databaseRef.name: ${m.key.name} (any time since its oldest restore point, about seven days back: the metric linode_database_oldest_restore_time_seconds), point the application at its Secret, then delete this one; remove spec.requests.restore` } }
        : this.restoreSource(m, db, restore);
      if ("refused" in backup) {
        refused = backup.refused;
      } else if (resetToken !== undefined && restore.force !== true && done.restore?.token !== restore.token) {
        refused = {
          reason: ManagedDatabaseReasons.RestoreAfterCredentialsReset,
          message: `the restore requested by token ${restore.token} is not sent: the credentials were reset (request ${resetToken}), and the spec says a restore after a credentials reset leaves the cluster failed; set spec.requests.restore.force: true to restore anyway`,
        };
      } else {
        if (!restorable.has(db.status)) throw new RetryAfterError(R.Waiting, `the restore waits until the database is active, degraded or failed (it is ${db.status})`, this.poll.pendingMillis);
        const token = restore.token;
        lastSentRestore = backup.backupId;
        note("restore", token, await translated(`restoring backup ${String(backup.backupId)}`, () => m.actions.run({
          name: "restore", token, atMostOnce: true, refused: notPerformed, notReadyAfter: restoring(backup.backupId),
          perform: async () => {
            await api.restoreBackup(db.id, backup.backupId, { signal });
            this.cache.invalidate(m.spec.engine, db.id);
            this.events.normal(m.obj, ManagedDatabaseEvents.Restored.reason, ManagedDatabaseEvents.Restored.action, `restoring backup ${String(backup.backupId)} (request ${token}): the data is replaced by the backup's`);
            return { backupId: backup.backupId };
          },
        })));
      }
    }
    const ran = outcomes.some((o) => o.outcome.state === "done");
    // What was just sent takes the database out of service now; the status observed before it must not say Ready.
    const justSent = (name: string): boolean => outcomes.some((o) => o.name === name && o.outcome.state === "done");
    const notReady = justSent("restore") && lastSentRestore !== undefined ? restoring(lastSentRestore) : justSent("patch") ? patching : undefined;
    const unknown = outcomes.flatMap(({ name, token, outcome }) => (outcome.state === "unknown"
      ? [`the ${name} requested by token ${token} was sent at ${outcome.record.startedAt ?? "?"} but its outcome was never recorded (the operator stopped or lost the answer); it is not sent again: check the database, then set a new token to ask again`]
      : []));
    const notSynced = unknown.length > 0 ? { reason: R.RequestOutcomeUnknown, message: unknown.join("; ") } : refused;
    if (!ran && notSynced === undefined) return undefined;
    return {
      // An action just ran: its effects (a new password, updating → active) show up soon.
      ...(ran ? { pollMillis: this.poll.pendingMillis } : {}),
      ...(notReady !== undefined ? { notReady } : {}),
      ...(notSynced !== undefined ? { notSynced } : {}),
    };
  }

  /** The backup a restore names: by id, or through a DatabaseSnapshot of this database that is Available. */
  private restoreSource(m: Managed<ManagedDatabaseSpec>, db: Database, restore: NonNullable<NonNullable<ManagedDatabaseSpec["requests"]>["restore"]>): { backupId: number } | { refused: { reason: string; message: string } } {
    if (restore.backupId !== undefined) return { backupId: restore.backupId };
    const name = restore.snapshotRef?.name ?? "";
    const status = restoreSnapshotReference.value(m, name);
    if (status === undefined) return { refused: { reason: R.ReferenceNotFound, message: `the restore waits for DatabaseSnapshot ${name}, which does not exist in namespace ${m.key.namespace}` } };
    if (status.phase !== "Available" || status.backupId === undefined) {
      return { refused: { reason: R.ReferenceNotReady, message: `the restore waits for DatabaseSnapshot ${name} to be Available (it is ${status.phase})` } };
    }
    if (status.databaseId !== db.id) {
      return { refused: { reason: ManagedDatabaseReasons.SnapshotOfAnotherDatabase, message: `DatabaseSnapshot ${name} is a backup of database ${String(status.databaseId ?? "?")}, not of this one (${String(db.id)}): a backup restores only into its own database` } };
    }
    return { backupId: status.backupId };
  }
}
