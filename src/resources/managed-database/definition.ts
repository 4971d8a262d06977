// The ManagedDatabase kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { z } from "zod";
import { columns, resourceTypeOf, type KindDefinition, type KindSetting } from "../../runtime/contract.ts";
import { managedDatabaseReasonMeanings } from "./reasons.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "./schema.ts";

export const managedDatabaseSettings = {
  backupsRefreshHours: {
    flag: "backups-refresh-hours", env: "BACKUPS_REFRESH_HOURS",
    help: "how often each database's backups are listed for status.backups, a call per database (default 24: automatic backups are daily; a snapshot taken here shows at once)",
    schema: z.coerce.number().min(0.01).max(24 * 7).default(24),
  },
} as const satisfies Record<string, KindSetting>;

export const managedDatabaseDefinition: KindDefinition = {
  kind: "ManagedDatabase",
  plural: "manageddatabases",
  singular: "manageddatabase",
  shortNames: ["linodedb"],
  description: "A Linode managed MySQL or PostgreSQL cluster (1 or 3 nodes), its connection Secret and one-shot actions.",
  spec: managedDatabaseSpecSchema,
  status: managedDatabaseStatusSchema,
  printerColumns: [
    { name: "Engine", type: "string", jsonPath: ".spec.engine" },
    { name: "Version", type: "string", jsonPath: ".spec.version" },
    { name: "Region", type: "string", jsonPath: ".spec.region" },
    { name: "Status", type: "string", jsonPath: ".status.status", description: "The API's state of the database." },
    columns.ready,
    columns.synced,
    { name: "Type", type: "string", jsonPath: ".spec.type", priority: 1 },
    { name: "Nodes", type: "integer", jsonPath: ".spec.clusterSize", priority: 1 },
    { name: "Host", type: "string", jsonPath: ".status.hosts.primary", priority: 1 },
    { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
    columns.age,
  ],
  reasons: managedDatabaseReasonMeanings,
  settings: managedDatabaseSettings,
};

export const managedDatabaseType = resourceTypeOf(managedDatabaseDefinition);
