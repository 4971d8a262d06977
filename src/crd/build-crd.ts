// One CustomResourceDefinition manifest from a kind definition.
import { API_CATEGORY, API_GROUP, API_VERSION, statusSchemaOf, type KindDefinition } from "../runtime/kind-definition.ts";
import { zodToOpenApi, type OpenApiSchema } from "./to-openapi.ts";

export function crdName(def: KindDefinition): string {
  return `${def.plural}.${API_GROUP}`;
}

/** What every kind does the same way, for `kubectl explain KIND`. */
const commonBehaviour = "Annotate it with linode.operator.dev/paused: \"true\" to stop every change the operator would make, in Linode and in Kubernetes (deletion and finalizer removal included), until the annotation is removed; meanwhile status says Synced=False, reason Paused. spec.credentialsRef names the Secret holding the Linode token of the account to act in.";

export function buildCrd(def: KindDefinition): Record<string, unknown> {
  const openAPIV3Schema: OpenApiSchema = {
    description: `${def.description} ${commonBehaviour}`,
    type: "object",
    required: ["spec"],
    properties: {
      apiVersion: { description: "APIVersion defines the versioned schema of this representation of an object.", type: "string" },
      kind: { description: "Kind is a string value representing the REST resource this object represents.", type: "string" },
      metadata: { type: "object" },
      spec: zodToOpenApi(def.spec),
      status: zodToOpenApi(statusSchemaOf(def)),
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: crdName(def), labels: { "app.kubernetes.io/name": "linode-operator", "app.kubernetes.io/part-of": "linode-operator" } },
    spec: {
      group: API_GROUP,
      scope: "Namespaced",
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: [API_CATEGORY],
      },
      versions: [{
        name: API_VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: def.printerColumns,
        schema: { openAPIV3Schema },
      }],
    },
  };
}
