// One CustomResourceDefinition manifest from a kind definition.
import { crdCategory, crdGroup, crdVersion, type KindDefinition } from "./definitions.ts";
import { zodToOpenApi, type OpenApiSchema } from "./to-openapi.ts";

export function crdName(def: KindDefinition): string {
  return `${def.plural}.${crdGroup}`;
}

export function buildCrd(def: KindDefinition): Record<string, unknown> {
  const openAPIV3Schema: OpenApiSchema = {
    description: def.description,
    type: "object",
    required: ["spec"],
    properties: {
      apiVersion: { description: "APIVersion defines the versioned schema of this representation of an object.", type: "string" },
      kind: { description: "Kind is a string value representing the REST resource this object represents.", type: "string" },
      metadata: { type: "object" },
      spec: zodToOpenApi(def.spec),
      status: zodToOpenApi(def.status),
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: crdName(def), labels: { "app.kubernetes.io/name": "linode-operator", "app.kubernetes.io/part-of": "linode-operator" } },
    spec: {
      group: crdGroup,
      scope: "Namespaced",
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: [crdCategory],
      },
      versions: [{
        name: crdVersion,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: def.printerColumns,
        schema: { openAPIV3Schema },
      }],
    },
  };
}
