// The cloud object as the Linode API reports it, read through src/linode with the token the
// caller found (never printed), by the id the operator recorded. Reads only: GETs, each tried
// at most twice, so a status command never spends much of an account's budget.
import { databasePlatform, LinodeApiError, LinodeClient, type Database, type DatabaseBackup, type NodeBalancer, type NodeBalancerConfig, type NodeBalancerNode } from "../linode/index.ts";
import { errorChain } from "../kube/errors.ts";

export interface DatabaseView {
  kind: "database";
  id: number;
  label: string;
  status: string;
  platform: string;
  engine: string;
  version: string;
  region: string;
  type: string;
  clusterSize: number;
  hosts: { primary: string | null; secondary: string | null };
  port: number | null;
  /** The cluster's nodes by address, with their role (the current platform reports them). */
  members: { address: string; role: string }[];
  allowList: string[];
  /** Maintenance the API has planned for the window. */
  pendingUpdates: string[];
  updated: string;
}

export interface SnapshotView {
  kind: "snapshot";
  databaseId: number;
  backupId: number;
  label: string;
  type: string;
  created: string;
}

export interface BackendView { label: string; address: string; status: string; weight: number; mode: string }
export interface ConfigView { port: number; protocol: string; algorithm: string; check: string; up: number; down: number; backends: BackendView[] }

export interface NodeBalancerView {
  kind: "nodeBalancer";
  id: number;
  label: string;
  region: string;
  hostname: string | null;
  ipv4: string | null;
  ipv6: string | null;
  configs: ConfigView[];
}

export interface PoolView {
  kind: "pool";
  databaseId: number;
  label: string;
  database: string;
  mode: string;
  size: number;
  /** null: the inbound user. */
  username: string | null;
}

export type CloudObjectView = DatabaseView | SnapshotView | NodeBalancerView | PoolView;

/** What the cloud side shows: the object, or why it is not shown. */
export type CloudSide =
  | { state: "shown"; tokenFrom: string; object: CloudObjectView }
  /** Nothing to read: the operator recorded no cloud object yet. */
  | { state: "none"; why: string; tokenFrom?: string }
  | { state: "needsToken"; why: string }
  | { state: "error"; tokenFrom: string; error: string };

/** The cloud id a resource recorded, as its kind writes it (status.externalId). */
export interface RecordedId { kind: string; externalId: string; engine?: string }

const READ = { retry: { maxAttempts: 2, maxRateLimitWaitMs: 5_000 } };
const TIMEOUTS = { connectMs: 5_000, headersMs: 15_000, bodyMs: 15_000 };

export async function readCloudSide(id: RecordedId, token: { value: string; from: string }, baseUrl: string | undefined): Promise<CloudSide> {
  const linode = new LinodeClient({ token: token.value, rateLimit: false, timeouts: TIMEOUTS, ...(baseUrl !== undefined && baseUrl !== "" ? { baseUrl } : {}) });
  try {
    const object = await readObject(linode, id);
    return object === undefined ? { state: "none", why: `status.externalId ${id.externalId} is not a ${id.kind} id this command reads`, tokenFrom: token.from } : { state: "shown", tokenFrom: token.from, object };
  } catch (err) {
    const gone = err instanceof LinodeApiError && err.status === 404;
    return { state: "error", tokenFrom: token.from, error: gone ? `the API has no such object with this token (404): it is gone, or the token is of another account (${errorChain(err)})` : errorChain(err) };
  } finally {
    await linode.close();
  }
}

async function readObject(linode: LinodeClient, id: RecordedId): Promise<CloudObjectView | undefined> {
  switch (id.kind) {
    case "ManagedDatabase": {
      const engine = id.engine === "postgresql" || id.engine === "mysql" || id.engine === "valkey" ? id.engine : undefined;
      const dbId = Number(id.externalId);
      if (engine === undefined || !Number.isSafeInteger(dbId)) return undefined;
      return databaseView(await linode.databases.engine(engine).get(dbId, READ));
    }
    case "DatabaseSnapshot": {
      const m = /^(mysql|postgresql)\/(\d+)\/(\d+)$/.exec(id.externalId);
      if (m === null) return undefined;
      const [, engine = "mysql", db = "", backup = ""] = m;
      const b = await linode.databases.engine(engine === "postgresql" ? "postgresql" : "mysql").getBackup(Number(db), Number(backup), READ);
      return snapshotView(Number(db), b);
    }
    case "DatabaseConnectionPool": {
      const m = /^postgresql\/(\d+)\/([A-Za-z0-9_][A-Za-z0-9_-]*)$/.exec(id.externalId);
      if (m === null) return undefined;
      const databaseId = Number(m[1]);
      const p = await linode.connectionPools.get(databaseId, m[2] ?? "", READ);
      return { kind: "pool", databaseId, label: p.label, database: p.database, mode: p.mode, size: p.size, username: p.username };
    }
    case "NodeBalancer": {
      const nbId = Number(id.externalId);
      if (!Number.isSafeInteger(nbId)) return undefined;
      const nb = await linode.nodeBalancers.get(nbId, READ);
      const configs = await linode.nodeBalancers.listAllConfigs(nbId, READ);
      const nodes = await Promise.all(configs.map((c) => linode.nodeBalancers.listAllNodes(nbId, c.id, READ)));
      return nodeBalancerView(nb, configs.map((c, i) => ({ config: c, nodes: nodes[i] ?? [] })));
    }
    default:
      return undefined;
  }
}

export function databaseView(db: Database): DatabaseView {
  return {
    kind: "database", id: db.id, label: db.label, status: db.status, platform: db.platform ?? databasePlatform(db),
    engine: db.engine, version: db.version, region: db.region, type: db.type, clusterSize: db.clusterSize,
    hosts: { primary: db.hosts.primary, secondary: db.hosts.secondary }, port: db.port ?? null,
    members: Object.entries(db.members ?? {}).map(([address, role]) => ({ address, role })).sort((a, b) => a.address.localeCompare(b.address)),
    allowList: db.allowList,
    pendingUpdates: (db.updates?.pending ?? []).map((p) => [p.description ?? "", p.plannedFor != null ? `planned for ${p.plannedFor}` : ""].filter((s) => s !== "").join(", ")),
    updated: db.updated,
  };
}

function snapshotView(databaseId: number, b: DatabaseBackup): SnapshotView {
  return { kind: "snapshot", databaseId, backupId: b.id, label: b.label, type: b.type, created: b.created };
}

export function nodeBalancerView(nb: NodeBalancer, configs: { config: NodeBalancerConfig; nodes: NodeBalancerNode[] }[]): NodeBalancerView {
  return {
    kind: "nodeBalancer", id: nb.id, label: nb.label, region: nb.region, hostname: nb.hostname ?? null, ipv4: nb.ipv4 ?? null, ipv6: nb.ipv6 ?? null,
    configs: configs.map(({ config: c, nodes }) => ({
      port: c.port, protocol: c.protocol, algorithm: c.algorithm, check: c.check, up: c.nodesStatus.up, down: c.nodesStatus.down,
      backends: nodes.map((n) => ({ label: n.label, address: n.address, status: n.status, weight: n.weight, mode: n.mode })),
    })).sort((a, b) => a.port - b.port),
  };
}
