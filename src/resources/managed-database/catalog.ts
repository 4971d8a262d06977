// What the API offers (GET /databases/engines, GET /databases/types), read once a day per
// account and only when needed: a version it does not list is refused before a create is sent
// (UnknownEngineVersion), and a resize to a plan it does not list, or to a smaller disk, before
// the update is sent (ResizeNotAllowed): each names what exists, instead of the API's refusal
// after the fact.
import type { DatabaseEngine, DatabaseEngineInfo, DatabaseType, LinodeClient } from "../../linode/index.ts";
import { TerminalError } from "../../runtime/contract.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";
import { apiNames } from "./engine-config.ts";

const REFRESH_MILLIS = 24 * 3_600_000;

/**
 * One answer, read when first needed and again after a day. Passes that ask while it is being
 * read share that read (many creates at once cost one call); a failed read is not kept.
 */
class Daily<T> {
  private read: { at: number; value: Promise<T> } | undefined;
  private readonly load: (signal: AbortSignal) => Promise<T>;

  constructor(load: (signal: AbortSignal) => Promise<T>) {
    this.load = load;
  }

  get(signal: AbortSignal): Promise<T> {
    if (this.read !== undefined && Date.now() - this.read.at < REFRESH_MILLIS) return this.read.value;
    const read = { at: Date.now(), value: this.load(signal) };
    this.read = read;
    read.value.catch(() => { if (this.read === read) this.read = undefined; });
    return read.value;
  }
}

export class DatabaseCatalog {
  private readonly engines: Daily<DatabaseEngineInfo[]>;
  private readonly types: Daily<DatabaseType[]>;
  private readonly configs: Record<DatabaseEngine, Daily<Record<string, unknown>>>;

  constructor(linode: LinodeClient) {
    const config = (engine: DatabaseEngine): Daily<Record<string, unknown>> =>
      new Daily(async (signal) => apiNames(await linodeCall(`reading the ${engine} parameters`, () => linode.databases.engine(engine).getConfigCatalogue({ signal }))));
    this.configs = { mysql: config("mysql"), postgresql: config("postgresql"), valkey: config("valkey") };
    this.engines = new Daily((signal) => linodeCall("listing the database engines", () => linode.databases.listAllEngines({ signal })));
    this.types = new Daily((signal) => linodeCall("listing the database plans", () => linode.databases.listAllTypes({ signal })));
  }

  /**
   * Throws UnknownEngine when the API offers `engine` in no version (Valkey, in limited
   * availability, is listed only to accounts that have it), UnknownEngineVersion when it does not
   * offer `version` of it.
   */
  async checkVersion(engine: DatabaseEngine, version: string, signal: AbortSignal): Promise<void> {
    const engines = await this.engines.get(signal);
    if (!engines.some((e) => e.engine === engine)) {
      throw new TerminalError(ManagedDatabaseReasons.UnknownEngine, `the API offers no ${engine} database to this account (GET /databases/engines lists ${[...new Set(engines.map((e) => e.engine))].join(", ") || "no engine"}): nothing was sent${engine === "valkey" ? "; Valkey is in limited availability: ask Linode for access" : ""}`);
    }
    const refusal = await this.versionRefusal(engine, version, signal);
    if (refusal !== undefined) throw new TerminalError(ManagedDatabaseReasons.UnknownEngineVersion, `${refusal}: nothing was sent; set spec.version to one of them (the API reports the full version in status.version)`);
  }

  /** Why `version` of `engine` cannot be asked for (the API does not offer it), if it cannot. */
  async versionRefusal(engine: DatabaseEngine, version: string, signal: AbortSignal): Promise<string | undefined> {
    const offered = (await this.engines.get(signal)).filter((e) => e.engine === engine).map((e) => e.version);
    if (offered.includes(version)) return undefined;
    return `the API offers ${engine} ${offered.length > 0 ? `versions ${offered.join(", ")}` : "in no version"} (GET /databases/engines), not "${version}"`;
  }

  /** Why a cluster of plan `type` cannot have `nodes` nodes, if it cannot: 2 nodes need a dedicated plan (the current API's cluster_size: 2 only on dedicated plans). */
  async nodesRefusal(type: string, nodes: number, signal: AbortSignal): Promise<string | undefined> {
    if (nodes !== 2) return undefined;
    const plan = (await this.types.get(signal)).find((t) => t.id === type);
    if (plan?.class === undefined || plan.class === "dedicated") return undefined;
    return `a 2-node cluster needs a dedicated plan, and ${type} is ${plan.class}: choose clusterSize 1 or 3, or a dedicated type (g6-dedicated-*)`;
  }

  /** The engine's parameter catalogue (GET /databases/{engine}/config), with the API's parameter names. */
  async engineParameters(engine: DatabaseEngine, signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.configs[engine].get(signal);
  }

  /**
   * Why the database cannot be resized from plan `from` to plan `to`, if it cannot: the API
   * does not list `to`, or its disk is smaller ("clusters can't be resized to smaller plans").
   */
  async resizeRefusal(from: string, to: string, signal: AbortSignal): Promise<string | undefined> {
    const types = await this.types.get(signal);
    const target = types.find((t) => t.id === to);
    const current = types.find((t) => t.id === from);
    const sizes = (): string => types.filter((t) => t.deprecated !== true && t.disk !== undefined).sort((a, b) => (a.disk ?? 0) - (b.disk ?? 0))
      .map((t) => `${t.id} ${String(Math.round((t.disk ?? 0) / 1024))} GB`).join(", ");
    if (target === undefined) return `the API lists no database plan ${to} (GET /databases/types): plans and their disks are ${sizes()}`;
    if (current?.disk !== undefined && target.disk !== undefined && target.disk < current.disk) {
      return `a cluster cannot be resized to a smaller plan: ${to} has a ${String(Math.round(target.disk / 1024))} GB disk, ${from} ${String(Math.round(current.disk / 1024))} GB; plans and their disks are ${sizes()}`;
    }
    return undefined;
  }
}
