// spec.restoreFrom: the current platform's restore, a fork of another database into the new
// cluster at a point in time. Everything the API would refuse is checked before the create is
// announced: the source (same engine, major version, platform and account), its state (waited
// for) and the restore time (within the source's range). The create itself is any create:
// announced, looked for by label if its answer is lost, so one fork is made, never two.
import { databasePlatform, type Database, type DatabaseEngine, type ForkInput } from "../../linode/index.ts";
import { kindRead, reference, TerminalError, type Deferral, type Managed } from "../../runtime/contract.ts";
import { SharedReasons } from "../shared/reasons.ts";
import { managedDatabaseType } from "./definition.ts";
import { databaseView, type DatabaseView } from "./reference-view.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";
import { parseApiTime } from "../shared/api-time.ts";

/** The source a fork names by reference: resolved (and woken when it changes) until the fork exists; never blocking, as a failed source is one to fork. */
export const forkSourceReference = reference<ManagedDatabaseSpec, DatabaseView>({
  name: "forkSource",
  target: kindRead(managedDatabaseType, "the database a fork restores from"),
  names: (spec) => (spec.restoreFrom?.pointInTime.databaseRef !== undefined ? [spec.restoreFrom.pointInTime.databaseRef.name] : []),
  decode: databaseView,
  required: () => false,
});

/** A time as the API writes it: UTC to the second, no zone. */
const apiTime = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
/** A time as status shows it: RFC 3339, UTC to the second. */
export const rfc3339 = (ms: number): string => `${apiTime(ms)}Z`;

/** States from which the API forks (the current platform's: a source active, degraded or failed). */
const forkable = new Set(["active", "degraded", "failed"]);

export interface ForkSourceDeps {
  /** The database with id `id` as of at most a pending poll ago; undefined when this account has none. */
  get(engine: DatabaseEngine, id: number, signal: AbortSignal): Promise<Database | undefined>;
  /** The account this resource acts in (a fork stays in its source's account). */
  accountId: string;
  /** Whether another namespace's resource records database `id`: never forked by id from here (another team's data). */
  claimedElsewhere(id: number): boolean;
  /** How soon to look again at a source not ready yet. */
  retryMillis: number;
  now(): number;
}

/**
 * The fork to send for `m` (undefined when its spec restores nothing), or why not yet: a
 * Deferral waits for the source; a TerminalError refuses what can never be sent.
 */
export async function planFork(m: Managed<ManagedDatabaseSpec>, deps: ForkSourceDeps, signal: AbortSignal): Promise<{ fork: ForkInput } | { wait: Deferral } | undefined> {
  const pit = m.spec.restoreFrom?.pointInTime;
  if (pit === undefined) return undefined;
  const wait = (message: string): { wait: Deferral } => ({ wait: { reason: ManagedDatabaseReasons.WaitingForRestoreSource, message: `${message}; nothing is created until then`, retryAfterMillis: deps.retryMillis } });
  const refuse = (reason: string, message: string): never => { throw new TerminalError(reason, `${message}: nothing was sent`); };
  let id: number;
  let named: string;
  if (pit.databaseRef !== undefined) {
    named = `ManagedDatabase ${pit.databaseRef.name}`;
    const found = forkSourceReference.get(m, pit.databaseRef.name);
    if (found === undefined) return wait(`spec.restoreFrom names ${named}, which is not in namespace ${m.key.namespace}`);
    const view = found.value;
    if (view === undefined) return wait(`spec.restoreFrom names ${named}, which cannot be read: ${found.notReady}`);
    if (view.engine !== m.spec.engine) return refuse(ManagedDatabaseReasons.RestoreSourceMismatch, `${named} is a ${view.engine} database and this one ${m.spec.engine}: a fork has its source's engine`);
    if (view.id === undefined) return wait(`${named} has no database yet`);
    // Only another account's token could reach it; a fork stays in its source's account.
    if (view.account !== undefined && view.account.id !== deps.accountId) {
      return refuse(ManagedDatabaseReasons.RestoreSourceMismatch, `${named} is in another Linode account than this resource (its credentials differ): a fork is made in its source's account, so set spec.credentialsRef as ${named}'s`);
    }
    id = view.id;
  } else {
    id = pit.databaseId ?? 0;
    named = `database ${String(id)}`;
  }
  // Another namespace's database is refused exactly as a missing one is: the refusal says nothing of what exists elsewhere.
  const source = pit.databaseRef === undefined && deps.claimedElsewhere(id) ? undefined : await deps.get(m.spec.engine, id, signal);
  if (source === undefined) return refuse(ManagedDatabaseReasons.RestoreSourceMismatch, `the Linode account this resource acts in has no ${m.spec.engine} database ${String(id)} (spec.restoreFrom: ${named})`);
  const db = source;
  if (databasePlatform(db) === "legacy") {
    return refuse(SharedReasons.UnsupportedOnPlatform, `${named} (database ${String(id)}) is on Linode's legacy platform, which has no point-in-time restore: restore one of its backups in place instead (spec.requests.restore on its ManagedDatabase)`);
  }
  const major = db.version.split(".")[0] ?? db.version;
  if (m.spec.version !== major) return refuse(ManagedDatabaseReasons.RestoreSourceMismatch, `${named} runs ${db.engine} ${db.version}: a fork has its source's major version, so spec.version must be "${major}", not "${m.spec.version}"`);
  if (!forkable.has(db.status)) return wait(`${named} (database ${String(id)}) is ${db.status}; a fork is made of an active, degraded or failed database`);
  if (pit.restoreTime === undefined) return { fork: { source: id } };
  const at = Date.parse(pit.restoreTime);
  const now = deps.now();
  const oldest = db.oldestRestoreTime !== null && db.oldestRestoreTime !== undefined ? parseApiTime(db.oldestRestoreTime) : undefined;
  // The API's resolution is the second.
  const second = (ms: number): number => Math.floor(ms / 1000);
  if ((oldest !== undefined && second(at) < second(oldest)) || second(at) > second(now)) {
    return refuse(ManagedDatabaseReasons.RestoreTimeOutOfRange, `restoreTime ${pit.restoreTime} is ${second(at) > second(now) ? "in the future" : "before the oldest restore point"}: ${named} can be restored to any time from ${oldest !== undefined ? rfc3339(oldest) : "its creation"} to now (${rfc3339(now)})`);
  }
  return { fork: { source: id, restoreTime: apiTime(at) } };
}
