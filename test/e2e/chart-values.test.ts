// The chart's image, probe, volume and Service Binding values as real helm renders them, the
// schema refusing bad ones, the Artifact Hub metadata matching what it describes, and the
// Service Binding ClusterRole doing its job on a real API server: a ServiceAccount bound only to
// an aggregating ClusterRole (as a Service Binding controller's is) can read the kinds.
import { readFileSync } from "node:fs";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { chartYamlWithMetadata, GENERATED_MARKER } from "../../scripts/chart-metadata.ts";
import { kindDefinitions } from "../../src/resources/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";

const chart = fileURLToPath(new URL("../../helm/linode-operator", import.meta.url));
const appVersion = (parse(readFileSync(join(chart, "Chart.yaml"), "utf8")) as { appVersion: string }).appVersion;
const digest = `sha256:${"ab".repeat(32)}`;

interface Obj { kind: string; metadata: { name: string; labels?: Record<string, string> }; rules?: unknown[]; spec?: { template: { spec: PodSpec } } }
interface Container { image: string; livenessProbe?: unknown; readinessProbe?: unknown; startupProbe?: unknown; volumeMounts: unknown[]; env: { name: string; value?: string }[] }
interface PodSpec { containers: Container[]; volumes: unknown[] }

describe("the chart's values", () => {
  const cluster = useTestCluster("chart-values");
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const template = async (...set: string[]): Promise<Obj[]> => {
    const r = await helm(["template", "x", chart, "--namespace", cluster.namespace, "--set", "linode.token=t", ...set.flatMap((s) => ["--set", s])]);
    expect(r.code, r.stderr).toBe(0);
    return parseAllDocuments(r.stdout).map((d) => d.toJSON() as Obj | null).filter((d): d is Obj => d !== null);
  };
  const refused = async (set: string, why: RegExp): Promise<void> => {
    const r = await helm(["template", "x", chart, "--set", "linode.token=t", "--set", set]);
    expect(r.code, `${set} was accepted`).not.toBe(0);
    expect(r.stderr).toMatch(why);
  };
  const pod = (docs: Obj[]): PodSpec => {
    const spec = docs.find((d) => d.kind === "Deployment")?.spec?.template.spec;
    if (spec === undefined) throw new Error("no Deployment");
    return spec;
  };
  const container = (docs: Obj[]): Container => pod(docs).containers[0] as Container;

  it("image: [registry/]repository:tag (default the appVersion), or @digest, which wins; a repository holding its registry works as before", async () => {
    expect(container(await template()).image).toBe(`linode-operator:${appVersion}`);
    expect(container(await template("image.repository=ghcr.io/acme/linode-operator", "image.tag=0.1.0")).image).toBe("ghcr.io/acme/linode-operator:0.1.0");
    expect(container(await template("image.registry=registry.example:5000", "image.repository=team/linode-operator", "image.tag=1.2.3")).image).toBe("registry.example:5000/team/linode-operator:1.2.3");
    expect(container(await template("image.registry=registry.example", "image.tag=1.2.3", `image.digest=${digest}`)).image).toBe(`registry.example/linode-operator@${digest}`);
    await refused("image.digest=sha256:abc", /digest/);
    await refused("image.digest=latest", /digest/);
    await refused("image.tag=1.0@sha256:x", /tag/);
    await refused("image.registry=https://registry.example", /registry/);
  });

  it("probes: today's by default, each field overridable, null removes one, a startup probe when given; the schema refuses a bad one", async () => {
    const defaults = container(await template());
    expect(defaults.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: "health" }, initialDelaySeconds: 5, periodSeconds: 10 });
    expect(defaults.readinessProbe).toEqual({ httpGet: { path: "/readyz", port: "health" }, periodSeconds: 2 });
    expect(defaults).not.toHaveProperty("startupProbe");
    const tuned = container(await template("livenessProbe.periodSeconds=30", "livenessProbe.failureThreshold=6", "readinessProbe=null",
      "startupProbe.httpGet.path=/healthz", "startupProbe.httpGet.port=health", "startupProbe.failureThreshold=30"));
    expect(tuned.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: "health" }, initialDelaySeconds: 5, periodSeconds: 30, failureThreshold: 6 });
    expect(tuned).not.toHaveProperty("readinessProbe");
    expect(tuned.startupProbe).toEqual({ httpGet: { path: "/healthz", port: "health" }, failureThreshold: 30 });
    await refused("livenessProbe.periodSeconds=0", /livenessProbe/);
    await refused("readinessProbe.periodSecond=5", /readinessProbe/);
    await refused("startupProbe.httpGet.path=/x", /startupProbe/);
  });

  it("poll.readySeconds: 10 or more (below that the call budget, not the window, sets the pace)", async () => {
    const env = (docs: Obj[]): string | undefined => container(docs).env.find((e) => e.name === "POLL_READY_SECONDS")?.value;
    expect(env(await template())).toBe("300");
    expect(env(await template("poll.readySeconds=10"))).toBe("10");
    await refused("poll.readySeconds=5", /readySeconds/);
  });

  it("linode.apiShare is every replica's, shards or not: replicas spending one token stop together where the API's remaining says the rest is not theirs (divided, they would stop at 1/N of it)", async () => {
    const share = (docs: Obj[]): string | undefined => container(docs).env.find((e) => e.name === "LINODE_API_SHARE")?.value;
    expect(share(await template())).toBe("0.5");
    expect(share(await template("replicaCount=3", "sharding.enabled=true"))).toBe("0.5");
  });

  it("volumes, volumeMounts and extraEnv are added beside the chart's own; the schema keeps tmp the chart's", async () => {
    const docs = await template("volumes[0].name=proxy-ca", "volumes[0].configMap.name=proxy-ca",
      "volumeMounts[0].name=proxy-ca", "volumeMounts[0].mountPath=/etc/proxy-ca", "volumeMounts[0].readOnly=true",
      "extraEnv[0].name=NODE_EXTRA_CA_CERTS", "extraEnv[0].value=/etc/proxy-ca/ca.crt");
    expect(pod(docs).volumes).toEqual([{ name: "tmp", emptyDir: {} }, { name: "proxy-ca", configMap: { name: "proxy-ca" } }]);
    expect(container(docs).volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }, { name: "proxy-ca", mountPath: "/etc/proxy-ca", readOnly: true }]);
    expect(container(docs).env).toContainEqual({ name: "NODE_EXTRA_CA_CERTS", value: "/etc/proxy-ca/ca.crt" });
    await refused("volumes[0].name=tmp", /volumes/);
    await refused("volumeMounts[0].name=x", /volumeMounts/);
    await refused("volumeMounts[0].name=x,volumeMounts[0].mountPath=relative", /volumeMounts/);
  });

  it("helm lint --strict passes with every new value set", async () => {
    const r = await helm(["lint", "--strict", chart, "--set", "linode.token=t", "--set", "image.registry=registry.example", "--set", `image.digest=${digest}`,
      "--set", "startupProbe.httpGet.path=/healthz", "--set", "startupProbe.httpGet.port=health", "--set", "volumes[0].name=v", "--set", "volumes[0].emptyDir.medium=Memory",
      "--set", "volumeMounts[0].name=v", "--set", "volumeMounts[0].mountPath=/v"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it("the Service Binding ClusterRole: labelled for aggregation, reading the kinds only; off with rbac.serviceBindingRole=false or rbac.create=false", async () => {
    const roles = (docs: Obj[]): Obj[] => docs.filter((d) => d.kind === "ClusterRole" && d.metadata.labels?.["servicebinding.io/controller"] === "true");
    const [role] = roles(await template());
    expect(role?.rules).toEqual([{ apiGroups: ["linode.operator.dev"], resources: kindDefinitions.map((k) => k.plural), verbs: ["get", "list", "watch"] }]);
    expect(roles(await template("rbac.serviceBindingRole=false"))).toEqual([]);
    expect(roles(await template("rbac.create=false"))).toEqual([]);
  });

  it("on a real API server, a ServiceAccount bound only to a Service Binding controller's aggregating ClusterRole can read the kinds, and nothing else of ours", async () => {
    await installCrds(cluster);
    const [role] = (await template()).filter((d) => d.kind === "ClusterRole" && d.metadata.labels?.["servicebinding.io/controller"] === "true");
    if (role === undefined) throw new Error("no Service Binding ClusterRole");
    // Cluster-scoped: named after this file's namespace so a rerun or another file never meets it.
    role.metadata.name = `${cluster.namespace}-service-binding`;
    const controllerRole = `${cluster.namespace}-servicebinding-controller`;
    const manifests = [
      role,
      // What the servicebinding.io reference controller installs: a ClusterRole aggregating the label.
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: controllerRole }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "servicebinding.io/controller": "true" } }] }, rules: [] },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: controllerRole }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: controllerRole }, subjects: [{ kind: "ServiceAccount", name: "binder", namespace: cluster.namespace }] },
    ];
    try {
      const applied = await cluster.kubectl(["apply", "-f", "-"], { input: manifests.map((m) => `---\n${stringify(m)}`).join("") });
      expect(applied.code, applied.stderr).toBe(0);
      const kubeconfig = await cluster.serviceAccountKubeconfig("binder");
      const can = async (verb: string, resource: string): Promise<string> => (await cluster.kubectl(["auth", "can-i", verb, resource, "-n", cluster.namespace], { kubeconfig })).stdout.trim();
      // The aggregation controller copies the labelled role's rules into the aggregating one.
      for (let i = 0; i < 100 && (await can("list", "manageddatabases.linode.operator.dev")) !== "yes"; i++) await new Promise((r) => setTimeout(r, 200));
      for (const k of kindDefinitions) {
        for (const verb of ["get", "list", "watch"]) expect(`${verb} ${k.plural}: ${await can(verb, `${k.plural}.linode.operator.dev`)}`).toBe(`${verb} ${k.plural}: yes`);
        expect(await can("patch", `${k.plural}.linode.operator.dev`)).toBe("no");
      }
      expect(await can("get", "secrets")).toBe("no");
      // A real read, not only the authorizer's answer.
      const listed = await cluster.kubectl(["get", "manageddatabases,databasesnapshots,nodebalancers", "-n", cluster.namespace], { kubeconfig });
      expect(listed.code, listed.stderr).toBe(0);
    } finally {
      await cluster.kubectl(["delete", "clusterrole,clusterrolebinding", controllerRole, "--ignore-not-found"]);
      await cluster.kubectl(["delete", "clusterrole", role.metadata.name, "--ignore-not-found"]);
    }
  });

  describe("Artifact Hub metadata (Chart.yaml annotations)", () => {
    const chartYaml = readFileSync(join(chart, "Chart.yaml"), "utf8");
    const annotations = (parse(chartYaml) as { annotations: Record<string, string> }).annotations;
    const list = <T>(key: string): T[] => parse(annotations[key] ?? "") as T[];

    it("names every kind's CRD, as the chart installs it", async () => {
      const crds = (await template()).filter((d) => d.kind === "CustomResourceDefinition").map((d) => d.metadata.name).sort();
      expect(list<{ name: string }>("artifacthub.io/crds").map((c) => c.name).sort()).toEqual(crds);
      expect(annotations["artifacthub.io/license"]).toBe((JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { license: string }).license);
    });

    it("its examples, one per kind, are accepted by the real API server", async () => {
      await installCrds(cluster);
      const examples = list<Obj>("artifacthub.io/crdsExamples");
      expect(examples.map((e) => e.kind)).toEqual(kindDefinitions.map((k) => k.kind));
      for (const e of examples) {
        const r = await cluster.kubectl(["create", "--dry-run=server", "-n", cluster.namespace, "-f", "-"], { input: stringify(e) });
        expect(r.code, `${e.kind}: ${r.stderr}`).toBe(0);
      }
    });

    it("names the image a default install runs", async () => {
      expect(list<{ image: string }>("artifacthub.io/images").map((i) => i.image)).toEqual([container(await template()).image]);
    });

    it("a release stamps its source as home, sources and links, and helm lints the result", async () => {
      const sourceUrl = "https://git.example/acme/linode-operator";
      const staged = await mkdtemp(join(tmpdir(), "chart-metadata-"));
      try {
        await cp(chart, staged, { recursive: true });
        const stamped = chartYamlWithMetadata({
          chartYaml, valuesYaml: readFileSync(join(chart, "values.yaml"), "utf8").replace(/^( {2}repository:) linode-operator$/m, "$1 ghcr.io/acme/linode-operator"),
          version: appVersion, license: "Apache-2.0", definitions: kindDefinitions, examples: new Map([["a.yaml", annotationsExamples()]]), sourceUrl,
        });
        // Stamping twice changes nothing: what is below the marker is rewritten, not added to.
        expect(chartYamlWithMetadata({ chartYaml: stamped, valuesYaml: "image: { repository: ghcr.io/acme/linode-operator }", version: appVersion, license: "Apache-2.0", definitions: kindDefinitions, examples: new Map([["a.yaml", annotationsExamples()]]), sourceUrl })).toBe(stamped);
        expect(stamped.split(GENERATED_MARKER)).toHaveLength(2);
        const meta = parse(stamped) as { home: string; sources: string[]; annotations: Record<string, string> };
        expect([meta.home, meta.sources]).toEqual([sourceUrl, [sourceUrl]]);
        expect(parse(meta.annotations["artifacthub.io/images"] ?? "")).toEqual([{ name: "linode-operator", image: `ghcr.io/acme/linode-operator:${appVersion}` }]);
        expect((parse(meta.annotations["artifacthub.io/links"] ?? "") as { url: string }[]).map((l) => l.url)).toContain(`${sourceUrl}/blob/v${appVersion}/README.md`);
        await writeFile(join(staged, "Chart.yaml"), stamped);
        const lint = await helm(["lint", "--strict", staged, "--set", "linode.token=t"]);
        expect(lint.code, lint.stdout + lint.stderr).toBe(0);
      } finally {
        await rm(staged, { recursive: true, force: true });
      }
    });

    /** The chart's own examples as one manifest, as examples/ would hold them. */
    function annotationsExamples(): string {
      return list<Obj>("artifacthub.io/crdsExamples").map((e) => `---\n${stringify(e)}`).join("");
    }
  });
});
