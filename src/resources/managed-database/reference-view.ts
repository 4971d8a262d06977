// What another kind may know of a ManagedDatabase resource it refers to (a DatabaseSnapshot's
// databaseRef): read with this kind's own schemas, so no other kind casts its spec or status.
import type { DatabaseEngine } from "../../linode/index.ts";
import { isPaused, isTrue, type Decoded, type KubeObject, type ManagedObject, type ReadStore } from "../../runtime/contract.ts";
import { recordedAccount, type AccountSource } from "../shared/credentials.ts";
import { specRefName, type AccountRecord, type CredentialsRef } from "../shared/schema.ts";
import { KindLimits } from "../shared/constants.ts";
import { managedDatabaseSpecSchema, managedDatabaseStatusSchema } from "./schema.ts";

export interface DatabaseView {
  name: string;
  engine: DatabaseEngine;
  /** The cloud database's id, once it has one. */
  id: number | undefined;
  /** The API's state of its database as it last observed it (provisioning, active, backing_up, ...). */
  apiStatus: string | undefined;
  /** The database platform it is on, once observed. */
  platform: "legacy" | "current" | undefined;
  managementPolicy: "Manage" | "Observe";
  /** Reconciliation is paused (nothing may change it). */
  paused: boolean;
  /** The account its database lives in, as it recorded. */
  account: AccountRecord | undefined;
  /** The credentials its spec names (an operator before accounts were recorded acted with these). */
  credentialsRef: CredentialsRef | undefined;
}

/** The view of a ManagedDatabase object; not ready until it is Ready with a database id. */
export function databaseView(obj: KubeObject): Decoded<DatabaseView> {
  const managed = obj as ManagedObject;
  const spec = managedDatabaseSpecSchema.safeParse(managed.spec);
  if (!spec.success) return { notReady: "its spec is invalid" };
  const id = typeof managed.status?.id === "number" ? managed.status.id : undefined;
  const platform = managedDatabaseStatusSchema.shape.platform.safeParse(managed.status?.platform);
  const value: DatabaseView = {
    name: obj.metadata.name,
    engine: spec.data.engine,
    id,
    apiStatus: typeof managed.status?.status === "string" ? managed.status.status : undefined,
    platform: platform.success ? platform.data : undefined,
    managementPolicy: spec.data.managementPolicy,
    paused: isPaused(managed),
    account: recordedAccount(managed),
    credentialsRef: spec.data.credentialsRef,
  };
  if (!isTrue(managed.status?.conditions, "Ready")) return { value, notReady: "it is not Ready" };
  return id === undefined ? { value, notReady: "it has no database id yet" } : { value };
}

/**
 * The account an object that lives in its database's account acts in (a snapshot, a pool): the
 * one it recorded itself once made (its ManagedDatabase may be gone, or now manage another
 * database: `sameDatabase` false), else the one its database recorded, else (a database
 * resource written before accounts were recorded) what its database's spec names.
 */
export function accountInDatabase(own: AccountRecord | undefined, db: DatabaseView | undefined, sameDatabase: boolean): AccountSource {
  if (own !== undefined && (db?.account === undefined || !sameDatabase)) return own;
  if (db?.account !== undefined) return db.account;
  return { credentialsRef: db?.credentialsRef };
}

/** The Secrets the account of the database `obj`'s spec.databaseRef names may come from: resolved with its own, and kept while it needs them. */
export function databaseAccountSources(databases: ReadStore<ManagedObject>, obj: ManagedObject): AccountSource[] {
  const name = specRefName(obj, "databaseRef");
  const db = name === undefined ? undefined : databases.get(obj.metadata.namespace ?? "", name);
  const view = db === undefined ? undefined : databaseView(db).value;
  return view === undefined ? [] : [...(view.account !== undefined ? [view.account] : []), { credentialsRef: view.credentialsRef }];
}

const shownSchema = managedDatabaseStatusSchema.pick({ id: true, backups: true, backupsRead: true });

/**
 * The snapshots among the backups a ManagedDatabase's status shows for database `id`, if they
 * were listed (or known to be none, at its creation) less than `withinMillis` ago under `mark`
 * (the digest of this cluster's snapshots of it now: none taken or lost since) and the list is
 * whole; undefined otherwise. Apart from its view: a new list wakes none of its snapshots.
 */
export function shownSnapshots(obj: KubeObject, id: number, withinMillis: number, mark: string): number[] | undefined {
  const parsed = shownSchema.safeParse((obj as ManagedObject).status ?? {});
  if (!parsed.success || parsed.data.id !== id || parsed.data.backupsRead?.mark !== mark) return undefined;
  const backups = parsed.data.backups ?? [];
  if (!(Date.now() - Date.parse(parsed.data.backupsRead.at) < withinMillis) || backups.length >= KindLimits.backupsInStatus) return undefined;
  return backups.filter((b) => b.type === "snapshot").map((b) => b.id);
}
