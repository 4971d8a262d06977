// The toy kind (a Lamp, test/fixtures/toy-kind/) on a real API server: its CRD as the generator
// builds it from its definition, a Controller of the generic runtime over its in-memory cloud.
// The API server prunes whatever a CRD does not declare, so this is where a status field the
// runtime writes but the kind's CRD lacks shows (MemoryKube never prunes): the Lamp declares
// only its brightness, and conditions, observedGeneration and externalId must still be kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCrd, crdName } from "../../src/crd/build-crd.ts";
import { isNotFound } from "../../src/kube/errors.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { LinodeAccounts } from "../../src/resources/shared/credentials.ts";
import type { ResourceDeps } from "../../src/resources/shared/deps.ts";
import { Controller } from "../../src/runtime/controller.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { runtimeDeps, waitFor } from "../harness/operator-runtime.ts";
import { lampDefinition, lampType } from "../fixtures/toy-kind/definition.ts";
import { LampCloud } from "../fixtures/toy-kind/index.ts";

describe("the toy kind on a real API server", () => {
  const cluster = useTestCluster("toy-kind");
  const cloud = new LampCloud();
  const crd = buildCrd(lampDefinition);
  let deps: ReturnType<typeof runtimeDeps>;
  let controller: Controller<ResourceDeps>;
  let accounts: LinodeAccounts;

  const get = (): Promise<ManagedObject> => deps.kube.getCustom<ManagedObject>(lampType, { namespace: cluster.namespace, name: "desk" });
  const condition = (o: ManagedObject, type: string) => o.status?.conditions?.find((c) => c.type === type);
  /** The lamp once its status describes its current generation: Ready and Synced at `brightness`. */
  const settled = (brightness: number): Promise<ManagedObject> => waitFor(`desk Ready at ${String(brightness)}`, async () => {
    const o = await get();
    const current = o.status?.observedGeneration === o.metadata.generation;
    return current && condition(o, "Ready")?.status === "True" && condition(o, "Synced")?.status === "True" && o.status?.brightness === brightness ? o : undefined;
  }, 30_000, 100);

  beforeAll(async () => {
    const applied = await cluster.kubectl(["apply", "--server-side", "--field-manager=linode-operator-tests", "-f", "-"], { input: JSON.stringify(crd) });
    expect(applied.code, applied.stderr).toBe(0);
    const established = await cluster.kubectl(["wait", "--for=condition=Established", `crd/${crdName(lampDefinition)}`, "--timeout=60s"]);
    expect(established.code, established.stderr).toBe(0);
    deps = runtimeDeps(cluster.adminKubeconfig);
    // The Lamp never calls Linode: the accounts are there because every kind's deps carry them.
    accounts = new LinodeAccounts({ clientFor: (token) => new LinodeClient({ token, baseUrl: "http://127.0.0.1:9" }), requireRef: () => false });
    const kindDeps: ResourceDeps = { accounts, poll: { pendingMillis: 100, readyMillis: 60_000 }, clusterId: `test-${cluster.namespace}`, log: deps.log };
    controller = new Controller(cloud.kind(), { ...deps, kindDeps }, { concurrency: 1, namespaces: [cluster.namespace], coalesceMillis: 0, backoff: { baseMillis: 200, maxMillis: 2_000 } });
    await controller.start();
  });
  afterAll(async () => {
    await controller.stop();
    await accounts.close();
    await cluster.kubectl(["delete", "crd", crdName(lampDefinition), "--wait=false"]);
  });

  it("its CRD declares the runtime's status fields beside the Lamp's own", () => {
    const status = (crd as { spec: { versions: { schema: { openAPIV3Schema: { properties: { status: { properties: object } } } } }[] } })
      .spec.versions[0]?.schema.openAPIV3Schema.properties.status.properties ?? {};
    expect(Object.keys(status)).toEqual(expect.arrayContaining(["brightness", "conditions", "observedGeneration", "externalId", "createPending"]));
  });

  it("created: lit in its cloud, Ready, with the status the runtime wrote kept by the API server", async () => {
    await deps.kube.createCustom(lampType, cluster.namespace, { apiVersion: `${lampType.group}/${lampType.version}`, kind: lampType.kind, metadata: { name: "desk" }, spec: { brightness: 40 } });
    const o = await settled(40);
    const [id, lit] = [...cloud.lamps.entries()][0] ?? [];
    expect(cloud.lamps.size).toBe(1);
    expect(lit).toBe(40);
    expect(o.status?.externalId).toBe(id);
    expect(o.metadata.annotations?.["linode.operator.dev/external-id"]).toBe(id);
    expect(o.status?.createPending).toBeUndefined();
    expect(o.metadata.finalizers).toContain("linode.operator.dev/finalizer");
  });

  it("updated: the new brightness reaches its cloud and its status", async () => {
    const before = await get();
    const patched = await deps.kube.mergePatchCustom<ManagedObject>(lampType, { namespace: cluster.namespace, name: "desk" }, { spec: { brightness: 80 } });
    expect(patched.metadata.generation).toBeGreaterThan(before.metadata.generation ?? 0);
    const o = await settled(80);
    expect(o.status?.observedGeneration).toBe(patched.metadata.generation);
    expect([...cloud.lamps.values()]).toEqual([80]);
    expect(o.status?.externalId).toBe(before.status?.externalId);
  });

  it("reads what its definition declares (a ConfigMap, an Ingress: types nothing in src/runtime names) and a change of either wakes it", async () => {
    const apply = async (obj: object): Promise<void> => {
      const r = await cluster.kubectl(["apply", "-n", cluster.namespace, "-f", "-"], { input: JSON.stringify(obj) });
      expect(r.code, r.stderr).toBe(0);
    };
    const colors = (color: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "desk-colors" }, data: { color } });
    const ingress = (host: string) => ({ apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "front" }, spec: { rules: [{ host }] } });
    await apply(colors("amber"));
    await apply(ingress("a.example.com"));
    await deps.kube.mergePatchCustom(lampType, { namespace: cluster.namespace, name: "desk" }, { spec: { colorFrom: "desk-colors", ingressRef: "front" } });
    const shows = (color: string, host: string): Promise<ManagedObject> => waitFor(`desk shows ${color} and ${host}`, async () => {
      const o = await get();
      return o.status?.color === color && o.status.host === host && o.status.observedGeneration === o.metadata.generation ? o : undefined;
    }, 30_000, 100);
    const before = await shows("amber", "a.example.com");
    // Settled: its next look is a minute away (readyMillis), past these waits; only a watch wakes it sooner.
    await apply(colors("teal"));
    await shows("teal", "a.example.com");
    await apply(ingress("b.example.com"));
    const after = await shows("teal", "b.example.com");
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect([...cloud.lamps.values()]).toEqual([80]);
  });

  it("deleted: switched off in its cloud, the finalizer released and the object gone", async () => {
    await deps.kube.deleteCustom(lampType, { namespace: cluster.namespace, name: "desk" });
    await waitFor("desk gone", async () => {
      try {
        await get();
        return undefined;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    }, 30_000, 100);
    expect(cloud.lamps.size).toBe(0);
  });
});
