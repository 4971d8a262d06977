// Resource locks (spec 4.234.0, BETA; nodebalancers/facts.md): POST/GET /locks, GET/DELETE /locks/{lockId}. A lock keeps its
// entity from being deleted (`cannot_delete`), or its sub-resources too
// (`cannot_delete_with_subresources`: a NodeBalancer's configs and nodes); one lock per entity.
// Only unrestricted users may call these routes; scope account:read_write to make or remove one,
// account:read_only to read them.
//
// GUESS (nodebalancers/facts.md): the emulator has NodeBalancers only, so only they can be
// locked: the other lockable types the spec lists (linode, volume, lkecluster, lkenodepool)
// answer as an entity that does not exist (400 `Not found` on entity_id). The lock is kept on its
// NodeBalancer's record, which its `locks` field shows; what the API answers when a locked
// entity is deleted is not recorded: lockedRefusal's 400 and text are guesses.
import { z } from "zod";
import { requireUnrestricted } from "./auth.ts";
import type { RequestContext, Route, RouteResult } from "./context.ts";
import { ApiError, badRequest, notFound } from "./errors.ts";
import { applyFilter, type Filterable } from "./filter.ts";
import { pageRequest, paginate } from "./pagination.ts";
import { intParam } from "./router.ts";
import { nextId, type LockRecord, type NodeBalancerRecord } from "./store.ts";
import { oneOf, parseBody } from "./validation.ts";

export const LOCK_TYPES = ["cannot_delete", "cannot_delete_with_subresources"] as const;
const ENTITY_TYPES = ["linode", "nodebalancer", "volume", "lkecluster", "lkenodepool"] as const;

const lockCreateSchema = z.object({
  entity_type: oneOf(ENTITY_TYPES),
  entity_id: z.number({ error: (i) => (i.input === undefined ? "entity_id is required" : "Must be an integer") }).int({ error: "Must be an integer" }),
  lock_type: oneOf(LOCK_TYPES),
});

const LOCK_FILTERS: Filterable = { lock_type: (l: { lock: LockRecord }) => l.lock.lock_type };

function renderLock(nb: NodeBalancerRecord, lock: LockRecord): Record<string, unknown> {
  return { id: lock.id, lock_type: lock.lock_type, entity: { id: nb.id, type: "nodebalancer", label: nb.label, url: `/v4/nodebalancers/${String(nb.id)}` } };
}

function allLocks(req: RequestContext): { nb: NodeBalancerRecord; lock: LockRecord }[] {
  return [...req.ctx.state.nodebalancers.values()].flatMap((nb) => (nb.locks ?? []).map((lock) => ({ nb, lock })));
}

function findLock(req: RequestContext): { nb: NodeBalancerRecord; lock: LockRecord } {
  const id = intParam(req.params, "lockId");
  const found = allLocks(req).find((l) => l.lock.id === id);
  if (found === undefined) throw notFound();
  return found;
}

/**
 * The refusal of deleting a locked NodeBalancer (`subresource`: one of its configs or nodes,
 * refused only under cannot_delete_with_subresources), or undefined when nothing forbids it.
 * Status and text are guesses (nothing recorded; the spec says only that it "can't be deleted").
 */
export function lockedRefusal(nb: NodeBalancerRecord, subresource: boolean): ApiError | undefined {
  const lock = (nb.locks ?? []).find((l) => !subresource || l.lock_type === "cannot_delete_with_subresources");
  if (lock === undefined) return undefined;
  const what = subresource ? "This NodeBalancer's configs and nodes" : "This NodeBalancer";
  return new ApiError(400, [{ reason: `${what} can't be deleted while it has a ${lock.lock_type} lock (Lock ID: ${String(lock.id)}). Remove the lock first.` }]);
}

export function lockRoutes(): Route[] {
  const one = "/locks/{lockId}";
  return [
    {
      method: "GET", template: "/locks", area: "account", level: "read_only", paginated: true,
      handler: (req): RouteResult => {
        requireUnrestricted(req.principal);
        const items = allLocks(req);
        return { body: paginate(applyFilter(items, req.header("x-filter"), LOCK_FILTERS), pageRequest(req.query), (l) => renderLock(l.nb, l.lock)) };
      },
    },
    {
      method: "POST", template: "/locks", area: "account", level: "read_write",
      handler: (req) => {
        requireUnrestricted(req.principal);
        const input = parseBody(lockCreateSchema, req.body);
        const nb = input.entity_type === "nodebalancer" ? req.ctx.state.nodebalancers.get(input.entity_id) : undefined;
        if (nb === undefined) throw badRequest("Not found", "entity_id");
        const held = nb.locks?.[0];
        if (held !== undefined) {
          // The text recorded for a second lock on one entity (F:TestTryToLockTwoResourcesWithTheSameType).
          // The same type twice is not recorded: answered alike (a guess).
          throw badRequest(`The ${held.lock_type} lock (Lock ID: ${String(held.id)}) needs to be removed to add ${input.lock_type} lock. Can only have one of: cannot_delete, cannot_delete_with_subresources locks`, "lock_type");
        }
        const lock: LockRecord = { id: nextId(req.ctx.state, "lock"), lock_type: input.lock_type };
        nb.locks = [lock];
        return { body: renderLock(nb, lock) };
      },
    },
    {
      method: "GET", template: one, area: "account", level: "read_only",
      handler: (req) => {
        requireUnrestricted(req.principal);
        const { nb, lock } = findLock(req);
        return { body: renderLock(nb, lock) };
      },
    },
    {
      method: "DELETE", template: one, area: "account", level: "read_write",
      handler: (req) => {
        requireUnrestricted(req.principal);
        const { nb, lock } = findLock(req);
        nb.locks = (nb.locks ?? []).filter((l) => l.id !== lock.id);
        return { body: {} };
      },
    },
  ];
}
