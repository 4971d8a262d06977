// A kind reads only what its definition declares: the Controller builds its caches from the
// declarations (whatever the type: here Ingresses, which nothing in src/runtime names), refuses at
// start a reference, a watch or a store the kind uses without declaring it, and gives no cache
// for a read whose gate is off. The declarations of the operator's kinds name only gates the
// operator has.
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { loadOperatorConfig, operatorOptions } from "../../src/config/operator-config.ts";
import { gatedReads, readGateSettings } from "../../src/resources/read-gates.ts";
import { readRulesTemplates } from "../../scripts/render-deploy.ts";
import { lampDefinition } from "../fixtures/toy-kind/definition.ts";
import { kindDefinitions, readGates } from "../../src/resources/index.ts";
import { Controller, type ControllerDeps } from "../../src/runtime/controller.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { reference, type KindModule, type KubeObject, type Watch } from "../../src/runtime/managed.ts";
import type { ReadStore } from "../../src/runtime/stores.ts";
import type { Read } from "../../src/runtime/reads.ts";
import { GadgetCloud, gadgetType } from "../fixtures/gadget-kind.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";
import { eventually } from "../harness/eventually.ts";

const ns = "reads";
const ingressType = { group: "networking.k8s.io", version: "v1", plural: "ingresses", kind: "Ingress" };
const ingresses: Read = { type: ingressType, scope: "namespaces", why: "test" };
const gatedIngresses: Read = { ...ingresses, gate: "read-ingresses" };

const running: Controller[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((c) => c.stop())); });

/** The Gadget kind with `reads` declared, adding `watches` and keeping what `stores.read(asked)` gave. */
function gadgetWith(reads: readonly Read[], extra: { watches?: Watch[]; asked?: Read; refTarget?: Read } = {}) {
  const base = new GadgetCloud().kind({ pendingMillis: 40, readyMillis: 60_000 });
  const got: { store?: ReadStore<KubeObject> | undefined } = {};
  const module: KindModule<undefined> = {
    type: base.type,
    definition: { reads },
    build: (ctx) => {
      if (extra.asked !== undefined) got.store = ctx.stores.read(extra.asked);
      const kind = base.build(ctx);
      const refTarget = extra.refTarget;
      return {
        ...kind,
        ...(extra.watches !== undefined ? { watches: extra.watches } : {}),
        ...(refTarget !== undefined ? { references: [reference({ name: "frontDoor", target: refTarget, names: () => ["web"], decode: () => ({ value: 1 }) })] } : {}),
      };
    },
  };
  return { module, got };
}

function controllerOf(module: KindModule<undefined>, gates?: ReadonlySet<string>): { controller: Controller; kube: MemoryKube } {
  const kube = new MemoryKube();
  const deps: ControllerDeps<undefined> = { kube, log: createLogger({ level: "silent" }), events: new KubeEventRecorder(kube, { controller: "test", instance: "reads" }), ...(gates !== undefined ? { gates } : {}) };
  const controller = new Controller(module, deps, { concurrency: 1, namespaces: [ns], coalesceMillis: 0 });
  running.push(controller);
  return { controller, kube };
}

