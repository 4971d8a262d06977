// One-shot actions requested by token (`spec.requests.*`), recorded in `status.lastRequests`.
// Each is checked against, and recorded in, the object as the API server has it now (a fresh
// read, written with that resourceVersion as a precondition), never the cache, which may not
// hold the record of a pass that just ran. An action is recorded as soon as it succeeded, so a
// later failure in the same pass never repeats it.
//   at most once  (restore, patch): an intent is recorded before the call; a crash or a lost
//                 response leaves the intent, and the token is then never performed again: the
//                 outcome is unknown and the user is asked for a new token.
//   at least once (credentials reset): recorded after the call; only a crash between the call
//                 and the record repeats it.
import { isConflict } from "../kube/errors.ts";
import { getCondition, setCondition } from "./conditions.ts";
import type { StatusWriter } from "./status-writer.ts";

export const LAST_REQUESTS = "lastRequests";

export interface ActionRecord {
  token: string;
  /** Set when an at-most-once action was about to be sent. */
  startedAt?: string;
  /** Set once it succeeded. */
  completedAt?: string;
  [detail: string]: unknown;
}

export type ActionOutcome =
  /** Performed now and recorded. */
  | { state: "done" }
  /** This token was performed before. */
  | { state: "recorded"; record: ActionRecord }
  /** An earlier attempt of this token may or may not have happened; it is not sent again. */
  | { state: "unknown"; record: ActionRecord };

export interface ActionSpec {
  name: string;
  token: string;
  atMostOnce: boolean;
  /** Performs the action; returns details to record with it (e.g. the backup restored). */
  perform(): Promise<Record<string, unknown> | undefined>;
  /** Whether a failure proves the action was not performed (e.g. the API refused it), so the token may be tried again. */
  refused(err: unknown): boolean;
  /**
   * An action that takes the cloud object out of service (a restore): what Ready says from the
   * moment it is recorded, in the same write, so no reader sees it done while still Ready.
   */
  notReadyAfter?: { reason: string; message: string };
}

const COMMIT_ATTEMPTS = 5;
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

function recordOf(status: Record<string, unknown>, name: string): ActionRecord | undefined {
  const all = status[LAST_REQUESTS];
  if (all === null || typeof all !== "object") return undefined;
  const r = (all as Record<string, unknown>)[name];
  return r !== null && typeof r === "object" && typeof (r as { token?: unknown }).token === "string" ? r as ActionRecord : undefined;
}

/** A merge patch that turns record `from` into exactly `to` (keys only `from` has are removed). */
function replacing(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...to };
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  return patch;
}

/** Runs one-shot actions of one reconcile against its status writer. */
export class Actions {
  private readonly status: StatusWriter;

  constructor(status: StatusWriter) {
    this.status = status;
  }

  async run(action: ActionSpec): Promise<ActionOutcome> {
    const fresh = await this.status.readFresh();
    const previous = recordOf(fresh.status, action.name);
    if (previous?.token === action.token) {
      return previous.completedAt !== undefined ? { state: "recorded", record: previous } : { state: "unknown", record: previous };
    }
    let rv = fresh.resourceVersion;
    const startedAt = now();
    if (action.atMostOnce) {
      // A conflict here means the object changed since the read: nothing was sent; the pass restarts.
      // The intent replaces the previous record whole: merged into it, the previous token's
      // completedAt (and details) would stay and read as this token's completion after a crash.
      const intent = { token: action.token, startedAt };
      rv = await this.status.commit({ [LAST_REQUESTS]: { [action.name]: previous === undefined ? intent : replacing(previous, intent) } }, rv);
    }
    let details: Record<string, unknown> | undefined;
    try {
      details = await action.perform();
    } catch (err) {
      if (action.atMostOnce && action.refused(err)) {
        // Not performed: put the previous record back so the token can be tried again.
        const intent = { token: action.token, startedAt };
        await this.commitRetrying({ [LAST_REQUESTS]: { [action.name]: previous === undefined ? null : replacing(intent, previous) } }, rv);
      }
      throw err;
    }
    const record: ActionRecord = { token: action.token, ...(action.atMostOnce ? { startedAt } : {}), completedAt: now(), ...details };
    const onServer = action.atMostOnce ? { token: action.token, startedAt } : previous;
    const notReady = action.notReadyAfter;
    const conditions = notReady === undefined ? {} : {
      conditions: setCondition(fresh.status.conditions, { type: "Ready", status: "False", ...notReady }, getCondition(fresh.status.conditions, "Ready")?.observedGeneration),
    };
    await this.commitRetrying({ [LAST_REQUESTS]: { [action.name]: onServer === undefined ? record : replacing(onServer, record) }, ...conditions }, rv);
    return { state: "done" };
  }

  /** After the action, the record must land: a conflict (e.g. a spec edit meanwhile) is read again and retried. */
  private async commitRetrying(patch: Record<string, unknown>, rv: string | undefined): Promise<void> {
    let version = rv;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.status.commit(patch, version);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= COMMIT_ATTEMPTS) throw err;
        version = (await this.status.readFresh()).resourceVersion;
      }
    }
  }
}
