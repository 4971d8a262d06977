// What differs between the spec and the cloud database, as the fields of one update body.
// Only what the API can change is compared (label, allowList, type, maintenance window; on the
// current platform also nodes, major version, VPC and engine parameters); what it cannot is
// named by immutableMismatches, and nothing is sent for it.
import { databasePlatform, type Database, type DatabaseUpdateRequest } from "../../linode/index.ts";
import { normalizeAllowList, sameAllowList } from "./allow-list.ts";
import { apiNames, engineConfigChanges, type ParameterChange, type StoredForm } from "./engine-config.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

export interface DatabaseDiff {
  update: DatabaseUpdateRequest;
  /** The engine parameters the update changes (dotted paths), for the restart warning. */
  engineConfigPaths?: string[];
  /** Each of them with what the spec wants and the database has (what its answer is held against). */
  engineConfigChanges?: ParameterChange[];
  /** Suspend or resume the cluster (the current platform's actions, not fields of the update). */
  power?: "suspend" | "resume";
  /** Human-readable summary, e.g. "allowList, type g6-nanode-1 → g6-standard-2". */
  summary: string;
}

/**
 * `label` is the spec's label, if it names one: a database keeps the label it has (the one it
 * was created or adopted with) unless the spec says otherwise. `allowList` is the one to have
 * (spec.allowList merged with what allowListFrom resolves to).
 */
export function diffDatabase(spec: ManagedDatabaseSpec, label: string | undefined, db: Database, allowList: readonly string[] = spec.allowList, forms: readonly StoredForm[] = []): DatabaseDiff {
  const update: DatabaseUpdateRequest = {};
  const parts: string[] = [];
  if (label !== undefined && db.label !== label) {
    update.label = label;
    parts.push(`label ${db.label} → ${label}`);
  }
  if (!sameAllowList(allowList, db.allowList)) {
    update.allowList = normalizeAllowList(allowList);
    parts.push("allowList");
  }
  if (db.type !== spec.type) {
    update.type = spec.type;
    parts.push(`type ${db.type} → ${spec.type}`);
  }
  // In place on the current platform only (legacy: immutableMismatches names them).
  if (databasePlatform(db) === "current") {
    if (db.clusterSize !== spec.clusterSize) {
      update.clusterSize = spec.clusterSize;
      parts.push(`clusterSize ${String(db.clusterSize)} → ${String(spec.clusterSize)}`);
    }
    if (isUpgrade(spec.version, db.version)) {
      update.version = spec.version;
      parts.push(`version ${db.version} → ${spec.version}`);
    }
  }
  const want = spec.updates;
  const have = db.updates;
  if (want !== undefined) {
    const same = have !== null
      && have.frequency === want.frequency && (want.duration === undefined || have.duration === want.duration)
      && have.hourOfDay === want.hourOfDay && have.dayOfWeek === want.dayOfWeek
      && (want.frequency !== "monthly" || have.weekOfMonth === want.weekOfMonth);
    if (!same) {
      // Omitted in the spec: the length the database has, so the window goes whole (the API
      // documents a default, not whether an update may leave the field out).
      const duration = want.duration ?? have?.duration;
      update.updates = {
        frequency: want.frequency, hourOfDay: want.hourOfDay, dayOfWeek: want.dayOfWeek,
        ...(duration !== undefined ? { duration } : {}),
        ...(want.weekOfMonth !== undefined ? { weekOfMonth: want.weekOfMonth } : {}),
      };
      parts.push("updates (maintenance window)");
    }
  }
  // The VPC: the spec's, or none. (The legacy platform has none, and refuses one: not diffed there.)
  if (databasePlatform(db) === "current") {
    const want = spec.privateNetwork;
    const have = db.privateNetwork ?? null;
    const same = want === undefined ? have === null
      : have !== null && have.vpcId === want.vpcId && have.subnetId === want.subnetId && (have.publicAccess ?? false) === want.publicAccess;
    if (!same) {
      update.privateNetwork = want === undefined ? null : { vpcId: want.vpcId, subnetId: want.subnetId, publicAccess: want.publicAccess };
      parts.push(want === undefined ? "privateNetwork (leave the VPC)" : `privateNetwork (VPC ${String(want.vpcId)}, subnet ${String(want.subnetId)})`);
    }
  }
  let engineConfigPaths: string[] | undefined;
  let parameterChanges: ParameterChange[] | undefined;
  // Engine parameters: only those the spec sets (the API keeps defaults of its own), each in the form the API stores it.
  if (databasePlatform(db) === "current" && spec.engineConfig !== undefined) {
    const changes = engineConfigChanges(spec.engineConfig, apiNames(db.engineConfig), forms);
    if (changes.paths.length > 0) {
      update.engineConfig = changes.body;
      engineConfigPaths = changes.paths;
      parameterChanges = changes.changes;
      parts.push(`engineConfig (${changes.paths.join(", ")})`);
    }
  }
  // Suspended or resumed outside is put back; a transition under way is left to finish.
  const power = spec.suspended && db.status === "active" ? "suspend" as const : !spec.suspended && db.status === "suspended" ? "resume" as const : undefined;
  if (power !== undefined) parts.push(power === "suspend" ? "suspended (suspend the cluster)" : "resumed (resume the cluster)");
  return {
    update, ...(power !== undefined ? { power } : {}),
    ...(engineConfigPaths !== undefined ? { engineConfigPaths } : {}), ...(parameterChanges !== undefined ? { engineConfigChanges: parameterChanges } : {}),
    summary: parts.join(", "),
  };
}

