// The DatabaseSnapshot kind's published surface: all that other kinds, and code outside
// src/resources, may use of it (test/unit/architecture.test.ts holds them to this file). The
// rest of the folder is the kind's own, free to change without touching them.
export { databaseSnapshotType } from "./definition.ts";
// A snapshot another kind refers to (a database's restore snapshotRef), read with this kind's schema.
export { snapshotView, type SnapshotView } from "./reference-view.ts";
