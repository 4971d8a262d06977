// ManagedDatabase: spec and status, the one source of truth for the CRD (src/crd generates
// crds/ from it) and for the controller (which parses specs with it, so zod defaults are the
// CRD defaults). Cross-field rules live as CEL in `.meta()`: the API server enforces them.
import { z } from "zod";
import { extraDataMessage, extraDataProblems, extraDataTemplateRule } from "./secret-template.ts";
import { immutable, immutableOnceSet, immutableOptional, initializedOnAdoption, type CelRule } from "../../runtime/contract.ts";
import {
  accountRecordSchema, externalIdProofSchema, actionRecord, credentialsRefSchema, deletionPolicySchema, dnsSubdomainSchema, linodeIdSchema, linodeSlugSchema, localObjectRefSchema, managementPolicySchema, recreateRecordSchema,
  requestTokenSchema,
} from "../shared/schema.ts";
import { labelSelectorSchema } from "../shared/label-selector.ts";

export const databaseEngines = ["mysql", "postgresql", "valkey"] as const;
export const mysqlReplicationTypes = ["none", "asynch", "semi_synch"] as const;
export const postgresqlReplicationTypes = ["none", "asynch"] as const;
export const replicationCommitTypes = ["on", "local", "remote_write", "remote_apply", "off"] as const;

const newCluster = "create a new ManagedDatabase and migrate the data";

export const maintenanceWindowSchema = z.object({
  frequency: z.enum(["weekly", "monthly"]).default("weekly").meta({ description: "Whether maintenance happens weekly or monthly (legacy platform only; the current platform's is weekly: monthly there is UnsupportedOnPlatform, nothing sent)." }),
  duration: z.int().min(1).max(4).optional().meta({
    description: "Longest maintenance window, in hours: 4 on the current platform (its only value), 1..3 on the legacy one; another is UnsupportedOnPlatform, nothing sent. Omitted: the length the database has (the platform's).",
  }),
  hourOfDay: z.int().min(0).max(23).meta({ description: "Hour (UTC) the window begins, 0..23." }),
  dayOfWeek: z.int().min(1).max(7).meta({ description: "Day of the week, 1 = Monday .. 7 = Sunday." }),
  weekOfMonth: z.int().min(1).max(4).optional().meta({
    description: "Week of the month, 1..4: required for monthly maintenance, omitted for weekly.",
  }),
}).meta({
  description: "Maintenance window for operating-system patches. Omit it to keep the window Linode picks.",
  "x-kubernetes-validations": [
    { rule: "self.frequency != 'monthly' || has(self.weekOfMonth)", message: "weekOfMonth is required when frequency is monthly", fieldPath: ".weekOfMonth", reason: "FieldValueRequired" },
    { rule: "self.frequency != 'weekly' || !has(self.weekOfMonth)", message: "weekOfMonth must be omitted when frequency is weekly", fieldPath: ".weekOfMonth", reason: "FieldValueForbidden" },
  ],
});

/** A label or annotation key (apimachinery's IsQualifiedName), as a CEL regular expression. */
const qualifiedName = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

/** The CEL rule that a map's keys are Kubernetes qualified names (labels' and annotations' alike). */
const qualifiedKeys = (field: string): CelRule => ({
  rule: `self.all(k, k.size() <= 317 && k.matches('${qualifiedName}'))`,
  message: `${field} keys must be Kubernetes qualified names: an optional DNS-subdomain prefix and '/', then 1..63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit`,
});

