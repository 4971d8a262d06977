// The engine versions the API offers (GET /databases/engines), read once a day per account: a
// version it does not list is refused before the create is sent (UnknownEngineVersion, naming
// those that exist), instead of after, as the API's own refusal.
import type { DatabaseEngine, LinodeClient } from "../../linode/index.ts";
import { TerminalError } from "../../runtime/contract.ts";
import { linodeCall } from "../shared/linode-errors.ts";
import { ManagedDatabaseReasons } from "./reasons.ts";

const REFRESH_MILLIS = 24 * 3_600_000;

export class EngineCatalog {
  private readonly linode: LinodeClient;
  private read: { at: number; versions: Map<string, string[]> } | undefined;

  constructor(linode: LinodeClient) {
    this.linode = linode;
  }

  /** Throws UnknownEngineVersion when the API does not offer `version` of `engine`. */
  async check(engine: DatabaseEngine, version: string, signal: AbortSignal): Promise<void> {
    const offered = (await this.versions(signal)).get(engine) ?? [];
    if (offered.includes(version)) return;
    throw new TerminalError(ManagedDatabaseReasons.UnknownEngineVersion, `the API offers ${engine} ${offered.length > 0 ? `versions ${offered.join(", ")}` : "in no version"} (GET /databases/engines), not "${version}": nothing was sent; set spec.version to one of them (the API reports the full version in status.version)`);
  }

  private async versions(signal: AbortSignal): Promise<Map<string, string[]>> {
    if (this.read !== undefined && Date.now() - this.read.at < REFRESH_MILLIS) return this.read.versions;
    const engines = await linodeCall("listing the database engines", () => this.linode.databases.listAllEngines({ signal }));
    const versions = new Map<string, string[]>();
    for (const e of engines) versions.set(e.engine, [...(versions.get(e.engine) ?? []), e.version]);
    this.read = { at: Date.now(), versions };
    return versions;
  }
}
