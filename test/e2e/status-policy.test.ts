// Status is the operator's record of which Linode object a resource owns (issue 41, case 4): a
// tenant whose Role grants everything on the group (`resources: ["*"]`, which RBAC cannot tell
// from the status subresource) must not write it. On the real API server, with the chart
// installed by the real helm: the chart's ValidatingAdmissionPolicy refuses the tenant and lets
// the operator's own ServiceAccount through (the operator reconciles to Ready under it), an
// admin's extra user is let through, turning it off lets the tenant through again, and two
// releases watching different namespaces never refuse each other's operator.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { tokenId } from "../../src/linode/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

const chart = fileURLToPath(new URL("../../helm/linode-operator", import.meta.url));
const MESSAGE = "status is the linode-operator's record of which Linode object a resource owns";

interface EnvVar { name: string; value?: string }
interface Deployment { spec: { template: { spec: { serviceAccountName: string; containers: { env: EnvVar[] }[] } } } }

describe("only the operator writes status (the chart's ValidatingAdmissionPolicy)", () => {
  const cluster = useTestCluster("statuspol");
  let emulator: RunningEmulator;
  let operator: OperatorProcess | undefined;
  const token = "status-policy-token";
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const ns = (): string => cluster.namespace;
  const team = (t: "red" | "blue"): string => `${ns()}-${t}`;
  const installed = new Set<string>();
  const kubeconfigs = new Map<string, string>();
  const as = (who: string): string => {
    const k = kubeconfigs.get(who);
    if (k === undefined) throw new Error(`no kubeconfig for ${who}`);
    return k;
  };

  /** A ServiceAccount in `namespace` whose Role there grants every verb on every resource of the group. */
  const tenant = async (namespace: string, name: string): Promise<string> => {
    const rbac = [
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace }, rules: [{ apiGroups: ["linode.operator.dev"], resources: ["*"], verbs: ["*"] }] },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name, namespace }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name }, subjects: [{ kind: "ServiceAccount", name, namespace }] },
    ];
    const applied = await cluster.kubectl(["apply", "-f", "-"], { input: rbac.map((o) => JSON.stringify(o)).join("\n") });
    expect(applied.code, applied.stderr).toBe(0);
    return cluster.serviceAccountKubeconfig(name, namespace);
  };
  const database = (namespace: string, name: string, extra: Record<string, unknown> = {}): string => JSON.stringify({
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name, namespace },
    spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1" }, ...extra,
  });
  /**
   * A status patch (setting status.id, what the operator deletes by) as `kubeconfig`'s user, sent
   * as the operator sends it: a PATCH alone (kubectl would GET first, which the operator's Role
   * does not grant). The API server's answer: its code and message.
   */
  const patchStatus = async (kubeconfig: string, namespace: string, name: string, opts: { dryRun?: boolean; id?: number } = {}): Promise<{ code: number; message: string }> => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    return kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
      { group: "linode.operator.dev", version: "v1alpha1", namespace, plural: "manageddatabases", name, body: { status: { id: opts.id ?? 4242 } }, ...(opts.dryRun === true ? { dryRun: "All" } : {}) },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    ).then(() => ({ code: 200, message: "" }), (err: unknown) => {
      const e = err as { code?: number; body?: unknown };
      let message = String(e.body ?? err);
      try { message = (JSON.parse(message) as { message?: string }).message ?? message; } catch { /* not JSON: as it is */ }
      return { code: e.code ?? 0, message };
    });
  };
  /**
   * A policy (or a change to it) takes effect a moment after it is written: dry-run status patches
   * (admission runs for them; nothing is stored) until the answer is the one wanted.
   */
  const untilAdmission = async (what: string, want: "refused" | "allowed", kubeconfig: string, namespace: string, name: string): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await patchStatus(kubeconfig, namespace, name, { dryRun: true });
      if ((r.code === 200) === (want === "allowed")) return;
      // Refused for another reason (RBAC, a typo) would never change: fail at once.
      if (r.code !== 200 && !r.message.includes(MESSAGE)) throw new Error(`${what}: refused, but not by the policy: ${String(r.code)} ${r.message}`);
      if (Date.now() > deadline) throw new Error(`${what}: still ${want === "allowed" ? "refused" : "allowed"} after 30 s: ${r.message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const statusId = async (namespace: string, name: string): Promise<string> =>
    (await cluster.kubectl(["-n", namespace, "get", "manageddatabase", name, "-o", "jsonpath={.status.id}"])).stdout;
  /**
   * Installs or upgrades a release watching its team's namespace, with all its values each time:
   * the control plane is shared with other test files, whose namespaces a policy bound to every
   * namespace would reach.
   */
  const install = async (release: "red" | "blue", ...set: string[]): Promise<void> => {
    const r = await helm(["upgrade", "--install", release, chart, "--namespace", ns(), "--set", "crds.enabled=false", "--set", `linode.token=${token}`,
      "--set", `linode.apiUrl=${emulator.url}`, "--set", `watchNamespaces={${team(release)}}`, ...set.flatMap((v) => ["--set", v])]);
    expect(r.code, r.stderr).toBe(0);
    installed.add(release);
  };
  /** The release's operator ServiceAccount's kubeconfig, and the Deployment's environment. */
  const operatorOf = async (release: string): Promise<{ kubeconfig: string; env: Record<string, string> }> => {
    const deploy = JSON.parse((await cluster.kubectl(["-n", ns(), "get", "deploy", `${release}-linode-operator`, "-o", "json"])).stdout) as Deployment;
    const pod = deploy.spec.template.spec;
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])));
    return { kubeconfig: await cluster.serviceAccountKubeconfig(pod.serviceAccountName), env };
  };

  beforeAll(async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, tokens: [token], provisionSeconds: 1 });
    for (const t of ["red", "blue"] as const) await cluster.core.createNamespace({ body: { metadata: { name: team(t) } } });
    kubeconfigs.set("red", await tenant(team("red"), "tenant"));
    kubeconfigs.set("blue", await tenant(team("blue"), "tenant"));
    kubeconfigs.set("restore", await tenant(team("red"), "restore"));
  });
  afterAll(async () => {
    operator?.child.kill("SIGKILL");
    // The policies are cluster-scoped: deleting the namespaces would leave them behind.
    for (const release of installed) await helm(["uninstall", release, "--namespace", ns(), "--wait"]);
    await emulator.close();
    for (const t of ["red", "blue"] as const) await cluster.core.deleteNamespace({ name: team(t) }).catch(() => undefined);
  });

  it("refuses a tenant's status write with the reason, lets the operator's ServiceAccount write it, and the operator reconciles under it", async () => {
    // Status cannot come in through the resource itself (the kinds have the status subresource).
    const created = await cluster.kubectl(["apply", "-f", "-"], { kubeconfig: as("red"), input: database(team("red"), "decoy", { status: { id: 4242 } }) });
    expect(created.code, created.stderr).toBe(0);
    expect(await statusId(team("red"), "decoy")).toBe("");
    // The hole the policy closes: RBAC alone lets the tenant write status.
    expect((await cluster.kubectl(["auth", "can-i", "patch", "manageddatabases.linode.operator.dev", "--subresource=status", "-n", team("red")], { kubeconfig: as("red") })).stdout.trim()).toBe("yes");

    await install("red");
    await untilAdmission("the tenant, once the policy is in force", "refused", as("red"), team("red"), "decoy");
    // What the tenant sees with kubectl.
    const refused = await cluster.kubectl(["-n", team("red"), "patch", "manageddatabase", "decoy", "--subresource=status", "--type=merge", "-p", '{"status":{"id":4242}}'], { kubeconfig: as("red") });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`manageddatabases.linode.operator.dev "decoy" is forbidden: ValidatingAdmissionPolicy 'red-linode-operator-${ns()}-status'`);
    expect(refused.stderr).toContain(`${MESSAGE}, and the operator deletes and publishes credentials by it: a forged one could make it delete or expose another team's database. Only the operator (system:serviceaccount:${ns()}:red-linode-operator) writes it`);
    expect(await statusId(team("red"), "decoy")).toBe("");
    // A server-side apply of status is the same UPDATE.
    const applied = await cluster.kubectl(["apply", "--server-side", "--subresource=status", "--field-manager=tenant", "-f", "-"], { kubeconfig: as("red"), input: database(team("red"), "decoy", { status: { id: 4242 } }) });
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toContain(MESSAGE);

    // The operator's own ServiceAccount writes status while the policy is in force.
    const red = await operatorOf("red");
    const own = await patchStatus(red.kubeconfig, team("red"), "decoy", { id: 7 });
    expect(own).toEqual({ code: 200, message: "" });
    expect(await statusId(team("red"), "decoy")).toBe("7");
    const removed = await cluster.kubectl(["-n", team("red"), "delete", "manageddatabase", "decoy", "--wait=false"]);
    expect(removed.code, removed.stderr).toBe(0);

    // And the operator as the Deployment runs it takes a database to Ready, its status writes admitted.
    operator = startOperator([], {
      ...red.env, KUBECONFIG: red.kubeconfig, POD_NAMESPACE: ns(), POD_NAME: "red-0", LINODE_TOKEN: token,
      HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    const app = await cluster.kubectl(["apply", "-f", "-"], { input: database(team("red"), "app") });
    expect(app.code, app.stderr).toBe(0);
    const ready = await cluster.kubectl(["-n", team("red"), "wait", "--for=condition=Ready", "manageddatabase/app", "--timeout=120s"]);
    expect(ready.code, ready.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);
    expect(Number(await statusId(team("red"), "app"))).toBeGreaterThan(0);
    const deleted = await cluster.kubectl(["-n", team("red"), "delete", "manageddatabase", "app", "--wait=true", "--timeout=120s"]);
    expect(deleted.code, deleted.stderr).toBe(0);
    operator.child.kill("SIGTERM");
    expect(await operator.exited).toBe(0);
    operator = undefined;
  });

  it("lets a user or a group the admin names (statusPolicy.extraUsernames, extraGroups) write status, and no one else", async () => {
    const created = await cluster.kubectl(["apply", "-f", "-"], { input: database(team("red"), "restored") });
    expect(created.code, created.stderr).toBe(0);
    await untilAdmission("the restore tool, before the admin names it", "refused", as("restore"), team("red"), "restored");
    await install("red", `statusPolicy.extraUsernames={system:serviceaccount:${team("red")}:restore}`);
    await untilAdmission("the restore tool, once named", "allowed", as("restore"), team("red"), "restored");
    const restored = await patchStatus(as("restore"), team("red"), "restored", { id: 99 });
    expect(restored).toEqual({ code: 200, message: "" });
    expect(await statusId(team("red"), "restored")).toBe("99");
    const tenantTry = await patchStatus(as("red"), team("red"), "restored");
    expect(tenantTry.code).toBe(403);
    expect(tenantTry.message).toContain(MESSAGE);
    // A group: every ServiceAccount of the namespace is in system:serviceaccounts:<namespace>.
    await install("red", `statusPolicy.extraGroups={system:serviceaccounts:${team("red")}}`);
    await untilAdmission("the tenant, once its group is named", "allowed", as("red"), team("red"), "restored");
  });

  it("with statusPolicy.enabled=false the tenant's write goes through (what the policy prevents), and the operator's ownership proof still keeps a forged record from reaching another's database", async () => {
    const created = await cluster.kubectl(["apply", "-f", "-"], { input: database(team("red"), "forged") });
    expect(created.code, created.stderr).toBe(0);
    await install("red", "statusPolicy.enabled=false");
    expect((await cluster.kubectl(["get", "validatingadmissionpolicy", `red-linode-operator-${ns()}-status`])).code).not.toBe(0);
    await untilAdmission("the tenant, once the policy is gone", "allowed", as("red"), team("red"), "forged");
    const forged = await patchStatus(as("red"), team("red"), "forged");
    expect(forged).toEqual({ code: 200, message: "" });
    expect(await statusId(team("red"), "forged")).toBe("4242");

    // Without the policy, a forged record still moves nothing: the tenant points its decoy at a
    // database it does not own (made outside the operator, in the operator's account), and the
    // operator, as the Deployment runs it, neither reads it, changes it nor deletes it.
    const api = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${emulator.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
    const victim = await (await api("/databases/mysql/instances", { method: "POST", body: JSON.stringify({ label: "victim-db", region: "us-east", type: "g6-nanode-1", engine: "mysql/8", allow_list: ["198.51.100.7/32"] }) })).json() as { id: number };
    const record = await cluster.kubectl(["-n", team("red"), "patch", "manageddatabase", "forged", "--subresource=status", "--type=merge",
      "-p", JSON.stringify({ status: { externalId: String(victim.id), account: { id: tokenId(token) } } })], { kubeconfig: as("red") });
    expect(record.code, record.stderr).toBe(0);
    const red = await operatorOf("red");
    operator = startOperator([], {
      ...red.env, KUBECONFIG: red.kubeconfig, POD_NAMESPACE: ns(), POD_NAME: "red-0", LINODE_TOKEN: token,
      HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    const held = await cluster.kubectl(["-n", team("red"), "wait", "--for=jsonpath={.status.conditions[?(@.type==\"Synced\")].reason}=OwnershipUnproven", "manageddatabase/forged", "--timeout=120s"]);
    expect(held.code, held.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);
    const deleted = await cluster.kubectl(["-n", team("red"), "delete", "manageddatabase", "forged", "--wait=true", "--timeout=120s"]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const still = await (await api(`/databases/mysql/instances/${String(victim.id)}`)).json() as { label?: string; allow_list?: string[] };
    expect(still).toMatchObject({ label: "victim-db", allow_list: ["198.51.100.7/32"] });
    const events = (await cluster.kubectl(["-n", team("red"), "get", "events", "--field-selector", "involvedObject.name=forged,reason=NotDeleted", "-o", "name"])).stdout.trim();
    expect(events).not.toBe("");
    operator.child.kill("SIGTERM");
    expect(await operator.exited).toBe(0);
    operator = undefined;
  });

  it("two releases watching different namespaces: each refuses the tenants there, neither refuses the other's operator", async () => {
    await install("red");
    await install("blue");
    for (const t of ["red", "blue"] as const) {
      const created = await cluster.kubectl(["apply", "-f", "-"], { input: database(team(t), "shared") });
      expect(created.code, created.stderr).toBe(0);
    }
    // Both policies in force: each refuses the tenant of its own namespaces.
    for (const t of ["red", "blue"] as const) await untilAdmission(`the ${t} tenant`, "refused", as(t), team(t), "shared");
    const blueTry = await patchStatus(as("blue"), team("blue"), "shared");
    expect(blueTry.code).toBe(403);
    expect(blueTry.message).toContain(`ValidatingAdmissionPolicy 'blue-linode-operator-${ns()}-status'`);
    // Red's policy matches only red's namespace: blue's operator writes status in blue's.
    for (const t of ["red", "blue"] as const) {
      const own = await patchStatus((await operatorOf(t)).kubeconfig, team(t), "shared", { id: 11 });
      expect(own, `${t}'s operator`).toEqual({ code: 200, message: "" });
      expect(await statusId(team(t), "shared")).toBe("11");
    }
  });
});
