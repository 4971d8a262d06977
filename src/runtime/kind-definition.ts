// What a kind says about itself to Kubernetes: its names, its spec and status schemas (zod, the
// one source of truth) and its printer columns. Each kind's folder holds its own; the CRDs, the
// chart's RBAC and the controllers are all built from the one list of kinds (resources/index.ts).
import { z } from "zod";
import type { ResourceType } from "../kube/types.ts";
import { commonStatusFields, connectionStatusFields } from "./condition-schema.ts";
import type { Read } from "./reads.ts";

export const API_GROUP = "linode.operator.dev";
export const API_VERSION = "v1alpha1";
/** `kubectl get linode` lists every kind. */
export const API_CATEGORY = "linode";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  /** 0: always shown; 1: only with -o wide. */
  priority?: number;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  /**
   * The kind's own status fields. The runtime's (conditions, observedGeneration, externalId,
   * createPending, and the connection Secret's where the kind publishes one) are merged in by
   * statusSchemaOf: the CRD and docs/api.md show them, a kind never declares them.
   */
  status: z.ZodObject;
  /** The kind publishes a connection Secret (its ManagedKind has a `connection`): its status records it. */
  publishesConnection?: boolean;
  printerColumns: PrinterColumn[];
  /** The condition reasons this kind adds to the runtime's, each with what it means (docs/api.md lists them). */
  reasons: Readonly<Record<string, string>>;
  /**
   * What the kind reads of Kubernetes besides its own objects (other kinds, Secrets, ConfigMaps,
   * Nodes, ...): the only caches it gets, what its references and watches may target (checked at
   * start), and what the chart's RBAC grants it (generated).
   */
  reads?: readonly Read[];
  /** The kind's own settings: `linode-operator run` flags (and their environment variables) the operator's help lists. */
  settings?: Readonly<Record<string, KindSetting>>;
}

/**
 * A setting of one kind's: a `run` flag and its environment variable, parsed by its schema from
 * the string given (or from undefined: the schema's default). Flags are unique across kinds.
 */
export interface KindSetting {
  flag: string;
  env: string;
  help: string;
  schema: z.ZodType;
}

/** Parsed setting values by flag, as the operator's configuration holds them. */
export type SettingValues = Readonly<Record<string, unknown>>;

/** A kind's setting's value: the one configured, else its default. */
export function settingValue<S extends KindSetting>(setting: S, values: SettingValues | undefined): z.output<S["schema"]> {
  const v = values?.[setting.flag];
  return (v !== undefined ? v : setting.schema.parse(undefined)) as z.output<S["schema"]>;
}

/**
 * A kind's whole status schema, as its CRD declares it: its own fields, then the connection
 * Secret's where it publishes one, then the runtime's. A field the runtime owns declared by the
 * kind too is an error: one of the two descriptions (or types) would silently lose.
 */
export function statusSchemaOf(def: KindDefinition): z.ZodObject {
  const clashes = Object.keys(def.status.shape).filter((name) => name in commonStatusFields || name in connectionStatusFields);
  if (clashes.length > 0) throw new Error(`${def.kind}: its status declares ${clashes.join(", ")}, which the runtime owns (publishesConnection adds the connection Secret's)`);
  // extend() makes a new schema: its description (kept by instance in zod's registry) is carried over.
  return def.status.extend({ ...(def.publishesConnection === true ? connectionStatusFields : {}), ...commonStatusFields }).meta(z.globalRegistry.get(def.status) ?? {});
}

/** Reason constants named after themselves, from a table of reason → meaning. */
export type Reasons<K extends string> = { readonly [P in K]: P };
export function reasonNames<K extends string>(meanings: Readonly<Record<K, string>>): Reasons<K> {
  return Object.fromEntries(Object.keys(meanings).map((k) => [k, k])) as Reasons<K>;
}

/** Group, version, plural and kind of a kind: what every controller and client addresses it by. */
export const resourceTypeOf = (def: KindDefinition): ResourceType => ({ group: API_GROUP, version: API_VERSION, plural: def.plural, kind: def.kind });

/** The columns every kind shows the same way. */
export const columns = {
  ready: { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status", description: "The cloud object is usable." },
  synced: { name: "Synced", type: "string", jsonPath: ".status.conditions[?(@.type==\"Synced\")].status", description: "The cloud object matches the spec." },
  reason: { name: "Reason", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].reason", priority: 1 },
  age: { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
} as const satisfies Record<string, PrinterColumn>;
