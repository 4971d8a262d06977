// `linode-operator emulator`: the command line users and scripts rely on (README, "The emulator").
// Prints exactly one line once listening and serves until SIGTERM/SIGINT, saving state first.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import { emulatorConfigSchema } from "./config.ts";
import { startEmulator, type EmulatorOptions } from "./index.ts";
import { parseLatencyFlag } from "./latency.ts";

const HELP = `Usage: linode-operator emulator [options]

  --port N                 listen port (0 = any free port; default 0)
  --token T                an unrestricted, all-scopes token (repeatable; default $LINODE_TOKEN)
  --account-token A=T      a token of account A (repeatable): accounts never see each other's
                           objects or share rate limits; --token's belong to account "default"
  --provision-seconds S    emulated seconds provisioning and other transitions take (default 1)
  --state-file F           keep state in F across restarts
  --config F               JSON config: tokens, users (grants), rateLimits, faults, ...
                           rateLimits: {default: {limit, windowSeconds}} the general window
                           (1840/60 s as recorded), tokens: {T: ...} per token, paginated:
                           {limit, windowSeconds, headers: "general"|"class"} every collection
                           GET (200/60 s; its answers report the general window, as recorded,
                           unless "class"), routes: {"GET /nodebalancers/{nodeBalancerId}/stats":
                           ...} windows of their own (stats: 50/60 s)
  --seed N                 seed for generated values and fault decisions (default 1)
  --time-scale X           emulated seconds per real second (default 1; 0 = frozen)
  --stats-delay-seconds S  emulated seconds before a new NodeBalancer has statistics (default 300,
                           as on the real API, which answers 400 until then)
  --platform P             the platform new databases are created on: the spec's (legacy, the
                           default) or the real API's current one (current: no replication
                           fields, secondary host or backups; a standby host, engine_config, a
                           high port, full versions). Each database keeps its own platform and
                           is served in its shape; the seed endpoint can make either
  --valkey                 offer the Valkey engine (limited availability in the real API: listed
                           in GET /databases/engines and creatable only then; always on the
                           current platform)
  --rate-limit N           general requests per token per window (0 disables rate limiting)
  --rate-window S          rate-limit window in seconds (default 60)
  --latency-ms M[,P99]     the API's response time each request waits: a lognormal with median M
                           and 99th percentile P99 ms (default 4 x M), drawn from --seed (default 0)
  --fault-error-rate P     fraction of requests answered 500 (0..1)
  --fault-latency-ms MS    added latency per request
  --fault-drop-rate P      fraction of requests handled then dropped without a response
  --fault-429-rate P       fraction of requests answered 429 (0..1), with Retry-After
                           --fault-retry-after S seconds (default 1)
  --fault-429-burst N      answer the next N requests with 429
  --host H                 listen address (default 127.0.0.1)
  -h, --help               show this help

Admin endpoints: http://127.0.0.1:PORT/_emulator (requests, faults, clock, tokens, state, seed).
`;

const numberFlag = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number({ error: `--${name} must be a number` }).min(min, { error: `--${name} must be >= ${min}` }).max(max, { error: `--${name} must be <= ${max}` });

const flagsSchema = z.object({
  port: numberFlag("port", 0, 65535).int().default(0),
  "provision-seconds": numberFlag("provision-seconds", 0).optional(),
  seed: numberFlag("seed", 0).int().optional(),
  "time-scale": numberFlag("time-scale", 0).optional(),
  "stats-delay-seconds": numberFlag("stats-delay-seconds", 0).optional(),
  "rate-limit": numberFlag("rate-limit", 0).int().optional(),
  "rate-window": numberFlag("rate-window", 0.001).default(60),
  "latency-ms": z.string().transform((text, c) => {
    try {
      return parseLatencyFlag(text);
    } catch (err) {
      c.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  }).optional(),
  "fault-error-rate": numberFlag("fault-error-rate", 0, 1).optional(),
  "fault-latency-ms": numberFlag("fault-latency-ms", 0, 60_000).int().optional(),
  "fault-drop-rate": numberFlag("fault-drop-rate", 0, 1).optional(),
  "fault-429-rate": numberFlag("fault-429-rate", 0, 1).optional(),
  "fault-429-burst": numberFlag("fault-429-burst", 0).int().optional(),
  "fault-retry-after": numberFlag("fault-retry-after", 0).int().optional(),
  host: z.string().default("127.0.0.1"),
  platform: z.enum(["legacy", "current"], { error: "--platform must be legacy or current" }).optional(),
  valkey: z.boolean().optional(),
  "state-file": z.string().optional(),
  config: z.string().optional(),
  token: z.array(z.string().min(1)).default([]),
  "account-token": z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*=.+$/, { error: "--account-token must be ACCOUNT=TOKEN (account: lower-case letters, digits, '-')" })).default([]),
});

