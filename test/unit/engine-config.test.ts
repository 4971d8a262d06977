// spec.engineConfig against an engine's catalogue: problems named with what each accepts, and
// only the parameters the spec sets compared with what the database has.
import { describe, expect, it } from "vitest";
import { engineConfigChanges, engineConfigProblems, restarting } from "../../src/resources/managed-database/engine-config.ts";

const catalogue = {
  binlog_retention_period: { description: "", type: "integer", minimum: 600, maximum: 86400, requires_restart: false },
  mysql: {
    connect_timeout: { description: "", type: "integer", minimum: 2, maximum: 3600, requires_restart: false },
    innodb_ft_min_token_size: { description: "", type: "integer", minimum: 0, maximum: 16, requires_restart: true },
    sql_mode: { description: "", type: "string", pattern: "^[A-Z_]*(,[A-Z_]+)*$", maxLength: 1024, requires_restart: false },
    internal_tmp_mem_storage_engine: { description: "", type: "string", enum: ["TempTable", "MEMORY"], requires_restart: false },
    innodb_ft_server_stopword_table: { description: "", type: ["null", "string"], requires_restart: false },
  },
  pg: { "pg_stat_monitor.pgsm_max_buckets": { description: "", type: "integer", minimum: 1, maximum: 10, requires_restart: false } },
};

describe("engine parameters", () => {
  it("accepts what the catalogue accepts, nulls where the type allows them", () => {
    expect(engineConfigProblems({ binlog_retention_period: 600, mysql: { connect_timeout: 10, sql_mode: "ANSI,TRADITIONAL", innodb_ft_server_stopword_table: null } }, catalogue)).toEqual([]);
    expect(engineConfigProblems({ pg: { "pg_stat_monitor.pgsm_max_buckets": 5 } }, catalogue)).toEqual([]);
  });

  it("names an unknown parameter, a wrong type and a value out of range, with what each accepts", () => {
    const problems = engineConfigProblems({ mysql: { connect_timeout: 1, nope: 3, internal_tmp_mem_storage_engine: "InnoDB", sql_mode: 5 } }, catalogue);
    expect(problems).toEqual([
      "mysql.connect_timeout is 1; it accepts integer, 2..3600",
      expect.stringMatching(/^mysql\.nope is not a parameter of this engine \(GET \/databases\/\{engine\}\/config lists binlog_retention_period, mysql\.connect_timeout/) as string,
      "mysql.internal_tmp_mem_storage_engine is \"InnoDB\"; it accepts string, one of TempTable, MEMORY",
      "mysql.sql_mode is 5; it accepts string, matching ^[A-Z_]*(,[A-Z_]+)*$, 0..1024 characters",
    ]);
  });

  it("changes only the parameters the spec sets that differ, nested as the API nests them", () => {
    const have = { binlog_retention_period: 600, mysql: { connect_timeout: 10, sql_require_primary_key: true } };
    expect(engineConfigChanges({ mysql: { connect_timeout: 10 } }, have)).toEqual({ body: {}, paths: [] });
    expect(engineConfigChanges({ binlog_retention_period: 900, mysql: { connect_timeout: 10, innodb_ft_min_token_size: 4 } }, have))
      .toEqual({ body: { binlog_retention_period: 900, mysql: { innodb_ft_min_token_size: 4 } }, paths: ["binlog_retention_period", "mysql.innodb_ft_min_token_size"] });
    expect(engineConfigChanges({ pg: { "pg_stat_monitor.pgsm_max_buckets": 3 } }, {})).toEqual({ body: { pg: { "pg_stat_monitor.pgsm_max_buckets": 3 } }, paths: ["pg.pg_stat_monitor.pgsm_max_buckets"] });
  });

  it("says which changes restart the cluster", () => {
    expect(restarting(["binlog_retention_period", "mysql.innodb_ft_min_token_size"], catalogue)).toEqual(["mysql.innodb_ft_min_token_size"]);
  });
});
