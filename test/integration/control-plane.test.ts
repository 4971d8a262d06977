// Proof that the test control plane is a real Kubernetes API server: CRD schema with CEL
// rules enforced at admission, the status subresource, RBAC, TokenRequest, /version.
import { ApiextensionsV1Api, CustomObjectsApi, PatchStrategy, VersionApi, setHeaderOptions } from "@kubernetes/client-node";
import { describe, expect, it, beforeAll } from "vitest";
import { useTestCluster } from "../harness/cluster.ts";

const group = "harness.linode.operator.dev";
const plural = "widgets";

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural, singular: "widget", kind: "Widget", shortNames: ["wdg"] },
    versions: [{
      name: "v1", served: true, storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              properties: { min: { type: "integer" }, max: { type: "integer" } },
              "x-kubernetes-validations": [{ rule: "self.min < self.max", message: "min must be less than max" }],
            },
            status: { type: "object", properties: { phase: { type: "string" } } },
          },
        },
      },
    }],
  },
};

describe("test control plane", () => {
  const cluster = useTestCluster("harness");
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    // kubectl, not client-node's typed CRD model: that model names the field
    // xKubernetesValidations and silently drops an `x-kubernetes-validations` key.
    const applied = await cluster.kubectl(["apply", "--server-side", "-f", "-"], { input: JSON.stringify(crd) });
    expect(applied.code, applied.stderr).toBe(0);
    const ext = cluster.kc.makeApiClient(ApiextensionsV1Api);
    for (let i = 0; i < 100; i++) {
      const got = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
      if (got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    custom = cluster.kc.makeApiClient(CustomObjectsApi);
  });

  it("reports the Kubernetes version it was built as", async () => {
    const v = await cluster.kc.makeApiClient(VersionApi).getCode();
    expect(v.gitVersion).toBe("v1.34.3");
    expect(v.major).toBe("1");
    expect(v.minor).toBe("34");
  });

  it("rejects an object that breaks a CEL rule, with the rule's message", async () => {
    const err = await custom.createNamespacedCustomObject({
      group, version: "v1", namespace: cluster.namespace, plural,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "bad" }, spec: { min: 5, max: 1 } },
    }).then(() => undefined, (e: unknown) => e as { code: number; body: string });
    expect(err?.code).toBe(422);
    expect(err?.body).toContain("min must be less than max");
  });

  it("creates a valid object and patches its status through /status", async () => {
    await custom.createNamespacedCustomObject({
      group, version: "v1", namespace: cluster.namespace, plural,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "good" }, spec: { min: 1, max: 5 } },
    });
    await custom.patchNamespacedCustomObjectStatus(
      { group, version: "v1", namespace: cluster.namespace, plural, name: "good", body: { status: { phase: "Ready" }, spec: { min: 0 } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const got = (await custom.getNamespacedCustomObject({ group, version: "v1", namespace: cluster.namespace, plural, name: "good" })) as {
      spec: { min: number }; status?: { phase?: string };
    };
    expect(got.status?.phase).toBe("Ready");
    expect(got.spec.min).toBe(1); // /status ignores spec changes
  });

  it("enforces RBAC for a ServiceAccount whose token came from TokenRequest", async () => {
    const kubeconfig = await cluster.serviceAccountKubeconfig("tester");
    const whoami = await cluster.kubectl(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], { kubeconfig });
    expect(whoami.stdout).toBe(`system:serviceaccount:${cluster.namespace}:tester`);
    const denied = await cluster.kubectl(["get", "secrets"], { kubeconfig });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain("forbidden");
  });

  it("lists the CRD by short name with real kubectl", async () => {
    const res = await cluster.kubectl(["-n", cluster.namespace, "get", "wdg", "-o", "name"]);
    expect(res.stderr).toBe("");
    expect(res.stdout.trim()).toBe("widget.harness.linode.operator.dev/good");
  });
});
