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

export const operatorConfigSchema = z.object({
  /** The operator's own token; optional only when every resource must bring its own (requireCredentialsRef: ["*"]). */
  linodeToken: z.string().min(1).optional(),
  /** Where linodeToken was read from (--linode-token-file): read again while the token cannot work. */
  linodeTokenFile: z.string().min(1).optional(),
  /** The Secret (in the operator's namespace) the token comes from: read again while the token cannot work, so fixing it needs no restart. */
  linodeTokenSecret: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/).optional(),
  linodeTokenSecretKey: z.string().regex(/^[-._a-zA-Z0-9]+$/).default("token"),
  /** How often a token that cannot work is looked at again at start. */
  tokenRecheckSeconds: z.coerce.number().min(0.1).max(3600).default(10),
  /** The operator's Deployment (in its namespace): where a Warning Event says why it is not Ready. */
  deploymentName: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/).optional(),
  /** Namespaces whose resources must name their token (spec.credentialsRef); "*" = all. */
  requireCredentialsRef: z.array(z.union([z.literal("*"), z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)])).default([]),
  /** Namespaces whose resources may adopt an existing cloud object by id with the operator's own token; "*" = all. */
  adoptNamespaces: z.array(z.union([z.literal("*"), z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)])).default([]),
  /** Namespaces whose NodeBalancers may publish a bare node port (configs[].nodesFrom.nodes); "*" = all. */
  nodePortNamespaces: z.array(z.union([z.literal("*"), z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)])).default([]),
  /** The operator may list and watch the cluster's Nodes, and Services and EndpointSlices where it watches (granted by the chart's rbac.readNodes): the read gate "read-nodes" (src/resources/read-gates.ts). */
  readNodes: bool.default(false),
  linodeApiUrl: z.url().default("https://api.linode.com/v4"),
  /** The share of each token's API limit the operator spends at most (its call budget); the rest is left to people and other tools. */
  linodeApiShare: z.coerce.number().min(0.05).max(1).default(0.5),
  /** Plain http sends the token in clear: only to loopback unless this is set. */
  allowHttpLinodeApi: bool.default(false),
  /** This cluster's identity in the cloud objects' labels; default: the kube-system namespace's UID. */
  clusterId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "1..128 letters, digits, '.', '_' or '-'").optional(),
  namespaces: z.array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)).default([]),
  concurrency: z.coerce.number().int().min(1).max(64).default(4),
  leaderElect: bool.default(true),
  leaderElectionNamespace: z.string().min(1).default("default"),
  leaderElectionId: z.string().min(1).default("linode-operator"),
  identity: z.string().min(1),
  healthPort: port.default(8081),
  metricsPort: port.default(8080),
  /** One IP address, or several separated by commas (e.g. the pod's IP and 127.0.0.1), that the endpoints listen on. */
  bindAddress: z.string().refine((v) => v.split(",").every((a) => isIP(a.trim()) !== 0), "IP addresses separated by commas (e.g. 10.1.2.3,127.0.0.1; 0.0.0.0 = every address)").default("0.0.0.0"),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  shutdownGraceSeconds: z.coerce.number().min(0).max(600).default(20),
  /** How often a cloud object that is settling is looked at, and one that is settled (drift detection). */
  pollPendingSeconds: z.coerce.number().min(0.1).max(3600).default(DEFAULT_POLL.pendingMillis / 1000),
  pollReadySeconds: z.coerce.number().min(1).max(86_400).default(DEFAULT_POLL.readyMillis / 1000),
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

