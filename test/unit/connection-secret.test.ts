import { describe, expect, it } from "vitest";
import { bindingSecretType, connectionSecretData } from "../../src/resources/managed-database/connection-secret.ts";
import { managedDatabaseSpecSchema } from "../../src/resources/managed-database/schema.ts";

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

  it("Valkey is bound as Redis: type redis, no database, a rediss:// uri a Redis client parses; only a password when it has no user", () => {
    const d = connectionSecretData({ ...info, engine: "valkey", username: "default" });
    expect(d).toEqual({ type: "redis", provider: "linode", host: info.host, port: "18319", username: "default", password: info.password, uri: `rediss://default:p%40ss%2Fw%3Ard@${info.host}:18319`, "ca.crt": info.caPem });
    expect(bindingSecretType("valkey")).toBe("servicebinding.io/redis");
    const url = new URL(d.uri ?? "");
    expect([url.protocol, url.hostname, url.port, decodeURIComponent(url.password)]).toEqual(["rediss:", info.host, "18319", info.password]);
    const anonymous = connectionSecretData({ ...info, engine: "valkey", username: "" });
    expect(anonymous.username).toBeUndefined();
    expect(anonymous.uri).toBe(`rediss://:p%40ss%2Fw%3Ard@${info.host}:18319`);
    expect(() => connectionSecretData({ ...info, engine: "valkey" }, { url: "{{ .database }}" })).toThrow(/names no key|not in this database's Secret/);
  });

  it("renders extra keys from templates and rejects unknown keys", () => {
    const d = connectionSecretData(info, { jdbcUrl: "jdbc:postgresql://{{ .host }}:{{ .port }}/{{ .database }}?ssl=true", ca: '{{ index . "ca.crt" }}' });
    expect(d.jdbcUrl).toBe(`jdbc:postgresql://${info.host}:18319/defaultdb?ssl=true`);
    expect(d.ca).toBe(info.caPem);
    expect(() => connectionSecretData(info, { url: "{{ .nope }}" })).toThrow('connectionSecret.extraData[url]: {{ .nope }} names no key of the connection Secret');
  });

  it("a template reads the standard keys only, whatever order the entries come in", () => {
    const d = connectionSecretData(info, { uri: "x://{{ .host }}", copy: "{{ .uri }}" });
    expect(d.uri).toBe(`x://${info.host}`);
    expect(d.copy).toMatch(/^postgresql:\/\//);
    expect(() => connectionSecretData(info, { a: "1", b: "{{ .a }}" })).toThrow(/extraData\[b\]: \{\{ \.a \}\} names no key/);
  });

  it("a key only some databases have is refused, naming the entry, where this one lacks it", () => {
    expect(connectionSecretData({ ...info, secondaryHost: "standby.example" }, { ro: '{{ index . "secondary-host" }}:{{ .port }}' }).ro).toBe("standby.example:18319");
    expect(() => connectionSecretData(info, { ro: '{{ index . "secondary-host" }}' })).toThrow('connectionSecret.extraData[ro]: the key "secondary-host" is not in this database\'s Secret');
  });

  // Forms a Go template would take (or choke on) but the operator does not render: each is refused
  // naming its key, by the spec's parser (InvalidSpec before anything is done) and by rendering.
  const refused: [string, string, RegExp][] = [
    ["a pipe", "{{ .host | upper }}", /\{\{ \.host \| upper \}\} is not a supported form/],
    ["a function call", '{{ printf "%s" .host }}', /is not a supported form/],
    ["a trim marker", "{{- .host -}}", /is not a supported form/],
    ["an unknown key", "{{ .hostname }}", /names no key of the connection Secret/],
    ["a dotted key without index", "{{ .ca.crt }}", /is not a supported form/],
    ["an unclosed action", "jdbc:mysql://{{ .host }:3306", /"\{\{" at offset 13 is never closed/],
    ["a close with no open", "jdbc:mysql://{ .host }}:3306", /"\}\}" at offset 21 closes no "\{\{"/],
    ["a triple brace", "{{{ .host }}}", /is not a supported form/],
    ["a comment", "{{/* note */}}", /is not a supported form/],
  ];
  it.each(refused)("refuses %s, naming the key, and never writes it into the Secret", (_what, template, message) => {
    expect(() => connectionSecretData(info, { url: template })).toThrow(message);
    expect(() => connectionSecretData(info, { url: template })).toThrow('connectionSecret.extraData[url]: ');
    const parsed = managedDatabaseSpecSchema.safeParse({ engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", connectionSecret: { extraData: { fine: "{{ .host }}", url: template } } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([["connectionSecret.extraData.url", expect.stringMatching(message)]]);
  });

  it("text braces that are not {{ or }} stay as they are", () => {
    const d = connectionSecretData(info, { json: '{"host":"{{ .host }}","port":{{ .port }}}' });
    expect(d.json).toBe(`{"host":"${info.host}","port":18319}`);
    expect(JSON.parse(d.json ?? "")).toEqual({ host: info.host, port: 18319 });
  });
});