export const connectionSecretSchema = z.object({
  name: dnsSubdomainSchema.optional().meta({ description: "Secret name. Default: <metadata.name>-connection." }),
  extraData: z.record(z.string(), z.string().max(4096).meta({ "x-kubernetes-validations": [extraDataTemplateRule] })).superRefine((extraData, ctx) => {
    for (const { key, problem } of extraDataProblems(extraData)) ctx.addIssue({ code: "custom", path: [key], message: extraDataMessage(key, problem) });
  }).optional().meta({
    description: "Extra Secret keys whose values are templates over the standard keys, e.g. `jdbc:mysql://{{ .host }}:{{ .port }}/{{ .database }}`. Placeholders `{{ .key }}` for type, provider, host, port, username, password, uri, database; keys with dots or dashes as `{{ index . \"ca.crt\" }}` or `{{ index . \"secondary-host\" }}`. Nothing else: a pipe, a function or an unpaired brace is refused (InvalidSpec naming the key), never written as it is. docs/connection-urls.md has URLs for common drivers.",
    maxProperties: 32,
    "x-kubernetes-validations": [
      { rule: "self.all(k, k.size() <= 253 && k.matches('^[-._a-zA-Z0-9]+$'))", message: "extraData keys must be valid Secret keys: letters, digits, '-', '_' or '.', at most 253 characters" },
    ],
  }),
  labels: z.record(z.string(), z.string().max(63)).optional().meta({
    description: "Extra labels on the Secret (Kubernetes label syntax; not under linode.operator.dev/ nor app.kubernetes.io/managed-by, which are the operator's).",
    maxProperties: 64,
    "x-kubernetes-validations": [
      qualifiedKeys("labels"),
      { rule: "self.all(k, self[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))", message: "labels values must be at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit (or empty)" },
      { rule: "self.all(k, !k.startsWith('linode.operator.dev/') && k != 'app.kubernetes.io/managed-by')", message: "labels under linode.operator.dev/ and app.kubernetes.io/managed-by are the operator's own" },
    ],
  }),
  caPath: z.string().min(2).max(1024).regex(/^\/[^?#\s]*$/).optional().meta({
    description: "Where the application finds ca.crt, for the uri's verification of the server (sslmode=verify-full&sslrootcert= for PostgreSQL, ssl-mode=VERIFY_IDENTITY&ssl-ca= for MySQL). Default: /bindings/<metadata.name>/ca.crt, where a Service Binding named like this resource projects the Secret (SERVICE_BINDING_ROOT=/bindings).",
  }),
  annotations: z.record(z.string(), z.string().max(65_536)).optional().meta({
    description: "Extra annotations on the Secret (Kubernetes annotation syntax).",
    maxProperties: 64,
    "x-kubernetes-validations": [
      qualifiedKeys("annotations"),
    ],
  }),
}).meta({ description: "Where the credentials, host, port and CA certificate are published: a Secret of type servicebinding.io/<engine>, keyed per the Service Binding spec, named in status.binding.name." });

export const restoreRequestSchema = z.object({
  token: requestTokenSchema.meta({ description: "Any new value performs the restore once." }),
  backupId: linodeIdSchema.optional().meta({ description: "Id of the backup (automatic or snapshot) to restore." }),
  snapshotRef: localObjectRefSchema.optional().meta({ description: "A DatabaseSnapshot in this namespace whose backup to restore." }),
  force: z.boolean().optional().meta({ description: "Restore even after a credentials reset made through this resource (the spec: the cluster then ends failed)." }),
}).meta({
  description: "Restore from a backup: erases all data and replaces it with the backup's.",
  "x-kubernetes-validations": [
    { rule: "has(self.backupId) != has(self.snapshotRef)", message: "restore needs exactly one of backupId or snapshotRef" },
  ],
});

/** spec.allowListFrom: where allow-list entries that follow the cluster come from. */
export const allowListFromSchema = z.array(z.object({
  nodes: z.object({
    selector: labelSelectorSchema.prefault({}).meta({ description: "Which Nodes (empty: every Node of the cluster)." }),
    addressType: z.enum(["ExternalIP", "InternalIP"]).default("ExternalIP").meta({ description: "Which of each Node's addresses: ExternalIP (default: what the database sees when the node connects over the internet) or InternalIP (e.g. through a VPC)." }),
  }).optional().meta({ description: "The addresses of the cluster's Nodes the selector picks, each as /32 (/128 for IPv6): the list follows Nodes added, removed or relabelled. Only one host's unicast address is used: an address that is a CIDR range, not an IP address, or unspecified (0.0.0.0, ::), loopback, link-local, multicast or broadcast is skipped (a Warning Event, NodeAddressSkipped, names the Node and why, once); with nothing else to allow that is AllowListWouldBeEmpty, as for a selector that matches no node. Needs the operator to read Nodes (the chart's rbac.readNodes=true); otherwise NodesNotReadable." }),
  cidrs: z.object({
    name: dnsSubdomainSchema.meta({ description: "A ConfigMap in this namespace labelled linode.operator.dev/allow-list: \"true\" (the operator reads no other)." }),
    key: z.string().min(1).max(253).regex(/^[-._a-zA-Z0-9]+$/).meta({ description: "Its key whose value lists IP addresses or CIDR ranges, separated by whitespace or commas; # starts a comment." }),
  }).optional().meta({ description: "Entries a ConfigMap key lists (e.g. an egress gateway's addresses), followed as it changes. Missing (AllowListSourceNotFound) or holding anything but addresses and ranges (InvalidAllowListSource): the allow list is held as it is." }),
}).meta({
  description: "One source of allow-list entries: nodes or cidrs.",
  "x-kubernetes-validations": [
    { rule: "has(self.nodes) != has(self.cidrs)", message: "each allowListFrom entry names exactly one source: nodes or cidrs" },
  ],
})).max(8).optional().meta({
  description: "Allow-list entries that follow the cluster, merged with allowList (deduplicated, canonical). Changes are coalesced: at most one allow-list update per database in flight and, with allowListFrom, none sooner than --allow-list-interval-seconds after the last (the API asks not to update it in rapid succession). status.allowList shows each entry the database has and where it came from.",
});

