// The connection Secret's credentials read anew, against the emulator over HTTP. The API's
// `updated` has one-second resolution, so a change later in the second a read saw (a reset's
// new password appearing, or a second reset: one a killed replica sent, and its successor's)
// leaves it unmoved. Credentials read anew for a database already published (after a reset of
// ours, or `updated` moved) are trusted only once a read at least a second after the first
// agrees; confirmed, an unchanged `updated` costs no read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeError, type Database, type LinodeClient } from "../../src/linode/index.ts";
import { DatabaseConnection } from "../../src/resources/managed-database/connection.ts";
import type { ManagedDatabaseSpec } from "../../src/resources/managed-database/schema.ts";
import type { Managed, Observed, PublishedConnection } from "../../src/runtime/managed.ts";
import { eventually, label, makeClient, metricValue, startTestEmulator, TOKEN, type Emulator } from "./helpers.ts";

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

const UNCONFIRMED = "linode.operator.dev/credentials-unconfirmed";

/** A Secret published for this database as of its `updated` (or `asOf`), r1's new password read into it `readAgo` ms ago, unconfirmed. */
function published(secret: string, readAgo: number, extra: Record<string, string> = {}, asOf = db.updated): PublishedConnection {
  return {
    data: { username: "linroot", password: secret, "ca.crt": caPem },
    annotations: {
      "linode.operator.dev/database-id": String(db.id), "linode.operator.dev/credentials-as-of": asOf,
      "linode.operator.dev/credentials-reset": "r1", "linode.operator.dev/credentials-read-at": String(Date.now() - readAgo), [UNCONFIRMED]: "true", ...extra,
    },
  };
}

/** The same, confirmed. */
function confirmedPublished(secret: string, readAgo: number, asOf = db.updated): PublishedConnection {
  const p = published(secret, readAgo, {}, asOf);
  return { ...p, annotations: { ...p.annotations, [UNCONFIRMED]: "false" } };
}

