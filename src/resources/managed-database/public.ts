// The ManagedDatabase kind's published surface: all that other kinds, and code outside
// src/resources, may use of it (test/unit/architecture.test.ts holds them to this file). The
// rest of the folder is the kind's own, free to change without touching them.
export { managedDatabaseType } from "./definition.ts";
export type { ManagedDatabaseStatus } from "./schema.ts";
// A database another kind refers to (a snapshot's or a pool's databaseRef), read with this kind's schemas.
export { accountInDatabase, databaseAccountSources, databaseView, shownSnapshots, type DatabaseView } from "./reference-view.ts";
// The account-wide list of databases, shared so that the kinds on a database read it once.
export { accountDatabases, type DatabaseListCache } from "./database-cache.ts";
// A database's backups as its snapshots see them.
export { markDigest, markOf, snapshotBackupsOf } from "./backups.ts";
// The credentials a database's connection Secret holds (a pool's connection is built on them).
export { credentialsOf } from "./connection.ts";