export const restoreFromSchema = z.object({
  pointInTime: z.object({
    databaseRef: localObjectRefSchema.optional().meta({ description: "The ManagedDatabase in this namespace whose database to fork (it must be in the same Linode account as this one: the same credentialsRef)." }),
    databaseId: linodeIdSchema.optional().meta({
      description: "The Linode id of the database to fork, when no ManagedDatabase here manages it. Like adoption: with the operator's own token only in namespaces the operator allows (--adopt-namespaces; otherwise AdoptionNotAllowed), always with credentialsRef (your own account's token). A database another namespace's ManagedDatabase records is refused exactly as a missing one (RestoreSourceMismatch).",
    }),
    restoreTime: z.iso.datetime({ offset: true }).optional().meta({
      description: "The point in time (RFC 3339, e.g. 2026-11-24T18:30:00Z), between the source's oldest restore point (about seven days back: the metric linode_database_oldest_restore_time_seconds, and the refusal says it) and now; otherwise RestoreTimeOutOfRange, nothing sent. Omitted: the latest.",
      pattern: undefined,
    }),
  }).meta({
    description: "A point-in-time restore of another current-platform database of the same engine and major version (spec.version must be the source's).",
    "x-kubernetes-validations": [
      { rule: "has(self.databaseRef) != has(self.databaseId)", message: "pointInTime needs exactly one of databaseRef or databaseId" },
    ],
  }),
}).meta({
  description: "Create this database as a fork of another (the current platform's restore): a new cluster holding the source's data as of a point in time; the source keeps running (and billing). Waits for the source to be active, degraded or failed (WaitingForRestoreSource). Set at creation only; immutable. The fork made is status.fork. On the legacy platform restore a backup in place instead (spec.requests.restore).",
});

export const databaseRequestsSchema = z.object({
  resetCredentials: requestTokenSchema.optional().meta({ description: "Any new value resets the root password once (again only if the operator stops between the reset and recording it); the connection Secret is then rewritten." }),
  patch: requestTokenSchema.optional().meta({ description: "Any new value applies operating-system patches now, at most once (a 1-node cluster is unavailable meanwhile). If the outcome is never known (the operator stopped mid-call), it is not sent again: status says so; set a new value to ask again." }),
  restore: restoreRequestSchema.optional(),
  recreate: requestTokenSchema.optional().meta({ description: "Only when the database this resource manages has vanished (Ready=False, reason ExternalResourceGone): a new value creates a new, empty database with new credentials, once. A value set while the database exists does nothing." }),
}).meta({ description: "Imperative actions. Each is performed once per new token value and recorded in status.lastRequests." });

