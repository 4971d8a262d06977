// An adopted database as the spec fields a user may leave unset (the runtime writes them once,
// lateInit): each as the spec writes it. What its schema refuses the runtime finds itself.
import { databasePlatform, type Database } from "../../linode/index.ts";
import type { LateInit } from "../../runtime/contract.ts";

export function databaseAsSpec(db: Database): LateInit {
  const net = db.privateNetwork;
  const vpc = net?.vpcId !== null && net?.vpcId !== undefined && net.subnetId !== null && net.subnetId !== undefined
    ? { vpcId: net.vpcId, subnetId: net.subnetId, publicAccess: net.publicAccess ?? false } : undefined;
  // Only the legacy platform reports replication as the spec states it; the current one chooses
  // it itself, and a stated one would keep clusterSize from changing there.
  const replication = databasePlatform(db) === "legacy" ? {
    replicationType: db.replicationType ?? undefined,
    replicationCommitType: db.engine === "postgresql" ? db.replicationCommitType ?? undefined : undefined,
  } : {};
  return {
    fields: {
      clusterSize: db.clusterSize,
      encrypted: db.encrypted,
      sslConnection: db.sslConnection,
      allowList: [...db.allowList],
      privateNetwork: vpc,
      suspended: db.status === "suspended" || db.status === "suspending",
      ...replication,
    },
  };
}
