// All emulated cloud objects, as plain JSON-serialisable records so the state file and the
// admin dump are just this object. Maps keep insertion order = id order, so listing never sorts.
import { DEFAULT_ACCOUNT } from "./auth.ts";
import type { ConnectionPoolRecord } from "./databases/connection-pools.ts";
export type DbEngine = "mysql" | "postgresql" | "valkey";
export type DbStatus =
  | "provisioning" | "active" | "suspending" | "suspended" | "resuming" | "restoring"
  | "failed" | "degraded" | "updating" | "backing_up"
  // The current platform's (SNEW status enum): an in-place resize (plan or node count).
  | "resizing";

/**
 * A database's platform: "legacy" (`rdbms-legacy`, the spec's) or "current" (`rdbms-default`,
 * what the real API creates today; databases/facts.md). Each database has
 * its own; one account may hold both.
 */
export type DatabasePlatform = "legacy" | "current";

export interface Updates {
  frequency: "weekly" | "monthly";
  duration: number;
  hour_of_day: number;
  day_of_week: number;
  week_of_month: number | null;
}

/**
 * A current-platform database's engine parameters as stored (and returned): the engine's
 * top-level parameters and groups (MySQL `mysql`, `binlog_retention_period`; PostgreSQL `pg`,
 * `pglookout`, `pg_stat_monitor_enable`, `shared_buffers_percentage`, `work_mem`), each group
 * an object of parameter values. Checked against databases/engine-config.ts.
 */
export type EngineConfig = Record<string, unknown>;

/** A current-platform database's VPC attachment (`private_network`), as given. */
export interface PrivateNetwork {
  vpc_id: number;
  subnet_id: number;
  public_access: boolean;
}

/** What a forked (point-in-time restored) database was forked from. */
export interface ForkRecord {
  source: number;
  /** Emulated ms of the restore point. */
  restore_time: number;
}

export interface BackupRecord {
  id: number;
  type: "snapshot" | "auto";
  label: string;
  created: number;
}

/** A transition in flight: at `until` the status becomes `next` and `effect` runs. */
export interface PendingTransition {
  until: number;
  next: DbStatus;
  effect?: "snapshot" | "restore" | undefined;
  snapshot?: { label: string; target: string } | undefined;
}

export interface DatabaseRecord {
  id: number;
  /** Set at creation (from the server's --platform, or the seed's); never changes. */
  platform: DatabasePlatform;
  engine: DbEngine;
  version: string;
  label: string;
  region: string;
  type: string;
  /** 2 only on the current platform (dedicated plans). */
  cluster_size: 1 | 2 | 3;
  encrypted: boolean;
  ssl_connection: boolean;
  allow_list: string[];
  replication_type: string;
  replication_commit_type: string | null;
  port: number;
  hostTag: number;
  memberBase: number;
  status: DbStatus;
  created: number;
  updated: number;
  updates: Updates;
  total_disk_size_gb: number;
  used_disk_size_gb: number;
  username: string;
  password: string;
  /** A reset makes every later restore fail (spec: restore after reset leaves it failed). */
  credentialsReset: boolean;
  pendingPassword: { value: string; at: number } | null;
  pending: PendingTransition | null;
  /** Emulated ms up to which daily automatic backups have been considered. */
  autoBackupsUntil: number;
  backups: BackupRecord[];
  /** Token owner who created it (restricted users get a read_write grant on what they create). */
  owner?: string | undefined;
  /** Current platform: engine parameters ({} when none; legacy: always {}). */
  engine_config: EngineConfig;
  /** Current platform: the VPC it is attached to, or null. */
  private_network: PrivateNetwork | null;
  /** Current platform: the database and time it was forked from, or null. */
  fork: ForkRecord | null;
  /** Current platform: maintenance Linode has planned (updates.pending), as the admin API set it; absent: none. */
  pending_updates?: PendingUpdate[];
  /** Current platform, PostgreSQL: its connection pools (PgBouncer), in creation order; absent: none. */
  pools?: ConnectionPoolRecord[];
}

/** One planned maintenance, as updates.pending lists it. */
export interface PendingUpdate {
  description: string;
  planned_for: string | null;
  deadline: string | null;
}

