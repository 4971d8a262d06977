// docs/api.md: every field of every kind, from the same OpenAPI schemas the CRDs carry (so the
// page says what `kubectl explain` and admission say). Pure: the generator and its --check mode
// compare the same bytes.
import type { KindDefinition } from "../runtime/kind-definition.ts";
import type { CelRule } from "../runtime/schema-rules.ts";
import { API_GROUP, API_VERSION, statusSchemaOf } from "../runtime/kind-definition.ts";
import { zodToOpenApi, type OpenApiSchema } from "./to-openapi.ts";

interface Row { path: string; type: string; required: boolean; text: string }

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ").trim();
const code = (v: unknown): string => `\`${JSON.stringify(v)}\``;

function typeOf(node: OpenApiSchema): string {
  const t = typeof node.type === "string" ? node.type : "any";
  if (t === "array") return `${typeOf((node.items ?? {}) as OpenApiSchema)}[]`;
  if (t === "object" && node.properties === undefined && typeof node.additionalProperties === "object") return `map[string]${typeOf(node.additionalProperties as OpenApiSchema)}`;
  return t;
}

/** What a field accepts besides its description: enum, default, bounds, and the rules on it. */
function constraints(node: OpenApiSchema): string[] {
  const out: string[] = [];
  if (Array.isArray(node.enum)) out.push(`one of ${node.enum.map(code).join(", ")}`);
  if (node.default !== undefined) out.push(`default ${code(node.default)}`);
  const range = (lo: string, hi: string, what: string): void => {
    const [min, max] = [node[lo], node[hi]].map((v) => (typeof v === "number" ? String(v) : undefined));
    if (min !== undefined && max !== undefined) out.push(`${what} ${min}–${max}`);
    else if (min !== undefined) out.push(`${what} ≥ ${min}`);
    else if (max !== undefined) out.push(`${what} ≤ ${max}`);
  };
  range("minimum", "maximum", "value");
  range("minLength", "maxLength", "length");
  range("minItems", "maxItems", "items");
  range("minProperties", "maxProperties", "entries");
  if (typeof node.pattern === "string") out.push(`matches \`${node.pattern}\``);
  return out;
}

function rows(node: OpenApiSchema, path: string, required: boolean, into: Row[]): void {
  const rules = ((node["x-kubernetes-validations"] ?? []) as CelRule[]).map((r) => r.message).filter((m): m is string => m !== undefined);
  const text = [typeof node.description === "string" ? node.description : "", ...constraints(node).map((c) => `${c[0]?.toUpperCase() ?? ""}${c.slice(1)}.`), ...rules.map((m) => `Rule: ${m}.`)]
    .filter((x) => x !== "").join(" ");
  if (path !== "") into.push({ path, type: typeOf(node), required, text });
  const props = node.properties as Record<string, OpenApiSchema> | undefined;
  const req = new Set((node.required ?? []) as string[]);
  for (const [name, child] of Object.entries(props ?? {})) rows(child, path === "" ? name : `${path}.${name}`, req.has(name), into);
  if (node.type === "array" && typeof node.items === "object") {
    const items = node.items as OpenApiSchema;
    if (items.properties !== undefined) rows({ ...items, description: undefined, "x-kubernetes-validations": undefined }, `${path}[]`, false, into);
  }
  if (typeof node.additionalProperties === "object" && (node.additionalProperties as OpenApiSchema).properties !== undefined) {
    rows({ ...(node.additionalProperties as OpenApiSchema), description: undefined }, `${path}.*`, false, into);
  }
}

function table(root: string, schema: OpenApiSchema): string {
  const all: Row[] = [];
  rows(schema, "", false, all);
  // An array's or map's own row without fields adds nothing to the rows of its items.
  const lines = all.filter((r) => r.text !== "" || !all.some((o) => o.path.startsWith(`${r.path}.`) || o.path.startsWith(`${r.path}[]`)))
    .map((r) => `| \`${root}.${r.path}\` | ${cell(r.type)} | ${r.required ? "yes" : ""} | ${cell(r.text)} |`);
  return ["| field | type | required | description |", "|---|---|---|---|", ...lines].join("\n");
}

