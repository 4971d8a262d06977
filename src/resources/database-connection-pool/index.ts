// The DatabaseConnectionPool kind: a PgBouncer pool of a PostgreSQL ManagedDatabase (databaseRef),
// resolved through the runtime's references (woken when the database changes), acting in its
// database's Linode account, publishing a connection Secret through the pool.
import type { KindParts, Managed, ManagedObject } from "../../runtime/contract.ts";
import { AccountScope, credentialsFlow, PerAccount, recordedAccount, type AccountSource } from "../shared/credentials.ts";
import type { OperatorKind } from "../shared/deps.ts";
import { specRefName } from "../shared/schema.ts";
import { accountDatabases, accountInDatabase, databaseAccountSources, managedDatabaseType } from "../managed-database/public.ts";
import { poolDatabaseReference } from "./database-reference.ts";
import { databaseConnectionPoolDefinition, databaseConnectionPoolType } from "./definition.ts";
import type { PoolDiff } from "./diff.ts";
import { DatabaseConnectionPoolExternal, formatPoolId, parsePoolId, poolLabel, type PoolObject, type PoolStatus } from "./external.ts";
import { poolConnection, poolSecretName } from "./connection.ts";
import type { DatabaseConnectionPoolSpec } from "./schema.ts";

export { databaseConnectionPoolDefinition, databaseConnectionPoolType } from "./definition.ts";

export const databaseConnectionPoolKind: OperatorKind = {
  definition: databaseConnectionPoolDefinition,
  type: databaseConnectionPoolType,
  build: ({ deps, stores, recorders }) => {
    const databases = stores.kind(managedDatabaseType);
    // A pool lives in its database's account: the one the pool recorded once made (its
    // ManagedDatabase may be gone, or manage another database now), else its database's.
    const wanted = (m: Managed<DatabaseConnectionPoolSpec>): AccountSource => {
      const db = poolDatabaseReference.value(m, m.spec.databaseRef.name);
      const recordedDb = m.externalId !== undefined ? parsePoolId(m.externalId)?.databaseId : undefined;
      return accountInDatabase(recordedAccount(m.obj), db, recordedDb !== undefined && recordedDb === db?.id);
    };
    const inherited = (obj: ManagedObject): AccountSource[] => databaseAccountSources(databases, obj);
    const scope = new AccountScope<DatabaseConnectionPoolSpec>({
      accounts: deps.accounts, wanted, inherited, what: "connection pool", idField: "spec.adopt",
      // spec.adopt names the pool with this label in the database databaseRef resolves to.
      adopting: (m) => {
        const id = poolDatabaseReference.value(m, m.spec.databaseRef.name)?.id;
        const label = poolLabel(m);
        return m.spec.adopt && id !== undefined && label !== undefined ? formatPoolId({ databaseId: id, label }) : undefined;
      },
      // A pool has no creation time: one found after a create this resource announced, with the
      // label it announced, was made by that create (none had the label when it looked before
      // sending it), so it counts as made then.
      identify: (m, found) => {
        const pool = (found as PoolObject).pool;
        return { label: pool.label, created: m.createPending?.label === pool.label ? m.createPending.at : "", labels: [poolLabel(m) ?? ""] };
      },
    });
    const parts = new PerAccount((account) => ({
      external: new DatabaseConnectionPoolExternal({ linode: account.linode, databases: accountDatabases.get(account), poll: deps.poll, recorders }),
      connection: poolConnection(account.linode),
    }));
    const kind: KindParts<DatabaseConnectionPoolSpec, PoolObject, PoolStatus, PoolDiff> = {
      type: databaseConnectionPoolType,
      external: scope.external((a) => parts.get(a).external),
      connection: scope.connection(poolSecretName, (a) => parts.get(a).connection),
      poll: deps.poll,
      // Its workers are shared among accounts as its database's are: it acts in that one's.
      flow: (obj) => {
        const name = specRefName(obj, "databaseRef");
        return credentialsFlow(obj, name === undefined ? undefined : databases.get(obj.metadata.namespace ?? "", name));
      },
      references: [scope.credentials, poolDatabaseReference],
    };
    return kind;
  },
};
