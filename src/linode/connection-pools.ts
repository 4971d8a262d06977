// PostgreSQL connection pools (PgBouncer) of a current-platform database:
// /databases/postgresql/instances/{id}/connection-pools[/{poolName}]. A pool is addressed by
// its label, which never changes; PUT takes everything else. MySQL has no such routes (none in
// the spec; assumed absent).
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { CallOptions, Transport } from "./http.ts";
import { listAll, type ListAllOptions } from "./listing.ts";
import { emptySchema } from "./schemas/common.ts";
import { connectionPoolListSchema, connectionPoolSchema, type connectionPoolModes } from "./schemas/connection-pools.ts";

export type ConnectionPool = Camelize<z.output<typeof connectionPoolSchema>>;
export type ConnectionPoolMode = (typeof connectionPoolModes)[number];

export interface ConnectionPoolCreateRequest {
  /** 1..63 letters, digits, `_` and `-`, not starting with `-`; unique in the database. */
  label: string;
  database: string;
  mode: ConnectionPoolMode;
  size: number;
  /** null: the inbound user (sent explicitly: the spec lists it as required). */
  username: string | null;
}

export type ConnectionPoolUpdateRequest = Partial<Omit<ConnectionPoolCreateRequest, "label">>;

const BASE = "/databases/postgresql/instances/{instanceId}/connection-pools";
const ONE = `${BASE}/{poolName}`;

export class ConnectionPoolsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  listAll(instanceId: number, opts?: ListAllOptions): Promise<ConnectionPool[]> {
    return listAll(this.transport, BASE, { instanceId }, connectionPoolListSchema, opts);
  }

  get(instanceId: number, poolName: string, opts?: CallOptions): Promise<ConnectionPool> {
    return this.transport.request({ method: "GET", route: ONE, params: { instanceId, poolName }, schema: connectionPoolSchema }, opts);
  }

  /** Never retried after an ambiguous failure: look the label up before creating again. */
  create(instanceId: number, req: ConnectionPoolCreateRequest, opts?: CallOptions): Promise<ConnectionPool> {
    return this.transport.request({ method: "POST", route: BASE, params: { instanceId }, body: req, schema: connectionPoolSchema }, opts);
  }

  /** "This operation can cause sudden closure of an in-use connection pool" (spec): send only what differs. */
  update(instanceId: number, poolName: string, req: ConnectionPoolUpdateRequest, opts?: CallOptions): Promise<ConnectionPool> {
    return this.transport.request({ method: "PUT", route: ONE, params: { instanceId, poolName }, body: req, schema: connectionPoolSchema }, opts);
  }

  delete(instanceId: number, poolName: string, opts?: CallOptions): Promise<void> {
    return this.transport.request({ method: "DELETE", route: ONE, params: { instanceId, poolName }, schema: emptySchema }, opts);
  }
}
