// The current platform's engine parameters: the catalogue GET /databases/{engine}/config
// answers, and the checks `engine_config` on create and update goes through.
//
// Shape and values follow the recorded answers of the real API (linodego cassettes
// TestDatabaseMySQL_EngineConfig_Get and TestDatabasePostgresConfig_Get):
// MySQL `{binlog_retention_period, mysql: {…}}`, PostgreSQL `{pg: {…}, pg_stat_monitor_enable,
// pglookout: {…}, shared_buffers_percentage, work_mem}`; each parameter `{description, example,
// minimum, maximum, requires_restart, type}`, where minimum/maximum appear only for numbers and
// strings carry `enum`, `pattern`, `minLength`, `maxLength` instead (as recorded). A subset of
// the real catalogue (which has ~30 MySQL and ~45 PostgreSQL parameters); types and ranges are
// the recorded ones, descriptions are short paraphrases. Add a parameter by adding a line.
import type { ApiErrorItem } from "../errors.ts";
import type { DbEngine, EngineConfig } from "../store.ts";

type ParamType = "integer" | "number" | "boolean" | "string";

export interface Parameter {
  description: string;
  example?: unknown;
  minimum?: number;
  maximum?: number;
  requires_restart: boolean;
  /** A list when the value may also be null (recorded: `["null", "string"]`). */
  type: ParamType | (ParamType | "null")[];
  enum?: string[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

/** A group of parameters (`mysql`, `pg`, `pglookout`). */
type Group = Record<string, Parameter>;
type Catalogue = Record<string, Parameter | Group>;

const int = (description: string, minimum: number, maximum: number, example: number, requiresRestart = false): Parameter =>
  ({ description, example, maximum, minimum, requires_restart: requiresRestart, type: "integer" });
const num = (description: string, minimum: number, maximum: number, example: number, requiresRestart = false): Parameter =>
  ({ description, example, maximum, minimum, requires_restart: requiresRestart, type: "number" });
const bool = (description: string, example: boolean, requiresRestart = false): Parameter =>
  ({ description, example, requires_restart: requiresRestart, type: "boolean" });
const oneOf = (description: string, values: string[], example: string, requiresRestart = false): Parameter =>
  ({ description, enum: values, example, requires_restart: requiresRestart, type: "string" });

const MYSQL: Catalogue = {
  binlog_retention_period: int("Minimum seconds binlog entries are kept before deletion.", 600, 86400, 600),
  mysql: {
    connect_timeout: int("Seconds the server waits for a connect packet before answering Bad handshake.", 2, 3600, 10),
    default_time_zone: {
      description: "Default time zone: an offset from UTC, a zone name, or SYSTEM.", example: "+03:00",
      maxLength: 100, minLength: 2, pattern: "^([-+][\\d:]*|[\\w/]*)$", requires_restart: false, type: "string",
    },
    information_schema_stats_expiry: int("Seconds before cached statistics expire.", 900, 31536000, 86400),
    innodb_change_buffer_max_size: int("Maximum InnoDB change buffer size, as a percentage of the buffer pool.", 0, 50, 30),
    innodb_flush_neighbors: int("Whether flushing a page also flushes other dirty pages in its extent (0, 1 or 2).", 0, 2, 0),
    innodb_ft_min_token_size: int("Minimum length of words stored in an InnoDB FULLTEXT index.", 0, 16, 3, true),
    innodb_ft_server_stopword_table: {
      description: "Your own InnoDB FULLTEXT stopword table (db_name/table_name).", example: "db_name/table_name",
      maxLength: 1024, pattern: "^.+/.+$", requires_restart: false, type: ["null", "string"],
    },
    innodb_lock_wait_timeout: int("Seconds an InnoDB transaction waits for a row lock.", 1, 3600, 50),
    innodb_read_io_threads: int("InnoDB I/O threads for reads.", 1, 64, 10, true),
    innodb_rollback_on_timeout: bool("Roll back the whole transaction on a lock wait timeout.", true, true),
    interactive_timeout: int("Seconds the server waits for activity on an interactive connection.", 30, 604800, 3600),
    internal_tmp_mem_storage_engine: oneOf("Storage engine of in-memory internal temporary tables.", ["TempTable", "MEMORY"], "TempTable"),
    max_allowed_packet: int("Largest message in bytes the server accepts.", 102400, 1073741824, 67108864),
    net_read_timeout: int("Seconds to wait for more data from a connection before aborting the read.", 1, 3600, 30),
    sort_buffer_size: int("Sort buffer size in bytes for ORDER BY.", 32768, 1073741824, 262144),
    sql_mode: {
      description: "Global SQL mode; empty for the server's defaults.", example: "ANSI,TRADITIONAL",
      maxLength: 1024, pattern: "^[A-Z_]*(,[A-Z_]+)*$", requires_restart: false, type: "string",
    },
    sql_require_primary_key: bool("Refuse tables without a primary key.", true),
    wait_timeout: int("Seconds the server waits for activity on a non-interactive connection.", 1, 2147483, 28800),
  },
};

const POSTGRESQL: Catalogue = {
  pg: {
    autovacuum_analyze_scale_factor: {
      description: "Fraction of the table size added to autovacuum_analyze_threshold before an ANALYZE.",
      maximum: 1.0, minimum: 0.0, requires_restart: false, type: "number",
    },
    autovacuum_max_workers: { description: "Maximum autovacuum worker processes.", maximum: 20, minimum: 1, requires_restart: true, type: "integer" },
    autovacuum_naptime: { description: "Minimum seconds between autovacuum runs on a database.", maximum: 86400, minimum: 1, requires_restart: false, type: "integer" },
    bgwriter_delay: int("Milliseconds between background writer rounds.", 10, 10000, 200),
    deadlock_timeout: int("Milliseconds to wait on a lock before checking for a deadlock.", 500, 1800000, 1000),
    default_toast_compression: oneOf("Default TOAST compression method.", ["lz4", "pglz"], "lz4"),
    idle_in_transaction_session_timeout: {
      description: "Milliseconds after which a session idle in a transaction is ended.",
      maximum: 604800000, minimum: 0, requires_restart: false, type: "integer",
    },
    jit: bool("Just-in-time compilation.", true),
    max_locks_per_transaction: { description: "Maximum locks per transaction.", maximum: 6400, minimum: 64, requires_restart: true, type: "integer" },
    max_parallel_workers: { description: "Maximum workers for parallel queries.", maximum: 96, minimum: 0, requires_restart: false, type: "integer" },
    password_encryption: {
      default: "md5", description: "Algorithm that encrypts passwords.", enum: ["md5", "scram-sha-256"], example: "scram-sha-256",
      requires_restart: false, type: ["string", "null"],
    },
    temp_file_limit: int("Temporary file limit in KiB; -1 for none.", -1, 2147483647, 5000000),
    timezone: { description: "The service's time zone.", example: "Europe/Helsinki", maxLength: 64, pattern: "^[\\w/]*$", requires_restart: false, type: "string" },
    track_commit_timestamp: oneOf("Record the commit time of transactions.", ["off", "on"], "off", true),
    wal_writer_delay: int("Milliseconds between WAL flushes.", 10, 200, 50),
  },
  pg_stat_monitor_enable: { default: false, description: "Enable the pg_stat_monitor extension (restarts the cluster).", requires_restart: true, type: "boolean" },
  pglookout: {
    max_failover_replication_time_lag: {
      default: 60, description: "Seconds of primary unavailability before failing over to a standby.",
      maximum: 999999, minimum: 10, requires_restart: false, type: "integer",
    },
  },
  shared_buffers_percentage: num("Percentage of RAM used for shared memory buffers (shared_buffers).", 20.0, 60.0, 41.5, true),
  work_mem: int("Memory in MB a query operation may use before spilling to disk.", 1, 1024, 4),
};

/**
 * GUESS (databases/facts.md): spec 4.234.0 documents GET /databases/valkey/config, but its
 * parameters were not extracted: the emulator offers none (every Valkey parameter is refused as
 * unknown), as the operator sends none.
 */
const ENGINE_NAMES: Record<DbEngine, string> = { mysql: "MySQL", postgresql: "PostgreSQL", valkey: "Valkey" };

const CATALOGUES: Record<DbEngine, Catalogue> = { mysql: MYSQL, postgresql: POSTGRESQL, valkey: {} };

/**
 * What the real API added to `engine_config` when a create carried one (recorded: `{"mysql":{}}`
 * came back with these two MySQL values, `{"pg":{}}` with these three PostgreSQL ones). A create
 * without `engine_config` stores none (the 2025 recordings of such creates show no parameters).
 */
const CREATE_DEFAULTS: Record<DbEngine, EngineConfig> = {
  mysql: {
    mysql: {
      sql_mode: "ANSI,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,NO_ZERO_DATE,NO_ZERO_IN_DATE,STRICT_ALL_TABLES",
      sql_require_primary_key: true,
    },
  },
  postgresql: { pg: { password_encryption: "md5" }, pg_stat_monitor_enable: false, pglookout: { max_failover_replication_time_lag: 60 } },
  valkey: {},
};

const isParameter = (entry: Parameter | Group): entry is Parameter => typeof (entry as Parameter).requires_restart === "boolean";
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** GET /databases/{engine}/config. */
export function engineConfigCatalogue(engine: DbEngine): Catalogue {
  return structuredClone(CATALOGUES[engine]);
}

const article = (t: ParamType): string => (t === "integer" ? "an integer" : `a ${t}`);

/** Why `value` is not a valid value of `p` (null: it is). `null` itself is handled by the caller. */
function checkValue(p: Parameter, value: unknown): string | null {
  const types = (Array.isArray(p.type) ? p.type : [p.type]).filter((t): t is ParamType => t !== "null");
  const type = types[0] ?? "string";
  const ok = type === "integer" ? typeof value === "number" && Number.isInteger(value)
    : type === "number" ? typeof value === "number" && Number.isFinite(value)
      : typeof value === type;
  if (!ok) return `Must be ${article(type)}`;
  if (typeof value === "number" && ((p.minimum !== undefined && value < p.minimum) || (p.maximum !== undefined && value > p.maximum))) {
    return `Must be between ${String(p.minimum ?? "-∞")} and ${String(p.maximum ?? "∞")}`;
  }
  if (typeof value === "string") {
    if (p.enum !== undefined && !p.enum.includes(value)) return `Must be one of ${p.enum.join(", ")}`;
    if (p.minLength !== undefined && value.length < p.minLength) return `Length must be at least ${String(p.minLength)} characters`;
    if (p.maxLength !== undefined && value.length > p.maxLength) return `Length must be at most ${String(p.maxLength)} characters`;
    if (p.pattern !== undefined && !new RegExp(p.pattern, "u").test(value)) return `Must match the pattern ${p.pattern}`;
  }
  return null;
}

/**
 * Checks `engine_config` of a create or update against the engine's catalogue. Every problem is
 * reported, each naming its field the API's way (`engine_config.mysql.connect_timeout`): an
 * unknown parameter or group, a value of the wrong type, out of range, not in the enum, not
 * matching the pattern. A null value is accepted (an update removes that parameter, a create
 * ignores it). `engine_config` itself null or absent is not checked (nothing asked).
 */
export function checkEngineConfig(engine: DbEngine, config: unknown): ApiErrorItem[] {
  if (config === undefined || config === null) return [];
  if (!isObject(config)) return [{ field: "engine_config", reason: "Must be an object" }];
  const catalogue = CATALOGUES[engine];
  const errors: ApiErrorItem[] = [];
  const known = (names: string[]) => names.join(", ");
  for (const [name, value] of Object.entries(config)) {
    const field = `engine_config.${name}`;
    const entry = catalogue[name];
    if (entry === undefined) {
      errors.push({ field, reason: `${name} is not a ${ENGINE_NAMES[engine]} engine parameter; known: ${known(Object.keys(catalogue))}` });
      continue;
    }
    if (value === null) continue;
    if (isParameter(entry)) {
      const why = checkValue(entry, value);
      if (why !== null) errors.push({ field, reason: why });
      continue;
    }
    if (!isObject(value)) {
      errors.push({ field, reason: "Must be an object" });
      continue;
    }
    for (const [param, v] of Object.entries(value)) {
      const pField = `${field}.${param}`;
      const p = entry[param];
      if (p === undefined) {
        errors.push({ field: pField, reason: `${param} is not a parameter of ${name}` });
        continue;
      }
      if (v === null) continue;
      const why = checkValue(p, v);
      if (why !== null) errors.push({ field: pField, reason: why });
    }
  }
  return errors;
}

/** Drops nulls (a create's null means "not set") and empty groups stay as given. */
function withoutNulls(config: Record<string, unknown>): EngineConfig {
  const out: EngineConfig = {};
  for (const [k, v] of Object.entries(config)) {
    if (v === null) continue;
    out[k] = isObject(v) ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null)) : v;
  }
  return out;
}

