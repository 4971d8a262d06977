// What the connection Secret of a ManagedDatabase holds, and where its credentials come from:
// the published Secret while it is known to be current (same database, no reset just made),
// else the API's credentials and CA certificate. The runtime writes and reads back the Secret.
import type { Database, LinodeClient } from "../../linode/index.ts";
import { decodeCaCertificate } from "../../linode/index.ts";
import { TerminalError } from "../../runtime/errors.ts";
import type { ConnectionDetails, ConnectionSource, Managed, Observed, PublishedConnection } from "../../runtime/managed.ts";
import { ConditionReasons as R } from "../../runtime/reasons.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { connectionSecretData } from "./connection-secret.ts";
import type { ObservedStatus } from "./external.ts";
import { resetIsRecent } from "./requests.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

/** Which database the published credentials belong to. */
const DATABASE_ID_ANNOTATION = "linode.operator.dev/database-id";

interface Credentials { username: string; password: string; caPem: string }

export class DatabaseConnection implements ConnectionSource<ManagedDatabaseSpec, Database, ObservedStatus> {
  private readonly linode: LinodeClient;

  constructor(linode: LinodeClient) {
    this.linode = linode;
  }

  secretName(m: Managed<ManagedDatabaseSpec>): string {
    return m.spec.connectionSecret?.name ?? `${m.key.name}-connection`;
  }

  async details(m: Managed<ManagedDatabaseSpec>, observed: Observed<Database, ObservedStatus>, published: PublishedConnection | undefined, signal: AbortSignal): Promise<ConnectionDetails | undefined> {
    const db = observed.external;
    const host = db.hosts.primary;
    if (host === null || db.port === null) return undefined;
    let creds = published?.annotations[DATABASE_ID_ANNOTATION] === String(db.id) && !resetIsRecent(m) ? credentialsOf(published) : undefined;
    if (creds === undefined) {
      // The API serves credentials only for an active database; until then what is published stays.
      if (db.status !== "active") return undefined;
      const api = this.linode.databases.engine(m.spec.engine);
      const [c, ssl] = await Promise.all([
        linodeCall("reading the credentials", () => api.getCredentials(db.id, { signal })),
        linodeCall("reading the CA certificate", () => api.getSslCertificate(db.id, { signal })),
      ]);
      creds = { username: c.username, password: c.password, caPem: ssl.caCertificate === null ? "" : decodeCaCertificate(ssl.caCertificate) };
    }
    let data: Record<string, string>;
    try {
      data = connectionSecretData({
        engine: m.spec.engine, host, port: db.port, ...creds, sslConnection: db.sslConnection,
        ...(db.hosts.secondary !== null ? { secondaryHost: db.hosts.secondary } : {}),
      }, m.spec.connectionSecret?.extraData);
    } catch (err) {
      throw new TerminalError(R.InvalidSpec, (err as Error).message);
    }
    return {
      data,
      ...(m.spec.connectionSecret?.labels !== undefined ? { labels: m.spec.connectionSecret.labels } : {}),
      annotations: { ...m.spec.connectionSecret?.annotations, [DATABASE_ID_ANNOTATION]: String(db.id) },
    };
  }
}

function credentialsOf(published: PublishedConnection | undefined): Credentials | undefined {
  const d = published?.data;
  const username = d?.username;
  const password = d?.password;
  const caPem = d?.["ca.crt"];
  return username !== undefined && password !== undefined && caPem !== undefined ? { username, password, caPem } : undefined;
}
