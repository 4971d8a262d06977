// The connection Secret's credentials after a reset, against the emulator over HTTP. The API's
// `updated` has one-second resolution, so two password changes within one second (two resets
// landing close together: one a killed replica sent, and its successor's) leave it as it was
// after the first: within the window after a reset the credentials are read on every look,
// never trusted by `updated`. Outside it, an unchanged `updated` costs no read.
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

beforeAll(async () => {
  emu = await startTestEmulator();
  tc = makeClient(emu);
  client = tc.client;
  const api = client.databases.engine("mysql");
  const made = await api.create({ label: label("reset-read"), region: "us-east", type: "g6-nanode-1", version: "8", clusterSize: 1 });
  db = await eventually(async () => { const d = await api.get(made.id); return d.status === "active" ? d : undefined; }, 60_000);
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

/** A Secret published for this database as of its `updated` and reset r1, holding a password the database no longer has. */
async function stalePublished(): Promise<PublishedConnection> {
  const api = client.databases.engine("mysql");
  const ssl = await api.getSslCertificate(db.id);
  const creds = await api.getCredentials(db.id);
  return {
    data: { username: creds.username, password: "a-password-since-replaced", "ca.crt": ssl.caCertificate === null ? "" : Buffer.from(ssl.caCertificate, "base64").toString() },
    annotations: { "linode.operator.dev/database-id": String(db.id), "linode.operator.dev/credentials-as-of": db.updated, "linode.operator.dev/credentials-reset": "r1" },
  };
}

const credentialReads = (): Promise<number> => metricValue(tc.registry, "linode_api_requests_total", { route: "/databases/mysql/instances/{instanceId}/credentials", method: "GET" });

describe("credentials after a reset", () => {
  it("within the window after a reset, they are read though `updated` has not moved", async () => {
    const published = await stalePublished();
    const current = (await client.databases.engine("mysql").getCredentials(db.id)).password;
    const reads = await credentialReads();
    const details = await new DatabaseConnection(client).details(managed(5_000), { external: db } as Observed<Database, never>, published, AbortSignal.timeout(10_000));
    expect(details?.data.password).toBe(current);
    expect(await credentialReads()).toBe(reads + 1);
  });

  it("outside it, an unchanged `updated` is trusted: no read", async () => {
    const published = await stalePublished();
    const reads = await credentialReads();
    const details = await new DatabaseConnection(client).details(managed(10 * 60_000), { external: db } as Observed<Database, never>, published, AbortSignal.timeout(10_000));
    expect(details?.data.password).toBe("a-password-since-replaced");
    expect(await credentialReads()).toBe(reads);
  });
});
