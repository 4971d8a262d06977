// `linode-operator install` and `uninstall` as a user runs them, on the real one-node cluster:
// the command builds the image (buildah, warm from the layer cache), imports it into the node's
// containerd (--load-with ctr: a context of this kind says nothing of how it was made), makes the
// namespace and the token Secret, installs the chart and waits for the pod; the database it then
// prints becomes Ready against the emulator; installed again with --registry, the image is pushed
// to a registry on the node and the pod rolls to it as the kubelet pulls it; uninstall
// --delete-crds is refused while the database remains; uninstall removes the release and the Secret and
// leaves the CRDs, the resources and the cloud database. The command runs inside the cluster's
// network namespace (the only place its API server is reachable), with kubectl and helm first
// on PATH as a user's would be.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_IMAGE, buildAppImage, buildBaseImage, imageId } from "../../src/local-cluster/images.ts";
import type { NetnsEmulator, NetnsRegistry, RealCluster } from "../../src/local-cluster/real-node.ts";
import type { ExecResult } from "../../src/local-cluster/exec.ts";
import { until } from "../../src/local-cluster/procs.ts";
import { kubectlOk, nodeEmulator, realClusterPrerequisites, startNodeWhile, stopNode } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true, images: true });
const repo = fileURLToPath(new URL("../../", import.meta.url));
const cli = join(repo, "src", "cli", "main.ts");
const NS = "lo-system";
const RELEASE = "op";
const TOKEN = "install-test-token-5f0c9a";
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const CRDS = ["manageddatabases.linode.operator.dev", "databasesnapshots.linode.operator.dev", "nodebalancers.linode.operator.dev"];

