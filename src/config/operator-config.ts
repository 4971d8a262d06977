// The operator's configuration: flags override environment variables, which override
// defaults; the result is validated by zod so a bad value fails at start-up with its name.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { KindSetting, SettingValues } from "../runtime/kind-definition.ts";
import { DEFAULT_POLL } from "../runtime/timings.ts";

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);

const loopbackHosts = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;
const namespaceName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
const objectName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
const namespaceRule = z.array(z.union([z.literal("*"), namespaceName])).default([]);

/** "true" (every namespace), "false"/unset (none), or comma-separated namespaces. */
const namespaceList = (v: string | undefined): string[] => (v === undefined || v === "false" ? [] : v === "true" ? ["*"] : commaList(v) ?? []);
const commaList = (v: string | undefined): string[] | undefined => v?.split(",").map((s) => s.trim()).filter((s) => s !== "");

/**
 * One option of `linode-operator run`, declared once, as a kind's setting is: its flag, its
 * environment variable, its help, and its schema with its default (the help shows the default
 * where the schema has one). `read` turns the text given into what the schema takes.
 */
export interface OperatorOption<S extends z.ZodType = z.ZodType> extends KindSetting {
  schema: S;
  read?: (given: string | undefined) => unknown;
}

const option = <S extends z.ZodType>(flag: string, env: string, schema: S, help: string, read?: (given: string | undefined) => unknown): OperatorOption<S> =>
  ({ flag, env, schema, help, ...(read !== undefined ? { read } : {}) });