/** How adoption by id behaves: the runtime's, the same for every kind that adopts (late initialization). */
const adoption = [
  "## Adopting an existing cloud object",
  "",
  "A ManagedDatabase adopts one by `spec.databaseId`, a NodeBalancer by `spec.nodeBalancerId` (with the operator's own token only in namespaces the admin allows, `--adopt-namespaces`; otherwise `AdoptionNotAllowed`). Required fields are compared as ever: a ManagedDatabase's `engine`, `version`, `region` and `type`, a NodeBalancer's `region` (`ImmutableFieldMismatch` where what cannot change differs).",
  "",
  "- **Observe** (`managementPolicy: Observe`): the object is mirrored into status (a database's connection Secret published); nothing is changed in Linode or in the spec. Synced's message lists how it differs from the spec.",
  "- **Manage** (the default): on the first Manage pass bound to the object (also the first after switching from Observe), each field the spec leaves unset takes the object's value, written to the spec once (late initialization, as Crossplane does): one patch, with the annotation `linode.operator.dev/initialized-from: <id>`, made only if the spec is still the one read (a user's edit meanwhile is never overwritten: the pass starts again), and a Normal Event `LateInitialized` naming the fields. Nothing is sent to Linode in that pass; the next works from the spec as written. So an adopted 3-node cluster keeps its nodes, its allow list and its VPC, and an adopted NodeBalancer its configs. From then on the spec is the desired state as ever: a field removed later is not filled again (remove the annotation to have unset fields taken from the object once more).",
  "- What the spec says from the start is the desired state (adopting with `allowList: [...]` replaces the database's list).",
  "- Fields taken from the object: ManagedDatabase `clusterSize`, `encrypted`, `sslConnection`, `allowList`, `privateNetwork`, `suspended` (and `replicationType`, `replicationCommitType` on the legacy platform); NodeBalancer `clientConnThrottle`, `tags`, `configs` with their nodes. The CRDs carry no default for these (the operator applies it when it creates an object), so the stored spec says what was written. Fields whose absence already means “keep what the object has” stay unset: `label`, `updates`, `engineConfig`, `firewallId`.",
  "- What the spec cannot express is refused: Ready=False and Synced=False, reason `CannotExpress`, the message naming each field (e.g. a NodeBalancer's https config, whose certificate only Linode holds; a config without nodes; a value out of a field's range or enum). Nothing is written to the spec or sent. Write those fields yourself (what you write then replaces what the object has), or use Observe.",
  "- A crash after the spec patch leaves the values and the annotation written together: the next pass neither initializes again nor sends a default. A patch that fails (a conflict) wrote nothing and nothing was sent; it is retried.",
];

const reasonTable = (meanings: Readonly<Record<string, string>>): string[] =>
  ["| reason | meaning |", "|---|---|", ...Object.entries(meanings).map(([r, m]) => `| \`${r}\` | ${cell(m)} |`)];

/**
 * The page for `definitions`; `commonReasons` are the condition reasons any kind may report
 * (the runtime's and those the kinds share), listed once.
 */
export function renderApiReference(definitions: readonly KindDefinition[], commonReasons: Readonly<Record<string, string>>): string {
  const parts = [
    "# API reference",
    "",
    `Generated by \`npm run generate\` from the kinds' schemas (the same ones the CRDs in \`crds/\` carry): do not edit. Group \`${API_GROUP}\`, version \`${API_VERSION}\`; \`kubectl explain <kind>.spec\` says the same.`,
    "",
    ...definitions.map((d) => `- [${d.kind}](#${d.kind.toLowerCase()}) (\`kubectl get ${d.shortNames.join("`, `")}\`)`),
    "- [Adopting an existing cloud object](#adopting-an-existing-cloud-object)",
    "- [Condition reasons every kind may report](#condition-reasons-every-kind-may-report)",
  ];
  for (const d of definitions) {
    parts.push(
      "", `## ${d.kind}`, "", d.description, "",
      `\`apiVersion: ${API_GROUP}/${API_VERSION}\`, \`kind: ${d.kind}\`; plural \`${d.plural}\`, short names ${d.shortNames.map((s) => `\`${s}\``).join(", ")}, category \`linode\`.`,
      "", "### spec", "", table("spec", zodToOpenApi(d.spec)),
      "", "### status", "", table("status", zodToOpenApi(statusSchemaOf(d))),
      "", "### Columns (`kubectl get`)", "",
      "| column | from | shown |", "|---|---|---|",
      ...d.printerColumns.map((c) => `| ${c.name} | \`${c.jsonPath}\` | ${c.priority === 1 ? "with `-o wide`" : "always"} |`),
      ...(Object.keys(d.settings ?? {}).length > 0 ? [
        "", "### Operator options of its own", "",
        "| flag | environment | meaning |", "|---|---|---|",
        ...Object.values(d.settings ?? {}).map((o) => `| \`--${o.flag}\` | \`${o.env}\` | ${cell(o.help)} |`),
      ] : []),
      "", "### Reasons of its own", "",
      `Besides [those every kind may report](#condition-reasons-every-kind-may-report), the Ready and Synced conditions of a ${d.kind} may say:`, "",
      ...reasonTable(d.reasons),
    );
  }
  parts.push("", ...adoption);
  parts.push("", "## Condition reasons every kind may report", "",
    "Every resource has the conditions `Ready` (the cloud object is usable) and `Synced` (it matches the spec); `reason` is one of these constant words, `message` the detail.", "",
    ...reasonTable(commonReasons));
  return `${parts.join("\n")}\n`;
}
