// What an application pod mounts: keys of the Service Binding for Kubernetes spec (type,
// provider, host, port, username, password, uri) plus the CA certificate as PEM, so
// frameworks that bind Secrets (Spring Cloud Bindings, Quarkus, …) find what they expect.
// Values never pass through a logger.

export interface ConnectionInfo {
  engine: "mysql" | "postgresql";
  host: string;
  port: number;
  username: string;
  password: string;
  caPem: string;
  secondaryHost?: string | undefined;
  sslConnection: boolean;
}

/** Linode managed clusters are created with one database of this name. */
const DEFAULT_DATABASE = "defaultdb";

export function connectionUri(c: ConnectionInfo): string {
  const auth = `${encodeURIComponent(c.username)}:${encodeURIComponent(c.password)}`;
  const hostPort = `${c.host}:${String(c.port)}`;
  if (c.engine === "mysql") {
    return `mysql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? "?ssl-mode=REQUIRED" : ""}`;
  }
  return `postgresql://${auth}@${hostPort}/${DEFAULT_DATABASE}${c.sslConnection ? "?sslmode=require" : ""}`;
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
  for (const [key, template] of Object.entries(extraData)) data[key] = renderTemplate(template, data);
  return data;
}

/**
 * Renders `{{ .key }}` placeholders from the standard keys (keys with dots or dashes as
 * `{{ index . "ca.crt" }}`), so users can add e.g. a JDBC URL without a sidecar.
 */
export function renderTemplate(template: string, data: Record<string, string>): string {
  return template.replace(/\{\{\s*(?:\.([A-Za-z0-9_]+)|index\s+\.\s+"([^"]+)")\s*\}\}/g, (whole, dotted: string | undefined, indexed: string | undefined) => {
    const key = dotted ?? indexed ?? "";
    const v = data[key];
    if (v === undefined) throw new Error(`connectionSecret template refers to unknown key "${key}" in ${whole}`);
    return v;
  });
}
