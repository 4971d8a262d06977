// One-shot actions requested by token (`spec.requests`): each new token is performed once and
// recorded in `status.lastRequests`; a token equal to the recorded one is never performed again.
import type { Database, LinodeClient } from "../../linode/index.ts";
import { RetryAfterError } from "../../runtime/errors.ts";
import type { EventRecorder } from "../../runtime/events.ts";
import type { Managed } from "../../runtime/managed.ts";
import { ConditionReasons as R } from "../../runtime/reasons.ts";
import type { PollIntervals } from "../../runtime/timings.ts";
import { KindEvents, KindTimings } from "../shared/constants.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { lastRequestsSchema, type ManagedDatabaseSpec, type ManagedDatabaseStatus } from "./schema.ts";

type LastRequests = NonNullable<ManagedDatabaseStatus["lastRequests"]>;

/** The actions already performed, as recorded in status. A record that does not parse throws: guessing could repeat an action. */
function lastRequestsOf(m: Managed<ManagedDatabaseSpec>): LastRequests {
  return lastRequestsSchema.parse(m.obj.status?.lastRequests ?? {});
}

/** A credentials reset finished recently: the new password may still be on its way. */
export function resetIsRecent(m: Managed<ManagedDatabaseSpec>): boolean {
  const at = Date.parse(lastRequestsOf(m).resetCredentials?.completedAt ?? "");
  return Number.isFinite(at) && Date.now() - at < KindTimings.credentialsRefreshMillis;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

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

  /** Performs each request token not yet recorded; returns the new record, or undefined if nothing ran. */
  async perform(m: Managed<ManagedDatabaseSpec>, db: Database, signal: AbortSignal): Promise<LastRequests | undefined> {
    const want = m.spec.requests;
    if (want === undefined || m.policies.management === "Observe") return undefined;
    const done = lastRequestsOf(m);
    const api = this.linode.databases.engine(m.spec.engine);
    const next = { ...done };
    const needActive = (what: string): void => {
      if (db.status !== "active") throw new RetryAfterError(R.Waiting, `${what} waits until the database is active (it is ${db.status})`, this.poll.pendingMillis);
    };
    if (want.resetCredentials !== undefined && want.resetCredentials !== done.resetCredentials?.token) {
      needActive("the credentials reset");
      await linodeCall("resetting the credentials", () => api.resetCredentials(db.id, { signal }));
      next.resetCredentials = { token: want.resetCredentials, completedAt: now() };
      this.events.normal(m.obj, KindEvents.CredentialsReset.reason, KindEvents.CredentialsReset.action, `reset the root password (request ${want.resetCredentials})`);
    }
    if (want.patch !== undefined && want.patch !== done.patch?.token) {
      needActive("patching");
      await linodeCall("patching", () => api.patch(db.id, { signal }));
      next.patch = { token: want.patch, completedAt: now() };
      // The database is updating now: the next look must not come from an older list.
      this.cache.invalidate(m.spec.engine, db.id);
      this.events.normal(m.obj, KindEvents.Patched.reason, KindEvents.Patched.action, `applied operating-system patches (request ${want.patch})`);
    }
    return JSON.stringify(next) === JSON.stringify(done) ? undefined : next;
  }
}