/** The operator's options by configuration field (every one but the token itself, which comes from LINODE_TOKEN or a file). */
export const operatorOptions = {
  linodeTokenFile: option("linode-token-file", "LINODE_TOKEN_FILE", z.string().min(1).optional(), "file holding the Linode API token (else LINODE_TOKEN)"),
  /** Read again while the token cannot work, so fixing it needs no restart. */
  linodeTokenSecret: option("linode-token-secret", "LINODE_TOKEN_SECRET", objectName.optional(), "the Secret in the operator's namespace holding its token: read again while the token cannot work (invalid, or missing a scope), so fixing the Secret makes the operator Ready without a restart"),
  linodeTokenSecretKey: option("linode-token-secret-key", "LINODE_TOKEN_SECRET_KEY", z.string().regex(/^[-._a-zA-Z0-9]+$/).default("token"), "the key of the token in that Secret"),
  tokenRecheckSeconds: option("token-recheck-seconds", "TOKEN_RECHECK_SECONDS", z.coerce.number().min(0.1).max(3600).default(10), "while the operator's token cannot work (at start), how often it is read and tried again"),
  /** Where a Warning Event says why the operator is not Ready. */
  deploymentName: option("deployment-name", "DEPLOYMENT_NAME", objectName.optional(), "the operator's Deployment in its namespace: a Warning Event on it says why the operator is not Ready"),
  linodeApiUrl: option("linode-api-url", "LINODE_API_URL", z.url().default("https://api.linode.com/v4"), "Linode API base URL"),
  /** The share of each token's API limit the operator spends at most (its call budget); the rest is left to people and other tools. */
  linodeApiShare: option("linode-api-share", "LINODE_API_SHARE", z.coerce.number().min(0.05).max(1).default(0.5), "share (0.05..1) of each token's Linode rate limit the operator may spend; it never draws a 429 within it"),
  /** Plain http sends the token in clear: only to loopback unless this is set. */
  allowHttpLinodeApi: option("allow-http-linode-api", "LINODE_API_ALLOW_HTTP", bool.default(false), "true: allow a plain-http API URL to a host other than loopback (the token travels in clear)"),
  clusterId: option("cluster-id", "CLUSTER_ID", z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "1..128 letters, digits, '.', '_' or '-'").optional(), "this cluster's identity in cloud labels (default: the kube-system namespace's UID; set it to keep ownership across a cluster rebuilt from backup)"),
  namespaces: option("namespaces", "WATCH_NAMESPACES", z.array(namespaceName).default([]), "comma-separated namespaces to watch (default: all)", commaList),
  requireCredentialsRef: option("require-credentials-ref", "REQUIRE_CREDENTIALS_REF", namespaceRule, "true, or comma-separated namespaces: their resources must name a token Secret in spec.credentialsRef, never using the operator's (default: none)", namespaceList),
  adoptNamespaces: option("adopt-namespaces", "ADOPT_NAMESPACES", namespaceRule, "true, or comma-separated namespaces: their resources may name an existing account object by id with the operator's own token, which every namespace shares: adopt (spec.databaseId, spec.nodeBalancerId), fork (spec.restoreFrom.pointInTime.databaseId), join a VPC (spec.privateNetwork; a NodeBalancer's spec.vpcs, spec.frontendVpc), take a reserved address (spec.ipv4), attach a firewall (spec.firewallId); elsewhere AdoptionNotAllowed (default: none; with spec.credentialsRef always allowed)", namespaceList),
  nodePortNamespaces: option("node-port-namespaces", "NODE_PORT_NAMESPACES", namespaceRule, "true, or comma-separated namespaces: their NodeBalancers may publish any port of the selected nodes (configs[].nodesFrom.nodes), such as the kubelet's or another namespace's NodePort; elsewhere NodePortsNotAllowed (default: none; nodesFrom.serviceRef, a Service of the namespace's own, is always allowed)", namespaceList),
  /** The read gate "read-nodes" (src/resources/read-gates.ts): Nodes, and Services and EndpointSlices where the operator watches. */
  readNodes: option("read-nodes", "READ_NODES", bool.default(false), "true: list and watch the cluster's Nodes, and Services and EndpointSlices in the watched namespaces (get/list/watch on each: the chart's rbac.readNodes grants all three), for database allow lists that follow the nodes (spec.allowListFrom.nodes) and NodeBalancer backends that follow them or a Service (configs[].nodesFrom); otherwise those are NodesNotReadable"),
  concurrency: option("concurrency", "CONCURRENCY", z.coerce.number().int().min(1).max(64).default(4), "reconciles in parallel per kind and Linode account, for up to eight accounts at once (beyond, shared fairly)"),
  leaderElect: option("leader-elect", "LEADER_ELECT", bool.default(true), "true|false: elect a leader on a Lease"),
  shardBy: option("shard-by", "SHARD_BY", z.enum(["namespace", "account"]).default("namespace"), "with --shards, what places an object on a shard: namespace (its namespace's hash) or account (its Linode account's: the token its credentialsRef names, its database's for a snapshot or pool, else the operator's own; one account's objects and call budget on one replica, and every object on the operator's token on one shard)"),
  shards: option("shards", "SHARDS", bool.default(false), "true: every replica works, on the objects of the namespaces its shard owns (each holds a Lease of its own; the leader labels each object with its namespace's shard); false: the leader does all the work and the other replicas stand by"),
  leaderElectionNamespace: option("leader-election-namespace", "POD_NAMESPACE", z.string().min(1).default("default"), "namespace of the Lease (default: the pod's, else default)"),
  leaderElectionId: option("leader-election-id", "LEADER_ELECTION_ID", z.string().min(1).default("linode-operator"), "name of the Lease"),
  identity: option("identity", "POD_NAME", z.string().min(1), "this replica's name in the Lease (default: hostname-pid)", (v) => v ?? `${hostname()}-${String(process.pid)}`),
  healthPort: option("health-port", "HEALTH_PORT", port.default(8081), "port of /healthz and /readyz (0 = any free)"),
  metricsPort: option("metrics-port", "METRICS_PORT", port.default(8080), "port of /metrics (0 = any free)"),
  /** One IP address, or several separated by commas (e.g. the pod's IP and 127.0.0.1), that the endpoints listen on. */
  bindAddress: option("bind-address", "BIND_ADDRESS", z.string().refine((v) => v.split(",").every((a) => isIP(a.trim()) !== 0), "IP addresses separated by commas (e.g. 10.1.2.3,127.0.0.1; 0.0.0.0 = every address)").default("0.0.0.0"), "IP address the endpoints listen on, or several separated by commas, e.g. the pod's IP and 127.0.0.1"),
  logLevel: option("log-level", "LOG_LEVEL", z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), "fatal|error|warn|info|debug|trace"),
  shutdownGraceSeconds: option("shutdown-grace-seconds", "SHUTDOWN_GRACE_SECONDS", z.coerce.number().min(0).max(600).default(20), "how long SIGTERM waits for in-flight work"),
  pollPendingSeconds: option("poll-pending-seconds", "POLL_PENDING_SECONDS", z.coerce.number().min(0.1).max(3600).default(DEFAULT_POLL.pendingMillis / 1000), "how often a cloud object that is being created or changed is looked at"),
  pollReadySeconds: option("poll-ready-seconds", "POLL_READY_SECONDS", z.coerce.number().min(1).max(86_400).default(DEFAULT_POLL.readyMillis / 1000), "how often a settled cloud object is checked for drift (twice that while its account's call budget is nearly spent, so objects not Ready yet go first)"),
} as const;

type Schemas<T extends Record<string, OperatorOption>> = { [K in keyof T]: T[K]["schema"] };
const schemasOf = <T extends Record<string, OperatorOption>>(options: T): Schemas<T> =>
  Object.fromEntries(Object.entries(options).map(([key, o]) => [key, o.schema])) as Schemas<T>;

export const operatorConfigSchema = z.object({
  /** The operator's own token; optional only when every resource must bring its own (requireCredentialsRef: ["*"]). */
  linodeToken: z.string().min(1).optional(),
  ...schemasOf(operatorOptions),
}).superRefine((c, ctx) => {
  const url = new URL(c.linodeApiUrl);
  if (url.protocol === "http:" && !loopbackHosts.test(url.hostname) && !c.allowHttpLinodeApi) {
    ctx.addIssue({
      code: "custom", path: ["linodeApiUrl"],
      message: `${url.origin} is plain http to another host: the API token would cross the network in clear. Use https, or set --allow-http-linode-api=true (LINODE_API_ALLOW_HTTP) for a trusted network`,
    });
  }
});

