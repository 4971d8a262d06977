// Public API of the Linode API emulator: start one in-process on loopback and get its URL,
// admin URL and test controls (clock, faults, counts, state).
import type { AddressInfo } from "node:net";
import { createAdminHandler } from "./admin.ts";
import { AuthRegistry, DEFAULT_USERNAME, tokenSchema } from "./auth.ts";
import { generateDatabaseCa } from "./certs.ts";
import { Clock } from "./clock.ts";
import { emulatorConfigSchema, type EmulatorConfigInput } from "./config.ts";
import type { DatabasePlatform, EmulatorContext, Route } from "./context.ts";
import { connectionPoolRoutes } from "./databases/connection-pools.ts";
import { databaseRoutes } from "./databases/routes.ts";
import { faultConfigSchema, Faults, type FaultConfig } from "./faults.ts";
import { lockRoutes } from "./locks.ts";
import { firewallRoutes } from "./nodebalancers/firewalls.ts";
import { nodeBalancerRoutes } from "./nodebalancers/routes.ts";
import { reservedIpRoutes } from "./reserved-ips.ts";
import { vpcRoutes } from "./vpcs.ts";
import { loadStateFile, Saver } from "./persistence.ts";
import { profileRoutes } from "./profile.ts";
import { Latency, latencySchema } from "./latency.ts";
import { Random } from "./random.ts";
import { RateLimiter, rateLimitConfigSchema, type RateLimitConfig } from "./rate-limit.ts";
import { Router } from "./router.ts";
import { RequestLog, type RequestRecord } from "./request-log.ts";
import { createEmulatorServer, type MutationRecord } from "./server.ts";
import { deserializeState, emptyState, serializeState, type SerializedState } from "./store.ts";

export type { EmulatorConfigInput } from "./config.ts";
export type { FaultConfig } from "./faults.ts";
export type { RateLimitConfig } from "./rate-limit.ts";
export type { LatencyConfig } from "./latency.ts";
export { generateCertificate, type GeneratedCertificate } from "./certs.ts";

export interface EmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Unrestricted, all-scope tokens (of the default account). */
  tokens?: string[];
  /** Unrestricted, all-scope tokens of other accounts, by account: each sees only its own objects. */
  accountTokens?: Record<string, string[]>;
  /** Richer tokens, users, scopes, grants, rate limits, faults (the config-file format). */
  config?: EmulatorConfigInput;
  /** Emulated seconds provisioning and every other transition take (default 1). */
  provisionSeconds?: number;
  /** Keep state here across restarts. */
  stateFile?: string;
  /** Seeds ids, passwords, maintenance windows and fault decisions (default 1). */
  seed?: number;
  faults?: Partial<FaultConfig>;
  /** Emulated seconds per real second (default 1; 0 freezes the clock until advanced). */
  timeScale?: number;
  /** Emulated start time (epoch ms); default now. */
  clockStart?: number;
  rateLimits?: Partial<RateLimitConfig> | false;
  /** The API's response time every /v4 request waits: median and p99 (default 4 × median) in ms; default none. */
  latency?: { medianMs: number; p99Ms?: number };
  /** Emulated seconds before a new NodeBalancer has statistics (default 300). */
  statsDelaySeconds?: number;
  /**
   * The platform new databases are created on, each then served in its own platform's shape:
   * the spec's ("legacy", default) or today's real API's ("current").
   */
  platform?: DatabasePlatform;
}

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:PORT/v4 */
  url: string;
  /** e.g. http://127.0.0.1:PORT/_emulator */
  adminUrl: string;
  port: number;
  context: EmulatorContext;
  /** Moves emulated time forward. */
  advance(seconds: number): void;
  setTimeScale(scale: number): void;
  now(): number;
  setFaults(faults: Partial<FaultConfig>): void;
  /** Backend IPs the API refuses from now on, with its reason (what only the real API can judge). */
  rejectNodeAddresses(reasons: Record<string, string>): void;
  requestCounts(): Record<string, number>;
  resetRequestCounts(): void;
  /** Every POST, PUT and DELETE handled (the last 10,000), with wall-clock times and the token's first characters. */
  mutations(): readonly MutationRecord[];
  /** Every routed request (GETs too) the API answered, the last 20,000, oldest first: where a slow figure's time went. */
  requests(): RequestRecord[];
  dump(): SerializedState;
  /** Writes the state file now (no-op without one). */
  save(): Promise<void>;
  close(): Promise<void>;
}

