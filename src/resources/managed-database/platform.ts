// What each of Linode's database platforms takes, and the create body built for one. The
// platform of an existing database is the one it reports (status.platform); a new database is
// created on the platform the API creates them on, which no API answer says before the create:
// the operator's --database-platform (default current: the legacy one is no longer sold).
import type { DatabaseCreateRequest, DatabasePlatform, ForkInput } from "../../linode/index.ts";
import type { ManagedDatabaseSpec } from "./schema.ts";

/**
 * The platform a new database of `engine` is created on: `configured` (--database-platform),
 * but Valkey always on the current one (it exists nowhere else: spec 4.234.0).
 */
export const newDatabasePlatform = (engine: ManagedDatabaseSpec["engine"], configured: DatabasePlatform): DatabasePlatform => (engine === "valkey" ? "current" : configured);

/**
 * Maintenance window lengths (hours) each platform takes. Current: 4 only (spec 4.234.0:
 * "Currently can only be `4`"; recorded 2026-07). Legacy: 1..3 (spec 4.176.0).
 */
export const maintenanceHours: Readonly<Record<DatabasePlatform, readonly number[]>> = { current: [4], legacy: [1, 2, 3] };

/**
 * The spec fields `platform` does not take, each named with why (empty: none). `written` is the
 * spec as stored, before defaults: `encrypted` and `sslConnection` count only where the user
 * wrote them (their defaults ask for nothing), and only a value the platform cannot give —
 * the current one always encrypts and requires TLS, so `true` there is what it does anyway.
 */
export function unsupportedOnPlatform(spec: ManagedDatabaseSpec, written: unknown, platform: DatabasePlatform): string[] {
  const out: string[] = [];
  const wrote = (field: string): unknown => (written !== null && typeof written === "object" ? (written as Record<string, unknown>)[field] : undefined);
  const window = spec.updates;
  if (window?.duration !== undefined && !maintenanceHours[platform].includes(window.duration)) {
    out.push(`spec.updates.duration: ${String(window.duration)} (the ${platform} platform's window is ${hoursOf(platform)})`);
  }
  if (platform === "current") {
    if (wrote("encrypted") === false) out.push("spec.encrypted: false (the current platform encrypts every cluster)");
    if (wrote("sslConnection") === false) out.push("spec.sslConnection: false (the current platform requires TLS)");
    if (spec.replicationType !== undefined) out.push("spec.replicationType (the current platform chooses replication itself)");
    if (spec.replicationCommitType !== undefined) out.push("spec.replicationCommitType (the current platform chooses replication itself)");
    if (window?.frequency === "monthly") out.push("spec.updates.frequency: monthly (the current platform's maintenance is weekly)");
    return out;
  }
  if (spec.suspended) out.push("spec.suspended: true (suspend the cluster)");
  if (spec.privateNetwork !== undefined) out.push("spec.privateNetwork (a VPC)");
  if (spec.engineConfig !== undefined) out.push("spec.engineConfig (engine parameters)");
  return out;
}

const hoursOf = (platform: DatabasePlatform): string => {
  const h = maintenanceHours[platform];
  return h.length === 1 ? `${String(h[0])} hours` : `${String(h[0])}..${String(h[h.length - 1])} hours`;
};

/**
 * The create body for `platform`: the current platform's create schema has no `encrypted`,
 * `replication_type` or `replication_commit_type` (spec 4.234.0, additionalProperties false;
 * linodego dropped them in 2026) and `ssl_connection` is "currently required to be true"
 * (linodego and Terraform do not send it): none of them is sent there. The legacy platform
 * gets what it always did.
 */
export function createRequest(spec: ManagedDatabaseSpec, platform: DatabasePlatform, label: string, allowList: string[], fork?: ForkInput): DatabaseCreateRequest {
  return {
    label, region: spec.region, type: spec.type, version: spec.version, clusterSize: spec.clusterSize, allowList,
    ...(platform === "legacy" ? {
      encrypted: spec.encrypted, sslConnection: spec.sslConnection,
      ...(spec.replicationType !== undefined ? { replicationType: spec.replicationType } : {}),
      ...(spec.replicationCommitType !== undefined ? { replicationCommitType: spec.replicationCommitType } : {}),
    } : {}),
    ...(spec.engineConfig !== undefined ? { engineConfig: spec.engineConfig } : {}),
    ...(spec.privateNetwork !== undefined ? { privateNetwork: { vpcId: spec.privateNetwork.vpcId, subnetId: spec.privateNetwork.subnetId, publicAccess: spec.privateNetwork.publicAccess } } : {}),
    ...(fork !== undefined ? { fork } : {}),
  };
}
