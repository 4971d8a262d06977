// The status shape every managed kind shares: Kubernetes-style conditions (metav1.Condition),
// observedGeneration and the records the runtime keeps. The runtime writes these fields and owns
// them: a kind's status schema declares only its own, and statusSchemaOf (kind-definition.ts)
// merges these into every kind's CRD, so the API server keeps them instead of pruning them.
import { z } from "zod";

export const conditionSchema = z.object({
  type: z.string().meta({ description: "Condition type: Ready or Synced." }),
  status: z.enum(["True", "False", "Unknown"]).meta({ description: "True, False or Unknown." }),
  reason: z.string().meta({ description: "Constant CamelCase reason, e.g. Available, Creating, ReconcileError." }),
  message: z.string().optional().meta({ description: "Human-readable detail, e.g. the Linode API's reason." }),
  lastTransitionTime: z.string().meta({ description: "When status last changed (RFC 3339)." }),
  observedGeneration: z.number().int().optional().meta({ description: "The metadata.generation the condition was set for." }),
}).meta({ description: "A condition of the resource (metav1.Condition)." });

export type Condition = z.infer<typeof conditionSchema>;

export const commonStatusFields = {
  externalId: z.string().optional().meta({
    description: "The id of the cloud object this resource manages, as the operator recorded it when it created or adopted it: the one object it acts on (the external-id annotation is only a copy).",
  }),
  createPending: z.record(z.string(), z.string()).optional().meta({
    description: "Set while a create is about to be sent or its answer is awaited: when (at) and what it targets. Only then may the operator adopt an object it created but never heard back about.",
  }),
  observedGeneration: z.number().int().optional().meta({ description: "The metadata.generation the status describes." }),
  conditions: z.array(conditionSchema).optional().meta({
    description: "Ready: the cloud object is usable. Synced: the cloud object matches the spec.",
    // One entry per type, so server-side apply and strategic merges treat them as a map.
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  }),
};

export type CommonStatus = z.infer<z.ZodObject<typeof commonStatusFields>>;

/** What the runtime records of a kind's connection Secret: merged into the status of a kind whose definition says `publishesConnection`. */
export const connectionStatusFields = {
  connectionSecretName: z.string().optional().meta({ description: "Name of the Secret holding the connection details." }),
  binding: z.object({ name: z.string().meta({ description: "Name of the Secret (in this namespace)." }) }).optional().meta({
    description: "The Secret a ServiceBinding projects (the Service Binding spec's Provisioned Service duck type).",
  }),
};

export type ConnectionStatus = z.infer<z.ZodObject<typeof connectionStatusFields>>;