export interface NodeRecord {
  id: number;
  config_id: number;
  nodebalancer_id: number;
  address: string;
  label: string;
  weight: number;
  mode: string;
  /**
   * Health as the checks see it (spec: backends are "health-checked periodically and marked up
   * or down"). The backends are imaginary: a node answers its first check one check_interval
   * after it appeared (or its address changed) and is UP from then on, unless the admin
   * endpoint set its status, which then sticks (`forced`).
   */
  status: "unknown" | "UP" | "DOWN";
  /** A VPC backend: its subnet (as sent) and the NodeBalancer's VPC config serving it. */
  subnet_id?: number | undefined;
  vpc_config_id?: number | undefined;
  /** Emulated ms since which the node is being checked. */
  checkFrom?: number;
  forced?: boolean;
}

export interface ConfigRecord {
  id: number;
  nodebalancer_id: number;
  port: number;
  protocol: string;
  algorithm: string;
  stickiness: string;
  check: string;
  check_interval: number;
  check_timeout: number;
  check_attempts: number;
  check_path: string;
  check_body: string;
  check_passive: boolean;
  cipher_suite: string;
  proxy_protocol: string;
  udp_check_port: number;
  udp_session_timeout: number;
  ssl_cert: string | null;
  ssl_key: string | null;
  ssl_commonname: string;
  ssl_fingerprint: string;
  nodes: Record<string, NodeRecord>;
}

/** A firewall's assignment to an entity (here always a NodeBalancer: the emulator has no Linodes). */
export interface FirewallDeviceRecord {
  id: number;
  entity_id: number;
  entity_type: "nodebalancer";
  created: number;
}

/**
 * Firewalls are managed outside this emulator's scope: one named by id is assumed to exist (and
 * made on first reference) unless it was deleted through the API. Deleted ones stay as
 * tombstones, since the real API never reuses an id: a deleted firewall is 404 for good.
 */
export interface FirewallRecord {
  id: number;
  label: string;
  created: number;
  deleted?: boolean;
  /** Absent in state files written before devices existed. */
  devices?: FirewallDeviceRecord[];
}

export interface NodeBalancerRecord {
  id: number;
  label: string;
  region: string;
  type: string;
  client_conn_throttle: number;
  tags: string[];
  /** Only in state files written before firewall devices existed: migrated to a device on load. */
  firewall_id?: number | null;
  ipv4: string;
  ipv6: string;
  created: number;
  updated: number;
  configs: Record<string, ConfigRecord>;
  owner?: string | undefined;
  /** Sessions per second per client IP on udp configs, 0..20 (absent in state files written before udp). */
  client_udp_sess_throttle?: number;
  /** Resource locks on it (POST /locks; absent: none). The emulator can lock only NodeBalancers. */
  locks?: LockRecord[];
  /** Its VPC configs (GET /nodebalancers/{id}/vpcs); absent in state files written before VPCs existed. */
  vpcs?: NodeBalancerVpcRecord[];
}

/** A resource lock (spec 4.234.0, BETA): one per entity. */
export interface LockRecord {
  id: number;
  lock_type: "cannot_delete" | "cannot_delete_with_subresources";
}

/** A NodeBalancer's attachment to a VPC subnet: its backends' (one) or its frontend's (premium). */
export interface NodeBalancerVpcRecord {
  id: number;
  vpc_id: number;
  subnet_id: number;
  ipv4_range: string;
  ipv6_range: string | null;
  purpose: "frontend" | "backend";
}

export interface SubnetRecord {
  id: number;
  label: string;
  /** Its IPv4 range (CIDR). */
  ipv4: string;
  created: number;
  updated: number;
}

export interface VpcRecord {
  id: number;
  label: string;
  description: string;
  region: string;
  subnets: SubnetRecord[];
  created: number;
  updated: number;
}

/** A reserved public IPv4 address of the account (POST /networking/reserved/ips). */
export interface ReservedIpRecord {
  address: string;
  region: string;
  created: number;
}

export interface Counters {
  database: number;
  backup: number;
  nodebalancer: number;
  config: number;
  node: number;
  address: number;
  firewall_device: number;
  vpc: number;
  subnet: number;
  nodebalancer_vpc: number;
  lock: number;
}

/** Changes the maps cannot see, counted (see noteStateChange). */
let stateChanges = 0;

/**
 * Something may have changed a record in a way its map cannot see (a transition begun, a status
 * forced, a password reset pending, a field assigned): what lists remember (when the next
 * transition is due, the pages they sent) is not used again. Cheap, so every request and admin
 * call that may change state calls it, as do settle() and the places that begin transitions;
 * in-process code that changes a record directly must call it too.
 */
