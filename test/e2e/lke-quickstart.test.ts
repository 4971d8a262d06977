// The README's quick start on LKE, as a user follows it: the chart installed with
// rbac.readNodes=true (the operator runs here with the chart's ServiceAccount and the settings
// the chart's Deployment gives it), `kubectl apply -f examples/lke/`, the database Ready with
// every node's public address in its allow list, and the application's DATABASE_URL: the Secret
// key the Deployment names exists and is a URL a PostgreSQL driver reads, verifying the server
// against the CA file the Deployment mounts where the URL says.
import { CoreV1Api } from "@kubernetes/client-node";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const chart = join(root, "helm/linode-operator");
const lke = join(root, "examples/lke");

const deploymentSchema = z.object({
  spec: z.object({ template: z.object({ spec: z.object({
    serviceAccountName: z.string().optional(),
    containers: z.array(z.object({
      env: z.array(z.object({ name: z.string(), value: z.string().optional(), valueFrom: z.object({ secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional() }).optional() })).optional(),
      volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })).optional(),
    })),
    volumes: z.array(z.object({ name: z.string(), secret: z.object({ secretName: z.string(), items: z.array(z.object({ key: z.string(), path: z.string() })).optional() }).optional() })).optional(),
  }) }) }),
});

describe("the quick start on LKE (examples/lke/)", () => {
  const cluster = useTestCluster("lke");
  let emulator: RunningEmulator;
  let operator: OperatorProcess | undefined;
  const token = "lke-quickstart-token";
  const release = `lke-${cluster.namespace}`.slice(0, 40);
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const nodes = [`${cluster.namespace}-pool-1`, `${cluster.namespace}-pool-2`];
  const addresses = ["198.51.100.21", "198.51.100.22"];

  beforeAll(async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, tokens: [token], provisionSeconds: 1, platform: "current" });
    // LKE's nodes as its kubelets register them: a public ExternalIP and a private InternalIP.
    const core = cluster.kc.makeApiClient(CoreV1Api);
    for (const [i, name] of nodes.entries()) {
      await core.createNode({ body: { metadata: { name, labels: { "lke.linode.com/pool-id": "1" } }, status: { addresses: [{ type: "ExternalIP", address: addresses[i] ?? "" }, { type: "InternalIP", address: `192.168.140.${String(i + 1)}` }] } } });
    }
  });
  afterAll(async () => {
    operator?.child.kill("SIGKILL");
    await helm(["uninstall", release, "--namespace", cluster.namespace]);
    const core = cluster.kc.makeApiClient(CoreV1Api);
    for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined);
    await emulator.close();
  });

  it("a database reachable from every node, and an application reading DATABASE_URL from its Secret", async () => {
    const ns = cluster.namespace;
    const install = await helm(["install", release, chart, "--namespace", ns, "--set", "crds.enabled=false", "--set", "rbac.readNodes=true",
      "--set", `linode.token=${token}`, "--set", `linode.apiUrl=${emulator.url}`, "--set", `watchNamespaces={${ns}}`]);
    expect(install.code, install.stderr).toBe(0);
    const deploy = JSON.parse((await cluster.kubectl(["-n", ns, "get", "deploy", "-l", `app.kubernetes.io/instance=${release}`, "-o", "jsonpath={.items[0]}"])).stdout) as unknown;
    const pod = deploymentSchema.parse(deploy).spec.template.spec;
    // The settings the chart gives the operator (READ_NODES among them), as its pod would have them.
    const settings = Object.fromEntries((pod.containers[0]?.env ?? []).flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])));
    expect(settings.READ_NODES).toBe("true");
    const kubeconfig = await cluster.serviceAccountKubeconfig(pod.serviceAccountName ?? "default");
    operator = startOperator([], {
      ...settings, KUBECONFIG: kubeconfig, LINODE_TOKEN: token, LINODE_API_URL: emulator.url, POD_NAMESPACE: ns, POD_NAME: "lke",
      WATCH_NAMESPACES: ns, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    await operator.waitForLog((l) => l.msg === "cache synced; starting workers", 60_000);

    const apply = await cluster.kubectl(["-n", ns, "apply", "-f", lke]);
    expect(apply.code, apply.stderr).toBe(0);
    const wait = await cluster.kubectl(["-n", ns, "wait", "--for=condition=Ready", "linodedb/shop", "--timeout=120s"]);
    expect(wait.code, wait.stderr + JSON.stringify(operator.logs.slice(-5))).toBe(0);

    // Every node's public address is allowed, and only as one host.
    const id = Number((await cluster.kubectl(["-n", ns, "get", "linodedb", "shop", "-o", "jsonpath={.status.id}"])).stdout);
    const db = await (await fetch(`${emulator.url}/databases/postgresql/instances/${String(id)}`, { headers: { authorization: `Bearer ${token}` } })).json() as { allow_list: string[] };
    expect(db.allow_list).toEqual(expect.arrayContaining(addresses.map((a) => `${a}/32`)));
    expect(db.allow_list.some((a) => a.startsWith("192.168.140."))).toBe(false);

    // The application's DATABASE_URL: the key it names, from the Secret the operator wrote.
    const app = deploymentSchema.parse(JSON.parse((await cluster.kubectl(["-n", ns, "get", "deploy", "shop-app", "-o", "json"])).stdout)).spec.template.spec;
    const ref = app.containers[0]?.env?.find((e) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef;
    expect(ref?.name).toBe("shop-connection");
    const secret = await cluster.core.readNamespacedSecret({ namespace: ns, name: ref?.name ?? "" });
    const value = (key: string): string => Buffer.from(secret.data?.[key] ?? "", "base64").toString();
    const url = new URL(value(ref?.key ?? ""));
    expect(url.protocol).toBe("postgresql:");
    expect(url.hostname).toBe(value("host"));
    expect(url.port).toBe(value("port"));
    expect(decodeURIComponent(url.username)).toBe(value("username"));
    expect(decodeURIComponent(url.password)).toBe(value("password"));
    expect(url.searchParams.get("sslmode")).toBe("verify-full");
    // The CA the URL names is where the Deployment mounts the Secret's ca.crt.
    const caPath = url.searchParams.get("sslrootcert") ?? "";
    const volume = app.volumes?.find((v) => v.secret?.secretName === ref?.name);
    const mount = app.containers[0]?.volumeMounts?.find((m) => m.name === volume?.name);
    const item = volume?.secret?.items?.find((i) => i.key === "ca.crt");
    expect(`${mount?.mountPath ?? "?"}/${item?.path ?? "?"}`).toBe(caPath);
    expect(value("ca.crt")).toContain("BEGIN CERTIFICATE");

    const del = await cluster.kubectl(["-n", ns, "delete", "-f", lke, "--wait=true", "--timeout=120s"]);
    expect(del.code, del.stderr).toBe(0);
    operator.child.kill("SIGTERM");
    expect(await operator.exited).toBe(0);
  });
});
