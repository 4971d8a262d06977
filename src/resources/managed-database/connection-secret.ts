// What an application pod mounts: keys of the Service Binding for Kubernetes spec (type,
// provider, host, port, username, password, uri) plus the CA certificate as PEM, so
// frameworks that bind Secrets (Spring Cloud Bindings, Quarkus, …) find what they expect.
// Values never pass through a logger.
import { renderTemplate } from "./secret-template.ts";

export interface ConnectionInfo {
  engine: "mysql" | "postgresql";
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

/** The Service Binding spec's Secret type for a provisioned database. */
export const bindingSecretType = (engine: ConnectionInfo["engine"]): string => `servicebinding.io/${engine}`;

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
  const hostPort = `${c.host}:${String(c.port)}`;
  if (c.engine === "mysql") {
    return `mysql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? `?ssl-mode=VERIFY_IDENTITY&ssl-ca=${queryPath(c.caPath)}` : ""}`;
  }
  return `postgresql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? `?sslmode=verify-full&sslrootcert=${queryPath(c.caPath)}` : ""}`;
}

export function connectionSecretData(c: ConnectionInfo, extraData: Record<string, string> = {}): Record<string, string> {
  const data: Record<string, string> = {
    type: c.engine,
    provider: "linode",
    host: c.host,
    port: String(c.port),
    username: c.username,
    password: c.password,
    database: DEFAULT_DATABASE,
    uri: connectionUri(c),
    "ca.crt": c.caPem,
  };
  if (c.secondaryHost !== undefined && c.secondaryHost !== "") data["secondary-host"] = c.secondaryHost;
  // Templates read the standard keys only: one entry never depends on another's order or value.
  const standard = { ...data };
  for (const [key, template] of Object.entries(extraData)) data[key] = renderTemplate(key, template, standard);
  return data;
}
