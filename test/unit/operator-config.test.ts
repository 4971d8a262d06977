// The operator's configuration: flags over environment over defaults, and the refusals that
// protect the API token.
import { describe, expect, it } from "vitest";
import { loadOperatorConfig } from "../../src/config/operator-config.ts";
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
    expect(() => loadOperatorConfig([], env({ CLUSTER_ID: "not ok!" }))).toThrow(/clusterId/);
  });

  it("reads NodeBalancer statistics every 5 minutes unless told otherwise; 0 turns them off, a hot loop is refused", () => {
    expect(loadOperatorConfig([], env({})).nodeBalancerStatsSeconds).toBe(300);
    expect(loadOperatorConfig([], env({ NODEBALANCER_STATS_SECONDS: "0" })).nodeBalancerStatsSeconds).toBe(0);
    expect(loadOperatorConfig(["--nodebalancer-stats-seconds", "900"], env({})).nodeBalancerStatsSeconds).toBe(900);
    expect(() => loadOperatorConfig(["--nodebalancer-stats-seconds", "5"], env({}))).toThrow(/nodeBalancerStatsSeconds: 0 \(off\) or 60..86400/);
  });

  it("needs a token of its own unless every resource must bring one (spec.credentialsRef)", () => {
    expect(() => loadOperatorConfig([], {})).toThrow(/token is required.*require-credentials-ref/);
    expect(loadOperatorConfig([], { REQUIRE_CREDENTIALS_REF: "true" })).toMatchObject({ linodeToken: undefined, requireCredentialsRef: ["*"] });
    expect(loadOperatorConfig(["--require-credentials-ref", "team-a, team-b"], env({})).requireCredentialsRef).toEqual(["team-a", "team-b"]);
    expect(() => loadOperatorConfig([], { REQUIRE_CREDENTIALS_REF: "team-a" })).toThrow(/token is required/);
    expect(loadOperatorConfig([], env({ REQUIRE_CREDENTIALS_REF: "false" })).requireCredentialsRef).toEqual([]);
    expect(() => loadOperatorConfig([], env({ REQUIRE_CREDENTIALS_REF: "Not_A_Namespace" }))).toThrow(/requireCredentialsRef/);
  });

  it("adopting by id on the operator's shared token is off unless the admin allows it, everywhere or in named namespaces", () => {
    expect(loadOperatorConfig([], env({})).adoptNamespaces).toEqual([]);
    expect(loadOperatorConfig([], env({ ADOPT_NAMESPACES: "true" })).adoptNamespaces).toEqual(["*"]);
    expect(loadOperatorConfig(["--adopt-namespaces", "team-a, team-b"], env({})).adoptNamespaces).toEqual(["team-a", "team-b"]);
    expect(loadOperatorConfig([], env({ ADOPT_NAMESPACES: "false" })).adoptNamespaces).toEqual([]);
    expect(() => loadOperatorConfig([], env({ ADOPT_NAMESPACES: "Team_A" }))).toThrow(/adoptNamespaces/);
  });
});

describe("Kubernetes Events", () => {
  it("a repeat of an Event the API server has expired is recorded anew, not lost", async () => {
    const kube = new MemoryKube();
    const events = new KubeEventRecorder(kube, { controller: "test", instance: "unit" });
    const obj = { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders", namespace: "ns", uid: "u1" } };
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await settle();
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await settle();
    expect(kube.events).toHaveLength(1);
    expect(kube.events[0]?.series).toMatchObject({ count: 2 });
    kube.events.length = 0; // the API server's TTL (about an hour) removed it
    events.warning(obj, "ApiRejected", "Reconcile", "region not found");
    await settle();
    expect(kube.events.map((e) => e.reason)).toEqual(["ApiRejected"]);
  });

  it("Event names stay within 253 characters whatever the object's name", async () => {
    const kube = new MemoryKube();
    const events = new KubeEventRecorder(kube, { controller: "test", instance: "unit" });
    events.normal({ metadata: { name: "x".repeat(253), namespace: "ns", uid: "u" } }, "Created", "Create", "made");
    await new Promise((r) => setTimeout(r, 20));
    const name = (kube.events[0]?.metadata as { name: string } | undefined)?.name ?? "";
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name.length).toBeGreaterThan(200);
  });
});
