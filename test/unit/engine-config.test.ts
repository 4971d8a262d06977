// spec.engineConfig against an engine's catalogue: problems named with what each accepts, and
// only the parameters the spec sets compared with what the database has.
import { describe, expect, it } from "vitest";
import { engineConfigChanges, storedForms, engineConfigProblems, restarting } from "../../src/resources/managed-database/engine-config.ts";

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
    expect(engineConfigChanges({ mysql: { connect_timeout: 10 } }, have)).toMatchObject({ body: {}, paths: [], changes: [] });
    expect(engineConfigChanges({ binlog_retention_period: 900, mysql: { connect_timeout: 10, innodb_ft_min_token_size: 4 } }, have)).toEqual({
      body: { binlog_retention_period: 900, mysql: { innodb_ft_min_token_size: 4 } }, paths: ["binlog_retention_period", "mysql.innodb_ft_min_token_size"],
      changes: [{ path: "binlog_retention_period", want: 900, have: 600 }, { path: "mysql.innodb_ft_min_token_size", want: 4, have: null }],
    });
    expect(engineConfigChanges({ pg: { "pg_stat_monitor.pgsm_max_buckets": 3 } }, {})).toMatchObject({ body: { pg: { "pg_stat_monitor.pgsm_max_buckets": 3 } }, paths: ["pg.pg_stat_monitor.pgsm_max_buckets"] });
  });

  it("a parameter the API stores in another form is learned from an update's answer and then compared in that form; one merely not applied is not", () => {
    const changes = engineConfigChanges({ mysql: { sql_mode: "TRADITIONAL,ANSI", connect_timeout: 20 } }, { mysql: { connect_timeout: 10 } }).changes;
    // Answer: sql_mode canonicalised, connect_timeout not applied (still 10).
    const forms = storedForms(changes, { mysql: { sql_mode: "ANSI,TRADITIONAL", connect_timeout: 10 } });
    expect(forms).toEqual([{ parameter: "mysql.sql_mode", sent: "\"TRADITIONAL,ANSI\"", stored: "\"ANSI,TRADITIONAL\"" }]);
    const again = engineConfigChanges({ mysql: { sql_mode: "TRADITIONAL,ANSI", connect_timeout: 20 } }, { mysql: { sql_mode: "ANSI,TRADITIONAL", connect_timeout: 10 } }, forms);
    expect(again.paths).toEqual(["mysql.connect_timeout"]);
  });

  it("parameter names are never walked into an object's prototype", () => {
    const hostile = JSON.parse('{"constructor": {"prototype": {"polluted": 1}}, "__proto__": {"polluted": 2}, "mysql": {"prototype": 3}}') as Record<string, unknown>;
    const out = engineConfigChanges(hostile, {});
    expect(out.paths).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("says which changes restart the cluster", () => {
    expect(restarting(["binlog_retention_period", "mysql.innodb_ft_min_token_size"], catalogue)).toEqual(["mysql.innodb_ft_min_token_size"]);
  });
});
