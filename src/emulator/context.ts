// Everything a request handler may touch, in one object built once per emulator.
import type { AuthRegistry, Principal, Area, Permission } from "./auth.ts";
import type { Clock } from "./clock.ts";
import type { Faults } from "./faults.ts";
import type { Latency } from "./latency.ts";
import type { Random } from "./random.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { DatabasePlatform, State } from "./store.ts";

export type { DatabasePlatform } from "./store.ts";

export interface EmulatorContext {
  state: State;
  clock: Clock;
  random: Random;
  auth: AuthRegistry;
  rateLimiter: RateLimiter;
  faults: Faults;
  /** What every /v4 request waits before it is handled (the API's response time). */
  latency: Latency;
  seed: number;
  /** Emulated milliseconds that provisioning and every other transition take. */
  transitionMs: number;
  /** Emulated milliseconds before a new NodeBalancer has statistics. */
  statsDelayMs: number;
  caCertPem: string;
  /**
   * The platform new databases are created on (the server's --platform): "legacy" (the spec's,
   * rdbms-legacy) or "current" (rdbms-default, the real API since 2025: no replication fields,
   * no secondary host or week_of_month, no backups; a standby host, engine_config,
   * private_network, updates.pending, a high port and the full engine version). Each database
   * keeps its own (DatabaseRecord.platform) and is served in its shape, whatever this says
   * later. src/emulator/databases/facts.md says what of the current platform is a guess.
   */
  platform: DatabasePlatform;
  /** Whether the Valkey engine (limited availability) is offered to this account: listed and creatable. */
  valkey: boolean;
  /**
   * Backend addresses (IPs) the API refuses, with its reason: what only the real API can judge
   * (e.g. no Linode of the NodeBalancer's region has that private address). Set by tests.
   */
  rejectedNodeAddresses: Map<string, string>;
}

export interface RequestContext {
  ctx: EmulatorContext;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  header: (name: string) => string | undefined;
  principal: Principal;
}

export interface RouteResult {
  status?: number;
  /** Sent as JSON.stringify(body); a RawJson is sent as its text. */
  body: unknown;
}

/**
 * A body already serialised (UTF-8 when bytes; chunks are sent one after another): what
 * JSON.stringify() of the value it stands for would write.
 */
export class RawJson {
  readonly json: string | Buffer | readonly Buffer[];
  constructor(json: string | Buffer | readonly Buffer[]) {
    this.json = json;
  }
}

export interface Route {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Path after the version prefix, e.g. /databases/mysql/instances/{instanceId}; {x+} spans slashes. */
  template: string;
  area: Area | null;
  level: Permission;
  /** A GET of a collection served with pagination: counted in the API's paginated class (S176: 200/min). */
  paginated?: true;
  handler: (req: RequestContext) => RouteResult;
}
