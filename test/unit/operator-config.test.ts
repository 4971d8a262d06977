// The operator's configuration: flags over environment over defaults, and the refusals that
// protect the API token.
import { describe, expect, it } from "vitest";
import { loadOperatorConfig, operatorConfigSchema, operatorOptions, runHelp } from "../../src/config/operator-config.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { KubeEventRecorder } from "../../src/runtime/events.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({ LINODE_TOKEN: "t", ...extra });

describe("operator configuration", () => {
  it("refuses a plain-http API URL to another host: the token would travel in clear", () => {
    expect(() => loadOperatorConfig([], env({ LINODE_API_URL: "http://api.example.com/v4" }))).toThrow(/plain http to another host.*allow-http-linode-api/);
    expect(() => loadOperatorConfig(["--linode-api-url", "http://203.0.113.5:8080/v4"], env({}))).toThrow(/in clear/);
  });

  it("allows http to loopback (a local emulator), https anywhere, and http elsewhere only when told", () => {
    expect(loadOperatorConfig([], env({ LINODE_API_URL: "http://127.0.0.1:4000/v4" })).linodeApiUrl).toBe("http://127.0.0.1:4000/v4");
    expect(loadOperatorConfig([], env({ LINODE_API_URL: "http://localhost:4000/v4" })).linodeApiUrl).toBe("http://localhost:4000/v4");
    expect(loadOperatorConfig([], env({ LINODE_API_URL: "http://[::1]:4000/v4" })).linodeApiUrl).toBe("http://[::1]:4000/v4");
    expect(loadOperatorConfig([], env({ LINODE_API_URL: "https://api.example.com/v4" })).linodeApiUrl).toBe("https://api.example.com/v4");
    const allowed = loadOperatorConfig(["--allow-http-linode-api", "true"], env({ LINODE_API_URL: "http://10.0.0.5/v4" }));
    expect(allowed.allowHttpLinodeApi).toBe(true);
  });

  it("takes the cluster identity and poll intervals from flags or the environment", () => {
    const c = loadOperatorConfig(["--poll-ready-seconds", "60"], env({ CLUSTER_ID: "prod-eu-1", POLL_PENDING_SECONDS: "2" }));
    expect(c).toMatchObject({ clusterId: "prod-eu-1", pollPendingSeconds: 2, pollReadySeconds: 60 });
    expect(loadOperatorConfig([], env({})).clusterId).toBeUndefined();
    expect(() => loadOperatorConfig([], env({ CLUSTER_ID: "not ok!" }))).toThrow(/clusterId \(--cluster-id, CLUSTER_ID\): 1\.\.128 letters/);
  });

  it("a kind's own settings are flags and environment variables: NodeBalancer statistics every hour unless told otherwise; 0 turns them off, a hot loop is refused", () => {
    const settings = kindDefinitions.flatMap((d) => Object.values(d.settings ?? {}));
    const stats = (c: { kindSettings: Record<string, unknown> }): unknown => c.kindSettings["nodebalancer-stats-seconds"];
    expect(stats(loadOperatorConfig([], env({}), settings))).toBe(3600);
    expect(stats(loadOperatorConfig([], env({ NODEBALANCER_STATS_SECONDS: "0" }), settings))).toBe(0);
    expect(stats(loadOperatorConfig(["--nodebalancer-stats-seconds", "900"], env({}), settings))).toBe(900);
    expect(() => loadOperatorConfig(["--nodebalancer-stats-seconds", "5"], env({}), settings)).toThrow(/nodebalancer-stats-seconds: 0 \(off\) or 60..86400/);
    expect(loadOperatorConfig(["--backups-refresh-hours", "6"], env({}), settings).kindSettings["backups-refresh-hours"]).toBe(6);
    // Not a flag of the operator's without the kind that declares it; never declared twice.
    expect(() => loadOperatorConfig(["--nodebalancer-stats-seconds", "900"], env({}))).toThrow(/nodebalancer-stats-seconds/);
    expect(() => loadOperatorConfig([], env({}), [...settings, ...settings])).toThrow(/declared twice/);
  });

  it("each option is declared once: its flag, variable, schema and default are the ones parsing, the schema and the help use", () => {
    const options = Object.entries(operatorOptions);
    expect(new Set(options.map(([, o]) => o.flag)).size).toBe(options.length);
    expect(new Set(options.map(([, o]) => o.env)).size).toBe(options.length);
    const help = runHelp([]);
    for (const [key, o] of options) {
      // The schema of the configuration is the option's.
      expect(operatorConfigSchema.shape[key as keyof typeof operatorOptions]).toBe(o.schema);
      expect(help).toMatch(new RegExp(`--${o.flag} .*\\[${o.env}\\]`));
      const d = o.schema.safeParse(undefined);
      if (d.success && typeof d.data === "number") expect(help).toMatch(new RegExp(`--${o.flag} .*\\(default ${String(d.data)}\\)`));
    }
    // The flag and the variable both reach the field, the flag first.
    expect(loadOperatorConfig(["--concurrency", "7"], env({ CONCURRENCY: "3" })).concurrency).toBe(7);
    expect(loadOperatorConfig([], env({ CONCURRENCY: "3" })).concurrency).toBe(3);
    expect(loadOperatorConfig([], env({})).concurrency).toBe(4);
    expect(loadOperatorConfig([], env({ WATCH_NAMESPACES: "a, b" })).namespaces).toEqual(["a", "b"]);
    expect(loadOperatorConfig([], env({})).identity).toMatch(/-\d+$/);
  });

  it("the help lists each kind's own options under the kind", () => {
    const help = runHelp(kindDefinitions.map((d) => ({ kind: d.kind, settings: Object.values(d.settings ?? {}) })));
    expect(help).toMatch(/NodeBalancer options:\n\s+--nodebalancer-stats-seconds/);
    expect(help).toMatch(/ManagedDatabase options:\n\s+--backups-refresh-hours/);
    expect(help).not.toContain("DatabaseSnapshot options:");
  });

  it("needs a token of its own unless every resource must bring one (spec.credentialsRef)", () => {
    expect(() => loadOperatorConfig([], {})).toThrow(/token is required.*require-credentials-ref/);
    expect(loadOperatorConfig([], { REQUIRE_CREDENTIALS_REF: "true" })).toMatchObject({ linodeToken: undefined, requireCredentialsRef: ["*"] });
    expect(loadOperatorConfig(["--require-credentials-ref", "team-a, team-b"], env({})).requireCredentialsRef).toEqual(["team-a", "team-b"]);
    expect(() => loadOperatorConfig([], { REQUIRE_CREDENTIALS_REF: "team-a" })).toThrow(/token is required/);
    expect(loadOperatorConfig([], env({ REQUIRE_CREDENTIALS_REF: "false" })).requireCredentialsRef).toEqual([]);
    expect(() => loadOperatorConfig([], env({ REQUIRE_CREDENTIALS_REF: "Not_A_Namespace" }))).toThrow(/requireCredentialsRef/);
  });

  it("a token Secret stands for the token (read at start, and again while it cannot work); doctor takes a missing token as a check", () => {
    expect(loadOperatorConfig([], { LINODE_TOKEN_SECRET: "linode-token", POD_NAMESPACE: "ops", DEPLOYMENT_NAME: "op" })).toMatchObject({
      linodeToken: undefined, linodeTokenSecret: "linode-token", linodeTokenSecretKey: "token", leaderElectionNamespace: "ops", deploymentName: "op", tokenRecheckSeconds: 10,
    });
    expect(loadOperatorConfig(["--linode-token-secret-key", "api-token", "--token-recheck-seconds", "2"], env({ LINODE_TOKEN_SECRET: "t" }))).toMatchObject({ linodeTokenSecretKey: "api-token", tokenRecheckSeconds: 2 });
    expect(() => loadOperatorConfig([], { LINODE_TOKEN_SECRET: "Not_A_Name" })).toThrow(/linodeTokenSecret/);
    expect(loadOperatorConfig([], {}, [], { tokenOptional: true }).linodeToken).toBeUndefined();
  });

  it("adopting by id on the operator's shared token is off unless the admin allows it, everywhere or in named namespaces", () => {
    expect(loadOperatorConfig([], env({})).adoptNamespaces).toEqual([]);
    expect(loadOperatorConfig([], env({ ADOPT_NAMESPACES: "true" })).adoptNamespaces).toEqual(["*"]);
    expect(loadOperatorConfig(["--adopt-namespaces", "team-a, team-b"], env({})).adoptNamespaces).toEqual(["team-a", "team-b"]);
    expect(loadOperatorConfig([], env({ ADOPT_NAMESPACES: "false" })).adoptNamespaces).toEqual([]);
    expect(() => loadOperatorConfig([], env({ ADOPT_NAMESPACES: "Team_A" }))).toThrow(/adoptNamespaces/);
  });

  it("publishing a bare node port (nodesFrom.nodes) is off unless the admin allows it, everywhere or in named namespaces", () => {
    expect(loadOperatorConfig([], env({})).nodePortNamespaces).toEqual([]);
    expect(loadOperatorConfig([], env({ NODE_PORT_NAMESPACES: "true" })).nodePortNamespaces).toEqual(["*"]);
    expect(loadOperatorConfig(["--node-port-namespaces", "ingress, edge"], env({})).nodePortNamespaces).toEqual(["ingress", "edge"]);
    expect(loadOperatorConfig([], env({ NODE_PORT_NAMESPACES: "false" })).nodePortNamespaces).toEqual([]);
    expect(() => loadOperatorConfig([], env({ NODE_PORT_NAMESPACES: "Edge_1" }))).toThrow(/nodePortNamespaces/);
  });
});

describe("Kubernetes Events", () => {
  it("a repeat of an Event the API server has expired is recorded anew, not lost", async () => {
    const kube = new MemoryKube();
    const events = new KubeEventRecorder(kube, { controller: "test", instance: "unit" });
    const obj = { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders", namespace: "ns", uid: "u1" } };
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await events.idle();
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await events.idle();
    expect(kube.events).toHaveLength(1);
    expect(kube.events[0]?.series).toMatchObject({ count: 2 });
    kube.events.length = 0; // the API server's TTL (about an hour) removed it
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await events.idle();
    expect(kube.events.map((e) => e.reason)).toEqual(["ApiRejected"]);
  });

  it("Event names stay within 253 characters whatever the object's name", async () => {
    const kube = new MemoryKube();
    const events = new KubeEventRecorder(kube, { controller: "test", instance: "unit" });
    events.normal({ metadata: { name: "x".repeat(253), namespace: "ns", uid: "u" } }, "Created", "Create", "made");
    await events.idle();
    const name = (kube.events[0]?.metadata as { name: string } | undefined)?.name ?? "";
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name.length).toBeGreaterThan(200);
  });
});
