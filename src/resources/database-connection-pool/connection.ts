// What a pool's connection Secret holds: the Service Binding keys of a PostgreSQL database
// (type, provider, host, port, username, password, database, uri) and the CA certificate, with
// the pool's label as the database name, so the application's connections go through the pool.
//
// ASSUMED (spec 4.234.0: the pool object has no host or port, and where Akamai serves pools
// is unknown): the pool is reached at the database's own host and port, with the pool's label
// as dbname, as Aiven (which runs Linode's PostgreSQL) names a pool in the connection. Aiven's
// PgBouncer listens on a port of its own; if Linode's API starts to report one, `port` and
// `uri` must take it. The credentials are the database's (the only ones the API serves);
// spec.username changes only the user of the pool's server connections.
//
// The credentials and certificate are read again only when the database or its `updated` time
// changes (a reset, a resize): the published Secret is reused otherwise.
import { decodeCaCertificate, type LinodeClient } from "../../linode/index.ts";
import type { ConnectionDetails, ConnectionSource, Managed, PublishedConnection } from "../../runtime/contract.ts";
import { nameWithSuffix } from "../shared/derived-label.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { credentialsOf } from "../managed-database/public.ts";
import type { ObservedPool, PoolObject, PoolStatus } from "./external.ts";
import type { DatabaseConnectionPoolSpec } from "./schema.ts";

const DATABASE_ID_ANNOTATION = "linode.operator.dev/database-id";
const CREDENTIALS_AS_OF_ANNOTATION = "linode.operator.dev/credentials-as-of";

export const poolSecretName = (m: { key: { name: string } }): string => nameWithSuffix(m.key.name, "-connection");

/** The pool's connection URI: TLS verified against ca.crt where the application mounts it (verify-full). */
export function poolUri(c: { username: string; password: string; host: string; port: number; dbname: string; caPath: string }): string {
  const auth = `${encodeURIComponent(c.username)}:${encodeURIComponent(c.password)}`;
  return `postgresql://${auth}@${c.host}:${String(c.port)}/${encodeURIComponent(c.dbname)}?sslmode=verify-full&sslrootcert=${encodeURIComponent(c.caPath).replace(/%2F/g, "/")}`;
}

/** The connection source of the pools of one account. */
export function poolConnection(linode: LinodeClient): ConnectionSource<DatabaseConnectionPoolSpec, PoolObject, PoolStatus> {
  return {
    secretName: poolSecretName,
    details: async (m: Managed<DatabaseConnectionPoolSpec>, observed: ObservedPool, published: PublishedConnection | undefined, signal: AbortSignal): Promise<ConnectionDetails | undefined> => {
      const { pool, database: db } = observed.external;
      const host = db.hosts.primary;
      if (host === null || db.port === null) return undefined;
      const current = published?.annotations[DATABASE_ID_ANNOTATION] === String(db.id) && published.annotations[CREDENTIALS_AS_OF_ANNOTATION] === db.updated;
      let creds = current ? credentialsOf(published) : undefined;
      if (creds === undefined) {
        // The API serves credentials only for an active database; until then what is published stays.
        if (db.status !== "active") return undefined;
        const api = linode.databases.postgresql;
        const [c, ssl] = await Promise.all([
          linodeCall("reading the credentials", () => api.getCredentials(db.id, { signal })),
          linodeCall("reading the CA certificate", () => api.getSslCertificate(db.id, { signal })),
        ]);
        creds = { username: c.username, password: c.password, caPem: ssl.caCertificate === null ? "" : decodeCaCertificate(ssl.caCertificate) };
      }
      const caPath = `/bindings/${m.key.name}/ca.crt`;
      return {
        type: "servicebinding.io/postgresql",
        data: {
          type: "postgresql", provider: "linode", host, port: String(db.port),
          username: creds.username, password: creds.password, database: pool.label,
          uri: poolUri({ ...creds, host, port: db.port, dbname: pool.label, caPath }),
          "ca.crt": creds.caPem,
        },
        annotations: { [DATABASE_ID_ANNOTATION]: String(db.id), [CREDENTIALS_AS_OF_ANNOTATION]: db.updated },
      };
    },
  };
}
