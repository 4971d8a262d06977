// Adding a kind touches its folder and the one list of kinds, nothing else: a toy kind (a Lamp,
// test/fixtures/toy-kind/) added to the list gets its CRD, its RBAC rules, its API reference
// page, its operator flags and a running controller from the same code that serves the real
// kinds, and its folder imports only the runtime's contract.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadOperatorConfig, runHelp } from "../../src/config/operator-config.ts";
import { renderApiReference } from "../../src/crd/api-reference.ts";
import { renderCrdFiles } from "../../src/crd/render.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { LinodeAccounts } from "../../src/resources/shared/credentials.ts";
import type { ResourceDeps } from "../../src/resources/shared/deps.ts";
import { Controller } from "../../src/runtime/controller.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { kindRules } from "../../scripts/render-deploy.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { lampDefinition, lampType } from "../fixtures/toy-kind/definition.ts";
import { LampCloud } from "../fixtures/toy-kind/index.ts";

const withLamp = [...kindDefinitions, lampDefinition];
const settingsOf = (defs: typeof withLamp) => defs.flatMap((d) => Object.values(d.settings ?? {}));

describe("a new kind is its folder and one line in the list", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => { for (const stop of stops.splice(0)) await stop(); });

  it("its CRD is rendered from its definition, beside the others", () => {
    const files = renderCrdFiles(withLamp);
    expect([...files.keys()]).toEqual([...renderCrdFiles(kindDefinitions).keys(), "lamps.linode.operator.dev.yaml"]);
    const crd = parse(files.get("lamps.linode.operator.dev.yaml") ?? "", { version: "1.1" }) as { spec: { names: { kind: string; shortNames: string[] }; versions: { additionalPrinterColumns: { name: string }[]; schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }[] } };
    expect(crd.spec.names).toMatchObject({ kind: "Lamp", shortNames: ["lmp"] });
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name)).toEqual(["Brightness", "Ready", "Age"]);
    expect(Object.keys(crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties ?? {})).toEqual(["brightness", "deletionPolicy", "colorFrom", "ingressRef"]);
  });

  it("the chart's RBAC rules, the API reference and the operator's flags and help include it", () => {
    expect(kindRules(withLamp)).toContain('"databaseconnectionpools", "lamps"]');
    expect(kindRules(withLamp)).toMatch(/"lamps\/status"[\s\S]*"lamps\/finalizers"/);
    // What it reads (declared in its definition) is granted where the operator watches, beside what the other kinds read.
    expect(kindRules(withLamp)).toContain(`# Lamp: the Ingress whose host a lamp shows (spec.ingressRef)
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses"]
  verbs: ["get", "list", "watch"]`);
    expect(kindRules(withLamp)).toMatch(/# ManagedDatabase: allow lists from ConfigMaps[^\n]*; Lamp: the ConfigMap a lamp takes its colour from/);
    expect(kindRules(kindDefinitions)).not.toContain("ingresses");
    const page = renderApiReference(withLamp, {});
    expect(page).toContain("## Lamp");
    expect(page).toContain("| `spec.brightness` | integer | yes | How bright the lamp is lit, in percent. Value 0–100. |");
    expect(page).toContain("| `BulbMissing` |");
    expect(page).toContain("| `--lamp-warmup-seconds` | `LAMP_WARMUP_SECONDS` |");
    const config = loadOperatorConfig(["--lamp-warmup-seconds", "3"], { LINODE_TOKEN: "t" }, settingsOf(withLamp));
    expect(config.kindSettings["lamp-warmup-seconds"]).toBe(3);
    expect(runHelp(withLamp.map((d) => ({ kind: d.kind, settings: Object.values(d.settings ?? {}) })))).toMatch(/Lamp options:\n\s+--lamp-warmup-seconds/);
  });

  it("the generic runtime runs it: created in its cloud, Ready, changed, deleted", async () => {
    const kube = new MemoryKube();
    const cloud = new LampCloud();
    const accounts = new LinodeAccounts({ clientFor: (token) => new LinodeClient({ token, baseUrl: "http://127.0.0.1:9" }), requireRef: () => true });
    const log = createLogger({ level: "silent" });
    const kindDeps: ResourceDeps = { accounts, poll: { pendingMillis: 50, readyMillis: 60_000 }, clusterId: "test" };
    const controller = new Controller(cloud.kind(), { kube, log, events: new KubeEventRecorder(kube, { controller: "test", instance: "toy" }), kindDeps }, { concurrency: 1, namespaces: ["toys"], coalesceMillis: 0 });
    await controller.start();
    stops.push(() => controller.stop(), () => accounts.close());
    const get = (): ManagedObject | undefined => kube.peek(lampType, { namespace: "toys", name: "desk" }) as ManagedObject | undefined;
    const until = async (what: string, ok: () => boolean): Promise<void> => {
      for (const end = Date.now() + 5_000; !ok(); await new Promise((r) => setTimeout(r, 5))) if (Date.now() > end) throw new Error(`timed out: ${what}`);
    };
    const ready = (brightness: number) => () => get()?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true && get()?.status?.brightness === brightness;
    await kube.createCustom(lampType, "toys", { metadata: { name: "desk" }, spec: { brightness: 40 } });
    await until("lit", ready(40));
    expect([...cloud.lamps.values()]).toEqual([40]);
    await kube.mergePatchCustom(lampType, { namespace: "toys", name: "desk" }, { spec: { brightness: 80 } });
    await until("brighter", ready(80));
    expect([...cloud.lamps.values()]).toEqual([80]);
    await kube.deleteCustom(lampType, { namespace: "toys", name: "desk" });
    await until("gone", () => get() === undefined);
    expect(cloud.lamps.size).toBe(0);
  });

  it("its folder imports only the runtime's contract and the shared kind deps, never src/crd or src/kube", () => {
    const dir = fileURLToPath(new URL("../fixtures/toy-kind", import.meta.url));
    const imports = readdirSync(dir).flatMap((f) => [...readFileSync(join(dir, f), "utf8").matchAll(/from "([^"]+)"/g)].map((m) => m[1] ?? ""));
    const outside = imports.filter((i) => i.startsWith("../"));
    expect(outside.filter((i) => /src\/(crd|kube)\//.test(i))).toEqual([]);
    expect(new Set(outside)).toEqual(new Set([
      "../../../src/runtime/contract.ts", "../../../src/resources/shared/deps.ts",
    ]));
  });
});
