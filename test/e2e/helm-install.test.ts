// Ship-it end to end with real helm and kubectl: install the chart, run the operator with the
// chart's ServiceAccount token (so the chart's RBAC is what is tested: a missing permission
// fails here), apply the examples, wait for Ready with kubectl, read the Secret, delete, see
// nothing left in the emulator, uninstall.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";
import { execCapture } from "../harness/cluster.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const chart = join(root, "helm/linode-operator");
const examples = join(root, "examples");

describe("helm install + kubectl apply -f examples/", () => {
  const cluster = useTestCluster("e2e");
  let emulator: RunningEmulator;
  let operator: OperatorProcess | undefined;
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const token = "e2e-token";

  beforeAll(async () => {
    await installCrds(cluster); // shared cluster: other files may have installed them already
    emulator = await startEmulator({ port: 0, tokens: [token], provisionSeconds: 1 });
  });
  afterAll(async () => {
    operator?.child.kill("SIGKILL");
    await emulator.close();
  });

  it("lints clean and rejects bad values against values.schema.json", async () => {
    const lint = await helm(["lint", "--strict", chart, "--set", "linode.token=x"]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const bad = await helm(["template", "x", chart, "--set", "concurrency=0", "--set", "logLevel=loud"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/concurrency/);
  });

  it("installs, reconciles the examples with the chart's RBAC, and leaves nothing behind", async () => {
    const ns = cluster.namespace;
    const install = await helm(["install", "linode-operator", chart, "--namespace", ns, "--set", "crds.enabled=false",
      "--set", `linode.token=${token}`, "--set", `linode.apiUrl=${emulator.url}`, "--set", `watchNamespaces={${ns}}`]);
    expect(install.code, install.stderr).toBe(0);
    const deploy = JSON.parse((await cluster.kubectl(["-n", ns, "get", "deploy", "linode-operator", "-o", "json"])).stdout) as {
      spec: { template: { spec: { serviceAccountName: string; securityContext: Record<string, unknown>; containers: { securityContext: Record<string, unknown>; env: { name: string; value?: string }[] }[] } } };
    };
    const pod = deploy.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.containers[0]?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });

    // The operator process runs here with exactly the chart's ServiceAccount identity.
    const kubeconfig = await cluster.serviceAccountKubeconfig(pod.serviceAccountName);
    const canI = async (...args: string[]): Promise<string> => (await cluster.kubectl(["auth", "can-i", ...args, "-n", ns], { kubeconfig })).stdout.trim();
    expect(await canI("patch", "manageddatabases.linode.operator.dev/status")).toBe("yes");
    expect(await canI("create", "leases.coordination.k8s.io")).toBe("yes");
    // ConfigMaps: read only (allowListFrom.cidrs; the operator lists only those labelled for it).
    expect(await canI("list", "configmaps")).toBe("yes");
    expect(await canI("patch", "configmaps")).toBe("no");
    expect(await canI("delete", "manageddatabases.linode.operator.dev")).toBe("no");
    // Only the verbs the operator uses.
    expect(await canI("update", "manageddatabases.linode.operator.dev")).toBe("no");
    expect(await canI("update", "secrets")).toBe("no");
    expect(await canI("create", "secrets")).toBe("yes");
    // The cluster's identity: kube-system's UID, and no other namespace.
    expect((await cluster.kubectl(["auth", "can-i", "get", "namespace/kube-system"], { kubeconfig })).stdout.trim()).toBe("yes");
    expect((await cluster.kubectl(["auth", "can-i", "get", "namespace/default"], { kubeconfig })).stdout.trim()).toBe("no");
    expect((await cluster.kubectl(["auth", "can-i", "list", "secrets", "-n", "default"], { kubeconfig })).stdout.trim()).toBe("no");

    // What the chart tells the operator about itself: its token Secret, its Deployment, its Lease.
    const chartEnv = Object.fromEntries((pod.containers[0]?.env ?? []).filter((e) => ["LINODE_TOKEN_SECRET", "LINODE_TOKEN_SECRET_KEY", "DEPLOYMENT_NAME", "LEADER_ELECTION_ID", "WATCH_NAMESPACES"].includes(e.name)).map((e) => [e.name, e.value ?? ""]));
    expect(chartEnv).toEqual({ LINODE_TOKEN_SECRET: "linode-operator-token", LINODE_TOKEN_SECRET_KEY: "token", DEPLOYMENT_NAME: "linode-operator", LEADER_ELECTION_ID: "linode-operator", WATCH_NAMESPACES: ns });
    // doctor, as the chart's ServiceAccount, finds every permission the operator uses granted and the
    // token Secret readable (it reads the token from it); only what that account cannot see warns.
    const doctor = await execCapture(process.execPath, [join(root, "src/cli/main.ts"), "doctor", "--json"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", KUBECONFIG: kubeconfig, LINODE_API_URL: emulator.url, POD_NAMESPACE: ns, ...chartEnv },
    });
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    const checks = (JSON.parse(doctor.stdout) as { checks: { check: string; status: string }[] }).checks;
    expect(checks.filter((c) => c.status !== "OK").map((c) => `${c.check} ${c.status}`)).toEqual([
      "CRD manageddatabases.linode.operator.dev WARN", "CRD databasesnapshots.linode.operator.dev WARN", "CRD nodebalancers.linode.operator.dev WARN", "CRD databaseconnectionpools.linode.operator.dev WARN", "Nodes WARN",
    ]);
    expect(checks.find((c) => c.check === "RBAC")?.status).toBe("OK");

    operator = startOperator([], {
      KUBECONFIG: kubeconfig, LINODE_TOKEN: token, LINODE_API_URL: emulator.url, POD_NAMESPACE: ns, POD_NAME: "e2e",
      HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", ...chartEnv,
    });
    await operator.waitForLog((l) => l.msg === "cache synced; starting workers", 60_000);

    // The TLS Secret the example NodeBalancer's https port names, made as a user makes one.
    const tlsDir = await mkdtemp(join(tmpdir(), "e2e-tls-"));
    const cert = generateCertificate({ commonName: "web.example.com" });
    await writeFile(join(tlsDir, "tls.crt"), cert.certPem);
    await writeFile(join(tlsDir, "tls.key"), cert.keyPem);
    const tls = await cluster.kubectl(["-n", ns, "create", "secret", "tls", "web-tls", "--cert", join(tlsDir, "tls.crt"), "--key", join(tlsDir, "tls.key")]);
    await rm(tlsDir, { recursive: true, force: true });
    expect(tls.code, tls.stderr).toBe(0);

    const apply = await cluster.kubectl(["-n", ns, "apply", "-f", examples]);
    expect(apply.code, apply.stderr).toBe(0);
    const wait = await cluster.kubectl(["-n", ns, "wait", "--for=condition=Ready", "linodedb", "--all", "--timeout=120s"]);
    expect(wait.code, wait.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);
    const listed = await cluster.kubectl(["-n", ns, "get", "linodedb"]);
    expect(listed.stdout).toMatch(/orders\s+mysql\s+8\s+us-east\s+active\s+True/);

    // The example snapshot of orders: taken through the chart's RBAC, and the database active again after it.
    const snap = await cluster.kubectl(["-n", ns, "wait", "--for=jsonpath={.status.phase}=Available", "dbsnap/orders-snapshot", "--timeout=120s"]);
    expect(snap.code, snap.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);
    expect((await cluster.kubectl(["-n", ns, "get", "dbsnap"])).stdout).toMatch(/orders-snapshot\s+orders\s+\S+\s+Available\s+True\s+\d+/);
    await cluster.kubectl(["-n", ns, "wait", "--for=jsonpath={.status.status}=active", "linodedb/orders", "--timeout=60s"]);

    const password = (await cluster.kubectl(["-n", ns, "get", "secret", "orders-connection", "-o", "jsonpath={.data.password}"])).stdout;
    const id = Number((await cluster.kubectl(["-n", ns, "get", "linodedb", "orders", "-o", "jsonpath={.status.id}"])).stdout);
    const creds = await (await fetch(`${emulator.url}/databases/mysql/instances/${String(id)}/credentials`, { headers: { authorization: `Bearer ${token}` } })).json() as { password: string };
    expect(Buffer.from(password, "base64").toString()).toBe(creds.password);

    // The example NodeBalancer, its https port from the TLS Secret, through the chart's RBAC.
    const nbWait = await cluster.kubectl(["-n", ns, "wait", "--for=condition=Ready", "nb/web", "--timeout=120s"]);
    expect(nbWait.code, nbWait.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);
    expect((await cluster.kubectl(["-n", ns, "get", "nb", "web"])).stdout).toMatch(/web\s+us-east\s+\S+\.ip\.linodeusercontent\.com\s+\S+\s+80,443\s+True\s+True/);

    const del = await cluster.kubectl(["-n", ns, "delete", "-f", examples, "--wait=true", "--timeout=120s"]);
    expect(del.code, del.stderr).toBe(0);
    const left = await (await fetch(`${emulator.url}/databases/instances`, { headers: { authorization: `Bearer ${token}` } })).json() as { results: number };
    expect(left.results).toBe(0);
    const nbsLeft = await (await fetch(`${emulator.url}/nodebalancers`, { headers: { authorization: `Bearer ${token}` } })).json() as { results: number };
    expect(nbsLeft.results).toBe(0);

    operator.child.kill("SIGTERM");
    expect(await operator.exited).toBe(0);
    const uninstall = await helm(["uninstall", "linode-operator", "--namespace", ns, "--wait"]);
    expect(uninstall.code, uninstall.stderr).toBe(0);
    const remaining = await cluster.kubectl(["-n", ns, "get", "deploy,sa,role,rolebinding,secret,service", "-l", "app.kubernetes.io/instance=linode-operator", "-o", "name"]);
    expect(remaining.stdout.trim()).toBe("");
  });
});