export const runFlags = {
  "linode-token-file": { type: "string", env: "LINODE_TOKEN_FILE", help: "file holding the Linode API token (else LINODE_TOKEN)" },
  "linode-token-secret": { type: "string", env: "LINODE_TOKEN_SECRET", help: "the Secret in the operator's namespace holding its token: read again while the token cannot work (invalid, or missing a scope), so fixing the Secret makes the operator Ready without a restart" },
  "linode-token-secret-key": { type: "string", env: "LINODE_TOKEN_SECRET_KEY", help: "the key of the token in that Secret (default token)" },
  "token-recheck-seconds": { type: "string", env: "TOKEN_RECHECK_SECONDS", help: "while the operator's token cannot work (at start), how often it is read and tried again (default 10)" },
  "deployment-name": { type: "string", env: "DEPLOYMENT_NAME", help: "the operator's Deployment in its namespace: a Warning Event on it says why the operator is not Ready" },
  "linode-api-url": { type: "string", env: "LINODE_API_URL", help: "Linode API base URL (default https://api.linode.com/v4)" },
  "linode-api-share": { type: "string", env: "LINODE_API_SHARE", help: "share (0.05..1) of each token's Linode rate limit the operator may spend; it never draws a 429 within it (default 0.5)" },
  "allow-http-linode-api": { type: "string", env: "LINODE_API_ALLOW_HTTP", help: "true: allow a plain-http API URL to a host other than loopback (the token travels in clear)" },
  "cluster-id": { type: "string", env: "CLUSTER_ID", help: "this cluster's identity in cloud labels (default: the kube-system namespace's UID; set it to keep ownership across a cluster rebuilt from backup)" },
  namespaces: { type: "string", env: "WATCH_NAMESPACES", help: "comma-separated namespaces to watch (default: all)" },
  "require-credentials-ref": { type: "string", env: "REQUIRE_CREDENTIALS_REF", help: "true, or comma-separated namespaces: their resources must name a token Secret in spec.credentialsRef, never using the operator's (default: none)" },
  "adopt-namespaces": { type: "string", env: "ADOPT_NAMESPACES", help: "true, or comma-separated namespaces: their resources may name an existing account object by id with the operator's own token, which every namespace shares: adopt (spec.databaseId, spec.nodeBalancerId), fork (spec.restoreFrom.pointInTime.databaseId), join a VPC (spec.privateNetwork; a NodeBalancer's spec.vpcs, spec.frontendVpc), take a reserved address (spec.ipv4), attach a firewall (spec.firewallId); elsewhere AdoptionNotAllowed (default: none; with spec.credentialsRef always allowed)" },
  "node-port-namespaces": { type: "string", env: "NODE_PORT_NAMESPACES", help: "true, or comma-separated namespaces: their NodeBalancers may publish any port of the selected nodes (configs[].nodesFrom.nodes), such as the kubelet's or another namespace's NodePort; elsewhere NodePortsNotAllowed (default: none; nodesFrom.serviceRef, a Service of the namespace's own, is always allowed)" },
  "read-nodes": { type: "string", env: "READ_NODES", help: "true: list and watch the cluster's Nodes, and Services and EndpointSlices in the watched namespaces (get/list/watch on each: the chart's rbac.readNodes grants all three), for database allow lists that follow the nodes (spec.allowListFrom.nodes) and NodeBalancer backends that follow them or a Service (configs[].nodesFrom); otherwise those are NodesNotReadable (default false)" },
  concurrency: { type: "string", env: "CONCURRENCY", help: "reconciles in parallel per kind, shared fairly among the Linode accounts objects act in (default 4)" },
  "leader-elect": { type: "string", env: "LEADER_ELECT", help: "true|false: elect a leader on a Lease (default true)" },
  "leader-election-namespace": { type: "string", env: "POD_NAMESPACE", help: "namespace of the Lease (default: the pod's, else default)" },
  "leader-election-id": { type: "string", env: "LEADER_ELECTION_ID", help: "name of the Lease (default linode-operator)" },
  identity: { type: "string", env: "POD_NAME", help: "this replica's name in the Lease (default: hostname-pid)" },
  "health-port": { type: "string", env: "HEALTH_PORT", help: "port of /healthz and /readyz (default 8081; 0 = any free)" },
  "metrics-port": { type: "string", env: "METRICS_PORT", help: "port of /metrics (default 8080; 0 = any free)" },
  "bind-address": { type: "string", env: "BIND_ADDRESS", help: "IP address the endpoints listen on, or several separated by commas, e.g. the pod's IP and 127.0.0.1 (default 0.0.0.0)" },
  "log-level": { type: "string", env: "LOG_LEVEL", help: "fatal|error|warn|info|debug|trace (default info)" },
  "shutdown-grace-seconds": { type: "string", env: "SHUTDOWN_GRACE_SECONDS", help: "how long SIGTERM waits for in-flight work (default 20)" },
  "poll-pending-seconds": { type: "string", env: "POLL_PENDING_SECONDS", help: `how often a cloud object that is being created or changed is looked at (default ${String(DEFAULT_POLL.pendingMillis / 1000)})` },
  "poll-ready-seconds": { type: "string", env: "POLL_READY_SECONDS", help: `how often a settled cloud object is checked for drift (default ${String(DEFAULT_POLL.readyMillis / 1000)}; twice that while its account's call budget is nearly spent, so objects not Ready yet go first)` },
} as const;

