// The release as users get it, for real and offline: `npm run release`'s folder (image, chart,
// CRDs, npm package, checksums) for this commit and for the previous release (0.1.0: the commit
// the current issues were filed at, built the same way), pushed to a real OCI registry
// (distribution's) on the test network's loopback; `helm install oci://…` with the kubelet
// pulling the image from that registry; and an upgrade from the previous release that must lose
// nothing: no cloud object created, changed or deleted, no Ready flap, finalizers intact, and the
// one Secret change the release brings (the Service Binding type) made without a moment where an
// application's mount is empty.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildahEnv } from "../../src/local-cluster/images.ts";
import { cacheDir } from "../../src/local-cluster/paths.ts";
import { until } from "../../src/local-cluster/procs.ts";
import { execCapture } from "../../src/local-cluster/exec.ts";
import type { NetnsEmulator, NetnsRegistry, RealCluster } from "../../src/local-cluster/real-node.ts";
import { buildRelease, type Release } from "../../scripts/release.ts";
import { busyboxArchive } from "../../src/local-cluster/oci-archive.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { busyboxPod, kubectlOk, realClusterPrerequisites, startNodeWhile, stopNode, waitDefaultServiceAccount } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true, images: true });
const repo = fileURLToPath(new URL("../../", import.meta.url));
/** The previous release: the commit the current issues were filed at (package.json 0.1.0). */
const PREVIOUS = "53683cb";
const TOKEN = "release-token";
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

interface Obj { type?: string; metadata: { name: string; uid?: string; resourceVersion: string; finalizers?: string[]; annotations?: Record<string, string> }; status?: { externalId?: string; conditions?: { type: string; status: string; lastTransitionTime: string }[] }; data?: Record<string, string> }

