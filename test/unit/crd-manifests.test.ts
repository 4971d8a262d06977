// The generated CRDs, offline: crds/ is fresh, names and columns are the contract, every field
// is described, every CEL rule says why, and the YAML reads back identically under YAML 1.1.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildCrd, crdName } from "../../src/crd/build-crd.ts";
import { kindDefinitions } from "../../src/crd/definitions.ts";
import { staleCrdFiles } from "../../src/crd/generate.ts";
import type { OpenApiSchema } from "../../src/crd/to-openapi.ts";

const crdDir = fileURLToPath(new URL("../../crds", import.meta.url));

interface Crd {
  spec: {
    group: string; scope: string;
    names: { kind: string; shortNames: string[]; categories: string[] };
    versions: { name: string; subresources: { status: object }; additionalPrinterColumns: { name: string; jsonPath: string }[]; schema: { openAPIV3Schema: OpenApiSchema } }[];
  };
}

const crds = kindDefinitions.map((def) => ({ def, crd: buildCrd(def) as unknown as Crd }));
const byKind = (kind: string): Crd => {
  const found = crds.find((c) => c.def.kind === kind);
  if (found === undefined) throw new Error(kind);
  return found.crd;
};

/** Visits every schema node with its path. */
function walk(node: OpenApiSchema, path: string, visit: (node: OpenApiSchema, path: string) => void): void {
  visit(node, path);
  const props = node.properties as Record<string, OpenApiSchema> | undefined;
  for (const [name, child] of Object.entries(props ?? {})) walk(child, `${path}.${name}`, visit);
  if (node.items !== undefined) walk(node.items as OpenApiSchema, `${path}[]`, visit);
  if (typeof node.additionalProperties === "object") walk(node.additionalProperties as OpenApiSchema, `${path}.*`, visit);
}

describe("generated CRDs", () => {
  it("crds/ matches the schemas (npm run generate)", async () => {
    expect(await staleCrdFiles()).toEqual([]);
  });

  it.each(crds)("$def.kind: the committed YAML reads back as the manifest under YAML 1.1", async ({ def, crd }) => {
    const text = await readFile(join(crdDir, `${crdName(def)}.yaml`), "utf8");
    expect(parse(text, { version: "1.1" })).toEqual(crd);
  });

  it("uses the contract's names", () => {
    expect(crds.map(({ def }) => [crdName(def), def.shortNames])).toEqual([
      ["manageddatabases.linode.operator.dev", ["mdb"]],
      ["databasesnapshots.linode.operator.dev", ["dbsnap"]],
      ["nodebalancers.linode.operator.dev", ["nb"]],
    ]);
    for (const { crd } of crds) {
      expect(crd.spec.group).toBe("linode.operator.dev");
      expect(crd.spec.scope).toBe("Namespaced");
      expect(crd.spec.names.categories).toEqual(["linode"]);
      expect(crd.spec.versions.map((v) => v.name)).toEqual(["v1alpha1"]);
      expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    }
  });

  it("has the printer columns users rely on", () => {
    const columns = (kind: string) => byKind(kind).spec.versions[0]?.additionalPrinterColumns.map((c) => c.name);
    expect(columns("ManagedDatabase")).toEqual(expect.arrayContaining(["Engine", "Version", "Region", "Status", "Ready", "Age"]));
    expect(columns("DatabaseSnapshot")).toEqual(expect.arrayContaining(["Database", "Phase", "Ready", "Age"]));
    expect(columns("NodeBalancer")).toEqual(expect.arrayContaining(["Hostname", "IPv4", "Ready", "Age"]));
  });

  it.each(crds)("$def.kind: every spec and status field has a description", ({ crd }) => {
    const missing: string[] = [];
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema;
    const props = root?.properties as Record<string, OpenApiSchema>;
    for (const part of ["spec", "status"] as const) {
      walk(props[part] as OpenApiSchema, part, (node, path) => {
        const isListItem = path.endsWith("[]") || path.endsWith(".*");
        if (!isListItem && typeof node.description !== "string") missing.push(path);
      });
    }
    expect(missing).toEqual([]);
  });

  it.each(crds)("$def.kind: every CEL rule has a message and a bounded input", ({ crd }) => {
    const problems: string[] = [];
    walk(crd.spec.versions[0]?.schema.openAPIV3Schema as OpenApiSchema, "", (node, path) => {
      const rules = (node["x-kubernetes-validations"] ?? []) as { rule: string; message?: string }[];
      for (const r of rules) if (typeof r.message !== "string" || r.message === "") problems.push(`${path}: ${r.rule} has no message`);
      // Rules over unbounded strings or lists blow the API server's CEL cost estimate.
      if (rules.length > 0 && node.type === "string" && node.maxLength === undefined && node.enum === undefined) problems.push(`${path}: string with CEL needs maxLength`);
      if (node.type === "array" && node.maxItems === undefined) {
        const item = node.items as OpenApiSchema;
        if (JSON.stringify(item).includes("x-kubernetes-validations")) problems.push(`${path}: list with CEL items needs maxItems`);
      }
    });
    expect(problems).toEqual([]);
  });

  it("marks the immutable fields with transition rules", () => {
    const spec = (kind: string) => (byKind(kind).spec.versions[0]?.schema.openAPIV3Schema.properties as Record<string, OpenApiSchema>).spec as OpenApiSchema;
    const transitionFields = (kind: string): string[] => {
      const found: string[] = [];
      walk(spec(kind), "", (node, path) => {
        for (const r of (node["x-kubernetes-validations"] ?? []) as { rule: string; fieldPath?: string }[]) {
          if (r.rule.includes("oldSelf")) found.push(r.fieldPath !== undefined ? `${path}${r.fieldPath}` : path);
        }
      });
      return found.sort();
    };
    expect(transitionFields("ManagedDatabase")).toEqual([".clusterSize", ".databaseId", ".encrypted", ".engine", ".region", ".replicationCommitType", ".replicationType", ".sslConnection", ".version"]);
    expect(transitionFields("DatabaseSnapshot")).toEqual([".databaseRef", ".label", ".target"]);
    expect(transitionFields("NodeBalancer")).toEqual([".firewallId", ".region"]);
  });
});