export const managedDatabaseSpecSchema = z.object({
  engine: z.enum(databaseEngines).meta({
    description: "Database engine: mysql, postgresql or valkey. Immutable. valkey (Linode's current platform, limited availability) only where GET /databases/engines lists it (otherwise UnknownEngine, nothing sent); it has no backups and no point-in-time restore (restoreFrom, requests.restore), and no replication or engine parameters here; its connection Secret is of type servicebinding.io/redis with a rediss:// uri.",
    "x-kubernetes-validations": [immutable("engine", `a different engine is a different cluster; ${newCluster}`)],
  }),
  version: z.string().min(1).max(32).regex(/^[0-9]+(\.[0-9]+)*$/).meta({
    description: "Engine version, as the API offers it (GET /databases/engines: a major version, e.g. \"8\" for MySQL, \"17\" for PostgreSQL); another is UnknownEngineVersion, nothing sent. The full version the database runs is status.version. On the current platform a higher major version is an in-place upgrade (status updating meanwhile; a lower one is ImmutableFieldMismatch); on the legacy platform it cannot change (ImmutableFieldMismatch, nothing sent): a new engine version there needs a new cluster. A fork (restoreFrom) has its source's version.",
  }),
  region: linodeSlugSchema.meta({
    description: "Linode region id, e.g. us-east. Immutable.",
    "x-kubernetes-validations": [immutable("region", `a database cannot move between regions; ${newCluster}`)],
  }),
  type: linodeSlugSchema.meta({ description: "Linode plan type of the nodes, e.g. g6-dedicated-2. May change: a resize to a type with more disk." }),
  label: z.string().min(3).max(32).optional().meta({
    description: "Label of the cloud database (3..32 characters, unique on the account). Default: derived from namespace and name, so namespaces never collide.",
  }),
  clusterSize: z.literal([1, 2, 3]).default(1).meta(initializedOnAdoption(
    "Number of nodes: 1, 2 (current platform, dedicated plans only) or 3 (one primary and two replicas, highly available). On the current platform a change adds or removes nodes in place (status resizing meanwhile); on the legacy platform (1 or 3) it cannot change: ImmutableFieldMismatch, nothing sent.",
    1,
  )),
  encrypted: z.boolean().default(false).meta({
    ...initializedOnAdoption("Encrypt the cluster's disks. Immutable once set.", false),
    "x-kubernetes-validations": [immutable("encrypted", "it is chosen when the cluster is created")],
  }),
  sslConnection: z.boolean().default(true).meta({
    ...initializedOnAdoption("Require TLS to connect. Immutable once set.", true),
    "x-kubernetes-validations": [immutable("sslConnection", "it is chosen when the cluster is created")],
  }),
  replicationType: z.enum(mysqlReplicationTypes).optional().meta({
    description: "Replication: MySQL none, asynch or semi_synch; PostgreSQL none or asynch. Must be none for 1 node and not none for 2 or 3. Default (by the API): none for 1 node, semi_synch (MySQL) or asynch (PostgreSQL) for 3. Immutable once set (adopting a legacy-platform database, unset takes the database's). Legacy platform: the current one chooses replication itself and does not report it (leave it out there, so clusterSize can change).",
  }),
  replicationCommitType: z.enum(replicationCommitTypes).optional().meta({
    description: "PostgreSQL only: synchronization level of the replicas (on, local, remote_write, remote_apply, off; local or off with asynch replication). Default (by the API): local. Immutable once set (adopting a legacy-platform database, unset takes the database's).",
  }),
  allowList: z.array(
    z.string().min(2).max(64).meta({
      "x-kubernetes-validations": [
        { rule: "isIP(self) || isCIDR(self)", message: "allowList entries must be IP addresses or CIDR ranges, e.g. 203.0.113.7 or 203.0.113.0/24" },
      ],
    }),
  ).max(256).default([]).meta({
    ...initializedOnAdoption("IP addresses and CIDR ranges allowed to connect. A bare address means /32 (/128 for IPv6). Empty blocks every connection; 0.0.0.0/0 allows all.", []),
    "x-kubernetes-list-type": "set",
  }),
  allowListFrom: allowListFromSchema,
  allowEmpty: z.boolean().default(false).meta({
    description: "With allowListFrom: allow the merged list to be empty (blocking every connection). Default false: an empty result is held back (Synced=False, AllowListWouldBeEmpty) so a selector that matches nothing never locks everyone out.",
  }),
  updates: maintenanceWindowSchema.optional(),
  connectionSecret: connectionSecretSchema.optional(),
  engineConfig: z.record(z.string(), z.unknown()).optional().meta({
    description: "Current platform only: the engine's tunable parameters, as the API names and nests them (MySQL: {mysql: {connect_timeout: 10, ...}, binlog_retention_period: 600}; PostgreSQL: {pg: {...}, work_mem: 4, ...}). Checked against the engine's catalogue (GET /databases/{engine}/config) before anything is sent: an unknown parameter, a wrong type or a value out of range is InvalidEngineConfig. Only the parameters set here are managed (drift of them is put back); a change to one that restarts the cluster is a Warning Event. On the legacy platform it is UnsupportedOnPlatform.",
    "x-kubernetes-preserve-unknown-fields": true,
  }),
  privateNetwork: z.object({
    vpcId: linodeIdSchema.meta({ description: "The VPC's id." }),
    subnetId: linodeIdSchema.meta({ description: "The subnet's id in that VPC." }),
    publicAccess: z.boolean().default(false).meta({ description: "Whether the cluster stays reachable from the internet too (through its allow list). Default false: only from the VPC." }),
  }).optional().meta({
    description: "Current platform only: the VPC subnet the cluster joins. Set, changed or removed (then it leaves the VPC); without public access the API's hosts, and so the Secret's host, are the private ones. Naming a VPC by id is like adoption: with the operator's own token only in namespaces the operator allows (--adopt-namespaces; otherwise AdoptionNotAllowed, nothing sent), always with credentialsRef. On the legacy platform it is UnsupportedOnPlatform. Adopting a database (databaseId, managementPolicy Manage), unset takes the database's VPC (written to the spec once): it is never left by omission.",
  }),
  suspended: z.boolean().default(false).meta(initializedOnAdoption(
    "Current platform only: true suspends the cluster (it stops, and its billing with it; its data is kept; Linode deletes a cluster suspended for 180 days), false resumes it. While suspended, Ready is False with reason Suspended and the connection Secret is kept. On the legacy platform true is UnsupportedOnPlatform.",
    false,
  )),
  credentialsRef: credentialsRefSchema.optional(),
  deletionPolicy: deletionPolicySchema,
  managementPolicy: managementPolicySchema.meta({
    description: "Manage: create and update the cloud database to match the spec. Observe: adopt read-only, mirror status and publish the Secret, never change the cloud database.",
  }),
  databaseId: linodeIdSchema.optional().meta({
    description: "Adopt an existing database by its Linode id instead of creating one. Cannot change once set. With managementPolicy Manage, the fields the spec leaves unset (clusterSize, encrypted, sslConnection, allowList, privateNetwork, suspended; replicationType and replicationCommitType on the legacy platform) first take the database's values, written to the spec once (annotation linode.operator.dev/initialized-from, an Event LateInitialized), so nothing the spec did not say is sent; what the spec cannot hold is CannotExpress, nothing sent. With the operator's own token only in namespaces the operator allows (--adopt-namespaces; otherwise AdoptionNotAllowed), always with credentialsRef; an id another resource manages is refused (ExternalIdInUse).",
  }),
  restoreFrom: restoreFromSchema.optional(),
  requests: databaseRequestsSchema.optional(),
}).meta({
  description: "Desired state of a Linode managed database cluster.",
  "x-kubernetes-validations": [
    {
      rule: "self.engine == 'mysql' || !has(self.replicationType) || self.replicationType != 'semi_synch'",
      message: "replicationType semi_synch is MySQL only; PostgreSQL allows none or asynch",
      fieldPath: ".replicationType",
    },
    {
      // clusterSize has no stored default (it is initialized on adoption): absent means the create's 1.
      rule: "!has(self.replicationType) || ((has(self.clusterSize) ? self.clusterSize : 1) == 1) == (self.replicationType == 'none')",
      message: "replicationType must be none for a 1-node cluster, and asynch (or semi_synch for MySQL) for a 2- or 3-node cluster",
      fieldPath: ".replicationType",
    },
    {
      rule: "!has(self.replicationCommitType) || self.engine == 'postgresql'",
      message: "replicationCommitType is PostgreSQL only",
      fieldPath: ".replicationCommitType",
      reason: "FieldValueForbidden",
    },
    {
      // asynch is explicit, or implied by a 3-node PostgreSQL cluster without replicationType.
      rule: "!has(self.replicationCommitType) || self.replicationCommitType in ['local', 'off'] || (has(self.replicationType) ? self.replicationType != 'asynch' : (has(self.clusterSize) ? self.clusterSize : 1) == 1)",
      message: "replicationCommitType must be local or off with asynch replication",
      fieldPath: ".replicationCommitType",
    },
    // Once set (not from creation): adoption writes the database's into a spec that left them unset.
    // Valkey (spec 4.234.0): no restore points (oldest_restore_time null), no backups; its
    // parameters (GET /databases/valkey/config) are not known here, so none are sent.
    { rule: "self.engine != 'valkey' || !has(self.restoreFrom)", message: "a Valkey database has no restore points: restoreFrom (a fork) is for mysql and postgresql", fieldPath: ".restoreFrom", reason: "FieldValueForbidden" },
    { rule: "self.engine != 'valkey' || !has(self.requests) || !has(self.requests.restore)", message: "a Valkey database has no backups to restore", fieldPath: ".requests.restore", reason: "FieldValueForbidden" },
    { rule: "self.engine != 'valkey' || !has(self.replicationType)", message: "replicationType is not a Valkey setting (the current platform chooses replication itself)", fieldPath: ".replicationType", reason: "FieldValueForbidden" },
    { rule: "self.engine != 'valkey' || !has(self.engineConfig)", message: "engineConfig is for mysql and postgresql: the operator sends no Valkey parameters", fieldPath: ".engineConfig", reason: "FieldValueForbidden" },
    immutableOnceSet("replicationType", "it is chosen when the cluster is created"),
    immutableOnceSet("replicationCommitType", "it is chosen when the cluster is created"),
    immutableOnceSet("databaseId", "it names the cloud database this resource manages; create another ManagedDatabase to adopt a different one"),
    immutableOptional("restoreFrom", "a database is forked once, when it is created; to restore again, create another ManagedDatabase with restoreFrom"),
    { rule: "!has(self.restoreFrom) || !has(self.databaseId)", message: "restoreFrom creates a new database; databaseId adopts an existing one: set one of them", fieldPath: ".restoreFrom", reason: "FieldValueForbidden" },
  ],
});