describe.skipIf(!pre.ok)("the release, from an OCI registry: install, and upgrade from the previous release", () => {
  let c: RealCluster | undefined;
  let registry: NetnsRegistry | undefined;
  let emu: NetnsEmulator | undefined;
  let current: Release | undefined;
  let previous: Release | undefined;
  const cluster = (): RealCluster => { if (c === undefined) throw new Error("no cluster"); return c; };
  const kubectl = (args: string[], input?: string): Promise<string> => kubectlOk(cluster(), args, input);
  const helm = async (args: string[]): Promise<string> => {
    const r = await cluster().helm(args, { timeoutMs: 300_000 });
    if (r.code !== 0) throw new Error(`helm ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const repoOf = (): string => `${registry?.host ?? ""}/linode-operator`;
  /**
   * The chart's values that fit this node (no kube-proxy): the operator on the pod network, whose
   * one route reaches the apiserver and the emulator on the node's address (the host network would
   * give a rolling update's two pods the same host ports, which the scheduler refuses).
   */
  const nodeValues = (): string[] => [
    "--set", `kubernetesServiceHost=${cluster().nodeIp}`, "--set", `kubernetesServicePort=${String(cluster().apiPort)}`,
    "--set", `linode.apiUrl=${emu?.url ?? ""}`, "--set", "linode.allowHttp=true", "--set", `linode.token=${TOKEN}`,
  ];
  const emulatorGet = async <T>(path: string): Promise<T> => {
    const r = await cluster().exec(process.execPath, ["-e", `fetch(process.env.U, { headers: { authorization: "Bearer " + process.env.T } }).then(async (r) => process.stdout.write(await r.text()))`], { env: { ...process.env, U: `${new URL(emu?.url ?? "").origin}${path}`, T: TOKEN } });
    return JSON.parse(r.stdout) as T;
  };
  const emulatorMutations = async (): Promise<unknown[]> => {
    const r = await cluster().exec(process.execPath, ["-e", `fetch(process.env.U).then(async (r) => process.stdout.write(await r.text()))`], { env: { ...process.env, U: `${new URL(emu?.url ?? "").origin}/_emulator/mutations` } });
    return (JSON.parse(r.stdout) as { mutations: unknown[] }).mutations;
  };
  const get = async (kind: string, ns: string | undefined, name: string): Promise<Obj> => JSON.parse(await kubectl(["get", kind, name, ...(ns !== undefined ? ["-n", ns] : []), "-o", "json"])) as Obj;

  beforeAll(async () => {
    const log = (l: string): void => { console.log(`[release] ${l}`); };
    // The previous release's source, exported once (no .git) with its own node_modules, and its release folder, kept in the cache.
    const prevSrc = join(cacheDir(), "releases", `src-${PREVIOUS}`);
    const releases = (async () => {
      const t0 = Date.now();
      if (!existsSync(join(prevSrc, "package.json"))) {
        await rm(prevSrc, { recursive: true, force: true });
        await mkdir(prevSrc, { recursive: true });
        const r = await execCapture("sh", ["-c", `git -C "${repo}" archive ${PREVIOUS} | tar -x -C "${prevSrc}"`]);
        if (r.code !== 0) throw new Error(`exporting ${PREVIOUS}: ${r.stderr} (a shallow clone lacks the previous release: fetch the history)`);
      }
      const commit = (await execCapture("git", ["-C", repo, "rev-parse", PREVIOUS])).stdout.trim();
      // Built the same way as this one: this commit's release script over the previous commit's tree.
      previous = await buildRelease({ source: prevSrc, commit, out: join(cacheDir(), "releases", PREVIOUS), imageRepository: "127.0.0.1:5000/linode-operator", log });
      current = await buildRelease({ out: join(cacheDir(), "releases", "current"), imageRepository: "127.0.0.1:5000/linode-operator", log });
      log(`release folders for ${previous.version} and ${current.version} in ${secs(Date.now() - t0)}`);
    })();
    const { rc } = await startNodeWhile(releases, (rc) => { c = rc; });
    registry = await rc.startRegistry();
    await rc.importImage(await busyboxArchive());
    emu = await rc.startEmulator(["--host", rc.nodeIp, "--token", TOKEN, "--provision-seconds", "2"]);
    // Published as the CI workflow publishes: the image to the registry, the chart with helm push.
    const env = await buildahEnv();
    for (const r of [previous, current]) {
      if (r?.imageRef === undefined) throw new Error("a release without its image");
      const push = await rc.exec("buildah", ["push", "--quiet", "--tls-verify=false", r.imageRef, `docker://${repoOf()}:${r.version}`], { env, timeoutMs: 300_000 });
      if (push.code !== 0) throw new Error(`buildah push ${r.imageRef}: ${push.stderr}`);
      await helm(["push", join(r.out, r.files.chart), `oci://${registry.host}/charts`, "--plain-http"]);
    }
    await waitDefaultServiceAccount(rc);
  }, 1_800_000);
  afterAll(async () => { await stopNode(c); });

  it("the release folder holds the image, the chart, one CRD manifest and the package, with their checksums", async () => {
    const r = current;
    if (r === undefined) throw new Error("no release");
    const sums = (await readFile(join(r.out, "SHA256SUMS"), "utf8")).trim().split("\n").map((l) => l.split(/\s+/));
    expect(sums.map(([, f]) => f).sort()).toEqual([r.files.chart, r.files.crds, r.files.image, r.files.npm].sort());
    for (const [sum, f] of sums) expect(createHash("sha256").update(await readFile(join(r.out, f ?? ""))).digest("hex")).toBe(sum);
    const crds = await readFile(join(r.out, r.files.crds), "utf8");
    expect(crds.match(/^kind: CustomResourceDefinition$/gm)).toHaveLength(kindDefinitions.length);
    // The image says what it is, and carries the licences.
    const inspect = await execCapture("buildah", ["inspect", "--type", "image", r.imageRef ?? ""], { env: await buildahEnv() });
    const labels = (JSON.parse(inspect.stdout) as { OCIv1: { config: { Labels: Record<string, string> } } }).OCIv1.config.Labels;
    expect(labels).toMatchObject({ "org.opencontainers.image.version": r.version, "org.opencontainers.image.revision": r.commit, "org.opencontainers.image.licenses": "Apache-2.0" });
    const files = await execCapture("tar", ["-tzf", join(r.out, r.files.npm)]);
    expect(files.stdout).toContain("package/LICENSE");
  });

  it("helm install oci://…: the chart from the registry, the image pulled by the kubelet from it; uninstall keeps the CRDs", async () => {
    const ns = "fresh";
    const t0 = Date.now();
    await helm(["install", "fresh", `oci://${registry?.host ?? ""}/charts/linode-operator`, "--version", current?.version ?? "", "--plain-http",
      "-n", ns, "--create-namespace", ...nodeValues(), "--wait", "--timeout", "4m"]);
    const pods = JSON.parse(await kubectl(["get", "pods", "-n", ns, "-l", "app.kubernetes.io/name=linode-operator", "-o", "json"])) as { items: { spec: { containers: { image: string }[] }; status: { containerStatuses?: { ready: boolean; imageID: string }[] } }[] };
    const pod = pods.items[0];
    expect(pod?.spec.containers[0]?.image).toBe(`${repoOf()}:${current?.version ?? ""}`);
    // Pulled from the registry (a digest there), not imported.
    expect(pod?.status.containerStatuses?.[0]).toMatchObject({ ready: true, imageID: expect.stringMatching(/^127\.0\.0\.1:5000\/linode-operator@sha256:/) as string });
    console.log(`[release] helm install from oci:// Ready in ${secs(Date.now() - t0)} (chart and image pulled from the registry)`);
    // The licences travel with the image.
    const podName = await kubectl(["get", "pods", "-n", ns, "-l", "app.kubernetes.io/name=linode-operator", "-o", "jsonpath={.items[0].metadata.name}"]);
    const inImage = await kubectl(["exec", "-n", ns, podName, "--", "head", "-n", "1", "/app/LICENSE", "/app/dist/THIRD-PARTY-LICENSES.txt"]);
    expect(inImage).toContain("Apache License");
    expect(inImage).toContain("includes these packages");
    const crds = await kubectl(["get", "crd", "-o", "name"]);
    expect(crds).toContain("manageddatabases.linode.operator.dev");
    await helm(["uninstall", "fresh", "-n", ns, "--wait"]);
    // crds.keep: uninstalling never deletes the kinds (and so every resource of them).
    expect(await kubectl(["get", "crd", "-o", "name"])).toContain("manageddatabases.linode.operator.dev");
    // Every kind's CRD goes, so the next test's cluster is one where only the previous release ever ran.
    await kubectl(["delete", "crd", ...kindDefinitions.map((d) => `${d.plural}.linode.operator.dev`)]);
    await kubectl(["delete", "namespace", ns, "--wait=false"]);
  });

  it("an upgrade from the previous release creates, changes and deletes nothing in Linode, flaps no Ready, keeps the finalizers; the connection Secret moves to the Service Binding type with the same data and the app's mount never empties", async () => {
    const ns = "upgrade";
    const prev = previous?.version ?? "";
    // A drift window of 10 s, so the previous release settles (sees what the snapshot changed) within the test.
    await helm(["install", "op", `oci://${registry?.host ?? ""}/charts/linode-operator`, "--version", prev, "--plain-http",
      "-n", ns, "--create-namespace", ...nodeValues(), "--set", "poll.readySeconds=10", "--wait", "--timeout", "4m"]);
    // One object of each kind, made by the previous release.
    await kubectl(["apply", "-n", ns, "-f", "-"], [
      { apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders" }, spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"] } },
      { apiVersion: "linode.operator.dev/v1alpha1", kind: "DatabaseSnapshot", metadata: { name: "orders-snap" }, spec: { databaseRef: { name: "orders" } } },
      { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "web" }, spec: { region: "us-east", configs: [{ port: 80, protocol: "http", nodes: [{ label: "node-a", address: "192.168.10.1:80" }] }] } },
    ].map((o) => JSON.stringify(o)).join("\n"));
    await kubectl(["wait", "-n", ns, "--for=condition=Ready", "manageddatabase/orders", "nodebalancer/web", "--timeout=180s"]);
    await kubectl(["wait", "-n", ns, "--for=jsonpath={.status.phase}=Available", "databasesnapshot/orders-snap", "--timeout=180s"]);
    const objects = [["manageddatabase", "orders"], ["databasesnapshot", "orders-snap"], ["nodebalancer", "web"]] as const;
    // Settled: the snapshot moved the database's `updated`, and the previous release has published credentials as of then.
    const dbId = (await get("manageddatabase", ns, "orders")).status?.externalId ?? (await kubectl(["get", "manageddatabase", "orders", "-n", ns, "-o", "jsonpath={.status.id}"]));
    await until("the connection Secret as of the database's last change", 60_000, async () => {
      const db = await emulatorGet<{ updated: string }>(`/v4/databases/mysql/instances/${dbId}`);
      const secret = await get("secret", ns, "orders-connection");
      return secret.metadata.annotations?.["linode.operator.dev/credentials-as-of"] === db.updated ? true : undefined;
    }, 500);
    const before = await Promise.all(objects.map(([k, n]) => get(k, ns, n)));
    const secretBefore = await get("secret", ns, "orders-connection");
    // An application reading its mounted credentials ten times a second, saying so whenever the file is not there.
    await kubectl(["apply", "-n", ns, "-f", "-"], busyboxPod("reader", {
      volumes: [{ name: "db", secret: { secretName: "orders-connection" } }],
    }, {
      command: ["sh", "-c", "echo started; while true; do test -s /bindings/orders/password || echo \"EMPTY $(date +%s)\"; sleep 0.1; done"],
      volumeMounts: [{ name: "db", mountPath: "/bindings/orders", readOnly: true }],
    }));
    await until("the reader running", 60_000, async () => ((await kubectl(["get", "pod", "reader", "-n", ns, "-o", "jsonpath={.status.phase}"])) === "Running" ? true : undefined), 250);
    const mutationsBefore = (await emulatorMutations()).length;

    // The documented step for 0.1.0 (README, "Upgrading"): the release owns its CRDs once.
    for (const crd of ["manageddatabases", "databasesnapshots", "nodebalancers"]) {
      await kubectl(["annotate", "crd", `${crd}.linode.operator.dev`, "--overwrite", "meta.helm.sh/release-name=op", `meta.helm.sh/release-namespace=${ns}`]);
      await kubectl(["label", "crd", `${crd}.linode.operator.dev`, "--overwrite", "app.kubernetes.io/managed-by=Helm"]);
    }
    const t0 = Date.now();
    await helm(["upgrade", "op", `oci://${registry?.host ?? ""}/charts/linode-operator`, "--version", current?.version ?? "", "--plain-http",
      "-n", ns, "--reset-then-reuse-values", "--wait", "--timeout", "4m"]);
    // The new operator has looked at every object: each records its id in status.externalId, which 0.1.0 never wrote.
    await until("every object re-observed by the new operator", 180_000, async () => {
      const now = await Promise.all(objects.map(([k, n]) => get(k, ns, n)));
      return now.every((o) => o.status?.externalId !== undefined) ? true : undefined;
    }, 500);
    console.log(`[release] upgrade ${prev} → ${current?.version ?? ""}: every object re-observed ${secs(Date.now() - t0)} after helm upgrade began`);
    const after = await Promise.all(objects.map(([k, n]) => get(k, ns, n)));
    for (const [i, o] of after.entries()) {
      const was = before[i];
      const ready = (x: Obj | undefined) => x?.status?.conditions?.find((cond) => cond.type === "Ready");
      expect(ready(o), o.metadata.name).toMatchObject({ status: "True", lastTransitionTime: ready(was)?.lastTransitionTime });
      expect(o.metadata.finalizers, o.metadata.name).toEqual(was?.metadata.finalizers);
      expect(o.metadata.finalizers).toContain("linode.operator.dev/finalizer");
    }
    // Nothing sent to Linode but reads.
    expect((await emulatorMutations()).slice(mutationsBefore)).toEqual([]);
    // The connection Secret: the one write the upgrade makes. 0.2.0 gives it the Service Binding
    // type (servicebinding.io/mysql, was Opaque) and a `uri` that verifies the server against the
    // mounted CA (VERIFY_IDENTITY, was REQUIRED); a type cannot change, so it is replaced (a new
    // uid), every other key the same. The application's mounted files were there throughout.
    const secretAfter = await until("the connection Secret of the Service Binding type", 60_000, async () => {
      const s = await get("secret", ns, "orders-connection").catch(() => undefined);
      return s?.type === "servicebinding.io/mysql" ? s : undefined;
    }, 250);
    expect(secretBefore.type).toBe("Opaque");
    expect(secretAfter.metadata.uid).not.toBe(secretBefore.metadata.uid);
    const decoded = (o: Obj): Record<string, string> => Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
    const [was, now] = [decoded(secretBefore), decoded(secretAfter)];
    expect({ ...now, uri: undefined }).toEqual({ ...was, uri: undefined });
    expect(was.uri).toMatch(/\?ssl-mode=REQUIRED$/);
    expect(now.uri).toBe(was.uri?.replace("?ssl-mode=REQUIRED", "?ssl-mode=VERIFY_IDENTITY&ssl-ca=/bindings/orders/ca.crt"));
    expect(await kubectl(["get", "manageddatabase", "orders", "-n", ns, "-o", "jsonpath={.status.binding.name}"])).toBe("orders-connection");
    const readerLog = await kubectl(["logs", "reader", "-n", ns]);
    expect(readerLog).toContain("started");
    expect(readerLog).not.toContain("EMPTY");
    expect(await kubectl(["get", "pod", "reader", "-n", ns, "-o", "jsonpath={.status.containerStatuses[0].restartCount}"])).toBe("0");
    // The CRDs are the release's now: upgraded with it, and kept if it is uninstalled.
    const crd = await get("crd", undefined, "manageddatabases.linode.operator.dev");
    expect(crd.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
  });
});
