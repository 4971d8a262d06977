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

/**
 * The `.meta()` of a spec field adoption initializes from the cloud object (late
 * initialization): the default stays zod's (a create uses it) but the CRD carries none, so the
 * stored spec says whether the user wrote the field; a CRD default would be stored as if the
 * user had. The description says both.
 */
export function initializedOnAdoption(description: string, value: unknown): { description: string; default: undefined } {
  return {
    description: `${description} Default ${JSON.stringify(value)} for a cloud object created here; adopting one (its id in the spec, managementPolicy Manage), unset takes the object's value, written to the spec once.`,
    default: undefined,
  };
}
