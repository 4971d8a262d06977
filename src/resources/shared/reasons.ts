// The condition reasons every kind may report (accounts, adoption, labels, what cannot change),
// with what each means; a kind's own are in its folder (reasons.ts).
import { reasonNames } from "../../runtime/contract.ts";

export const sharedReasonMeanings = {
  CredentialsNotFound: "The credentials Secret spec.credentialsRef names is missing (or, where the operator requires one, spec.credentialsRef is).",
  CredentialsInvalid: "The credentials Secret has no usable token, or the API refused the token (401).",
  AccountChanged: "The credentials now reach another account than the one the cloud object was recorded in: nothing is created, recreated or deleted in either until they point back.",
  NodesNotReadable: "A ManagedDatabase's allowListFrom.nodes or a NodeBalancer's configs[].nodesFrom, but the operator may not read the cluster's Nodes (and Services and EndpointSlices): install the chart with rbac.readNodes=true. Nothing is sent.",
  AdoptionNotAllowed: "Naming an existing account object by id (a database or NodeBalancer to adopt, a database to fork: restoreFrom.pointInTime.databaseId, a VPC to join: privateNetwork, a NodeBalancer's vpcs and frontendVpc, a reserved address: ipv4, a firewall to attach: firewallId) with the operator's own token, in a namespace the operator's admin has not allowed (--adopt-namespaces). Nothing is read or sent, whatever exists under that id.",
  OwnershipUnproven: "status.externalId names a cloud object this resource cannot prove it created or was allowed to adopt (a status written by someone else, or a resource restored from a backup): nothing is read from it, changed or deleted, and deleting the resource leaves it in place. Name it in the spec's id field to adopt it on purpose.",
  BackingUp: "Ready=False while the API reports the database backing_up.",
  LabelInUse: "The label is taken by a cloud object this resource did not create: never adopted, never deleted.",
  ImmutableFieldMismatch: "The cloud object differs in what the API cannot change; nothing is sent.",
  DatabaseGone: "The database a DatabaseSnapshot or DatabaseConnectionPool belonged to no longer exists, and its backups and pools with it.",
  DatabaseNotManaged: "The ManagedDatabase only observes its database (managementPolicy: Observe): a snapshot or a pool would change it, so nothing is sent.",
  DatabasePaused: "The ManagedDatabase carries the paused annotation: no snapshot is taken and no pool created or changed until it is removed.",
  UnsupportedOnPlatform: "What the spec asks for does not exist on the database's platform (status.platform; for a database not yet created, the one new databases are created on, --database-platform): backups, DatabaseSnapshots and in-place restore exist only on the legacy platform; suspend, a VPC and engine parameters only on the current one, which takes no replicationType or replicationCommitType, no encrypted or sslConnection false, weekly maintenance of 4 hours only (legacy: 1..3 hours); DatabaseConnectionPools only for PostgreSQL on the current platform. The message names each field. Nothing is sent.",
} as const;

export const SharedReasons = reasonNames(sharedReasonMeanings);