/** What a create stores: the checked `engine_config` and, when one was given, the recorded defaults for what it left out. */
export function engineConfigOnCreate(engine: DbEngine, config: unknown): EngineConfig {
  if (!isObject(config)) return {};
  return mergeEngineConfig(structuredClone(CREATE_DEFAULTS[engine]), withoutNulls(config));
}

/**
 * An update's `engine_config` applied to the stored one: parameters given replace, a null
 * parameter is removed, a null group removes the whole group, groups are merged parameter by
 * parameter (the official client's suite sends only the parameters it changes, the others stay).
 */
export function mergeEngineConfig(current: EngineConfig, patch: Record<string, unknown>): EngineConfig {
  const out = new Map(Object.entries(structuredClone(current)));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      out.delete(k);
    } else if (isObject(v)) {
      const old = out.get(k);
      const group = new Map(Object.entries(isObject(old) ? old : {}));
      for (const [param, value] of Object.entries(v)) {
        if (value === null) group.delete(param);
        else group.set(param, value);
      }
      out.set(k, Object.fromEntries(group));
    } else {
      out.set(k, v);
    }
  }
  return Object.fromEntries(out);
}

/** As the API returns it: keys in alphabetical order at every level (recorded). */
export function renderEngineConfig(config: EngineConfig): EngineConfig {
  const sorted = (o: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.keys(o).sort().map((k) => [k, isObject(o[k]) ? sorted(o[k]) : o[k]]));
  return sorted(config);
}
