// One cluster, two teams: two releases of the chart in one namespace, each watching its own
// team namespace with its own Linode account. Each operator runs with its release's
// ServiceAccount and the environment its Deployment sets; both lead at once (one Lease per
// release), each reconciles only its team's objects, can read only its team's Secrets, and
// puts them in the account the team's credentialsRef names.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const chart = join(root, "helm/linode-operator");

interface EnvVar { name: string; value?: string }
interface Deployment { spec: { template: { spec: { serviceAccountName: string; containers: { env: EnvVar[] }[] } } } }

describe("two chart installs for two teams on one cluster", () => {
  const cluster = useTestCluster("teams");
  let emulator: RunningEmulator;
  const operators: OperatorProcess[] = [];
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const ns = (): string => cluster.namespace;
  const team = (t: string): string => `${ns()}-${t}`;
  const tokens = { red: "red-account-token", blue: "blue-account-token" };

  beforeAll(async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, provisionSeconds: 1, accountTokens: { red: [tokens.red], blue: [tokens.blue] } });
    for (const t of ["red", "blue"]) await cluster.core.createNamespace({ body: { metadata: { name: team(t) } } });
  });
  afterAll(async () => {
    for (const o of operators) o.child.kill("SIGKILL");
    await emulator.close();
    for (const t of ["red", "blue"]) await cluster.core.deleteNamespace({ name: team(t) }).catch(() => undefined);
  });

  it("each release leads on its own Lease, reads only its team's Secrets and reconciles only its team's objects, in the team's account", async () => {
    const started: Record<string, OperatorProcess> = {};
    for (const t of ["red", "blue"] as const) {
      // No operator token at all: every resource must bring its own.
      const install = await helm(["install", t, chart, "--namespace", ns(), "--set", "crds.enabled=false",
        "--set", `linode.apiUrl=${emulator.url}`, "--set", `watchNamespaces={${team(t)}}`, "--set", "requireCredentialsRef=true"]);
      expect(install.code, install.stderr).toBe(0);
      const deploy = JSON.parse((await cluster.kubectl(["-n", ns(), "get", "deploy", `${t}-linode-operator`, "-o", "json"])).stdout) as Deployment;
      const pod = deploy.spec.template.spec;
      const env = Object.fromEntries((pod.containers[0]?.env ?? []).flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])));
      expect(env.LEADER_ELECTION_ID).toBe(`${t}-linode-operator`);
      expect(env.REQUIRE_CREDENTIALS_REF).toBe("true");
      expect((pod.containers[0]?.env ?? []).some((e) => e.name === "LINODE_TOKEN")).toBe(false);
      const kubeconfig = await cluster.serviceAccountKubeconfig(pod.serviceAccountName);
      const canI = async (verb: string, resource: string, namespace: string): Promise<string> => (await cluster.kubectl(["auth", "can-i", verb, resource, "-n", namespace], { kubeconfig })).stdout.trim();
      const other = t === "red" ? "blue" : "red";
      expect(await canI("get", "secrets", team(t))).toBe("yes");
      expect(await canI("get", "secrets", team(other))).toBe("no");
      expect(await canI("patch", "manageddatabases.linode.operator.dev", team(other))).toBe("no");

      // The operator as the Deployment runs it: its ServiceAccount, its environment.
      const proc = startOperator([], {
        // Debug: every reconcile is logged with its key, so what each process touched is on record.
        ...env, LOG_LEVEL: "debug", KUBECONFIG: kubeconfig, POD_NAMESPACE: ns(), POD_NAME: `${t}-0`,
        HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
      });
      operators.push(proc);
      started[t] = proc;
    }
    for (const proc of Object.values(started)) await proc.waitForLog((l) => l.msg === "cache synced; starting workers", 60_000);
    const leases = (await cluster.kubectl(["-n", ns(), "get", "lease", "-o", "jsonpath={range .items[*]}{.metadata.name}={.spec.holderIdentity} {end}"])).stdout.trim().split(" ").sort();
    expect(leases).toEqual(["blue-linode-operator=blue-0", "red-linode-operator=red-0"]);

    for (const t of ["red", "blue"] as const) {
      const secret = await cluster.kubectl(["-n", team(t), "create", "secret", "generic", "linode", `--from-literal=token=${tokens[t]}`]);
      expect(secret.code, secret.stderr).toBe(0);
      const label = await cluster.kubectl(["-n", team(t), "label", "secret", "linode", "linode.operator.dev/credentials=true"]);
      expect(label.code, label.stderr).toBe(0);
      const manifest = JSON.stringify({
        apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "app", namespace: team(t) },
        spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", credentialsRef: { name: "linode" } },
      });
      const apply = await cluster.kubectl(["apply", "-f", "-"], { input: manifest });
      expect(apply.code, apply.stderr).toBe(0);
    }
    for (const t of ["red", "blue"] as const) {
      const wait = await cluster.kubectl(["-n", team(t), "wait", "--for=condition=Ready", "linodedb/app", "--timeout=120s"]);
      expect(wait.code, wait.stderr).toBe(0);
      const id = Number((await cluster.kubectl(["-n", team(t), "get", "linodedb", "app", "-o", "jsonpath={.status.id}"])).stdout);
      const listed = await (await fetch(`${emulator.url}/databases/instances`, { headers: { authorization: `Bearer ${tokens[t]}` } })).json() as { data: { id: number }[] };
      expect(listed.data.map((d) => d.id)).toEqual([id]);
    }
    // Each process touched only its own team's objects.
    for (const t of ["red", "blue"] as const) {
      const keys = new Set((started[t]?.logs ?? []).flatMap((l) => (typeof l.key === "string" ? [l.key.split("/")[0]] : [])));
      expect([...keys]).toEqual([team(t)]);
    }

    for (const t of ["red", "blue"] as const) {
      const del = await cluster.kubectl(["-n", team(t), "delete", "linodedb", "app", "--wait=true", "--timeout=120s"]);
      expect(del.code, del.stderr).toBe(0);
    }
    for (const token of Object.values(tokens)) {
      const left = await (await fetch(`${emulator.url}/databases/instances`, { headers: { authorization: `Bearer ${token}` } })).json() as { results: number };
      expect(left.results).toBe(0);
    }
    for (const proc of Object.values(started)) {
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
    for (const t of ["red", "blue"]) expect((await helm(["uninstall", t, "--namespace", ns(), "--wait"])).code).toBe(0);
  });
});
