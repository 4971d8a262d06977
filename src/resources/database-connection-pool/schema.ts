// DatabaseConnectionPool: a PgBouncer connection pool of a PostgreSQL ManagedDatabase on Linode's
// current platform (spec 4.234.0). One source of truth for the CRD and the controller. The
// pool has no id: its label names it in its database, and neither can change, so both are
// immutable; database, mode, size and username are changed in place.
import { z } from "zod";
import { immutable, immutableOptional } from "../../runtime/contract.ts";
import { accountRecordSchema, deletionPolicySchema, externalIdProofSchema, localObjectRefSchema } from "../shared/schema.ts";

export const poolModes = ["session", "statement", "transaction"] as const;

/** The API's label rule: letters, digits, `_` and `-`, not starting with `-`, at most 63. */
export const POOL_LABEL = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$/;

/** What a created pool gets for a field the spec leaves unset (the API's defaults). */
export const poolDefaults = { database: "defaultdb", mode: "transaction", size: 10 } as const;

const lives = "a pool lives in one database under one label; create another DatabaseConnectionPool";

/**
 * The `.meta()` of a field an adopted pool keeps as it has it while the spec leaves it unset: no
 * CRD default, so the stored spec says whether the user wrote it.
 */
const keptOnAdoption = (description: string, value: unknown): { description: string; default: undefined } => ({
  description: `${description} Default ${JSON.stringify(value)} for a pool created here; a pool adopted (spec.adopt) keeps its own value while this is unset.`,
  default: undefined,
});

export const databaseConnectionPoolSpecSchema = z.object({
  databaseRef: localObjectRefSchema.meta({
    description: "The ManagedDatabase (same namespace) the pool belongs to: PostgreSQL, on Linode's current platform. Immutable.",
    "x-kubernetes-validations": [immutable("databaseRef", lives)],
  }),
  label: z.string().regex(POOL_LABEL).optional().meta({
    description: "The pool's name (its label in the API, and the dbname clients connect to through it): 1..63 letters, digits, _ or -, not starting with -, unique in the database. Default: metadata.name, when it is a valid label (no dots, at most 63 characters). Immutable.",
  }),
  database: z.string().min(1).max(63).optional().meta(keptOnAdoption("The database (inside the cluster) the pool connects to.", poolDefaults.database)),
  mode: z.enum(poolModes).optional().meta(keptOnAdoption("PgBouncer's pooling mode: session, statement or transaction.", poolDefaults.mode)),
  size: z.int().min(1).max(10_000).optional().meta(keptOnAdoption("Server connections in the pool; at most what the database's plan allows (the API refuses more; ApiRejected).", poolDefaults.size)),
  username: z.string().min(1).max(63).regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/).optional().meta({
    description: "The database user the pool's server connections use. Unset: the inbound user (whoever connects), which the API writes as null; a pool adopted (spec.adopt) keeps its own while this is unset.",
  }),
  adopt: z.boolean().default(false).meta({
    description: "Adopt an existing pool with this label in the database instead of refusing it (LabelInUse): it is then managed (and deleted) by this resource, and the fields the spec leaves unset keep the pool's values. As every adoption: with the operator's own token only in namespaces the operator allows (--adopt-namespaces; otherwise AdoptionNotAllowed); a pool another resource manages is refused (ExternalIdInUse).",
  }),
  deletionPolicy: deletionPolicySchema,
}).meta({
  description: "Desired connection pool. It acts in its database's Linode account. A change of database, mode, size or username is one update of only what differs (the API warns an update may close in-use connections).",
  "x-kubernetes-validations": [immutableOptional("label", lives)],
});

/** No credentialsRef of its own (always undefined): a pool acts in its database's account. */
export type DatabaseConnectionPoolSpec = z.infer<typeof databaseConnectionPoolSpecSchema> & { credentialsRef?: undefined };

export const databaseConnectionPoolStatusSchema = z.object({
  databaseId: z.int().optional().meta({ description: "Linode id of the database the pool belongs to." }),
  label: z.string().optional().meta({ description: "The pool's label (its name), as the API reports it." }),
  database: z.string().optional().meta({ description: "The database the pool connects to, as the API reports it." }),
  mode: z.string().optional().meta({ description: "The pooling mode, as the API reports it." }),
  size: z.int().optional().meta({ description: "Server connections in the pool, as the API reports it." }),
  username: z.string().optional().meta({ description: "The user of its server connections, as the API reports it; absent: the inbound user (null in the API)." }),
  adopted: z.boolean().optional().meta({ description: "The pool existed and was adopted (spec.adopt): fields the spec leaves unset are left as it has them." }),
  account: accountRecordSchema.optional(),
  externalIdProof: externalIdProofSchema,
}).meta({ description: "Observed state of the connection pool." });

export type DatabaseConnectionPoolStatus = z.infer<typeof databaseConnectionPoolStatusSchema>;