export function noteStateChange(): void {
  stateChanges++;
}

/** How many changes noteStateChange() has counted: what is remembered from before a change is not used after it. */
export function stateChangeCount(): number {
  return stateChanges;
}

/** The key of the list of all engines' databases (not an engine name). */
const ALL = "*";

/** A quiet time as remembered: valid while neither the map nor the state changed since. */
interface Quiet {
  revision: number;
  changes: number;
  until: number;
}

/**
 * One account's databases by id, in insertion (= id) order, as a Map, which also keeps them in
 * that order per engine (a record's engine never changes) so a list reads its page without
 * looking at every record; and, per list (an engine, or all), a time before which settling
 * changes none of them (lifecycle.ts).
 */
export class DatabaseMap extends Map<number, DatabaseRecord> {
  readonly #inOrder = new Map<string, DatabaseRecord[]>();
  #stale = false;
  #revision = 0;
  readonly #quiet = new Map<string, Quiet>();

  constructor(entries?: Iterable<readonly [number, DatabaseRecord]>) {
    // Map's constructor would call set() before this class's fields exist.
    super();
    if (entries !== undefined) for (const [id, db] of entries) this.set(id, db);
  }

  override set(id: number, db: DatabaseRecord): this {
    const replaces = super.has(id);
    super.set(id, db);
    this.#revision++;
    if (replaces) this.#stale = true;
    else if (!this.#stale) {
      this.#list(ALL).push(db);
      this.#list(db.engine).push(db);
    }
    return this;
  }

  override delete(id: number): boolean {
    const deleted = super.delete(id);
    if (deleted) {
      this.#revision++;
      this.#stale = true;
    }
    return deleted;
  }

  override clear(): void {
    super.clear();
    this.#revision++;
    this.#stale = true;
  }

  /** Counts every set() and delete(). */
  get revision(): number {
    return this.#revision;
  }

  /** The databases of one engine (null: all), in the map's order. Do not change the array. */
  inOrder(engine: DbEngine | null): readonly DatabaseRecord[] {
    if (this.#stale) {
      this.#inOrder.clear();
      for (const db of this.values()) {
        this.#list(ALL).push(db);
        this.#list(db.engine).push(db);
      }
      this.#stale = false;
    }
    return this.#inOrder.get(engine ?? ALL) ?? [];
  }

  /** Before this emulated time settling changes no database of the list (engine, or null: all); -Infinity when unknown. */
  quietUntil(engine: DbEngine | null): number {
    const q = this.#quiet.get(engine ?? ALL);
    return q?.revision === this.#revision && q.changes === stateChanges ? q.until : Number.NEGATIVE_INFINITY;
  }

  setQuietUntil(engine: DbEngine | null, until: number): void {
    this.#quiet.set(engine ?? ALL, { revision: this.#revision, changes: stateChanges, until });
  }

  #list(key: string): DatabaseRecord[] {
    let list = this.#inOrder.get(key);
    if (list === undefined) {
      list = [];
      this.#inOrder.set(key, list);
    }
    return list;
  }
}

/** One account's objects: accounts never see each other's. */
export interface AccountObjects {
  databases: DatabaseMap;
  nodebalancers: Map<number, NodeBalancerRecord>;
  firewalls: Map<number, FirewallRecord>;
  vpcs: Map<number, VpcRecord>;
  /** By address. */
  reservedIps: Map<string, ReservedIpRecord>;
}

export interface State extends AccountObjects {
  /** Ids are global, as the real API's: one set of counters for every account. */
  counters: Counters;
  /** The objects of accounts other than the default one (whose objects are the fields above). */
  accounts: Map<string, AccountObjects>;
}

const noObjects = (): AccountObjects => ({ databases: new DatabaseMap(), nodebalancers: new Map(), firewalls: new Map(), vpcs: new Map(), reservedIps: new Map() });

/** The state as one account sees it: its own objects, the shared id counters. */
export function accountState(state: State, account: string): State {
  if (account === DEFAULT_ACCOUNT) return state;
  let objects = state.accounts.get(account);
  if (objects === undefined) {
    objects = noObjects();
    state.accounts.set(account, objects);
  }
  return { ...objects, counters: state.counters, accounts: state.accounts };
}