export function buildRouter(): Router {
  const router = new Router();
  const routes: Route[] = [...databaseRoutes(), ...connectionPoolRoutes(), ...nodeBalancerRoutes(), ...firewallRoutes(), ...vpcRoutes(), ...reservedIpRoutes(), ...lockRoutes(), ...profileRoutes()];
  router.add(...routes);
  return router;
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const config = emulatorConfigSchema.parse(opts.config ?? {});
  const seed = opts.seed ?? config.seed ?? 1;
  const saved = opts.stateFile === undefined ? null : loadStateFile(opts.stateFile);
  // A restarted emulator continues emulated time from where it stopped if that is later.
  const start = opts.clockStart ?? (saved !== null ? Math.max(saved.savedAt, Date.now()) : undefined);
  const clock = new Clock({ start, timeScale: opts.timeScale ?? config.timeScale ?? 1 });
  const auth = new AuthRegistry();
  for (const user of config.users) auth.addUser(user);
  for (const token of opts.tokens ?? []) auth.addToken({ token, scopes: "*", username: DEFAULT_USERNAME });
  for (const [account, tokens] of Object.entries(opts.accountTokens ?? {})) {
    for (const token of tokens) auth.addToken(tokenSchema.parse({ token, account }));
  }
  for (const token of config.tokens) auth.addToken(token);
  const rateConfig = opts.rateLimits === false
    ? rateLimitConfigSchema.parse({ ...config.rateLimits, enabled: false })
    : rateLimitConfigSchema.parse({ ...config.rateLimits, ...(opts.rateLimits ?? {}) });
  const faultConfig = faultConfigSchema.parse({ ...config.faults, ...(opts.faults ?? {}) });
  const provisionSeconds = opts.provisionSeconds ?? config.provisionSeconds ?? 1;
  const platform = opts.platform ?? config.platform ?? "legacy";
  const ctx: EmulatorContext = {
    state: saved !== null ? deserializeState(saved, platform) : emptyState(),
    clock,
    random: new Random(seed),
    auth,
    rateLimiter: new RateLimiter(rateConfig),
    faults: new Faults(faultConfig, seed),
    latency: new Latency(latencySchema.parse(opts.latency ?? config.latency ?? {}), seed),
    seed,
    transitionMs: provisionSeconds * 1000,
    statsDelayMs: (opts.statsDelaySeconds ?? config.statsDelaySeconds ?? 300) * 1000,
    rejectedNodeAddresses: new Map(),
    caCertPem: generateDatabaseCa(),
    platform,
    valkey: config.valkey ?? false,
  };
  const counts = new Map<string, number>();
  const mutations: MutationRecord[] = [];
  const requests = new RequestLog();
  const saver = opts.stateFile === undefined ? null : new Saver(opts.stateFile, () => serializeState(ctx.state, ctx.clock.now()));
  const onMutation = () => saver?.schedule();
  const server = createEmulatorServer({
    ctx, router: buildRouter(), counts, mutations, requests, onMutation, admin: createAdminHandler({ ctx, counts, mutations, onMutation }),
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => { server.off("error", reject); resolve(); });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  let closed: Promise<void> | null = null;
  return {
    url: `${origin}/v4`,
    adminUrl: `${origin}/_emulator`,
    port,
    context: ctx,
    advance: (seconds) => { clock.advance(seconds * 1000); },
    setTimeScale: (scale) => { clock.setTimeScale(scale); },
    now: () => clock.now(),
    setFaults: (faults) => { ctx.faults.configure(faultConfigSchema.parse(faults), seed); },
    rejectNodeAddresses: (reasons) => { ctx.rejectedNodeAddresses = new Map(Object.entries(reasons)); },
    requestCounts: () => Object.fromEntries(counts),
    resetRequestCounts: () => { counts.clear(); },
    mutations: () => mutations,
    requests: () => requests.entries(),
    dump: () => serializeState(ctx.state, clock.now()),
    save: async () => { await saver?.flush(); },
    close: () => {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => { resolve(); });
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 200).unref();
        });
        await saver?.flush();
      })();
      return closed;
    },
  };
}
