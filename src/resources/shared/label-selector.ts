// Kubernetes label selectors (metav1.LabelSelector): the schema a spec names one with, and the
// match apimachinery applies (matchLabels and every matchExpression must hold; empty selects all).
import { z } from "zod";

export const labelSelectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string()).optional().meta({ description: "Labels each selected object has, with these values." }),
  matchExpressions: z.array(z.object({
    key: z.string().min(1).max(317).meta({ description: "The label key." }),
    operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]).meta({ description: "In, NotIn, Exists or DoesNotExist." }),
    values: z.array(z.string()).max(64).optional().meta({ description: "For In and NotIn: the values (at least one); for Exists and DoesNotExist: none." }),
  }).meta({
    "x-kubernetes-validations": [
      { rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0", message: "In and NotIn need values; Exists and DoesNotExist take none" },
    ],
  })).max(16).optional().meta({ description: "Requirements each selected object meets." }),
}).meta({ description: "A label selector, as Kubernetes writes one; empty selects every object." });

export type LabelSelector = z.infer<typeof labelSelectorSchema>;

export function matchesSelector(labels: Readonly<Record<string, string>> | undefined, selector: LabelSelector): boolean {
  const have = labels ?? {};
  // Own labels only: a selector key such as `toString` is a label the object lacks, not Object's method.
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (!Object.hasOwn(have, k) || have[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, e.key);
    const value = have[e.key];
    const ok = e.operator === "Exists" ? present
      : e.operator === "DoesNotExist" ? !present
      : e.operator === "In" ? present && (e.values ?? []).includes(value ?? "")
      : !present || !(e.values ?? []).includes(value ?? "");
    if (!ok) return false;
  }
  return true;
}

/** The selector as `kubectl get -l` writes it, for messages. */
export function selectorText(selector: LabelSelector): string {
  const parts = [
    ...Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`),
    ...(selector.matchExpressions ?? []).map((e) => (e.operator === "Exists" ? e.key : e.operator === "DoesNotExist" ? `!${e.key}` : `${e.key} ${e.operator === "In" ? "in" : "notin"} (${(e.values ?? []).join(",")})`)),
  ];
  return parts.length === 0 ? "every node" : parts.join(",");
}