export const isEmptyDiff = (d: DatabaseDiff): boolean => Object.keys(d.update).length === 0 && d.power === undefined;

/** `8` matches `8`, `8.0` and `8.0.35` (the API reports the full version of the major it was given). */
function sameVersion(want: string, have: string): boolean {
  return have === want || have.startsWith(`${want}.`);
}

const major = (v: string): number => Number(v.split(".")[0]);

/** The spec asks for a higher major version than the database runs (an in-place upgrade on the current platform). */
export function isUpgrade(want: string, have: string): boolean {
  return !sameVersion(want, have) && major(want) > major(have);
}

/**
 * What differs that the API cannot change (a new cluster would be needed): for an adopted or
 * drifted database, named so the user can fix the spec; nothing is sent for these. Security
 * settings differ only when the spec asks for more than the database has (the current
 * platform encrypts and requires TLS whether asked or not).
 */
export function immutableMismatches(spec: ManagedDatabaseSpec, db: Database): string[] {
  const out: string[] = [];
  if (db.engine !== spec.engine) out.push(`engine (spec ${spec.engine}, database ${db.engine})`);
  const current = databasePlatform(db) === "current";
  // The current platform upgrades a major version in place, never down; the legacy one never changes it.
  if (!sameVersion(spec.version, db.version) && !(current && isUpgrade(spec.version, db.version))) {
    out.push(`version (spec ${spec.version}, database ${db.version}${current ? ": a major version is upgraded in place, never downgraded" : ": the legacy platform never changes a cluster's version"})`);
  }
  if (db.region !== spec.region) out.push(`region (spec ${spec.region}, database ${db.region})`);
  if (!current && db.clusterSize !== spec.clusterSize) out.push(`clusterSize (spec ${String(spec.clusterSize)}, database ${String(db.clusterSize)}: the legacy platform cannot add or remove nodes)`);
  if (spec.encrypted && !db.encrypted) out.push("encrypted (spec true, database false)");
  if (spec.sslConnection && !db.sslConnection) out.push("sslConnection (spec true, database false)");
  if (spec.replicationType !== undefined && db.replicationType !== null && db.replicationType !== spec.replicationType) {
    out.push(`replicationType (spec ${spec.replicationType}, database ${db.replicationType})`);
  }
  if (spec.replicationCommitType !== undefined && db.replicationCommitType !== null && db.replicationCommitType !== spec.replicationCommitType) {
    out.push(`replicationCommitType (spec ${spec.replicationCommitType}, database ${db.replicationCommitType})`);
  }
  return out;
}