/** Every account's objects, the default account's first (for the admin endpoint and background work). */
export function allAccounts(state: State): AccountObjects[] {
  return [state, ...state.accounts.values()];
}

export function emptyState(): State {
  return {
    ...noObjects(),
    accounts: new Map(),
    // Real ids are large; starting there keeps clients honest about int64 handling.
    counters: { database: 100_000, backup: 1_400_000, nodebalancer: 1_700_000, config: 2_700_000, node: 2_114_000_000, address: 0, firewall_device: 3_600_000,
      vpc: 607_000, subnet: 852_000, nodebalancer_vpc: 175_000, lock: 15_000 },
  };
}

export function nextId(state: State, kind: keyof Counters): number {
  state.counters[kind] += 1;
  return state.counters[kind];
}

interface SerializedObjects {
  databases: DatabaseRecord[];
  nodebalancers: NodeBalancerRecord[];
  firewalls: FirewallRecord[];
  /** Absent in state files written before VPCs and reserved addresses existed. */
  vpcs?: VpcRecord[];
  reservedIps?: ReservedIpRecord[];
}

export interface SerializedState extends SerializedObjects {
  version: 1;
  savedAt: number;
  counters: Counters;
  /** Accounts other than the default one, when there are any. */
  accounts?: Record<string, SerializedObjects>;
}

const serializeObjects = (o: AccountObjects): SerializedObjects => ({
  databases: [...o.databases.values()],
  nodebalancers: [...o.nodebalancers.values()],
  firewalls: [...o.firewalls.values()],
  vpcs: [...o.vpcs.values()],
  reservedIps: [...o.reservedIps.values()],
});

const deserializeObjects = (o: SerializedObjects, platform: DatabasePlatform): AccountObjects => ({
  // A database saved before databases had a platform of their own (`platform` absent) was
  // created and served under the server-wide --platform, and a state file is normally loaded by
  // the same command line that wrote it: such databases take the loading server's platform (not
  // legacy), so they keep the shape they were served in (a database created under
  // --platform current already has the current platform's port, version and encryption).
  // Databases saved before engine parameters, private networks and forks existed have none.
  databases: new DatabaseMap(o.databases.map((d) => {
    const old = d as Partial<DatabaseRecord>;
    return [d.id, { ...d, platform: old.platform ?? platform, engine_config: old.engine_config ?? {}, private_network: old.private_network ?? null, fork: old.fork ?? null }];
  })),
  nodebalancers: new Map(o.nodebalancers.map((n) => [n.id, n])),
  firewalls: new Map(o.firewalls.map((f) => [f.id, f])),
  vpcs: new Map((o.vpcs ?? []).map((v) => [v.id, v])),
  reservedIps: new Map((o.reservedIps ?? []).map((r) => [r.address, r])),
});

/** A NodeBalancer saved with a `firewall_id` (before devices existed) gets the device it stood for. */
function migrateFirewallIds(objects: AccountObjects, counters: Counters): void {
  for (const nb of objects.nodebalancers.values()) {
    const id = nb.firewall_id;
    delete nb.firewall_id;
    if (id == null) continue;
    const fw = objects.firewalls.get(id) ?? { id, label: `firewall-${String(id)}`, created: nb.created };
    objects.firewalls.set(id, fw);
    fw.devices ??= [];
    if (!fw.devices.some((d) => d.entity_id === nb.id)) fw.devices.push({ id: ++counters.firewall_device, entity_id: nb.id, entity_type: "nodebalancer", created: nb.created });
  }
}

export function serializeState(state: State, now: number): SerializedState {
  return {
    version: 1,
    savedAt: now,
    ...serializeObjects(state),
    counters: { ...state.counters },
    ...(state.accounts.size > 0 ? { accounts: Object.fromEntries([...state.accounts].map(([name, o]) => [name, serializeObjects(o)])) } : {}),
  };
}

/** `platform`: what databases saved without one get (the loading server's --platform). */
export function deserializeState(data: SerializedState, platform: DatabasePlatform): State {
  // Counters saved before firewall devices existed lack theirs.
  const counters: Counters = { ...emptyState().counters, ...data.counters };
  const state: State = {
    ...deserializeObjects(data, platform),
    counters,
    accounts: new Map(Object.entries(data.accounts ?? {}).map(([name, o]) => [name, deserializeObjects(o, platform)])),
  };
  for (const objects of allAccounts(state)) migrateFirewallIds(objects, counters);
  return state;
}