/** A kind's name and its own settings, as the help and the configuration read them. */
export interface KindSettings { kind: string; settings: readonly KindSetting[] }

/** `kinds`: the kinds the operator reconciles (with their settings), so the help never promises one it does not. */
export function runHelp(kinds: readonly KindSettings[]): string {
  const row = (name: string, help: string, env: string): string => `  --${name.padEnd(26)} ${help} [${env}]`;
  const rows = Object.entries(runFlags).map(([name, f]) => row(name, f.help, f.env));
  const own = kinds.filter((k) => k.settings.length > 0).flatMap((k) => ["", `${k.kind} options:`, ...k.settings.map((s) => row(s.flag, s.help, s.env))]);
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
    if (s.flag in runFlags || settings.filter((o) => o.flag === s.flag).length > 1) throw new Error(`the flag --${s.flag} is declared twice`);
  }
  const options: Record<string, { type: "string" }> = Object.fromEntries([...Object.keys(runFlags), ...settings.map((s) => s.flag)].map((k) => [k, { type: "string" }]));
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }) as { values: Record<string, string | undefined> };
  const given = (flag: string, envName: string): string | undefined => {
    const v = values[flag] ?? env[envName];
    return v === "" ? undefined : v;
  };
  const pick = (name: keyof typeof runFlags): string | undefined => given(name, runFlags[name].env);
  const tokenFile = pick("linode-token-file");
  const token = tokenFile !== undefined ? readFileSync(tokenFile, "utf8").trim() : (env.LINODE_TOKEN ?? "");
  const namespaceList = (v: string | undefined): string[] => (v === undefined || v === "false" ? [] : v === "true" ? ["*"] : v.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  const raw = {
    linodeToken: token === "" ? undefined : token,
    linodeTokenFile: tokenFile,
    linodeTokenSecret: pick("linode-token-secret"),
    linodeTokenSecretKey: pick("linode-token-secret-key"),
    deploymentName: pick("deployment-name"),
    tokenRecheckSeconds: pick("token-recheck-seconds"),
    requireCredentialsRef: namespaceList(pick("require-credentials-ref")),
    adoptNamespaces: namespaceList(pick("adopt-namespaces")),
    nodePortNamespaces: namespaceList(pick("node-port-namespaces")),
    readNodes: pick("read-nodes"),
    linodeApiUrl: pick("linode-api-url"),
    linodeApiShare: pick("linode-api-share"),
    allowHttpLinodeApi: pick("allow-http-linode-api"),
    clusterId: pick("cluster-id"),
    namespaces: pick("namespaces")?.split(",").map((s) => s.trim()).filter((s) => s !== ""),
    concurrency: pick("concurrency"),
    leaderElect: pick("leader-elect"),
    leaderElectionNamespace: pick("leader-election-namespace"),
    leaderElectionId: pick("leader-election-id"),
    identity: pick("identity") ?? `${hostname()}-${process.pid}`,
    healthPort: pick("health-port"),
    metricsPort: pick("metrics-port"),
    bindAddress: pick("bind-address"),
    logLevel: pick("log-level"),
    shutdownGraceSeconds: pick("shutdown-grace-seconds"),
    pollPendingSeconds: pick("poll-pending-seconds"),
    pollReadySeconds: pick("poll-ready-seconds"),
  };
  const parsed = operatorConfigSchema.safeParse(raw);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
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
