// docs/connection-urls.md, run: every extraData example in it is a spec the operator accepts,
// renders through the operator's own template code, and parses as its driver's URL or DSN with
// the Secret's host, port, user and password, server verification on, and the CA file where the
// documented Deployment mounts the Secret.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { connectionSecretData, type ConnectionInfo } from "../../src/resources/managed-database/connection-secret.ts";
import { managedDatabaseSpecSchema } from "../../src/resources/managed-database/schema.ts";

const doc = readFileSync(new URL("../../docs/connection-urls.md", import.meta.url), "utf8");
const blocks = (lang: string): string[] => [...doc.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "");

interface Manifest { kind: string; metadata: { name: string }; spec: Record<string, unknown> }
const manifests = blocks("yaml").map((b) => parse(b) as Manifest);
const databases = manifests.filter((m) => m.kind === "ManagedDatabase");
const deployment = manifests.find((m) => m.kind === "Deployment") as unknown as { spec: { template: { spec: { containers: { volumeMounts: { mountPath: string }[] }[] } } } };
const caFile = `${deployment.spec.template.spec.containers[0]?.volumeMounts[0]?.mountPath ?? "?"}/ca.crt`;

// A password as the API hands them out to a templated URL (the doc says an escaped one needs `uri`).
const info = (engine: ConnectionInfo["engine"], name: string): ConnectionInfo => ({
  engine, host: "a225891-akamai-prod-1934140-default.g2a.akamaidb.net", port: engine === "mysql" ? 3306 : 5432, username: engine === "valkey" ? "default" : "akmadmin",
  password: "Xk9sQ2mP7vLr4TnWb8Yc", caPem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", sslConnection: true,
  caPath: `/bindings/${name}/ca.crt`, secondaryHost: "replica-a225891-akamai-prod-1934140-default.g2a.akamaidb.net",
});

/** Query parameters that name the CA file, by driver. */
const caParams = ["serverSslCert", "sslrootcert", "sslcert", "sslca", "ssl_ca", "ssl-ca", "ssl_ca_certs"];
/** Query parameters that turn server verification on, and the values that do. */
const verifying: Record<string, string[]> = { sslMode: ["VERIFY_IDENTITY", "verify-full"], sslmode: ["verify-full"], "ssl-mode": ["VERIFY_IDENTITY"], ssl_mode: ["verify_identity"], sslaccept: ["strict"], ssl_cert_reqs: ["required"] };

interface Parsed { user: string; password: string; host: string; port: string; database: string; params: URLSearchParams }

/** A URL (jdbc: ones too, after the prefix) or a go-sql-driver/mysql DSN, as its driver splits it. */
function parseConnection(value: string): Parsed {
  const dsn = /^(?<user>[^:@/]+):(?<password>.*)@tcp\((?<host>[^:()]+):(?<port>\d+)\)\/(?<database>[^?]*)\?(?<query>.*)$/.exec(value)?.groups;
  if (dsn !== undefined) return { user: dsn.user ?? "", password: dsn.password ?? "", host: dsn.host ?? "", port: dsn.port ?? "", database: dsn.database ?? "", params: new URLSearchParams(dsn.query) };
  const url = new URL(value.replace(/^jdbc:/, ""));
  return {
    user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), host: url.hostname, port: url.port,
    database: url.pathname.slice(1), params: url.searchParams,
  };
}

describe("docs/connection-urls.md", () => {
  it("has a MySQL, a PostgreSQL and a Valkey example, and a Deployment mounting the Secret where the default caPath points", () => {
    expect(databases.map((d) => d.spec.engine).sort()).toEqual(["mysql", "postgresql", "valkey"]);
    for (const d of databases) expect(`/bindings/${d.metadata.name}/ca.crt`).toBe(caFile);
    expect(blocks("go").join("")).toContain(`os.ReadFile("${caFile}")`);
  });

  for (const db of databases) {
    const engine = db.spec.engine as ConnectionInfo["engine"];
    const extraData = (db.spec.connectionSecret as { extraData: Record<string, string> }).extraData;
    const c = info(engine, db.metadata.name);
    const data = connectionSecretData(c, extraData);

    it(`${engine}: the spec is one the operator accepts`, () => {
      expect(managedDatabaseSpecSchema.safeParse(db.spec).error?.issues).toBeUndefined();
    });

    it.each(Object.keys(extraData))(`${engine}: %s renders to a connection string with the Secret's values, verifying the server against the mounted CA`, (key) => {
      const value = data[key] ?? "";
      expect(value).not.toMatch(/\{\{|\}\}/);
      const p = parseConnection(value);
      // Valkey: Redis database 0 (it has no named database); a rediss:// URL.
      expect([p.host, p.port, p.database]).toEqual([key === "replica-url" ? c.secondaryHost : c.host, String(c.port), engine === "valkey" ? "0" : "defaultdb"]);
      if (engine === "valkey") expect(value).toMatch(/^rediss:\/\//);
      // JDBC URLs take the user and password from the Secret's own keys.
      if (!value.startsWith("jdbc:")) expect([p.user, p.password]).toEqual([c.username, c.password]);
      const ca = caParams.flatMap((name) => p.params.getAll(name));
      const modes = Object.entries(verifying).filter(([name, ok]) => ok.includes(p.params.get(name) ?? ""));
      if (p.params.get("tls") === "linode") return; // Go: the registered config carries the CA (checked above).
      if (p.params.has("trustCertificateKeyStoreUrl")) {
        expect(modes.map(([name]) => name)).toEqual(["sslMode"]);
        return; // Connector/J: the trust store built from ca.crt.
      }
      expect(ca).toEqual([caFile]);
      // PyMySQL verifies the chain and the host name whenever it is given a CA.
      if (!value.startsWith("mysql+pymysql://")) expect(modes).toHaveLength(1);
    });
  }

  it("uri stays right whatever the password holds, where a hand-written URL would not", () => {
    const c = { ...info("postgresql", "orders"), password: "p@ss/w:rd#1" };
    const data = connectionSecretData(c, { DATABASE_URL: "{{ .uri }}" });
    expect(parseConnection(data.DATABASE_URL ?? "").password).toBe(c.password);
  });
});
