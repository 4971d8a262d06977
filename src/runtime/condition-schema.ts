// The status shape every managed kind shares: Kubernetes-style conditions (metav1.Condition)
// plus observedGeneration. Kind schemas extend it; the generic reconciler writes it.
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
  observedGeneration: z.number().int().optional().meta({ description: "The metadata.generation the status describes." }),
  conditions: z.array(conditionSchema).optional().meta({
    description: "Ready: the cloud object is usable. Synced: the cloud object matches the spec.",
    // One entry per type, so server-side apply and strategic merges treat them as a map.
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  }),
};
