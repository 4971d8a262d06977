// ManagedDatabase CRD on the real API server: every schema/CEL rule rejects a bad spec with
// a clear message and accepts a good one; defaults match zod (those adoption initializes are
// zod's only, so the stored spec says what was written); immutable fields stay put.
import { beforeAll, describe, expect, it } from "vitest";
import { managedDatabaseSpecSchema } from "../../../src/resources/managed-database/schema.ts";
import { useTestCluster } from "../../harness/cluster.ts";
import { installCrds } from "../../harness/crds.ts";
import { customObjects, managedDatabase as kind, withSpec } from "./custom-objects.ts";

const base = { engine: "mysql", version: "8.0", region: "us-east", type: "g6-dedicated-2" };
const pg3 = { ...base, engine: "postgresql", version: "16", clusterSize: 3 };
const window = { frequency: "weekly", duration: 3, hourOfDay: 2, dayOfWeek: 7 };

describe("ManagedDatabase CRD", () => {
  const cluster = useTestCluster("crds-mdb");
  const api = customObjects(cluster);
  let n = 0;
  const dryRun = (spec: Record<string, unknown>) => api.create(kind, `dry-${String(n++)}`, spec, { dryRun: true });

  beforeAll(async () => { await installCrds(cluster); });

  describe("rejects a bad spec with a clear message", () => {
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["missing engine", { engine: undefined }, ["spec.engine: Required value"]],
      ["unknown engine", { engine: "mongodb" }, ["spec.engine: Unsupported value: \"mongodb\"", "\"mysql\", \"postgresql\""]],
      ["version that is not a version", { version: "latest" }, ["spec.version in body should match"]],
      ["region with spaces", { region: "US East" }, ["spec.region in body should match"]],
      ["label shorter than 3", { label: "ab" }, ["spec.label in body should be at least 3 chars long"]],
      ["label longer than 32", { label: "a".repeat(33) }, ["spec.label", "32"]],
      ["clusterSize 4", { clusterSize: 4 }, ["spec.clusterSize: Unsupported value: 4", "supported values: \"1\", \"2\", \"3\""]],
      ["unknown replicationType", { replicationType: "sync" }, ["spec.replicationType: Unsupported value: \"sync\""]],
      ["semi_synch on PostgreSQL", { ...pg3, replicationType: "semi_synch" }, ["spec.replicationType", "semi_synch is MySQL only"]],
      ["asynch on a 1-node cluster", { replicationType: "asynch" }, ["spec.replicationType", "must be none for a 1-node cluster"]],
      ["none on a 3-node cluster", { clusterSize: 3, replicationType: "none" }, ["spec.replicationType", "must be none for a 1-node cluster, and asynch (or semi_synch for MySQL) for a 2- or 3-node cluster"]],
      ["replicationCommitType on MySQL", { replicationCommitType: "local" }, ["spec.replicationCommitType", "PostgreSQL only"]],
      ["unknown replicationCommitType", { ...pg3, replicationCommitType: "sync" }, ["spec.replicationCommitType: Unsupported value"]],
      ["remote_apply with explicit asynch", { ...pg3, replicationType: "asynch", replicationCommitType: "remote_apply" }, ["spec.replicationCommitType", "local or off with asynch"]],
      ["on with implied asynch (3-node PostgreSQL)", { ...pg3, replicationCommitType: "on" }, ["local or off with asynch"]],
      ["allowList entry that is not an address", { allowList: ["not-an-ip"] }, ["spec.allowList[0]", "IP addresses or CIDR ranges"]],
      ["allowList prefix too long", { allowList: ["10.0.0.0/33"] }, ["spec.allowList[0]", "IP addresses or CIDR ranges"]],
      ["allowList octet out of range", { allowList: ["203.0.113.256"] }, ["IP addresses or CIDR ranges"]],
      ["allowList duplicate", { allowList: ["203.0.113.7", "203.0.113.7"] }, ["spec.allowList[1]: Duplicate value"]],
      ["maintenance hour 24", { updates: { ...window, hourOfDay: 24 } }, ["spec.updates.hourOfDay", "less than or equal to 23"]],
      ["maintenance day 0", { updates: { ...window, dayOfWeek: 0 } }, ["spec.updates.dayOfWeek", "greater than or equal to 1"]],
      ["maintenance day 8", { updates: { ...window, dayOfWeek: 8 } }, ["spec.updates.dayOfWeek", "less than or equal to 7"]],
      ["maintenance duration 0", { updates: { ...window, duration: 0 } }, ["spec.updates.duration", "greater than or equal to 1"]],
      ["maintenance duration 5", { updates: { ...window, duration: 5 } }, ["spec.updates.duration", "less than or equal to 4"]],
      ["maintenance frequency daily", { updates: { ...window, frequency: "daily" } }, ["spec.updates.frequency: Unsupported value"]],
      ["monthly without weekOfMonth", { updates: { ...window, frequency: "monthly" } }, ["spec.updates.weekOfMonth", "required when frequency is monthly"]],
      ["weekly with weekOfMonth", { updates: { ...window, weekOfMonth: 2 } }, ["spec.updates.weekOfMonth", "omitted when frequency is weekly"]],
      ["weekOfMonth 5", { updates: { ...window, frequency: "monthly", weekOfMonth: 5 } }, ["spec.updates.weekOfMonth", "less than or equal to 4"]],
      ["maintenance window without hour", { updates: { frequency: "weekly", duration: 1, dayOfWeek: 1 } }, ["spec.updates.hourOfDay: Required value"]],
      ["deletionPolicy Orphan", { deletionPolicy: "Orphan" }, ["spec.deletionPolicy: Unsupported value: \"Orphan\"", "\"Delete\", \"Retain\""]],
      ["managementPolicy ReadOnly", { managementPolicy: "ReadOnly" }, ["spec.managementPolicy: Unsupported value"]],
      ["databaseId 0", { databaseId: 0 }, ["spec.databaseId", "greater than or equal to 1"]],
      ["connection Secret name not a DNS name", { connectionSecret: { name: "Bad_Name" } }, ["spec.connectionSecret.name in body should match"]],
      ["extraData key not a Secret key", { connectionSecret: { extraData: { "bad key": "{{ .host }}" } } }, ["spec.connectionSecret.extraData", "valid Secret keys"]],
      ["extraData template with a pipe", { connectionSecret: { extraData: { ok: "{{ .host }}", jdbc: "jdbc:mysql://{{ .host | upper }}" } } }, ["spec.connectionSecret.extraData[jdbc]", "a template may only hold {{ .key }}"]],
      ["extraData template naming no key of the Secret", { connectionSecret: { extraData: { url: "{{ .hostname }}" } } }, ["spec.connectionSecret.extraData[url]", "naming a key of the connection Secret"]],
      ["extraData template never closed", { connectionSecret: { extraData: { url: "x://{{ .host }:1" } } }, ["spec.connectionSecret.extraData[url]", "unpaired braces"]],
      ["extraData template closing nothing", { connectionSecret: { extraData: { a: "x://{ .host }}", b: "{{ printf .host }}" } } }, ["spec.connectionSecret.extraData[a]", "spec.connectionSecret.extraData[b]"]],
      ["restore with both a backup and a snapshot", { requests: { restore: { token: "1", backupId: 5, snapshotRef: { name: "snap" } } } }, ["spec.requests.restore", "exactly one of backupId or snapshotRef"]],
      ["restore with neither", { requests: { restore: { token: "1" } } }, ["exactly one of backupId or snapshotRef"]],
      ["restore without a token", { requests: { restore: { backupId: 5 } } }, ["spec.requests.restore.token: Required value"]],
      ["allowListFrom with two sources", { allowListFrom: [{ nodes: {}, cidrs: { name: "egress", key: "a" } }] }, ["each allowListFrom entry names exactly one source: nodes or cidrs"]],
      ["allowListFrom with none", { allowListFrom: [{}] }, ["each allowListFrom entry names exactly one source"]],
      ["allowListFrom selector In without values", { allowListFrom: [{ nodes: { selector: { matchExpressions: [{ key: "pool", operator: "In" }] } } }] }, ["In and NotIn need values"]],
      ["allowListFrom addressType Hostname", { allowListFrom: [{ nodes: { addressType: "Hostname" } }] }, ["Unsupported value: \"Hostname\""]],
      ["empty request token", { requests: { patch: "" } }, ["spec.requests.patch in body should be at least 1 chars long"]],
      ["Secret label key with a space", { connectionSecret: { labels: { "my team": "a" } } }, ["spec.connectionSecret.labels", "Kubernetes qualified names"]],
      ["Secret label key with a bad prefix", { connectionSecret: { labels: { "Example.COM/team": "a" } } }, ["spec.connectionSecret.labels", "Kubernetes qualified names"]],
      ["Secret label value too long", { connectionSecret: { labels: { team: "a".repeat(64) } } }, ["spec.connectionSecret.labels.team", "63"]],
      ["Secret label value with a slash", { connectionSecret: { labels: { team: "a/b" } } }, ["spec.connectionSecret.labels", "labels values must be"]],
      ["Secret label the operator owns", { connectionSecret: { labels: { "linode.operator.dev/owner": "x" } } }, ["spec.connectionSecret.labels", "the operator's own"]],
      ["Valkey forked", { engine: "valkey", version: "8", restoreFrom: { pointInTime: { databaseId: 5 } } }, ["spec.restoreFrom", "a Valkey database has no restore points"]],
      ["Valkey restored from a backup", { engine: "valkey", version: "8", requests: { restore: { token: "1", backupId: 5 } } }, ["spec.requests.restore", "a Valkey database has no backups to restore"]],
      ["Valkey with replicationType", { engine: "valkey", version: "8", replicationType: "none" }, ["spec.replicationType", "not a Valkey setting"]],
      ["Valkey with engineConfig", { engine: "valkey", version: "8", engineConfig: { maxmemory_policy: "allkeys-lru" } }, ["spec.engineConfig", "engineConfig is for mysql and postgresql"]],
      ["Secret annotation key with a colon", { connectionSecret: { annotations: { "a:b": "x" } } }, ["spec.connectionSecret.annotations", "Kubernetes qualified names"]],
    ];
    it.each(cases)("%s", async (_name, patch, expected) => {
      const res = await dryRun(withSpec(base, patch));
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (res.ok) return;
      expect(res.code).toBe(422);
      for (const text of expected) expect(res.message).toContain(text);
    });
  });

  describe("accepts a good spec", () => {
    const cases: [string, Record<string, unknown>][] = [
      ["minimal MySQL", {}],
      ["3-node MySQL, semi_synch", { clusterSize: 3, replicationType: "semi_synch" }],
      ["3-node MySQL, asynch", { clusterSize: 3, replicationType: "asynch" }],
      ["3-node PostgreSQL, asynch, local commit", { ...pg3, replicationType: "asynch", replicationCommitType: "local" }],
      ["3-node PostgreSQL, implied asynch, off", { ...pg3, replicationCommitType: "off" }],
      ["1-node PostgreSQL, none, remote_apply", { ...pg3, clusterSize: 1, replicationType: "none", replicationCommitType: "remote_apply" }],
      ["every kind of allow-list entry", { allowList: ["203.0.113.7", "198.51.100.0/24", "0.0.0.0/0", "2001:db8::1", "2001:db8::/32", "203.0.113.7/32"] }],
      ["monthly maintenance", { updates: { frequency: "monthly", duration: 1, hourOfDay: 0, dayOfWeek: 1, weekOfMonth: 4 } }],
      ["weekly maintenance, frequency defaulted", { updates: { duration: 4, hourOfDay: 23, dayOfWeek: 7 } }],
      ["maintenance window without duration (the platform's)", { updates: { hourOfDay: 23, dayOfWeek: 7 } }],
      ["Valkey, 3 nodes, a Secret with extra keys", { engine: "valkey", version: "8", clusterSize: 3, connectionSecret: { extraData: { url: "rediss://:{{ .password }}@{{ .host }}:{{ .port }}/0" } } }],
      ["label, Secret, policies, adoption", {
        label: "orders-db", deletionPolicy: "Retain", managementPolicy: "Observe", databaseId: 123,
        connectionSecret: {
          name: "orders-db-creds", extraData: { "jdbc.url": "jdbc:mysql://{{ .host }}:{{ .port }}/app", ca: '{{index . "ca.crt"}}', ro: '{{ index . "secondary-host" }}', json: '{"port":{{ .port }}}' },
          labels: { team: "a", "example.com/tier": "gold_1.x", empty: "" }, annotations: { note: "x", "example.com/owner": "team a: orders" },
        },
      }],
      ["every request", { requests: { resetCredentials: "r1", patch: "p1", restore: { token: "t1", snapshotRef: { name: "nightly" } } } }],
      ["restore by backup id", { requests: { restore: { token: "t1", backupId: 42 } } }],
    ];
    it.each(cases)("%s", async (_name, patch) => {
      const res = await dryRun(withSpec(base, patch));
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
  });

  it("applies the same defaults as the zod schema, except those adoption initializes: stored only if written", async () => {
    const minimal = { ...base, updates: { duration: 2, hourOfDay: 1, dayOfWeek: 3 } };
    const res = await api.create(kind, "defaults", minimal);
    expect(res.ok, JSON.stringify(res)).toBe(true);
    const stored = await api.get(kind, "defaults");
    expect(managedDatabaseSpecSchema.parse(stored.spec)).toEqual(managedDatabaseSpecSchema.parse(minimal));
    expect(stored.spec).toMatchObject({ deletionPolicy: "Delete", managementPolicy: "Manage", allowEmpty: false, updates: { frequency: "weekly" } });
    for (const field of ["clusterSize", "encrypted", "sslConnection", "allowList", "suspended"]) expect(stored.spec, field).not.toHaveProperty(field);
    expect(managedDatabaseSpecSchema.parse(stored.spec)).toMatchObject({ clusterSize: 1, encrypted: false, sslConnection: true, allowList: [], suspended: false });
  });

  describe("immutable fields", () => {
    const name = "immutable";
    beforeAll(async () => {
      const res = await api.create(kind, name, { ...base, replicationType: "none", databaseId: 7, encrypted: false, sslConnection: true });
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ["engine", { engine: "postgresql" }, "engine is immutable"],
      ["region", { region: "eu-west" }, "region is immutable"],
      ["encrypted", { encrypted: true }, "encrypted is immutable"],
      ["sslConnection", { sslConnection: false }, "sslConnection is immutable"],
      ["replicationType removed", { replicationType: null }, "replicationType cannot be changed or removed once set"],
      ["databaseId changed", { databaseId: 8 }, "databaseId cannot be changed or removed once set"],
      ["databaseId removed", { databaseId: null }, "databaseId cannot be changed or removed once set"],
      ["restoreFrom added", { restoreFrom: { pointInTime: { databaseId: 3 } } }, "restoreFrom is immutable: a database is forked once, when it is created"],
    ];
    it.each(rejected)("%s cannot change", async (_field, patch, message) => {
      const res = await api.mergePatchSpec(kind, name, patch);
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (!res.ok) expect(res.message).toContain(message);
    });

    it("what adoption initializes may be added once (the operator writes it into a spec that left it unset), then never changed", async () => {
      expect((await api.create(kind, "initialized", { ...base, databaseId: 9 })).ok).toBe(true);
      const init = await api.mergePatchSpec(kind, "initialized", { replicationType: "semi_synch", clusterSize: 3, encrypted: true, sslConnection: false, allowList: ["198.51.100.0/24"], suspended: false });
      expect(init.ok, JSON.stringify(init)).toBe(true);
      for (const [patch, message] of [[{ replicationType: "asynch" }, "replicationType cannot be changed or removed once set"], [{ replicationType: null }, "replicationType cannot be changed or removed once set"], [{ encrypted: false }, "encrypted is immutable"], [{ sslConnection: true }, "sslConnection is immutable"]] as const) {
        const res = await api.mergePatchSpec(kind, "initialized", patch);
        expect(res.ok, JSON.stringify(patch)).toBe(false);
        if (!res.ok) expect(res.message).toContain(message);
      }
    });

    it("mutable fields change: type (resize), nodes and version (in place on the current platform; the operator holds the legacy one to them), label, allow list, window, policies, requests", async () => {
      const res = await api.mergePatchSpec(kind, name, {
        type: "g6-dedicated-4", label: "renamed", allowList: ["203.0.113.0/24"], updates: window,
        deletionPolicy: "Retain", requests: { patch: "now" }, version: "8.4", clusterSize: 2, replicationType: "none",
      });
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (!res.ok) expect(res.message).toContain("replicationType must be none for a 1-node cluster");
      expect((await api.create(kind, "no-replication", base)).ok).toBe(true);
      const ok = await api.mergePatchSpec(kind, "no-replication", { type: "g6-dedicated-4", version: "9", clusterSize: 3 });
      expect(ok.ok, JSON.stringify(ok)).toBe(true);
      const res2 = await api.mergePatchSpec(kind, name, {
        type: "g6-dedicated-4", label: "renamed", allowList: ["203.0.113.0/24"], updates: window,
        deletionPolicy: "Retain", requests: { patch: "now" },
      });
      expect(res2.ok, JSON.stringify(res2)).toBe(true);
    });

    it("restoreFrom: exactly one source, RFC 3339 times, never with databaseId, immutable once set", async () => {
      const fork = (name: string, extra: Record<string, unknown>) => api.create(kind, name, { ...base, ...extra });
      expect((await fork("fork-both", { restoreFrom: { pointInTime: { databaseId: 3, databaseRef: { name: "x" } } } })).ok).toBe(false);
      expect((await fork("fork-none", { restoreFrom: { pointInTime: {} } })).ok).toBe(false);
      const badTime = await fork("fork-time", { restoreFrom: { pointInTime: { databaseId: 3, restoreTime: "yesterday" } } });
      expect(badTime.ok).toBe(false);
      if (!badTime.ok) expect(badTime.message).toContain("restoreTime");
      const adopting = await fork("fork-adopt", { databaseId: 4, restoreFrom: { pointInTime: { databaseId: 3 } } });
      expect(adopting.ok).toBe(false);
      if (!adopting.ok) expect(adopting.message).toContain("restoreFrom creates a new database; databaseId adopts an existing one");
      expect((await fork("forked", { restoreFrom: { pointInTime: { databaseRef: { name: "source" }, restoreTime: "2026-11-24T18:30:00Z" } } })).ok).toBe(true);
      for (const patch of [{ restoreFrom: { pointInTime: { databaseRef: { name: "other" } } } }, { restoreFrom: null }]) {
        const res = await api.mergePatchSpec(kind, "forked", patch);
        expect(res.ok, JSON.stringify(patch)).toBe(false);
        if (!res.ok) expect(res.message).toContain("restoreFrom is immutable");
      }
    });

    it("databaseId may be set once on an object without one", async () => {
      expect((await api.create(kind, "adopt-later", base)).ok).toBe(true);
      const res = await api.mergePatchSpec(kind, "adopt-later", { databaseId: 99 });
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
  });
});