describe.skipIf(!pre.ok)("linode-operator install / uninstall on a real node", () => {
  let c: RealCluster | undefined;
  let emu: NetnsEmulator | undefined;
  let registry: NetnsRegistry | undefined;
  let installOutput = "";
  let runningPod = "";
  const cluster = (): RealCluster => { if (c === undefined) throw new Error("no cluster"); return c; };
  const kubectl = (args: string[], input?: string): Promise<string> => kubectlOk(cluster(), args, input);
  /** The command, in the network namespace, with this cluster's kubectl and helm first on PATH. */
  const linodeOperator = async (args: string[], env: Record<string, string> = {}): Promise<ExecResult> => {
    const rc = cluster();
    const base: NodeJS.ProcessEnv = { ...process.env, PATH: `${rc.binDir}:${process.env.PATH ?? ""}`, KUBECACHEDIR: join(rc.dir, "kube-cache"),
      HELM_CACHE_HOME: join(rc.dir, "helm", "cache"), HELM_CONFIG_HOME: join(rc.dir, "helm", "config"), HELM_DATA_HOME: join(rc.dir, "helm", "data") };
    delete base.LINODE_TOKEN;
    delete base.LINODE_API_URL;
    return rc.exec(process.execPath, [cli, ...args], { env: { ...base, ...env }, timeoutMs: 600_000 });
  };
  const target = (): string[] => ["--kubeconfig", cluster().kubeconfig, "--namespace", NS, "--release", RELEASE];
  /** How the image gets there: the node's containerd, unless a registry is given. */
  const installArgs = (loader: string[] = ["--load-with", "ctr", "--containerd-address", cluster().containerdAddress]): string[] => [
    "install", ...target(), ...loader, "--timeout", "3m",
    // This node has no kube-proxy: the pod reaches the API server and the emulator on the node's address.
    "--set", `kubernetesServiceHost=${cluster().nodeIp}`, "--set", `kubernetesServicePort=${String(cluster().apiPort)}`,
    "--set", "linode.allowHttp=true",
  ];
  const emulatorGet = async <T>(path: string): Promise<T> => {
    const r = await cluster().exec(process.execPath, ["-e", `fetch(process.env.U, { headers: { authorization: "Bearer " + process.env.T } }).then(async (r) => { if (!r.ok) process.exit(3); process.stdout.write(await r.text()); })`],
      { env: { ...process.env, U: `${new URL(emu?.url ?? "").origin}${path}`, T: TOKEN } });
    if (r.code !== 0) throw new Error(`emulator GET ${path}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  /** Ready operator pods not being deleted. */
  const operatorPods = async (): Promise<string[]> =>
    (await kubectl(["get", "pods", "-n", NS, "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}"]))
      .split("\n").map((l) => l.split(" ")).filter((f) => f.length === 3 && f[1] === "" && f[2] === "True").map((f) => f[0] ?? "");

  beforeAll(async () => {
    // Warm the image build on the host, which reaches the package registries, while the node
    // starts: the command's own build inside the namespace (no route out) is then all cache.
    const images = (async () => { await buildBaseImage(); await buildAppImage({ contextDir: repo }); })();
    const { rc } = await startNodeWhile(images, (rc) => { c = rc; });
    registry = await rc.startRegistry();
    emu = await nodeEmulator(rc, TOKEN, 3);
  }, 900_000);
  afterAll(async () => { await stopNode(c); });

  it("install: image built and imported, namespace and token Secret made, chart installed, the operator's pod Ready; the token never printed", async () => {
    expect(existsSync(cluster().containerdAddress)).toBe(true);
    const t0 = Date.now();
    const r = await linodeOperator(installArgs(), { LINODE_TOKEN: TOKEN, LINODE_API_URL: emu?.url ?? "" });
    installOutput = r.stdout;
    console.log(`[install] linode-operator install exit ${r.code} after ${secs(Date.now() - t0)}:\n${r.stdout}${r.stderr}`);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(r.stdout).toMatch(/linode-operator is running: release op, namespace lo-system, image localhost\/linode-operator:0\.2\.0-[0-9a-f]{12}\./);

    const pods = await operatorPods();
    expect(pods).toHaveLength(1);
    runningPod = pods[0] ?? "";
    const image = await kubectl(["get", "pod", runningPod, "-n", NS, "-o", "jsonpath={.spec.containers[0].image} {.spec.containers[0].imagePullPolicy}"]);
    expect(image).toMatch(/^localhost\/linode-operator:0\.2\.0-[0-9a-f]{12} Never$/);
    // The image the command built and tagged is what runs (the same content the host just built).
    expect(image).toContain((await imageId(APP_IMAGE))?.slice(0, 12) ?? "no image");

    const secret = JSON.parse(await kubectl(["get", "secret", `${RELEASE}-linode-token`, "-n", NS, "-o", "json"])) as { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; data: Record<string, string> };
    expect(Buffer.from(secret.data.token ?? "", "base64").toString()).toBe(TOKEN);
    expect(secret.metadata.labels).toMatchObject({ "app.kubernetes.io/managed-by": "linode-operator-install", "app.kubernetes.io/instance": RELEASE });
    // Server-side apply: no last-applied-configuration annotation repeating the token.
    expect(JSON.stringify(secret.metadata.annotations ?? {})).not.toContain(Buffer.from(TOKEN).toString("base64"));
    expect(await kubectl(["get", "namespace", NS, "-o", "jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}"])).toBe("restricted");
    const env = await kubectl(["get", "deploy", `${RELEASE}-linode-operator`, "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].env[?(@.name==\"LINODE_API_URL\")].value}"]);
    expect(env).toBe(emu?.url);
  });

  it("the database install prints becomes Ready against the emulator", async () => {
    const manifest = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(installOutput)?.[1];
    expect(manifest).toBeDefined();
    expect(installOutput).toContain("get linodedb -n default -w");
    const t0 = Date.now();
    await kubectl(["apply", "-f", "-"], manifest);
    await kubectl(["wait", "--for=condition=Ready", "linodedb/orders", "-n", "default", "--timeout=180s"]);
    console.log(`[install] the printed ManagedDatabase Ready ${secs(Date.now() - t0)} after it was applied`);
    const id = Number(await kubectl(["get", "linodedb", "orders", "-n", "default", "-o", "jsonpath={.status.id}"]));
    expect((await emulatorGet<{ status: string }>(`/v4/databases/mysql/instances/${String(id)}`)).status).toBe("active");
  });

  it("install again without a token: the Secret is kept, nothing changes, the same pod runs on", async () => {
    const r = await linodeOperator(installArgs(), { LINODE_API_URL: emu?.url ?? "" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Secret ${RELEASE}-linode-token: no token given`);
    expect(await operatorPods()).toEqual([runningPod]);
    expect(Buffer.from(await kubectl(["get", "secret", `${RELEASE}-linode-token`, "-n", NS, "-o", "jsonpath={.data.token}"]), "base64").toString()).toBe(TOKEN);
  });

  it("install --registry: the image is pushed there and the pod rolls to it, pulled by the node; the Secret is kept", async () => {
    const repository = `${registry?.host ?? ""}/linode-operator`;
    const t0 = Date.now();
    const r = await linodeOperator(installArgs(["--registry", repository, "--registry-insecure"]), { LINODE_API_URL: emu?.url ?? "" });
    console.log(`[install] linode-operator install --registry exit ${r.code} after ${secs(Date.now() - t0)}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`push the image to ${repository}`);
    // helm --wait returned with the new pod Ready; the old one may not be told to stop yet.
    const pod = await until("the old pod replaced", 60_000, async () => {
      const pods = await operatorPods();
      return pods.length === 1 && pods[0] !== runningPod ? pods[0] : undefined;
    }, 250);
    const image = await kubectl(["get", "pod", pod, "-n", NS, "-o", "jsonpath={.spec.containers[0].image} {.spec.containers[0].imagePullPolicy}"]);
    expect(image).toMatch(new RegExp(`^${repository.replace(/\./g, "\\.")}:0\\.2\\.0-[0-9a-f]{12} IfNotPresent$`));
    const tag = image.split(" ")[0]?.split(":").pop() ?? "";
    const tags = await cluster().exec(process.execPath, ["-e", `fetch("http://${registry?.host ?? ""}/v2/linode-operator/tags/list").then(async (r) => process.stdout.write(await r.text()))`]);
    expect((JSON.parse(tags.stdout) as { tags: string[] }).tags).toContain(tag);
    // The kubelet pulled it from there: the pod's Pulled event names the registry's image.
    const events = await kubectl(["get", "events", "-n", NS, "--field-selector", `involvedObject.name=${pod},reason=Pulled`, "-o", "jsonpath={.items[*].message}"]);
    expect(events).toContain(`Successfully pulled image "${repository}:${tag}"`);
    expect(Buffer.from(await kubectl(["get", "secret", `${RELEASE}-linode-token`, "-n", NS, "-o", "jsonpath={.data.token}"]), "base64").toString()).toBe(TOKEN);
    runningPod = pod;
  });

  it("uninstall --delete-crds with a database left is refused, naming it and that its Linode database would be deleted; nothing is removed", async () => {
    const r = await linodeOperator(["uninstall", ...target(), "--delete-crds"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refusing to delete the CRDs \(--delete-crds\): 1 resource\(s\)/);
    expect(r.stderr).toMatch(/ManagedDatabase default\/orders\s+deletionPolicy Delete {2}→ its Linode object is deleted/);
    expect(await operatorPods()).toEqual([runningPod]);
    expect((await kubectl(["get", "crd", ...CRDS, "-o", "name"])).trim().split("\n")).toHaveLength(3);
  });

  it("uninstall: the release and the token Secret go; the CRDs, the database resource and the cloud database stay", async () => {
    const t0 = Date.now();
    const r = await linodeOperator(["uninstall", ...target()]);
    console.log(`[install] linode-operator uninstall exit ${r.code} after ${secs(Date.now() - t0)}:\n${r.stdout}${r.stderr}`);
    expect(r.code).toBe(0);
    expect((await cluster().helm(["status", RELEASE, "-n", NS])).stderr).toMatch(/not found/);
    expect((await kubectl(["get", "secrets", "-n", NS, "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "name"])).trim()).toBe("");
    expect((await kubectl(["get", "deploy", "-n", NS, "-o", "name"])).trim()).toBe("");
    expect((await kubectl(["get", "crd", ...CRDS, "-o", "name"])).trim().split("\n")).toHaveLength(3);
    expect((await kubectl(["get", "linodedb", "orders", "-n", "default", "-o", "name"])).trim()).toBe("manageddatabase.linode.operator.dev/orders");
    const id = Number(await kubectl(["get", "linodedb", "orders", "-n", "default", "-o", "jsonpath={.status.id}"]));
    expect((await emulatorGet<{ data: { id: number }[] }>("/v4/databases/instances")).data.map((d) => d.id)).toEqual([id]);
    expect(r.stdout).toMatch(/left:\n {2}- the CRDs and every resource of their kinds/);
  });
});
