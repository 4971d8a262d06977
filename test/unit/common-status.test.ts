// The runtime owns the status fields it writes: every generated CRD (crds/ and the chart's copy)
// declares them, so the API server keeps them instead of pruning them, and the connection
// Secret's exactly for the kinds whose controller publishes one. Kinds declare only their own.
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parse, parseAllDocuments } from "yaml";
import { LinodeClient } from "../../src/linode/index.ts";
import { kinds } from "../../src/resources/index.ts";
import { LinodeAccounts } from "../../src/resources/shared/credentials.ts";
import { commonStatusFields, connectionStatusFields } from "../../src/runtime/condition-schema.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { statusSchemaOf, type KindDefinition } from "../../src/runtime/kind-definition.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { lampDefinition } from "../fixtures/toy-kind/definition.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const common = Object.keys(commonStatusFields);
const connection = Object.keys(connectionStatusFields);

interface CrdDoc { spec: { names: { kind: string }; versions: { schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } } }[] } }

/** Each CRD manifest in a file, by kind, with its status fields. */
const statusFieldsByKind = (docs: unknown[]): Map<string, string[]> => new Map((docs as CrdDoc[]).map((d) => {
  const version = d.spec.versions[0];
  return [d.spec.names.kind, Object.keys(version?.schema.openAPIV3Schema.properties.status.properties ?? {})];
}));

async function committedCrds(): Promise<Map<string, string[]>> {
  const dir = join(root, "crds");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml"));
  return statusFieldsByKind(await Promise.all(files.map(async (f) => parse(await readFile(join(dir, f), "utf8"), { version: "1.1" }) as unknown)));
}

/** The chart's templates/crds.yaml, read as Helm renders it with crds.enabled and crds.keep: template lines dropped. */
async function chartCrds(): Promise<Map<string, string[]>> {
  const text = await readFile(join(root, "helm/linode-operator/templates/crds.yaml"), "utf8");
  const plain = text.split("\n").filter((line) => !/^\s*\{\{.*\}\}\s*$/.test(line)).join("\n");
  return statusFieldsByKind(parseAllDocuments(plain, { version: "1.1" }).map((d) => d.toJS() as unknown).filter((d) => d !== null));
}

/** Whether each kind's controller publishes a connection Secret: what its built kind says, not its definition. */
function publishersByKind(accounts: LinodeAccounts): Map<string, boolean> {
  const kube = new MemoryKube();
  const log = createLogger({ level: "silent" });
  const events = new KubeEventRecorder(kube, { controller: "test", instance: "common-status" });
  const kindDeps = { accounts, poll: { pendingMillis: 50, readyMillis: 60_000 }, clusterId: "test", log };
  return new Map(kinds.map((k) => [k.definition.kind, new Controller(k, { kube, log, events, kindDeps }, { concurrency: 1, namespaces: ["x"] }).kind.connection !== undefined]));
}

describe("the runtime's status fields are in every kind's CRD", () => {
  const accounts = new LinodeAccounts({ clientFor: (token) => new LinodeClient({ token, baseUrl: "http://127.0.0.1:9" }), requireRef: () => true });
  afterAll(() => accounts.close());
  const publishers = publishersByKind(accounts);

  it("each kind's definition says whether it publishes a connection Secret, as its controller does", () => {
    expect(publishers.size).toBe(kinds.length);
    expect([...publishers.values()]).toContain(true);
    expect([...publishers.values()]).toContain(false);
    for (const k of kinds) expect(k.definition.publishesConnection === true, k.definition.kind).toBe(publishers.get(k.definition.kind));
  });

  it.each([["crds/", committedCrds], ["the chart's templates/crds.yaml", chartCrds]])("%s: every kind has the common fields, and the connection ones only if it publishes a Secret", async (_where, read) => {
    const crds = await read();
    expect([...crds.keys()].sort()).toEqual(kinds.map((k) => k.definition.kind).sort());
    for (const [kind, fields] of crds) {
      expect(fields, kind).toEqual(expect.arrayContaining(common));
      const has = connection.filter((f) => fields.includes(f));
      expect(has, kind).toEqual(publishers.get(kind) === true ? connection : []);
    }
  });

  it("a kind declares only its own fields: the runtime's come after them, and declaring one is refused", () => {
    const lamp = statusSchemaOf(lampDefinition);
    const own = ["brightness", "color", "host"];
    expect(Object.keys(lamp.shape)).toEqual([...own, ...common]);
    expect(Object.keys(statusSchemaOf({ ...lampDefinition, publishesConnection: true }).shape)).toEqual([...own, ...connection, ...common]);
    const declaring = (status: z.ZodObject): KindDefinition => ({ ...lampDefinition, status });
    expect(() => statusSchemaOf(declaring(lampDefinition.status.extend({ externalId: z.string().optional() })))).toThrow(/Lamp: its status declares externalId/);
    expect(() => statusSchemaOf(declaring(lampDefinition.status.extend({ binding: z.object({ name: z.string() }).optional() })))).toThrow(/declares binding/);
  });

  it("the merged schema keeps the kind's description and parses the runtime's fields", () => {
    const described = { ...lampDefinition, status: lampDefinition.status.meta({ description: "Observed state of the lamp." }) };
    expect(z.toJSONSchema(statusSchemaOf(described)).description).toBe("Observed state of the lamp.");
    const parsed = statusSchemaOf(lampDefinition).parse({ brightness: 3, externalId: "lamp-1", observedGeneration: 2, conditions: [{ type: "Ready", status: "True", reason: "Available", lastTransitionTime: "2026-11-27T10:00:00Z" }] });
    expect(parsed).toMatchObject({ brightness: 3, externalId: "lamp-1", observedGeneration: 2 });
  });
});
