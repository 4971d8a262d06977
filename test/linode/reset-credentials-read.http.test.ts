// The connection Secret's credentials after a reset, against the emulator over HTTP. The API's
// `updated` has one-second resolution, so two password changes within one second (two resets
// landing close together: one a killed replica sent, and its successor's) leave it as it was
// after the first. Within the window after a reset, the new password is trusted only once a
// read at least a second after it was first read finds it unchanged; from then on (and
// outside the window) an unchanged `updated` costs no read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, LinodeClient } from "../../src/linode/index.ts";
import { DatabaseConnection } from "../../src/resources/managed-database/connection.ts";
import type { ManagedDatabaseSpec } from "../../src/resources/managed-database/schema.ts";
import type { Managed, Observed, PublishedConnection } from "../../src/runtime/managed.ts";
import { eventually, label, makeClient, metricValue, startTestEmulator, type Emulator } from "./helpers.ts";

let emu: Emulator;
let tc: ReturnType<typeof makeClient>;
let client: LinodeClient;
let db: Database;
let password: string;
let caPem: string;

beforeAll(async () => {
  emu = await startTestEmulator();
  tc = makeClient(emu);
  client = tc.client;
  const api = client.databases.engine("mysql");
  const made = await api.create({ label: label("reset-read"), region: "us-east", type: "g6-nanode-1", version: "8", clusterSize: 1 });
  db = await eventually(async () => { const d = await api.get(made.id); return d.status === "active" ? d : undefined; }, 60_000);
  password = (await api.getCredentials(db.id)).password;
  const ssl = await api.getSslCertificate(db.id);
  caPem = ssl.caCertificate === null ? "" : Buffer.from(ssl.caCertificate, "base64").toString();
});

afterAll(async () => {
  await client.close();
  await emu.close();
});

/** A ManagedDatabase whose last credentials reset (token r1) was recorded `ago` milliseconds ago. */
function managed(ago: number): Managed<ManagedDatabaseSpec> {
  const completedAt = new Date(Date.now() - ago).toISOString().slice(0, 19) + "Z";
  return {
    key: { namespace: "team", name: "db" },
    spec: { engine: "mysql" },
    obj: { metadata: { name: "db", namespace: "team" }, spec: {}, status: { lastRequests: { resetCredentials: { token: "r1", completedAt } } } },
  } as unknown as Managed<ManagedDatabaseSpec>;
}

/** A Secret published for this database as of its `updated`, r1's new password seen in it `readAgo` ms ago. */
function published(secret: string, readAgo: number, extra: Record<string, string> = {}): PublishedConnection {
  return {
    data: { username: "linroot", password: secret, "ca.crt": caPem },
    annotations: {
      "linode.operator.dev/database-id": String(db.id), "linode.operator.dev/credentials-as-of": db.updated,
      "linode.operator.dev/credentials-reset": "r1", "linode.operator.dev/credentials-read-at": String(Date.now() - readAgo), ...extra,
    },
  };
}

const credentialReads = (): Promise<number> => metricValue(tc.registry, "linode_api_requests_total", { route: "/databases/mysql/instances/{instanceId}/credentials", method: "GET" });

async function look(m: Managed<ManagedDatabaseSpec>, p: PublishedConnection): Promise<{ password: string | undefined; annotations: Record<string, string>; reads: number }> {
  const before = await credentialReads();
  const details = await new DatabaseConnection(client).details(m, { external: db } as Observed<Database, never>, p, AbortSignal.timeout(10_000));
  return { password: details?.data.password, annotations: details?.annotations ?? {}, reads: (await credentialReads()) - before };
}

describe("credentials after a reset", () => {
  it("a second change behind an unmoved `updated` is read: the reset's password is not trusted until confirmed", async () => {
    const got = await look(managed(5_000), published("a-password-since-replaced", 0));
    expect(got).toMatchObject({ password, reads: 1 });
    expect(got.annotations["linode.operator.dev/credentials-reset-confirmed"]).toBeUndefined();
  });

  it("a read less than a second after the new password was first read does not confirm it; one a second later does", async () => {
    const soon = await look(managed(5_000), published(password, 200));
    expect(soon).toMatchObject({ password, reads: 1 });
    expect(soon.annotations["linode.operator.dev/credentials-reset-confirmed"]).toBeUndefined();
    const later = await look(managed(5_000), published(password, 1_500));
    expect(later).toMatchObject({ password, reads: 1 });
    expect(later.annotations["linode.operator.dev/credentials-reset-confirmed"]).toBe("r1");
  });

  it("once confirmed, and outside the window, an unchanged `updated` is trusted: no read", async () => {
    const confirmed = await look(managed(5_000), published("as-published", 0, { "linode.operator.dev/credentials-reset-confirmed": "r1" }));
    expect(confirmed).toMatchObject({ password: "as-published", reads: 0 });
    const outside = await look(managed(10 * 60_000), published("as-published", 0));
    expect(outside).toMatchObject({ password: "as-published", reads: 0 });
  });

  it("a read-at annotation someone wrote that is not a time confirms nothing and becomes the time of this read", async () => {
    const before = Date.now();
    const got = await look(managed(5_000), published(password, 0, { "linode.operator.dev/credentials-read-at": "not-a-time" }));
    expect(got).toMatchObject({ password, reads: 1 });
    expect(got.annotations["linode.operator.dev/credentials-reset-confirmed"]).toBeUndefined();
    expect(Number(got.annotations["linode.operator.dev/credentials-read-at"])).toBeGreaterThanOrEqual(before);
  });
});
