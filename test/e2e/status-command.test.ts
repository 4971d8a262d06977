// `kubectl linode status` / `linode-operator status` on a real API server, the operator running
// in-process and the emulator over HTTP: one object in full (conditions with their age, Events,
// the cloud object as the API reports it, the connection Secret's keys, what comes next), the
// list of what is not Ready, the token chosen for the cloud side, and the built plugin run by
// real kubectl from PATH. No Secret value ever appears in what it prints.
import { mkdir, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/linode/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import type { ObjectReport, NotReadyReport } from "../../src/status/report.ts";
import { execCapture, useTestCluster, type ExecResult } from "../harness/cluster.ts";
import { databaseHelpers, mysql } from "../harness/database-helpers.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { startOperatorEnv, TOKEN, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** A token of another Linode account, which only the team's credentials Secret holds. */
const TEAM_TOKEN = "team-status-token-7f3a9c";

describe("status: what the operator sees", () => {
  const cluster = useTestCluster("status");
  let env: OperatorEnv;
  const db = databaseHelpers(cluster, () => env);
  const nb = nodeBalancerHelpers(cluster, () => env);
  const ns = (): string => cluster.namespace;
  /** A directory with the built plugin as kubectl looks for it: an executable kubectl-linode. */
  let pluginDir = "";
  /** The built `linode-operator` command (the bundle starts in a fraction of the sources' time). */
  let cli = "";
  let ordersDb: Database;
  /** Every output of the command in this file, checked for Secret values at the end. */
  const outputs: string[] = [];

  /** The command as `linode-operator status` runs, with only the environment given. */
  const status = async (args: string[], extra: Record<string, string | undefined> = {}): Promise<ExecResult> => {
    const res = await execCapture(process.execPath, [cli, "status", ...args], { env: cleanEnv({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: TOKEN, LINODE_API_URL: env.emulator.url, ...extra }) });
    outputs.push(res.stdout, res.stderr);
    return res;
  };
  const cleanEnv = (vars: Record<string, string | undefined>): NodeJS.ProcessEnv => {
    const out: NodeJS.ProcessEnv = { PATH: `${pluginDir}:${dirname(process.execPath)}:${process.env.PATH ?? ""}`, HOME: cluster.tmp };
    for (const [k, v] of Object.entries(vars)) if (v !== undefined) out[k] = v;
    return out;
  };
  const json = (res: ExecResult): unknown => {
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout);
  };

  beforeAll(async () => {
    env = await startOperatorEnv(cluster, {
      platform: "current", provisionSeconds: 0.3, poll: { pendingMillis: 300, readyMillis: 2_000 },
      emulatorConfig: { tokens: [{ token: TEAM_TOKEN, account: "team" }] },
    });
    // The plugin as the package ships it: built into dist/cli, executable, on PATH as kubectl-linode.
    const dist = join(cluster.tmp, "dist");
    const build = await execCapture(process.execPath, [join(root, "scripts/build.ts"), dist], { cwd: root, timeoutMs: 300_000 });
    expect(build.code, build.stderr).toBe(0);
    cli = join(dist, "cli", "main.js");
    pluginDir = join(cluster.tmp, "bin");
    await mkdir(pluginDir);
    await symlink(join(dist, "cli", "kubectl-linode.js"), join(pluginDir, "kubectl-linode"));

    const team = await cluster.kubectl(["-n", ns(), "create", "secret", "generic", "team-creds", `--from-literal=token=${TEAM_TOKEN}`]);
    expect(team.code, team.stderr).toBe(0);
    expect((await cluster.kubectl(["-n", ns(), "label", "secret", "team-creds", "linode.operator.dev/credentials=true"])).code).toBe(0);
    const [orders] = await Promise.all([
      db.readyDatabase("orders", { ...mysql, clusterSize: 3 }),
      db.readyDatabase("teamdb", { ...mysql, credentialsRef: { name: "team-creds" } }),
      db.apply("broken", { ...mysql, credentialsRef: { name: "no-such-secret" } }),
      nb.create("web", { configs: [{ port: 80, check: "connection", checkInterval: 2, checkTimeout: 1, nodes: [{ label: "web-1", address: "192.168.10.5:80" }, { label: "web-2", address: "192.168.10.6:80" }] }] }),
    ]);
    ordersDb = await env.linode.databases.engine("mysql").get(Number(orders.status?.id));
    await db.reasonOf("broken", "Ready", "CredentialsNotFound");
    await nb.settled("web");
  }, 400_000);
  afterAll(async () => { await env.stop(); });

  it("one Ready database: conditions with their age, its Events, the cloud object, the Secret's keys and the next drift check", async () => {
    const text = await status(["linodedb/orders", "-n", ns()]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {2}Ready +True +Available +\d+s/m);
    expect(text.stdout).toMatch(/^ {2}Synced +True +ReconcileSuccess +\d+s/m);
    expect(text.stdout).toMatch(/Normal +Created .* created ManagedDatabase \d+ on Linode/);
    expect(text.stdout).toContain(`Primary host    ${ordersDb.hosts.primary ?? "?"}`);
    expect(text.stdout).not.toContain("\u001b[");

    const report = json(await status(["managed-database", "orders", "-n", ns(), "-o", "json"])) as ObjectReport;
    expect(report.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([["Ready", "True", "Available"], ["Synced", "True", "ReconcileSuccess"]]);
    if (!Array.isArray(report.events)) throw new Error(report.events.error);
    expect(report.events.map((e) => e.reason)).toEqual(expect.arrayContaining(["Created", "ConnectionSecretPublished"]));
    if (report.cloud.state !== "shown" || report.cloud.object.kind !== "database") throw new Error(`no cloud object: ${JSON.stringify(report.cloud)}`);
    const cloud = report.cloud.object;
    expect(report.cloud.tokenFrom).toBe("LINODE_TOKEN");
    expect({ id: cloud.id, status: cloud.status, platform: cloud.platform, nodes: cloud.clusterSize, hosts: cloud.hosts, members: cloud.members.length })
      .toEqual({ id: ordersDb.id, status: "active", platform: ordersDb.platform, nodes: 3, hosts: { primary: ordersDb.hosts.primary, secondary: ordersDb.hosts.secondary }, members: Object.keys(ordersDb.members ?? {}).length });
    expect(cloud.members.length).toBe(3);
    const secret = await db.secret("orders-connection");
    expect(report.connectionSecret).toEqual({ name: "orders-connection", keys: Object.keys(secret).sort() });
    expect(report.next.what).toMatch(/drift check/);
    expect(report.next.basis).toMatch(/Ready and Synced are True/);
  });

  it("one not-Ready database: its reason and message, no cloud object yet, and what it waits for", async () => {
    const report = json(await status(["ManagedDatabase/broken", "-n", ns(), "-o", "json"])) as ObjectReport;
    const ready = report.conditions.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "CredentialsNotFound" });
    expect(ready?.message).toContain("no-such-secret");
    expect(report.cloud.state).toBe("none");
    expect(report.connectionSecret).toEqual({ name: "broken-connection", missing: true });
    expect(report.next.basis).toContain("CredentialsNotFound");
    const text = await status(["linodedb/broken", "-n", ns()]);
    expect(text.stdout).toMatch(/^ {2}Ready +False +CredentialsNotFound +\d+s +Secret no-such-secret not found/m);
    expect(text.stdout).toContain("none: the operator has recorded no cloud object for it yet");
  });

  it("without a name: one line per object that is not Ready, with its reason; exit 0", async () => {
    const list = await status(["-n", ns()]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME +REASON +AGE +MESSAGE$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([["manageddatabase/broken", "CredentialsNotFound"]]);
    expect(lines[1]).toContain("no-such-secret");

    const all = json(await status(["-A", "-o", "json"])) as NotReadyReport & { namespace: string | null };
    expect(all.namespace).toBeNull();
    expect(all.notReady.filter((l) => l.namespace === ns()).map((l) => l.name)).toEqual(["broken"]);
    const wide = await status(["--all-namespaces"]);
    expect(wide.stdout).toMatch(new RegExp(`^${ns()} +manageddatabase/broken +CredentialsNotFound`, "m"));
  });

  it("a NodeBalancer: its configs' backends and their health as the API reports it", async () => {
    const o = await nb.get("web");
    const id = (o.status as { id?: number } | undefined)?.id ?? 0;
    const [config] = await env.linode.nodeBalancers.listAllConfigs(id);
    const nodes = await env.linode.nodeBalancers.listAllNodes(id, config?.id ?? 0);
    const down = nodes.find((n) => n.label === "web-2");
    await fetch(`${env.emulator.adminUrl}/nodes/${String(down?.id)}/status`, { method: "PUT", body: JSON.stringify({ status: "DOWN" }), headers: { "content-type": "application/json" } });
    const text = await status(["nb/web", "-n", ns()]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Port 80 \(http, \w+, check connection\): 1 up, 1 down/);
    expect(text.stdout).toMatch(/web-1 +192\.168\.10\.5:80 +UP/);
    expect(text.stdout).toMatch(/web-2 +192\.168\.10\.6:80 +DOWN/);
    expect(text.stdout).not.toContain("Connection Secret");
  });

  it("the cloud side's token: the credentialsRef Secret where the user may read it, else LINODE_TOKEN, else it says it needs one", async () => {
    // The team's database lives in the team's account: only the Secret's token sees it.
    const withSecret = json(await status(["linodedb/teamdb", "-n", ns(), "-o", "json"], { LINODE_TOKEN: undefined })) as ObjectReport;
    expect(withSecret.cloud).toMatchObject({ state: "shown", tokenFrom: "Secret team-creds, key token" });

    // A user who may read the kinds and their Events, not Secrets.
    const viewer = await cluster.serviceAccountKubeconfig("viewer");
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "linode-viewer" },
      rules: [
        { apiGroups: ["linode.operator.dev"], resources: ["manageddatabases", "databasesnapshots", "nodebalancers"], verbs: ["get", "list"] },
        { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["list"] },
      ],
    };
    const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "linode-viewer" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "linode-viewer" }, subjects: [{ kind: "ServiceAccount", name: "viewer", namespace: ns() }] };
    const applied = await cluster.kubectl(["-n", ns(), "apply", "-f", "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "List", items: [role, binding] }) });
    expect(applied.code, applied.stderr).toBe(0);
    const asViewer = await waitFor("the viewer's rights in force", async () => {
      const r = json(await status(["linodedb/teamdb", "-o", "json"], { KUBECONFIG: viewer })) as ObjectReport;
      return r.conditions.length > 0 ? r : undefined;
    }, 30_000, 200);
    expect(asViewer.namespace).toBe(ns());
    expect(asViewer.tokenNote).toMatch(/team-creds cannot be read: forbidden.*LINODE_TOKEN used instead/);
    // LINODE_TOKEN is another account's: the API does not know the database there, and says so.
    expect(asViewer.cloud).toMatchObject({ state: "error", tokenFrom: "LINODE_TOKEN" });
    if (asViewer.cloud.state === "error") expect(asViewer.cloud.error).toMatch(/404/);
    expect(asViewer.connectionSecret).toMatchObject({ name: "teamdb-connection", error: expect.stringMatching(/forbidden/) as unknown });
    expect(asViewer.conditions.find((c) => c.type === "Ready")?.status).toBe("True");

    // Neither: the Kubernetes side is shown, the cloud side says what it needs, and the command succeeds.
    const none = await status(["linodedb/orders", "-n", ns()], { LINODE_TOKEN: undefined });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/not read: reading ManagedDatabase \d+ from the Linode API needs a token: set LINODE_TOKEN/);
    expect(none.stdout).toMatch(/Ready +True +Available/);
  });

  it("runs as a kubectl plugin: `kubectl linode status` from PATH, with KUBECONFIG or --kubeconfig and --context", async () => {
    const kubectl = join(cluster.binDir, "kubectl");
    const plugins = await execCapture(kubectl, ["plugin", "list"], { env: cleanEnv({}) });
    expect(plugins.stdout).toContain(join(pluginDir, "kubectl-linode"));
    const viaEnv = await execCapture(kubectl, ["linode", "status", "linodedb/orders", "-n", ns()], { env: cleanEnv({ KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: TOKEN, LINODE_API_URL: env.emulator.url }) });
    outputs.push(viaEnv.stdout, viaEnv.stderr);
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(viaEnv.stdout).toMatch(/^ManagedDatabase .*\/orders/);
    expect(viaEnv.stdout).toContain(`Primary host    ${ordersDb.hosts.primary ?? "?"}`);
    expect(viaEnv.stdout).toMatch(/keys: .*password/);

    const context = (await cluster.kubectl(["config", "current-context"])).stdout.trim();
    const viaFlags = await execCapture(kubectl, ["linode", "status", "-n", ns(), "--kubeconfig", cluster.adminKubeconfig, "--context", context], { env: cleanEnv({}) });
    outputs.push(viaFlags.stdout, viaFlags.stderr);
    expect(viaFlags.code, viaFlags.stderr).toBe(0);
    expect(viaFlags.stdout).toMatch(/^manageddatabase\/broken +CredentialsNotFound/m);
    const wrongContext = await execCapture(kubectl, ["linode", "status", "--kubeconfig", cluster.adminKubeconfig, "--context", "no-such-context"], { env: cleanEnv({}) });
    expect(wrongContext.code).toBe(1);
    expect(wrongContext.stderr).toContain('context "no-such-context" does not exist');
  });

  it("an API failing for the team's account: next is the backoff's retry, then the rate limit's wait, as the conditions say", async () => {
    const synced = async (reason: string): Promise<{ lastTransitionTime?: string }> => {
      await db.reasonOf("teamdb", "Synced", reason);
      const o: ManagedObject = await db.get("teamdb");
      return (o.status?.conditions ?? []).find((c) => c.type === "Synced") ?? {};
    };
    env.emulator.setFaults({ errorRate: 1, errorStatus: 503, tokens: [TEAM_TOKEN] });
    try {
      const failing = await synced("ReconcileError");
      const report = json(await status(["linodedb/teamdb", "-n", ns(), "-o", "json"])) as ObjectReport;
      expect(report.next.what).toMatch(/the same pass again \(a passing failure/);
      expect(report.next.basis).toContain(`ReconcileError since ${failing.lastTransitionTime ?? "?"}`);
      const by = Date.parse(report.next.by ?? "");
      expect(by).toBeGreaterThan(Date.parse(failing.lastTransitionTime ?? ""));
      expect(by).toBeGreaterThan(Date.now() - 5_000);
      // The cloud side says what the API answered; the rest is shown all the same.
      expect(report.cloud).toMatchObject({ state: "error", tokenFrom: "Secret team-creds, key token", error: expect.stringMatching(/503/) as unknown });
      expect(report.conditions.find((c) => c.type === "Ready")?.status).toBe("True");

      env.emulator.setFaults({ errorRate: 0, rate429: 1, retryAfterSeconds: 1, tokens: [TEAM_TOKEN] });
      await synced("RateLimited");
      const limited = json(await status(["linodedb/teamdb", "-n", ns(), "-o", "json"])) as ObjectReport;
      expect(limited.next.what).toMatch(/after the wait the Linode API asked for \(429 Retry-After\)/);
      expect(limited.next.basis).toMatch(/^Synced=False, RateLimited: .*rate limited by the Linode API/);
    } finally {
      env.emulator.setFaults({ errorRate: 0, rate429: 0, tokens: [] });
    }
    await synced("ReconcileSuccess");
  });

  it("never prints a Secret's value (the connection Secrets', the credentials Secret's token)", async () => {
    expect(outputs.length).toBeGreaterThan(10);
    const printed = outputs.join("\n");
    // What the API reports in the open (hosts, port) is the cloud object's to show, and type and
    // provider are the Service Binding spec's constants (mysql, linode); everything else a Secret holds is not.
    const publicValues = JSON.stringify(await Promise.all(["orders", "teamdb"].map(async (name) => {
      const o: ManagedObject = await db.get(name);
      return o.status;
    })));
    const secrets = [...await Promise.all(["orders-connection", "teamdb-connection", "team-creds"].map((s) => db.secret(s)))];
    const hidden = secrets.flatMap((s) => Object.entries(s)).filter(([k, v]) => k !== "type" && k !== "provider" && !publicValues.includes(v)).map(([, v]) => v);
    // Two databases' username, password, uri and ca.crt at least, and the team's token.
    expect(hidden.length).toBeGreaterThanOrEqual(9);
    for (const value of hidden) {
      expect(printed.includes(value), `a Secret value was printed (${String(value.length)} characters)`).toBe(false);
      expect(printed.includes(Buffer.from(value).toString("base64"))).toBe(false);
    }
  });
});
