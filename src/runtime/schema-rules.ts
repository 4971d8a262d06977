// Kubernetes schema extensions carried on zod schemas through `.meta()`, so that the zod
// schema stays the one source of truth: the CRD generator copies these keys verbatim into
// the OpenAPI schema, and zod's own parsing ignores them.
import "zod";

/** One `x-kubernetes-validations` entry (apiextensions.k8s.io/v1 ValidationRule). */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** Which field the error names, relative to the schema the rule sits on, e.g. `.port`. */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  optionalOldSelf?: boolean;
}

declare module "zod/v4/core" {
  interface GlobalMeta {
    "x-kubernetes-validations"?: CelRule[];
    "x-kubernetes-list-type"?: "atomic" | "set" | "map";
    "x-kubernetes-list-map-keys"?: string[];
    "x-kubernetes-map-type"?: "atomic" | "granular";
    "x-kubernetes-preserve-unknown-fields"?: boolean;
  }
}

/** A transition rule on the field itself: once stored, the value never changes. */
export function immutable(field: string, why: string): CelRule {
  return { rule: "self == oldSelf", message: `${field} is immutable: ${why}` };
}

/**
 * For an optional field, a rule on the parent object: the field may be neither added,
 * removed nor changed after creation (a rule on the field itself would not run when the
 * field appears or disappears).
 */
export function immutableOptional(field: string, why: string): CelRule {
  return {
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message: `${field} is immutable: ${why}`,
    fieldPath: `.${field}`,
  };
}

/** For an optional field, a rule on the parent object: it may be set later, but never changed or removed once set. */
export function immutableOnceSet(field: string, why: string): CelRule {
  return {
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
    message: `${field} cannot be changed or removed once set: ${why}`,
    fieldPath: `.${field}`,
  };
}
