// Resource locks: a lock keeps an entity (here a NodeBalancer) from being deleted,
// `cannot_delete_with_subresources` its configs and nodes too; one lock per entity. Only an
// unrestricted user's token may call these; scope account:read_write to make or remove one,
// account:read_only to read them (spec 4.234.0). The routes are BETA in the spec.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { CallOptions, Transport } from "./http.ts";
import { listAll, listPage, type ListAllOptions, type ListOptions } from "./listing.ts";
import type { Page } from "./pagination.ts";
import { emptySchema } from "./schemas/common.ts";
import { lockListSchema, lockSchema, type lockTypes } from "./schemas/locks.ts";

export type ResourceLock = Camelize<z.output<typeof lockSchema>>;
export type LockType = (typeof lockTypes)[number];

export interface LockCreateRequest {
  entityType: "nodebalancer" | "linode" | "volume" | "lkecluster" | "lkenodepool";
  entityId: number;
  lockType: LockType;
}

const LOCKS = "/locks";
const ONE = `${LOCKS}/{lockId}`;

export class LocksApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  list(opts?: ListOptions): Promise<Page<ResourceLock>> {
    return listPage(this.transport, LOCKS, {}, lockListSchema, opts);
  }

  listAll(opts?: ListAllOptions): Promise<ResourceLock[]> {
    return listAll(this.transport, LOCKS, {}, lockListSchema, opts);
  }

  /** The locks on one entity (the whole list is read: whether the API filters it by entity is not documented). */
  async forEntity(type: string, id: number, opts?: ListAllOptions): Promise<ResourceLock[]> {
    return (await this.listAll(opts)).filter((l) => l.entity.type === type && l.entity.id === id);
  }

  get(lockId: number, opts?: CallOptions): Promise<ResourceLock> {
    return this.transport.request({ method: "GET", route: ONE, params: { lockId }, schema: lockSchema }, opts);
  }

  /** Never retried after an ambiguous failure: look the entity's locks up before making another. */
  create(req: LockCreateRequest, opts?: CallOptions): Promise<ResourceLock> {
    return this.transport.request({ method: "POST", route: LOCKS, body: req, schema: lockSchema }, opts);
  }

  delete(lockId: number, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: ONE, params: { lockId }, schema: emptySchema }, opts);
  }
}
