import { describe, expect, it } from "vitest";
import { connectionSecretData, renderTemplate } from "../../src/resources/managed-database/connection-secret.ts";

const info = {
  engine: "postgresql" as const, host: "a1-akamai-prod-1-default.g2a.akamaidb.net", port: 18319, username: "akmadmin",
  password: "p@ss/w:rd", caPem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", sslConnection: true,
  caPath: "/bindings/orders/ca.crt",
};

describe("connection Secret data", () => {
  it("has the Service Binding keys, a URI that verifies the server against the mounted CA, an escaped password, and the CA", () => {
    const d = connectionSecretData(info);
    expect(d).toMatchObject({ type: "postgresql", provider: "linode", host: info.host, port: "18319", username: "akmadmin", password: info.password, "ca.crt": info.caPem });
    expect(d.uri).toBe(`postgresql://akmadmin:p%40ss%2Fw%3Ard@${info.host}:18319/defaultdb?sslmode=verify-full&sslrootcert=/bindings/orders/ca.crt`);
    expect(new URL(d.uri ?? "").password).toBe("p%40ss%2Fw%3Ard");
    expect(d["secondary-host"]).toBeUndefined();
  });

  it("adds the secondary host and MySQL's URI form (VERIFY_IDENTITY against the CA; no TLS parameters when the database has TLS off)", () => {
    const d = connectionSecretData({ ...info, engine: "mysql", secondaryHost: "replica-a1.example", sslConnection: false });
    expect(d["secondary-host"]).toBe("replica-a1.example");
    expect(d.uri).toMatch(/^mysql:\/\/akmadmin:.*@.*:18319\/defaultdb$/);
    const tls = connectionSecretData({ ...info, engine: "mysql", caPath: "/etc/my db/ca.crt" });
    expect(tls.uri).toMatch(/\/defaultdb\?ssl-mode=VERIFY_IDENTITY&ssl-ca=\/etc\/my%20db\/ca\.crt$/);
  });

  it("renders extra keys from templates and rejects unknown keys", () => {
    const d = connectionSecretData(info, { jdbcUrl: "jdbc:postgresql://{{ .host }}:{{ .port }}/{{ .database }}?ssl=true", ca: '{{ index . "ca.crt" }}' });
    expect(d.jdbcUrl).toBe(`jdbc:postgresql://${info.host}:18319/defaultdb?ssl=true`);
    expect(d.ca).toBe(info.caPem);
    expect(() => renderTemplate("{{ .nope }}", {})).toThrow(/unknown key "nope"/);
  });
});