describe("declared reads", () => {
  it("a watch, a reference or a store of a type the definition does not declare stops the controller at start, naming it", () => {
    const watch: Watch = { target: ingresses, map: () => [] };
    expect(() => controllerOf(gadgetWith([], { watches: [watch] }).module)).toThrow(/Gadget: its watch #1 reads Ingress \(namespaces\), which its definition's reads do not declare/);
    expect(() => controllerOf(gadgetWith([], { refTarget: ingresses }).module)).toThrow(/Gadget: its reference frontDoor reads Ingress/);
    expect(() => controllerOf(gadgetWith([], { asked: ingresses }).module)).toThrow(/Gadget: stores.read reads Ingress/);
    // Other selectors are another read: declaring Ingresses labelled x does not declare them all.
    expect(() => controllerOf(gadgetWith([{ ...ingresses, selectors: { labelSelector: "x=y" } }], { watches: [watch] }).module)).toThrow(/its watch #1 reads Ingress/);
    // Its own type, and the operator's other kinds, need no declaration.
    expect(() => controllerOf(gadgetWith([], { watches: [{ target: { type: gadgetType, scope: "namespaces", why: "" }, map: () => [] }] }).module)).not.toThrow();
  });

  it("a declared read of a new type gets its cache, and a change of one of its objects wakes what the watch maps it to", async () => {
    const woken: string[] = [];
    const watch: Watch = { target: ingresses, map: (o) => { woken.push(o.metadata.name); return [`${ns}/g`]; } };
    const { module, got } = gadgetWith([ingresses], { watches: [watch], asked: ingresses });
    const { controller, kube } = controllerOf(module);
    await controller.start();
    await kube.createCustom(ingressType, ns, { metadata: { name: "web" }, spec: { rules: [{ host: "a.example" }] } });
    await eventually(() => { expect(got.store?.get(ns, "web")?.spec).toEqual({ rules: [{ host: "a.example" }] }); });
    expect(woken).toContain("web");
  });

  it("a read whose gate is off has no cache (undefined) and its watch wakes nothing; on, it reads", async () => {
    const off = gadgetWith([gatedIngresses], { asked: ingresses });
    await controllerOf(off.module).controller.start();
    expect(off.got.store).toBeUndefined();
    const other = gadgetWith([gatedIngresses], { asked: ingresses });
    await controllerOf(other.module, new Set(["read-nodes"])).controller.start();
    expect(other.got.store).toBeUndefined();
    const on = gadgetWith([gatedIngresses], { asked: ingresses });
    const { controller, kube } = controllerOf(on.module, new Set(["read-ingresses"]));
    await kube.createCustom(ingressType, ns, { metadata: { name: "web" } });
    await controller.start();
    expect(on.got.store?.get(ns, "web")?.metadata.name).toBe("web");
  });

  it("the operator's kinds name only gates the operator's settings turn on", () => {
    const all = readGates(loadOperatorConfig(["--read-nodes", "true"], { LINODE_TOKEN: "t" }));
    const named = kindDefinitions.flatMap((d) => (d.reads ?? []).flatMap((r) => (r.gate !== undefined ? [r.gate] : [])));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((g) => !all.has(g))).toEqual([]);
    expect(readGates(loadOperatorConfig([], { LINODE_TOKEN: "t" })).size).toBe(0);
  });

  it("each gate's flag help, chart value comment and NodesNotReadable name every type it grants", () => {
    const values = readFileSync(new URL("../../helm/linode-operator/values.yaml", import.meta.url), "utf8");
    for (const [gate, setting] of Object.entries(readGateSettings)) {
      const help = Object.values(operatorOptions).find((o) => o.flag === setting.flag);
      expect(help?.env).toBe(setting.env);
      // The comment above the value in values.yaml, unwrapped.
      const key = setting.chartValue.split(".").at(-1) ?? "";
      const comment = values.slice(0, values.indexOf(`  ${key}:`)).split("\n").reverse().slice(1).filter((_l, i, all) => all.slice(0, i + 1).every((x) => x.trim().startsWith("#"))).reverse().map((l) => l.replace(/^\s*#\s?/, "")).join(" ");
      const types = new Set(gatedReads(kindDefinitions, gate).map((r) => `${r.type.kind}s`));
      expect(types.size).toBeGreaterThan(0);
      for (const t of types) {
        expect(help?.help, `--${setting.flag} help names ${t}`).toContain(t);
        expect(comment, `${setting.chartValue} in values.yaml names ${t}`).toContain(t);
      }
    }
  });

  it("the chart's rules: a cluster-scoped read gets a ClusterRole (one per gate), a gated one only under its chart value, an unknown gate none at all", () => {
    const volumes: Read = { type: { group: "", version: "v1", plural: "persistentvolumes", kind: "PersistentVolume" }, scope: "cluster", why: "volumes" };
    const text = readRulesTemplates([{ ...lampDefinition, reads: [volumes, { ...ingresses, gate: "read-nodes" }] }]);
    expect(text).toMatch(/define "linode-operator.readRules" -}}\n\{\{- if .Values.rbac.readNodes }}\n# Lamp: test\n- apiGroups: \["networking.k8s.io"\]\n {2}resources: \["ingresses"\]\n {2}verbs: \["get", "list", "watch"\]\n\{\{- end }}\n\{\{- end -}}/);
    expect(text).toMatch(/kind: ClusterRole\nmetadata:\n {2}name: \{\{ \$name }}-\{\{ \$.Release.Namespace }}-cluster-reads\n[\s\S]*# Lamp: volumes\n {2}- apiGroups: \[""\]\n {4}resources: \["persistentvolumes"\]/);
    expect(text).not.toContain("-read-nodes");
    expect(() => readRulesTemplates([{ ...lampDefinition, reads: [gatedIngresses] }])).toThrow(/read gate read-ingresses: no chart value grants it/);
  });
});
