// `linode-operator doctor`, the command, against the emulator and the real API server: all OK with
// a token of every scope and an admin's credentials (this build's CRDs as the API server serves
// them compare equal); an under-scoped token FAILs naming the scope and the fix; a ServiceAccount
// without the operator's RBAC FAILs naming each missing permission; exit codes and --json.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import type { CheckResult } from "../../src/doctor/report.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";

const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const ALL = "doctor-all-scopes-token";
const DB_ONLY = "doctor-db-only-token";

// Each run is a process of its own (about 5 s on a busy machine): generous time.
describe("linode-operator doctor", { timeout: 240_000 }, () => {
  const cluster = useTestCluster("doctor");
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ timeScale: 0, config: { tokens: [{ token: ALL, scopes: "*" }, { token: DB_ONLY, scopes: "databases:read_write" }] } });
    await installCrds(cluster);
  });
  afterAll(async () => { await emulator.close(); });

  const doctor = (env: Record<string, string>, ...args: string[]): ReturnType<typeof execCapture> => execCapture(process.execPath, [cli, "doctor", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LINODE_API_URL: emulator.url, POD_NAMESPACE: cluster.namespace, ...env },
  });
  const json = (stdout: string): CheckResult[] => (JSON.parse(stdout) as { checks: CheckResult[] }).checks;

  it("all OK: a token of every scope, an admin's credentials, this build's CRDs, Nodes read", async () => {
    const r = await doctor({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: ALL, READ_NODES: "true" });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^OK {4}Kubernetes API/m);
    expect(r.stdout).toMatch(/^OK {4}CRD nodebalancers\.linode\.operator\.dev +installed, schema as this build's$/m);
    expect(r.stdout).toMatch(/^OK {4}Linode token scopes +"\*" covers what the kinds need$/m);
    expect(r.stdout).toMatch(/\n\n10 OK, 0 WARN, 0 FAIL\n$/);
    expect(r.stdout).not.toContain(ALL);
    const checks = json((await doctor({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: ALL, READ_NODES: "true" }, "--json")).stdout);
    expect(checks.map((c) => c.check)).toEqual([
      "Kubernetes API", "Linode API", "Linode token", "Linode token scopes",
      "CRD manageddatabases.linode.operator.dev", "CRD databasesnapshots.linode.operator.dev", "CRD nodebalancers.linode.operator.dev", "CRD databaseconnectionpools.linode.operator.dev", "RBAC", "Nodes",
    ]);
    expect(checks.every((c) => c.status === "OK")).toBe(true);
  });

  it("an under-scoped token: FAIL naming the missing scope, what needs it and the fix; exit code 1", async () => {
    const r = await doctor({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: DB_ONLY, READ_NODES: "true" });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}Linode token scopes +has "databases:read_write", missing nodebalancers:read_write \(NodeBalancer: create, update and delete NodeBalancers/m);
    expect(r.stdout).toMatch(/^ +fix: create a token with nodebalancers:read_write \(and firewall:read_write for spec\.firewallId, vpc:read_only for spec\.vpcs, account:read_write for spec\.deletionProtection, if any resource uses it\) \(docs\/token-scopes\.md\) and put it in the token Secret$/m);
    const invalid = json((await doctor({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "nobody-has-this-token" }, "--json")).stdout);
    expect(invalid.find((c) => c.check === "Linode token")).toMatchObject({ status: "FAIL", message: "refused: Invalid Token" });
  });

  it("the operator's ServiceAccount without its RBAC: FAIL naming each missing permission; Nodes and CRDs cannot be read", async () => {
    const kubeconfig = await cluster.serviceAccountKubeconfig("bare-operator");
    const r = await doctor({ KUBECONFIG: kubeconfig, LINODE_TOKEN: ALL, WATCH_NAMESPACES: cluster.namespace }, "--json");
    expect(r.code, r.stderr).toBe(1);
    const checks = json(r.stdout);
    const rbac = checks.find((c) => c.check === "RBAC");
    expect(rbac?.status).toBe("FAIL");
    expect(rbac?.message).toContain(`patch manageddatabases/status.linode.operator.dev in ${cluster.namespace} (write their status)`);
    expect(rbac?.message).toContain("get leases.coordination.k8s.io in");
    expect(rbac?.fix).toContain("rbac.create=true");
    expect(checks.find((c) => c.check === "Nodes")).toMatchObject({ status: "WARN", fix: expect.stringContaining("rbac.readNodes=true") as unknown });
    expect(checks.filter((c) => c.check.startsWith("CRD ")).map((c) => c.status)).toEqual(["WARN", "WARN", "WARN", "WARN"]);

    // Granted what the operator uses in its namespace (as the chart's Roles would), only Nodes and the cluster's identity remain.
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "op" },
      rules: [
        { apiGroups: ["linode.operator.dev"], resources: ["manageddatabases", "databasesnapshots", "nodebalancers", "databaseconnectionpools"], verbs: ["get", "list", "watch", "patch"] },
        { apiGroups: ["linode.operator.dev"], resources: ["manageddatabases/status", "databasesnapshots/status", "nodebalancers/status", "databaseconnectionpools/status"], verbs: ["patch"] },
        { apiGroups: ["linode.operator.dev"], resources: ["manageddatabases/finalizers", "databasesnapshots/finalizers", "nodebalancers/finalizers", "databaseconnectionpools/finalizers"], verbs: ["update"] },
        { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
      ],
    };
    const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "op" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "op" }, subjects: [{ kind: "ServiceAccount", name: "bare-operator", namespace: cluster.namespace }] };
    const applied = await cluster.kubectl(["-n", cluster.namespace, "apply", "-f", "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "List", items: [role, binding] }) });
    expect(applied.code, applied.stderr).toBe(0);
    const after = json((await doctor({ KUBECONFIG: kubeconfig, LINODE_TOKEN: ALL, WATCH_NAMESPACES: cluster.namespace }, "--json")).stdout);
    expect(after.find((c) => c.check === "RBAC")?.message).toMatch(/^missing 1 of \d+: get namespaces kube-system \(the cluster's identity \(kube-system's UID\) in cloud labels\)$/);
    expect(after.filter((c) => c.check.startsWith("CRD ")).map((c) => c.status)).toEqual(["WARN", "WARN", "WARN", "WARN"]);
    expect(after.find((c) => c.check.startsWith("CRD "))?.message).toContain("version is not checked");
    const withId = json((await doctor({ KUBECONFIG: kubeconfig, LINODE_TOKEN: ALL, WATCH_NAMESPACES: cluster.namespace, CLUSTER_ID: "c1" }, "--json")).stdout);
    expect(withId.find((c) => c.check === "RBAC")?.status).toBe("OK");
  });
});