export async function main(argv: string[]): Promise<number> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        port: { type: "string" }, token: { type: "string", multiple: true }, "account-token": { type: "string", multiple: true }, "provision-seconds": { type: "string" },
        "state-file": { type: "string" }, config: { type: "string" }, seed: { type: "string" }, "time-scale": { type: "string" },
        "stats-delay-seconds": { type: "string" }, "rate-limit": { type: "string" }, "rate-window": { type: "string" }, "fault-error-rate": { type: "string" },
        "fault-latency-ms": { type: "string" }, "latency-ms": { type: "string" }, "fault-drop-rate": { type: "string" }, "fault-429-rate": { type: "string" },
        "fault-429-burst": { type: "string" }, "fault-retry-after": { type: "string" },
        host: { type: "string" }, platform: { type: "string" }, valkey: { type: "boolean" }, help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    process.stderr.write(`linode-operator emulator: ${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(`linode-operator emulator: ${parsed.error.issues.map((i) => i.message).join("; ")}\n`);
    return 2;
  }
  const f = parsed.data;
  let config: z.input<typeof emulatorConfigSchema> = {};
  if (f.config !== undefined) {
    const result = emulatorConfigSchema.safeParse(JSON.parse(await readFile(f.config, "utf8")));
    if (!result.success) {
      process.stderr.write(`linode-operator emulator: invalid config ${f.config}: ${result.error.message}\n`);
      return 2;
    }
    config = result.data;
  }
  if (f.valkey === true) config = { ...config, valkey: true };
  const tokens = f.token.length > 0 ? f.token : (process.env.LINODE_TOKEN ?? "") !== "" ? [process.env.LINODE_TOKEN ?? ""] : [];
  const accountTokens: Record<string, string[]> = {};
  for (const pair of f["account-token"]) {
    const at = pair.indexOf("=");
    (accountTokens[pair.slice(0, at)] ??= []).push(pair.slice(at + 1));
  }
  if (tokens.length === 0 && f["account-token"].length === 0 && (config.tokens ?? []).length === 0) {
    process.stderr.write("linode-operator emulator: warning: no tokens configured (--token, LINODE_TOKEN or --config); every /v4 request will get 401\n");
  }
  const faults: NonNullable<EmulatorOptions["faults"]> = {};
  if (f["fault-error-rate"] !== undefined) faults.errorRate = f["fault-error-rate"];
  if (f["fault-latency-ms"] !== undefined) faults.latencyMs = f["fault-latency-ms"];
  if (f["fault-drop-rate"] !== undefined) faults.dropRate = f["fault-drop-rate"];
  if (f["fault-429-rate"] !== undefined) faults.rate429 = f["fault-429-rate"];
  if (f["fault-429-burst"] !== undefined) faults.burst429 = f["fault-429-burst"];
  if (f["fault-retry-after"] !== undefined) faults.retryAfterSeconds = f["fault-retry-after"];
  const rate = f["rate-limit"];
  const emulator = await startEmulator({
    port: f.port,
    host: f.host,
    tokens,
    accountTokens,
    config,
    provisionSeconds: f["provision-seconds"],
    stateFile: f["state-file"],
    seed: f.seed,
    timeScale: f["time-scale"],
    statsDelaySeconds: f["stats-delay-seconds"],
    platform: f.platform,
    faults,
    ...(f["latency-ms"] === undefined ? {} : { latency: f["latency-ms"] }),
    rateLimits: rate === 0 ? false : rate === undefined ? undefined : { default: { limit: rate, windowSeconds: f["rate-window"] } },
  });
  // Handlers first: a script may send SIGTERM the instant it reads the line.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => { resolve(); };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  process.stdout.write(`Linode API emulator listening on ${emulator.url}\n`);
  await stopped;
  await emulator.close();
  return 0;
}
