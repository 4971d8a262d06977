// One-shot actions requested by token (`spec.requests`), run through the runtime's Actions:
// each new token is performed once and recorded in `status.lastRequests` as soon as it
// succeeded, so a later failure in the same pass never repeats it. A patch is at most once
// (an unknown outcome is reported, never sent again); a credentials reset at least once (only
// a crash between the reset and its record repeats it).
import { LinodeApiError, type Database, type LinodeClient } from "../../linode/index.ts";
import type { ActionOutcome } from "../../runtime/actions.ts";
import { RetryAfterError } from "../../runtime/errors.ts";
import type { EventRecorder } from "../../runtime/events.ts";
import type { AfterObserve, Managed } from "../../runtime/managed.ts";
import { ConditionReasons as R } from "../../runtime/reasons.ts";
import type { PollIntervals } from "../../runtime/timings.ts";
import { KindEvents, KindTimings } from "../shared/constants.ts";
import { translateLinodeError } from "../shared/linode-errors.ts";
import type { DatabaseListCache } from "./database-cache.ts";
import { lastRequestsSchema, type ManagedDatabaseSpec, type ManagedDatabaseStatus } from "./schema.ts";

type LastRequests = NonNullable<ManagedDatabaseStatus["lastRequests"]>;

/** The actions already performed, as recorded in status. A record that does not parse throws: guessing could repeat an action. */
function lastRequestsOf(m: Managed<ManagedDatabaseSpec>): LastRequests {
  return lastRequestsSchema.parse(m.obj.status?.lastRequests ?? {});
}

/** The token of a credentials reset that finished recently (its new password may still be on its way), if any. */
export function recentReset(m: Managed<ManagedDatabaseSpec>): string | undefined {
  const record = lastRequestsOf(m).resetCredentials;
  const at = Date.parse(record?.completedAt ?? "");
  return Number.isFinite(at) && Date.now() - at < KindTimings.credentialsRefreshMillis ? record?.token : undefined;
}

/** The API answered with a refusal (4xx): the action was not performed and the token may be tried again. */
const refusedByApi = (err: unknown): boolean => err instanceof LinodeApiError && err.status < 500;

/** Runs an action and turns a Linode failure into the runtime's outcome (after Actions has judged the raw error). */
async function translated<T>(doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
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
        name: "resetCredentials", token, atMostOnce: false, refused: refusedByApi,
        perform: async () => {
          await api.resetCredentials(db.id, { signal });
          this.events.normal(m.obj, KindEvents.CredentialsReset.reason, KindEvents.CredentialsReset.action, `reset the root password (request ${token})`);
          return undefined;
        },
      })));
    }
    if (want.patch !== undefined && (want.patch !== done.patch?.token || done.patch.completedAt === undefined)) {
      needActive("patching");
      const token = want.patch;
      note("patch", token, await translated("patching", () => m.actions.run({
        name: "patch", token, atMostOnce: true, refused: refusedByApi,
        perform: async () => {
          await api.patch(db.id, { signal });
          // The database is updating now: the next look must not come from an older list.
          this.cache.invalidate(m.spec.engine, db.id);
          this.events.normal(m.obj, KindEvents.Patched.reason, KindEvents.Patched.action, `applied operating-system patches (request ${token})`);
          return undefined;
        },
      })));
    }
    const ran = outcomes.some((o) => o.outcome.state === "done");
    const unknown = outcomes.flatMap(({ name, token, outcome }) => (outcome.state === "unknown"
      ? [`the ${name} requested by token ${token} was sent at ${outcome.record.startedAt ?? "?"} but its outcome was never recorded (the operator stopped or lost the answer); it is not sent again: check the database, then set a new token to ask again`]
      : []));
    if (!ran && unknown.length === 0) return undefined;
    return {
      // An action just ran: its effects (a new password, updating → active) show up soon.
      ...(ran ? { pollMillis: this.poll.pendingMillis } : {}),
      ...(unknown.length > 0 ? { notSynced: { reason: R.RequestOutcomeUnknown, message: unknown.join("; ") } } : {}),
    };
  }
}
