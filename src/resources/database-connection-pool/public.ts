// The DatabaseConnectionPool kind's published surface: all that other kinds, and code outside
// src/resources, may use of it (test/unit/architecture.test.ts holds them to this file). The
// rest of the folder is the kind's own, free to change without touching them.
export { databaseConnectionPoolType } from "./definition.ts";
export type { DatabaseConnectionPoolStatus } from "./schema.ts";
