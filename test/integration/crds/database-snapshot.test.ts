// DatabaseSnapshot CRD on the real API server: label and target rules, defaults, and a
// snapshot that cannot be re-aimed once taken.
import { beforeAll, describe, expect, it } from "vitest";
import { databaseSnapshotSpecSchema } from "../../../src/resources/database-snapshot/schema.ts";
import { useTestCluster } from "../../harness/cluster.ts";
import { installCrds } from "../../harness/crds.ts";
import { customObjects, databaseSnapshot as kind, withSpec } from "./custom-objects.ts";

const base = { databaseRef: { name: "orders" } };

describe("DatabaseSnapshot CRD", () => {
  const cluster = useTestCluster("crds-dbsnap");
  const api = customObjects(cluster);
  let n = 0;
  const dryRun = (spec: Record<string, unknown>) => api.create(kind, `dry-${String(n++)}`, spec, { dryRun: true });

  beforeAll(async () => { await installCrds(cluster); });

  const rejected: [string, Record<string, unknown>, string[]][] = [
    ["missing databaseRef", { databaseRef: undefined }, ["spec.databaseRef: Required value"]],
    ["databaseRef without a name", { databaseRef: { name: undefined } }, ["spec.databaseRef.name: Required value"]],
    ["databaseRef name not a DNS name", { databaseRef: { name: "Orders_DB" } }, ["spec.databaseRef.name in body should match"]],
    ["empty label", { label: "" }, ["spec.label in body should be at least 1 chars long"]],
    ["label longer than 30", { label: "a".repeat(31) }, ["spec.label", "30"]],
    ["label with a dash", { label: "nightly-1" }, ["spec.label in body should match '^[a-zA-Z0-9]+$'"]],
    ["label with non-ASCII letters", { label: "über" }, ["spec.label in body should match"]],
    ["target tertiary", { target: "tertiary" }, ["spec.target: Unsupported value: \"tertiary\"", "\"primary\", \"secondary\""]],
    ["deletionPolicy Keep", { deletionPolicy: "Keep" }, ["spec.deletionPolicy: Unsupported value"]],
  ];
  it.each(rejected)("rejects %s", async (_name, patch, expected) => {
    const res = await dryRun(withSpec(base, patch));
    expect(res.ok, JSON.stringify(res)).toBe(false);
    if (res.ok) return;
    expect(res.code).toBe(422);
    for (const text of expected) expect(res.message).toContain(text);
  });

  const accepted: [string, Record<string, unknown>][] = [
    ["minimal", {}],
    ["30-character label, secondary, Retain", { label: "Nightly2026x".padEnd(30, "0"), target: "secondary", deletionPolicy: "Retain" }],
    ["1-character label", { label: "a" }],
  ];
  it.each(accepted)("accepts %s", async (_name, patch) => {
    const res = await dryRun(withSpec(base, patch));
    expect(res.ok, JSON.stringify(res)).toBe(true);
  });

  it("applies the same defaults as the zod schema", async () => {
    expect((await api.create(kind, "defaults", base)).ok).toBe(true);
    const stored = await api.get(kind, "defaults");
    expect(stored.spec).toEqual(databaseSnapshotSpecSchema.parse(base));
    expect(stored.spec).toEqual({ ...base, target: "primary", deletionPolicy: "Delete" });
  });

  describe("a taken snapshot cannot be re-aimed", () => {
    beforeAll(async () => {
      expect((await api.create(kind, "taken", { ...base, label: "nightly" })).ok).toBe(true);
      expect((await api.create(kind, "unlabelled", base)).ok).toBe(true);
    });
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["databaseRef", "taken", { databaseRef: { name: "other" } }, "databaseRef is immutable"],
      ["target", "taken", { target: "secondary" }, "target is immutable"],
      ["label changed", "taken", { label: "weekly" }, "label is immutable"],
      ["label removed", "taken", { label: null }, "label is immutable"],
      ["label added", "unlabelled", { label: "late" }, "label is immutable"],
    ];
    it.each(cases)("%s", async (_name, name, patch, message) => {
      const res = await api.mergePatchSpec(kind, name, patch);
      expect(res.ok, JSON.stringify(res)).toBe(false);
      if (!res.ok) expect(res.message).toContain(message);
    });

    it("deletionPolicy may change", async () => {
      const res = await api.mergePatchSpec(kind, "taken", { deletionPolicy: "Retain" });
      expect(res.ok, JSON.stringify(res)).toBe(true);
    });
  });
});
