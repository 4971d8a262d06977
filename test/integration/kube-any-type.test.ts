// A kind may declare a read of any type (src/runtime/reads.ts), a core one the client has no
// typed call for included: the client lists, reads and watches it by its group, version and
// plural alone. Here ServiceAccounts (namespaced) and Namespaces (cluster-scoped), which no kind
// reads, on a real API server.
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { loadKubeConfigFromFile } from "../../src/kube/config.ts";
import { isNotFound } from "../../src/kube/errors.ts";
import type { KubeObject, ResourceType } from "../../src/kube/types.ts";
import { InformerPool } from "../../src/runtime/stores.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { eventually } from "../harness/eventually.ts";

const serviceAccounts: ResourceType = { group: "", version: "v1", plural: "serviceaccounts", kind: "ServiceAccount" };
const namespaces: ResourceType = { group: "", version: "v1", plural: "namespaces", kind: "Namespace" };

describe("a core type with no typed call of its own", () => {
  const cluster = useTestCluster("anytype");
  const kube = (): KubeClient => new KubeClient(loadKubeConfigFromFile(cluster.adminKubeconfig), { fieldManager: "any-type-test" });
  const createAccount = async (name: string): Promise<void> => {
    const r = await cluster.kubectl(["create", "serviceaccount", name, "-n", cluster.namespace]);
    expect(r.code, r.stderr).toBe(0);
  };

  it("is listed (whole or as metadata only) and read by name in a namespace; a missing one is not found", async () => {
    await createAccount("reader");
    const client = kube();
    const page = await client.list<KubeObject>(serviceAccounts, { namespace: cluster.namespace });
    expect(page.items.map((o) => o.metadata.name)).toContain("reader");
    expect(page.resourceVersion).not.toBe("");
    const meta = await client.list<KubeObject>(serviceAccounts, { namespace: cluster.namespace, metadataOnly: true });
    expect(meta.items.find((o) => o.metadata.name === "reader")?.kind).toBe("PartialObjectMetadata");
    const one = await client.getCustom<KubeObject>(serviceAccounts, { namespace: cluster.namespace, name: "reader" });
    expect(one.metadata.uid).toBe(page.items.find((o) => o.metadata.name === "reader")?.metadata.uid);
    await expect(client.getCustom(serviceAccounts, { namespace: cluster.namespace, name: "nobody" })).rejects.toSatisfy(isNotFound);
  });

  it("is cached by the informer pool, namespaced or cluster-wide, and a new one is seen by its watch", async () => {
    const pool = new InformerPool(kube(), { namespaces: [cluster.namespace] });
    try {
      const accounts = pool.store(serviceAccounts);
      const all = pool.clusterStore(namespaces);
      await pool.startAndSync();
      expect(all.get("", cluster.namespace)?.metadata.name).toBe(cluster.namespace);
      await createAccount("latecomer");
      await eventually(() => { expect(accounts.get(cluster.namespace, "latecomer")?.metadata.name).toBe("latecomer"); }, 30_000);
    } finally {
      await pool.stop();
    }
  });
});
