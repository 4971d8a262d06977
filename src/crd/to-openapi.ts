// zod → structural OpenAPI v3 for a CRD. zod's own "openapi-3.0" JSON Schema output is close,
// but a CRD's schema must be *structural*: a type at every level, no unions (anyOf/oneOf),
// no additionalProperties beside properties, no $schema/$ref, and only the keywords
// apiextensions.k8s.io/v1 knows. Anything we cannot translate faithfully throws, so a schema
// change that the API server would reject fails at generation time, not at install time.
import { z } from "zod";
import { forbiddenKeysRule } from "../runtime/safe-keys.ts";

export type OpenApiSchema = { [key: string]: unknown };

/** Keywords apiextensions.k8s.io/v1 JSONSchemaProps accepts that we emit, in output order. */
const keyOrder = [
  "description", "type", "format", "nullable", "enum", "default",
  "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
  "minLength", "maxLength", "pattern",
  "minItems", "maxItems", "minProperties", "maxProperties",
  "required", "properties", "additionalProperties", "items",
  "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
  "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
  "x-kubernetes-validations",
] as const;
const allowed = new Set<string>(keyOrder);

/** Keywords zod may emit that carry no validation (or that we replace) and are dropped. */
const dropped = new Set(["$schema", "id", "$id", "title", "examples", "example", "deprecated", "readOnly", "writeOnly"]);

/** z.int() says "safe integer"; the API server stores int64, so those bounds are noise. */
const safeIntBound = Number.MAX_SAFE_INTEGER;

export class StructuralSchemaError extends Error {
  override name = "StructuralSchemaError";
}

export function zodToOpenApi(schema: z.ZodType): OpenApiSchema {
  const json = z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw", reused: "inline", cycles: "throw" });
  return toStructural(json, "");
}

/** Rewrites one (already JSON Schema) node and its children into a structural schema. */
export function toStructural(node: OpenApiSchema, path: string): OpenApiSchema {
  const where = path === "" ? "<root>" : path;
  for (const union of ["anyOf", "oneOf", "allOf", "not", "$ref"]) {
    if (union in node) throw new StructuralSchemaError(`${where}: "${union}" is not structural; model alternatives as one type plus x-kubernetes-validations`);
  }
  const out: OpenApiSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (dropped.has(key)) continue;
    if (key === "const") { out.enum = [value]; continue; }
    if (!allowed.has(key)) throw new StructuralSchemaError(`${where}: keyword "${key}" is not supported in a CRD schema`);
    out[key] = value;
  }

  if (Array.isArray(out.enum) && out.type === "number" && out.enum.every((v) => Number.isInteger(v))) out.type = "integer";
  if (out.type === "integer") {
    if (out.minimum === -safeIntBound) delete out.minimum;
    if (out.maximum === safeIntBound) delete out.maximum;
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;

  if (isSchema(out.properties)) {
    // zod emits additionalProperties:false for strict objects; beside properties a CRD
    // rejects it, and unknown fields are pruned by the API server anyway.
    delete out.additionalProperties;
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([name, child]) => [name, toStructural(asSchema(child, `${path}.${name}`), `${path}.${name}`)]),
    );
  } else if (out.additionalProperties === false || out.additionalProperties === true) {
    delete out.additionalProperties;
  } else if (out["x-kubernetes-preserve-unknown-fields"] === true && isSchema(out.additionalProperties) && Object.keys(out.additionalProperties).length === 0) {
    // A free-form object (values of any type, e.g. an API's own parameter object): its fields are kept as given.
    delete out.additionalProperties;
  } else if (out.additionalProperties !== undefined) {
    out.additionalProperties = toStructural(asSchema(out.additionalProperties, `${path}.*`), `${path}.*`);
    // Every map a tenant writes: keys that name an object's prototype are refused at admission.
    out["x-kubernetes-validations"] = [...(Array.isArray(out["x-kubernetes-validations"]) ? out["x-kubernetes-validations"] as unknown[] : []), { ...forbiddenKeysRule }];
  }
  if (out.items !== undefined) {
    if (Array.isArray(out.items)) throw new StructuralSchemaError(`${where}: tuple items are not structural`);
    out.items = toStructural(asSchema(out.items, `${path}[]`), `${path}[]`);
  }

  const typeless = out["x-kubernetes-int-or-string"] === true || out["x-kubernetes-preserve-unknown-fields"] === true;
  if (typeof out.type !== "string" && !typeless) throw new StructuralSchemaError(`${where}: every schema needs a single type`);
  if (out.type === "object" && out.properties === undefined && out.additionalProperties === undefined && !typeless) {
    throw new StructuralSchemaError(`${where}: an object needs properties or additionalProperties (or x-kubernetes-preserve-unknown-fields)`);
  }
  return ordered(out);
}

function isSchema(v: unknown): v is OpenApiSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function asSchema(v: unknown, path: string): OpenApiSchema {
  if (!isSchema(v)) throw new StructuralSchemaError(`${path}: expected a schema object`);
  return v;
}

/** Stable key order, so regenerating never reshuffles the YAML. */
function ordered(node: OpenApiSchema): OpenApiSchema {
  const out: OpenApiSchema = {};
  for (const key of keyOrder) if (node[key] !== undefined) out[key] = node[key];
  return out;
}
