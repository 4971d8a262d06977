// A database's connection pools go before it: while a DatabaseConnectionPool in its namespace
// records a pool of this database (or has a create of one announced), the database's delete
// waits (ConnectionPoolsRemain), and each pool's deletion wakes it. The API is assumed to delete
// a database's pools with it (the spec says nothing), so this only orders the two: a
// pool resource never finds its database gone under it, and one whose pool the user still
// wants (not being deleted) keeps the database until it is deleted or lets go (Retain).
// Checked on an active database only: a suspended one is resumed first (pools are changed on
// an active database only), then waits here.
import type { Database } from "../../linode/index.ts";
import { RetryAfterError, type ExternalClient, type Managed, type ManagedObject, type ReadStore } from "../../runtime/contract.ts";
import { specRefName } from "../shared/schema.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";

/** The pool resources in `namespace` that hold a pool of database `id` of ManagedDatabase `name`. */
export function poolsOf(pools: ReadStore<ManagedObject>, namespace: string, name: string, id: number): ManagedObject[] {
  return pools.list().filter((o) => o.metadata.namespace === namespace && specRefName(o, "databaseRef") === name && (
    (typeof o.status?.externalId === "string" && o.status.externalId.startsWith(`postgresql/${String(id)}/`))
    || (o.status?.createPending as Record<string, unknown> | undefined)?.database === String(id)));
}

export function poolsFirst<Spec, Status, Delta>(external: ExternalClient<Spec, Database, Status, Delta>, pools: ReadStore<ManagedObject>, retryMillis: number): ExternalClient<Spec, Database, Status, Delta> {
  return {
    ...external,
    delete: async (m: Managed<Spec>, observed, signal) => {
      const db = observed.external;
      const holding = db.status === "active" ? poolsOf(pools, m.key.namespace, m.key.name, db.id) : [];
      if (holding.length > 0) {
        const names = holding.map((o) => o.metadata.name).sort().join(", ");
        throw new RetryAfterError(ManagedDatabaseReasons.ConnectionPoolsRemain, `DatabaseConnectionPools ${names} hold pools of this database: it is deleted once they are gone (delete them, or set their deletionPolicy: Retain and delete them to leave the pools to go with the database)`, retryMillis);
      }
      return external.delete(m, observed, signal);
    },
  };
}
