// The ManagedDatabase kind as Kubernetes sees it: names, schemas, printer columns and reasons (its CRD is generated from this).
import { z } from "zod";
import { columns, resourceTypeOf, type KindDefinition, type KindSetting } from "../../runtime/contract.ts";
import { credentialsRead } from "../shared/credentials.ts";
import { allowListConfigMapsRead, allowListNodesRead } from "./allow-list-from.ts";
import { managedDatabaseReasonMeanings } from "./reasons.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "./schema.ts";

export const managedDatabaseSettings = {
  backupsRefreshHours: {
    flag: "backups-refresh-hours", env: "BACKUPS_REFRESH_HOURS",
    help: "how often each database's backups are listed for status.backups, a call per database (default 24: automatic backups are daily; a snapshot taken here shows at once)",
    schema: z.coerce.number().min(0.01).max(24 * 7).default(24),
  },
  allowListIntervalSeconds: {
    flag: "allow-list-interval-seconds", env: "ALLOW_LIST_INTERVAL_SECONDS",
    help: "the least time between two allow-list updates of one database whose list follows the cluster (spec.allowListFrom; default 10: the API asks not to update it in rapid succession; changes meanwhile, such as a node pool rollout, go in the next one)",
    schema: z.coerce.number().min(0).max(3600).default(10),
  },
  databasePlatform: {
    flag: "database-platform", env: "DATABASE_PLATFORM",
    help: "the Linode database platform new databases are created on, which decides what a create may carry: current (default: rdbms-default, the only one Linode sells; no encrypted, replication or ssl_connection in the create, weekly 4-hour maintenance) or legacy (rdbms-legacy, for an API or emulator that still creates there). Existing databases are handled as the platform each reports",
    schema: z.enum(["current", "legacy"]).default("current"),
  },
} as const satisfies Record<string, KindSetting>;

export const managedDatabaseDefinition: KindDefinition = {
  kind: "ManagedDatabase",
  plural: "manageddatabases",
  singular: "manageddatabase",
  shortNames: ["linodedb"],
  description: "A Linode managed MySQL, PostgreSQL or Valkey cluster (1, 2 or 3 nodes), its connection Secret and one-shot actions.",
  spec: managedDatabaseSpecSchema,
  status: managedDatabaseStatusSchema,
  publishesConnection: true,
  printerColumns: [
    // What the cloud database is (status, as the API reports it), not what the spec asks for.
    { name: "Engine", type: "string", jsonPath: ".spec.engine" },
    { name: "Version", type: "string", jsonPath: ".status.version", description: "The engine version the API reports." },
    { name: "Region", type: "string", jsonPath: ".spec.region" },
    { name: "Status", type: "string", jsonPath: ".status.status", description: "The API's state of the database." },
    columns.ready,
    columns.synced,
    { name: "Type", type: "string", jsonPath: ".status.type", priority: 1, description: "The plan the API reports." },
    { name: "Nodes", type: "integer", jsonPath: ".status.clusterSize", priority: 1, description: "The nodes the API reports." },
    { name: "Platform", type: "string", jsonPath: ".status.platform", priority: 1, description: "Linode's database platform: legacy or current." },
    { name: "Host", type: "string", jsonPath: ".status.hosts.primary", priority: 1 },
    { name: "ID", type: "integer", jsonPath: ".status.id", priority: 1 },
    columns.age,
  ],
  reasons: managedDatabaseReasonMeanings,
  reads: [credentialsRead, allowListConfigMapsRead, allowListNodesRead],
  settings: managedDatabaseSettings,
};

export const managedDatabaseType = resourceTypeOf(managedDatabaseDefinition);