export type ManagedDatabaseSpec = z.infer<typeof managedDatabaseSpecSchema>;
export type MaintenanceWindow = z.infer<typeof maintenanceWindowSchema>;
export type ConnectionSecretSpec = z.infer<typeof connectionSecretSchema>;
export type DatabaseRequests = z.infer<typeof databaseRequestsSchema>;
export type RestoreFrom = z.infer<typeof restoreFromSchema>;

export const lastRequestsSchema = z.object({
  resetCredentials: z.object(actionRecord).optional().meta({ description: "The last credentials reset performed." }),
  patch: z.object(actionRecord).optional().meta({ description: "The last patch requested." }),
  restore: z.object({ ...actionRecord, backupId: z.int().optional().meta({ description: "The backup restored." }) }).optional().meta({ description: "The last restore requested and the backup it used." }),
  recreate: recreateRecordSchema.optional(),
}).meta({ description: "The request tokens already seen: a token equal to the spec's is never performed again." });

export const managedDatabaseStatusSchema = z.object({
  id: z.int().optional().meta({ description: "Linode id of the database." }),
  label: z.string().optional().meta({ description: "Label of the cloud database." }),
  status: z.string().optional().meta({ description: "The API's state: provisioning, active, updating, failed, ..." }),
  platform: z.enum(["legacy", "current"]).optional().meta({
    description: "Linode's database platform the database is on: legacy (rdbms-legacy: backups, DatabaseSnapshots and in-place restore) or current (rdbms-default: no backups API; restore is a fork into a new cluster).",
  }),
  hosts: z.object({
    primary: z.string().optional().meta({ description: "Primary host name." }),
    secondary: z.string().optional().meta({ description: "Secondary (private network) host name, where there is one." }),
  }).optional().meta({ description: "Host names, assigned once provisioning completes." }),
  port: z.int().optional().meta({ description: "Port to connect to." }),
  engine: z.string().optional().meta({ description: "Engine reported by the API." }),
  version: z.string().optional().meta({ description: "Full engine version reported by the API, e.g. 8.0.35." }),
  region: z.string().optional().meta({ description: "Region reported by the API." }),
  type: z.string().optional().meta({ description: "Plan type reported by the API." }),
  clusterSize: z.int().optional().meta({ description: "Number of nodes reported by the API." }),
  fork: z.object({
    source: z.int().meta({ description: "The id of the database it was forked from." }),
    restoreTime: z.string().optional().meta({ description: "The point in time its data is from (RFC 3339)." }),
  }).optional().meta({ description: "What the database was forked from (spec.restoreFrom), as the API reports it." }),
  allowList: z.array(z.object({
    entry: z.string().meta({ description: "An entry of the database's allow list, as the API reports it (canonical CIDR)." }),
    from: z.string().meta({ description: "Where it came from: spec.allowList, node <name> (allowListFrom), or not asked for (then removed at the next update)." }),
  })).optional().meta({ description: "The database's allow list as the API reports it, with where each entry came from (shown when spec.allowListFrom is set)." }),
  privateNetwork: z.object({
    vpcId: z.int().meta({ description: "The VPC's id." }),
    subnetId: z.int().meta({ description: "The subnet's id." }),
    publicAccess: z.boolean().meta({ description: "Reachable from the internet too." }),
  }).optional().meta({ description: "The VPC subnet the cluster is in, as the API reports it (current platform)." }),
  updates: z.object({
    frequency: z.string().meta({ description: "weekly or monthly." }),
    duration: z.int().meta({ description: "Longest window, in hours." }),
    hourOfDay: z.int().optional().meta({ description: "Hour (UTC) the window begins." }),
    dayOfWeek: z.int().optional().meta({ description: "Day of the week, 1 = Monday .. 7 = Sunday." }),
    weekOfMonth: z.int().optional().meta({ description: "Week of the month (monthly windows, legacy platform)." }),
  }).optional().meta({ description: "The maintenance window the API applies (also when the spec leaves it to Linode)." }),
  pendingUpdates: z.array(z.object({
    description: z.string().optional().meta({ description: "What the update does." }),
    plannedFor: z.string().optional().meta({ description: "When it is planned (the next window)." }),
    deadline: z.string().optional().meta({ description: "When it is applied at the latest." }),
  })).optional().meta({ description: "Maintenance Linode has planned for the database (current platform); a new one is also a Normal Event, MaintenancePlanned." }),
  totalDiskSizeGb: z.int().optional().meta({ description: "Total disk size in GB." }),
  usedDiskSizeGb: z.int().optional().meta({ description: "Used disk space in GB." }),
  backups: z.array(z.object({
    id: z.int().meta({ description: "Backup id (for spec.requests.restore.backupId)." }),
    type: z.string().meta({ description: "snapshot (made on request) or auto (daily)." }),
    label: z.string().meta({ description: "Backup label." }),
    created: z.string().meta({ description: "When the backup was made." }),
  })).optional().meta({ description: "The latest backups (newest first), read on the drift cadence." }),
  backupsRead: z.object({
    at: z.string().meta({ description: "When a list first found the backups shown (RFC 3339). They are listed again every refresh period (--backups-refresh-hours); a list that finds the same backups writes nothing." }),
    mark: z.string().meta({ description: "A digest of this cluster's DatabaseSnapshots of the database then: while it is the same, a restarted operator shows these backups until the refresh period (--backups-refresh-hours) has passed, instead of listing them again." }),
  }).optional().meta({ description: "When status.backups was listed." }),
  lastRequests: lastRequestsSchema.optional(),
  account: accountRecordSchema.optional(),
  externalIdProof: externalIdProofSchema,
  engineConfigForms: z.array(z.object({
    parameter: z.string().meta({ description: "The engine parameter, dotted (e.g. mysql.sql_mode)." }),
    sent: z.string().meta({ description: "The value spec.engineConfig asks for, as JSON." }),
    stored: z.string().meta({ description: "The value the API stores for it instead, as JSON." }),
  })).max(256).optional().meta({
    description: "Engine parameters the API stores in another form than sent (it canonicalises them): learned from an update's answer, so the stored form counts as the spec's value and no update is sent again for it.",
    "x-kubernetes-list-type": "atomic",
  }),
}).meta({ description: "Observed state of the managed database." });

export type ManagedDatabaseStatus = z.infer<typeof managedDatabaseStatusSchema>;