export type OperatorConfig = z.infer<typeof operatorConfigSchema> & {
  /** The kinds' own settings, parsed, by flag. */
  kindSettings: SettingValues;
};

/** The flags of `linode-operator run`, in the order the help lists them. */
export const runFlags: readonly string[] = Object.values(operatorOptions).map((o) => o.flag);

/** An option's help with its default, where its schema has one the help does not already state. */
function helpWithDefault(o: KindSetting): string {
  const d = o.schema.safeParse(undefined);
  if (!d.success || d.data === undefined || /\bdefault\b/.test(o.help)) return o.help;
  const value: unknown = d.data;
  const shown = Array.isArray(value) ? (value.length === 0 ? "none" : value.join(",")) : typeof value === "string" ? value : JSON.stringify(value);
  return `${o.help} (default ${shown})`;
}

/** A kind's name and its own settings, as the help and the configuration read them. */
export interface KindSettings { kind: string; settings: readonly KindSetting[] }

/** `kinds`: the kinds the operator reconciles (with their settings), so the help never promises one it does not. */
export function runHelp(kinds: readonly KindSettings[]): string {
  const row = (name: string, help: string, env: string): string => `  --${name.padEnd(26)} ${help} [${env}]`;
  const rows = Object.values(operatorOptions).map((o) => row(o.flag, helpWithDefault(o), o.env));
  const own = kinds.filter((k) => k.settings.length > 0).flatMap((k) => ["", `${k.kind} options:`, ...k.settings.map((s) => row(s.flag, helpWithDefault(s), s.env))]);
  return [
    "Usage: linode-operator run [options]",
    "",
    `Runs the operator: watches ${kinds.map((k) => k.kind).join(", ")} resources in all namespaces (or --namespaces)`,
    "and reconciles them with the Linode API. Kubernetes credentials come from the pod's service",
    "account, or KUBECONFIG / ~/.kube/config. Every option can also be set by the environment",
    "variable in brackets.",
    "",
    "Options:",
    ...rows,
    ...own,
    "",
    "Environment: LINODE_TOKEN (the operator's API token, unless --linode-token-file is given; a",
    "resource may name another account's token in spec.credentialsRef).",
  ].join("\n");
}

/** `settings`: the kinds' own (each kind's flags, with their schemas). */
/**
 * `tokenOptional`: a missing token is not refused (doctor reports it as a check instead).
 */
export function loadOperatorConfig(argv: string[], env: NodeJS.ProcessEnv = process.env, settings: readonly KindSetting[] = [], opts: { tokenOptional?: boolean } = {}): OperatorConfig {
  for (const s of settings) {
    if (runFlags.includes(s.flag) || settings.filter((o) => o.flag === s.flag).length > 1) throw new Error(`the flag --${s.flag} is declared twice`);
  }
  const options: Record<string, { type: "string" }> = Object.fromEntries([...runFlags, ...settings.map((s) => s.flag)].map((k) => [k, { type: "string" }]));
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }) as { values: Record<string, string | undefined> };
  const given = (flag: string, envName: string): string | undefined => {
    const v = values[flag] ?? env[envName];
    return v === "" ? undefined : v;
  };
  const raw: Record<string, unknown> = {};
  for (const [key, o] of Object.entries(operatorOptions) as [string, OperatorOption][]) {
    const v = given(o.flag, o.env);
    raw[key] = o.read !== undefined ? o.read(v) : v;
  }
  const tokenFile = raw.linodeTokenFile as string | undefined;
  const token = tokenFile !== undefined ? readFileSync(tokenFile, "utf8").trim() : (env.LINODE_TOKEN ?? "");
  raw.linodeToken = token === "" ? undefined : token;
  const parsed = operatorConfigSchema.safeParse(raw);
  // Each problem names the field, and the flag and variable a user sets it with.
  const named = (path: PropertyKey[]): string => {
    const o = (operatorOptions as Record<string, OperatorOption | undefined>)[String(path[0])];
    return o === undefined ? path.map(String).join(".") : `${path.map(String).join(".")} (--${o.flag}, ${o.env})`;
  };
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${named(i.path)}: ${i.message}`);
  if (parsed.success && opts.tokenOptional !== true && parsed.data.linodeToken === undefined && parsed.data.linodeTokenSecret === undefined && !parsed.data.requireCredentialsRef.includes("*")) {
    issues.push("linodeToken: a Linode API token is required: set LINODE_TOKEN, --linode-token-file or --linode-token-secret (or --require-credentials-ref=true, so that every resource names its own in spec.credentialsRef)");
  }
  const kindSettings: Record<string, unknown> = {};
  for (const s of settings) {
    const v = s.schema.safeParse(given(s.flag, s.env));
    if (v.success) kindSettings[s.flag] = v.data;
    else issues.push(...v.error.issues.map((i) => `${s.flag}: ${i.message}`));
  }
  if (!parsed.success || issues.length > 0) throw new Error(`invalid configuration: ${issues.join("; ")}`);
  return { ...parsed.data, kindSettings };
}