/** The emulator's clock (its answers' Date header), to the second. */
async function emulatorNow(): Promise<number> {
  const res = await fetch(`${emu.url}/databases/mysql/instances/${db.id}/credentials`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await res.arrayBuffer();
  return Date.parse(res.headers.get("date") ?? "");
}

const credentialReads = (): Promise<number> => metricValue(tc.registry, "linode_api_requests_total", { route: "/databases/mysql/instances/{instanceId}/credentials", method: "GET" });

async function look(m: Managed<ManagedDatabaseSpec>, p: PublishedConnection, external: Database = db): Promise<{ password: string | undefined; annotations: Record<string, string>; reads: number }> {
  const before = await credentialReads();
  const details = await new DatabaseConnection(client).details(m, { external } as Observed<Database, never>, p, AbortSignal.timeout(10_000));
  return { password: details?.data.password, annotations: details?.annotations ?? {}, reads: (await credentialReads()) - before };
}

describe("credentials read anew are confirmed a second later", () => {
  it("a second change behind an unmoved `updated` is read a second after the first read: a reset's password is not trusted until confirmed", async () => {
    const got = await look(managed(5_000), published("a-password-since-replaced", 1_500));
    expect(got).toMatchObject({ password, reads: 1 });
    // Changed: confirmed only by a read a second from now.
    expect(got.annotations[UNCONFIRMED]).toBe("true");
  });

  it("within a second of their first read, unconfirmed credentials are not read again; a second later they are, and confirmed", async () => {
    const soon = await look(managed(5_000), published(password, 200));
    expect(soon).toMatchObject({ password, reads: 0 });
    expect(soon.annotations[UNCONFIRMED]).toBe("true");
    const later = await look(managed(5_000), published(password, 1_500));
    expect(later).toMatchObject({ password, reads: 1 });
    expect(later.annotations[UNCONFIRMED]).toBe("false");
  });

  it("`updated` moved with no reset of ours and the password unchanged (a reset in flight, or a backup), read within two seconds of it: unconfirmed until a read a second later", async () => {
    // `updated` as the API would write it this very second (its clock is the emulator's, and the
    // Date header says so); the clock stands still meanwhile, so a slow machine cannot move the read on.
    emu.setTimeScale(0);
    let moved: Awaited<ReturnType<typeof look>>;
    let justNow: Database;
    try {
      justNow = { ...db, updated: new Date(await emulatorNow()).toISOString().slice(0, 19) };
      moved = await look(managed(10 * 60_000), confirmedPublished(password, 60_000, "2020-01-01T00:00:00"), justNow);
    } finally {
      emu.setTimeScale(1);
    }
    expect(moved).toMatchObject({ password, reads: 1 });
    expect(moved.annotations[UNCONFIRMED]).toBe("true");
    expect(moved.annotations["linode.operator.dev/credentials-as-of"]).toBe(justNow.updated);
  });

  it("`updated` moved with no reset of ours, the API serving the read seconds after it: one read, confirmed by it", async () => {
    const earlier = { ...db, updated: new Date((await emulatorNow()) - 5_000).toISOString().slice(0, 19) };
    const moved = await look(managed(10 * 60_000), confirmedPublished(password, 60_000, "2020-01-01T00:00:00"), earlier);
    expect(moved).toMatchObject({ password, reads: 1 });
    expect(moved.annotations[UNCONFIRMED]).toBe("false");
    expect(moved.annotations["linode.operator.dev/credentials-as-of"]).toBe(earlier.updated);
    // Confirmed: the next pass at the same `updated` reads nothing.
    const published = { data: { username: "linroot", password, "ca.crt": caPem }, annotations: moved.annotations };
    expect(await look(managed(10 * 60_000), published, earlier)).toMatchObject({ password, reads: 0 });
  });

  it("confirmed, an unchanged `updated` is trusted: no read, within the window after a reset or outside it", async () => {
    const p = confirmedPublished("as-published", 0);
    expect(await look(managed(5_000), p)).toMatchObject({ password: "as-published", reads: 0 });
    expect(await look(managed(10 * 60_000), p)).toMatchObject({ password: "as-published", reads: 0 });
  });

  it("a read-at annotation someone set in the future does not put the confirming read off", async () => {
    const before = Date.now();
    const got = await look(managed(5_000), published(password, -3_600_000));
    expect(got).toMatchObject({ password, reads: 1 });
    // Replaced by the time of this read: the read a second from now confirms, not one an hour on.
    expect(Number(got.annotations["linode.operator.dev/credentials-read-at"])).toBeGreaterThanOrEqual(before);
    expect(Number(got.annotations["linode.operator.dev/credentials-read-at"])).toBeLessThanOrEqual(Date.now());
  });

  it("a read-at annotation someone wrote that is not a time is read past, confirms nothing and becomes the time of this read", async () => {
    const before = Date.now();
    const got = await look(managed(5_000), published(password, 0, { "linode.operator.dev/credentials-read-at": "not-a-time" }));
    expect(got).toMatchObject({ password, reads: 1 });
    expect(got.annotations[UNCONFIRMED]).toBe("true");
    expect(Number(got.annotations["linode.operator.dev/credentials-read-at"])).toBeGreaterThanOrEqual(before);
  });
});

describe("a database's first credentials and CA certificate, split by the call budget", () => {
  it("the CA certificate goes first; held back after it, the credentials are read alone by the next pass: neither is read twice", async () => {
    const api = client.databases.engine("mysql");
    let holdBack = true;
    const calls: string[] = [];
    // The operator's own budget taking the certificate's call and holding the credentials' back unsent.
    const split = {
      databases: {
        engine: () => ({
          getSslCertificate: (...a: Parameters<typeof api.getSslCertificate>) => { calls.push("ca"); return api.getSslCertificate(...a); },
          getCredentials: (...a: Parameters<typeof api.getCredentials>) => {
            calls.push("credentials");
            if (!holdBack) return api.getCredentials(...a);
            holdBack = false;
            return Promise.reject(new LinodeError("GET credentials: the call budget is spent for 40 s", { kind: "rateLimited", method: "GET", route: "/databases/mysql/instances/{instanceId}/credentials", retryAfterMs: 40_000, neverSent: true }));
          },
        }),
      },
    } as unknown as LinodeClient;
    const connection = new DatabaseConnection(split);
    const first = connection.details(managed(10 * 60_000), { external: db } as Observed<Database, never>, undefined, AbortSignal.timeout(10_000));
    await expect(first).rejects.toMatchObject({ reason: "RateLimited" });
    expect(calls).toEqual(["ca", "credentials"]);
    expect(connection.keptCaCertificates).toBe(1);
    const second = await connection.details(managed(10 * 60_000), { external: db } as Observed<Database, never>, undefined, AbortSignal.timeout(10_000));
    expect(calls).toEqual(["ca", "credentials", "credentials"]);
    expect(second?.data).toMatchObject({ password, "ca.crt": caPem });
    expect(connection.keptCaCertificates).toBe(0);
  });
});
