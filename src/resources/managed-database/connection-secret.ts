// What an application pod mounts: keys of the Service Binding for Kubernetes spec (type,
// provider, host, port, username, password, uri) plus the CA certificate as PEM, so
// frameworks that bind Secrets (Spring Cloud Bindings, Quarkus, …) find what they expect.
// Valkey speaks the Redis protocol: its Secret is the spec's `redis` type (no database name; a
// rediss:// uri, the server verified against ca.crt by the client's TLS settings, as Redis URIs
// carry no CA path). Values never pass through a logger.
import { renderTemplate } from "./secret-template.ts";

export interface ConnectionInfo {
  engine: "mysql" | "postgresql" | "valkey";
  host: string;
  port: number;
  username: string;
  password: string;
  caPem: string;
  secondaryHost?: string | undefined;
  sslConnection: boolean;
  /** Where the application finds ca.crt (for the uri's server verification). */
  caPath: string;
}

/** The Service Binding `type` of an engine: Valkey is bound as Redis, which its clients speak. */
const bindingType = (engine: ConnectionInfo["engine"]): string => (engine === "valkey" ? "redis" : engine);

/** The Service Binding spec's Secret type for a provisioned database. */
export const bindingSecretType = (engine: ConnectionInfo["engine"]): string => `servicebinding.io/${bindingType(engine)}`;

/** A path as a query value: readable (slashes kept), anything else that needs it escaped. */
const queryPath = (path: string): string => encodeURIComponent(path).replace(/%2F/g, "/");

/** Linode managed clusters are created with one database of this name. */
const DEFAULT_DATABASE = "defaultdb";

/**
 * The connection URI. With TLS it verifies the server against ca.crt where the application
 * mounts it (its certificate chain and its hostname): verify-full / VERIFY_IDENTITY, not the
 * encryption-only require / REQUIRED.
 */
export function connectionUri(c: ConnectionInfo): string {
  const auth = `${encodeURIComponent(c.username)}:${encodeURIComponent(c.password)}`;
  // Redis URIs allow no user (`rediss://:password@host`): a Valkey database may have only a password.
  const hostPort = `${c.host}:${String(c.port)}`;
  if (c.engine === "valkey") return `${c.sslConnection ? "rediss" : "redis"}://${auth}@${hostPort}`;
  if (c.engine === "mysql") {
    return `mysql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? `?ssl-mode=VERIFY_IDENTITY&ssl-ca=${queryPath(c.caPath)}` : ""}`;
  }
  return `postgresql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? `?sslmode=verify-full&sslrootcert=${queryPath(c.caPath)}` : ""}`;
}

export function connectionSecretData(c: ConnectionInfo, extraData: Record<string, string> = {}): Record<string, string> {
  const data: Record<string, string> = {
    type: bindingType(c.engine),
    provider: "linode",
    host: c.host,
    port: String(c.port),
    ...(c.engine !== "valkey" || c.username !== "" ? { username: c.username } : {}),
    password: c.password,
    ...(c.engine !== "valkey" ? { database: DEFAULT_DATABASE } : {}),
    uri: connectionUri(c),
    "ca.crt": c.caPem,
  };
  if (c.secondaryHost !== undefined && c.secondaryHost !== "") data["secondary-host"] = c.secondaryHost;
  // Templates read the standard keys only: one entry never depends on another's order or value.
  const standard = { ...data };
  for (const [key, template] of Object.entries(extraData)) data[key] = renderTemplate(key, template, standard);
  return data;
}
