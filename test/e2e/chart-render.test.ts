// The chart as helm renders it against a real API server (install --dry-run=server): the notes
// say what is true in each mode, the kinds' own settings have values, and the ServiceMonitor
// keeps the metrics' namespace label and exists only with the Service it selects.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { kindDefinitions } from "../../src/resources/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";

const chart = fileURLToPath(new URL("../../helm/linode-operator", import.meta.url));
const chartVersion = (JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { version: string }).version;

interface Doc { kind?: string; metadata?: { name?: string }; spec?: { endpoints?: { honorLabels?: boolean }[]; template?: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }

describe("the chart, rendered", () => {
  const cluster = useTestCluster("chart");
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  /** The manifests and the notes an install would produce. */
  const dryRun = async (...set: string[]): Promise<{ docs: Doc[]; notes: string }> => {
    const r = await helm(["install", "x", chart, "--namespace", cluster.namespace, "--dry-run=server", "--set", "crds.enabled=false", ...set.flatMap((s) => ["--set", s])]);
    expect(r.code, r.stderr).toBe(0);
    const [manifest = "", notes = ""] = r.stdout.split(/^NOTES:$/m);
    return { docs: parseAllDocuments(manifest.slice(manifest.indexOf("---"))).map((d) => d.toJSON() as Doc | null).filter((d): d is Doc => d !== null), notes };
  };
  const env = (docs: Doc[]): Record<string, string | undefined> => Object.fromEntries(
    (docs.find((d) => d.kind === "Deployment")?.spec?.template?.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
  );

  it("notes: with requireCredentialsRef: true (no operator token) they say how to name a token, never that one is missing", async () => {
    const { notes } = await dryRun("requireCredentialsRef=true");
    expect(notes).not.toMatch(/WARNING/);
    expect(notes).toContain("credentialsRef: { name: linode }");
    expect(notes).toContain("kubectl label secret linode linode.operator.dev/credentials=true");
    expect(notes).not.toMatch(/https:\/\/…|chart's README/);
  });

  it("notes: the example database is reachable: from the nodes with rbac.readNodes, else from an address to fill in, never an empty allow list", async () => {
    const withNodes = await dryRun("linode.token=x", "rbac.readNodes=true");
    const example = (notes: string): Record<string, unknown> => parse(/<<EOF\n([\s\S]*?)\n\s*EOF/.exec(notes)?.[1]?.replace(/^ {2}/gm, "") ?? "") as Record<string, unknown>;
    expect(example(withNodes.notes)).toMatchObject({ kind: "ManagedDatabase", spec: { allowListFrom: [{ nodes: { selector: {}, addressType: "ExternalIP" } }] } });
    const without = await dryRun("linode.token=x");
    expect((example(without.notes).spec as { allowList?: string[] }).allowList).toEqual(["<the address your clients connect from>/32"]);
    expect(without.notes).toContain("rbac.readNodes=true");
  });

  it("notes: with the operator's token they say every namespace on it shares one account, and where adoption is allowed", async () => {
    const shared = await dryRun("linode.token=t");
    expect(shared.notes).toContain("every namespace on it shares one Linode account");
    expect(shared.notes).not.toContain("Adopting an existing");
    const adopting = await dryRun("linode.token=t", "adoptNamespaces={team-a,team-b}");
    expect(adopting.notes).toContain("allowed in: team-a, team-b");
  });

  it("nodePortNamespaces: off by default (no NODE_PORT_NAMESPACES), true for every namespace, or a list", async () => {
    expect(env((await dryRun("linode.token=t")).docs)).not.toHaveProperty("NODE_PORT_NAMESPACES");
    expect(env((await dryRun("linode.token=t", "nodePortNamespaces=true")).docs)).toMatchObject({ NODE_PORT_NAMESPACES: "true" });
    expect(env((await dryRun("linode.token=t", "nodePortNamespaces={ingress,edge}")).docs)).toMatchObject({ NODE_PORT_NAMESPACES: "ingress,edge" });
  });

  it("rbac.readNodes grants get, list and watch on nodes (nothing else) and starts the operator with READ_NODES", async () => {
    const off = await dryRun("linode.token=t");
    expect(off.docs.filter((d) => d.kind === "ClusterRole" && JSON.stringify(d).includes("\"nodes\""))).toEqual([]);
    expect(env(off.docs)).not.toHaveProperty("READ_NODES");
    const on = await dryRun("linode.token=t", "rbac.readNodes=true");
    const roles = on.docs.filter((d) => d.kind === "ClusterRole" && JSON.stringify(d).includes("\"nodes\""));
    expect(roles.map((r) => (r as unknown as { rules: unknown }).rules)).toEqual([[{ apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] }]]);
    expect(on.docs.some((d) => d.kind === "ClusterRoleBinding" && JSON.stringify(d).includes("read-nodes"))).toBe(true);
    expect(env(on.docs)).toMatchObject({ READ_NODES: "true" });
    // Services and EndpointSlices where it watches, read only, with the same value.
    const rules = (docs: Doc[]): string => JSON.stringify(docs.filter((d) => d.kind === "ClusterRole" || d.kind === "Role"));
    expect(rules(on.docs)).toContain('"resources":["services"],"verbs":["get","list","watch"]');
    expect(rules(on.docs)).toContain('"resources":["endpointslices"],"verbs":["get","list","watch"]');
    expect(rules(off.docs)).not.toContain("endpointslices");
  });

  it("watchNamespaces: Secrets and ConfigMaps are reached through a Role in each of those namespaces only; nothing grants them cluster-wide", async () => {
    const grants = (d: Doc, resource: string): boolean => ((d as unknown as { rules?: { resources?: string[] }[] }).rules ?? []).some((r) => r.resources?.includes(resource) === true);
    const scoped = await dryRun("linode.token=t", "rbac.readNodes=true", "watchNamespaces={team-a,team-b}");
    for (const resource of ["secrets", "configmaps"]) {
      expect(scoped.docs.filter((d) => d.kind === "ClusterRole" && grants(d, resource))).toEqual([]);
      const roles = scoped.docs.filter((d) => d.kind === "Role" && grants(d, resource) && !d.metadata?.name?.endsWith("-leader-election")) as unknown as { metadata: { namespace: string } }[];
      expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(["team-a", "team-b"]);
    }
    // In its own namespace, beside its Lease: its ownership key, read by name (and made once), and
    // its token Secret, read by name (again while the token cannot work: docs/token-scopes.md).
    const own = scoped.docs.find((d) => d.kind === "Role" && d.metadata?.name?.endsWith("-leader-election")) as unknown as { rules: { resources?: string[]; resourceNames?: string[]; verbs: string[] }[] };
    expect(own.rules.filter((r) => r.resources?.includes("secrets") === true)).toEqual([
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["x-linode-operator-ownership-key"], verbs: ["get"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["x-linode-operator-token"], verbs: ["get"] },
    ]);
    // Without it, the operator watches every namespace: one ClusterRole.
    const all = await dryRun("linode.token=t");
    expect(all.docs.filter((d) => d.kind === "ClusterRole" && grants(d, "secrets"))).toHaveLength(1);
  });

  it("the kinds' own settings have values, passed only when set", async () => {
    expect(env((await dryRun("linode.token=t")).docs)).not.toHaveProperty("NODEBALANCER_STATS_SECONDS");
    const set = env((await dryRun("linode.token=t", "nodeBalancerStatsSeconds=0", "backupsRefreshHours=6", "allowListIntervalSeconds=30", "pollHealthSeconds=900", "nodeBalancerRereadSeconds=1800", "databasePlatform=legacy")).docs);
    expect(set).toMatchObject({ NODEBALANCER_STATS_SECONDS: "0", BACKUPS_REFRESH_HOURS: "6", ALLOW_LIST_INTERVAL_SECONDS: "30", POLL_HEALTH_SECONDS: "900", NODEBALANCER_REREAD_SECONDS: "1800", DATABASE_PLATFORM: "legacy" });
    // Every setting a kind declares reaches the operator from a chart value.
    const template = readFileSync(join(chart, "templates", "deployment.yaml"), "utf8");
    const unreachable = kindDefinitions.flatMap((d) => Object.values(d.settings ?? {}).map((k) => k.env)).filter((e) => !template.includes(`- name: ${e}\n`));
    expect(unreachable).toEqual([]);
    const bad = await helm(["template", "x", chart, "--set", "linode.token=t", "--set", "nodeBalancerStatsSeconds=5"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/nodeBalancerStatsSeconds/);
  });

  it("the CRDs are templates: upgraded with the release, kept on uninstall unless crds.keep=false, left out with crds.enabled=false", async () => {
    const crds = async (...set: string[]): Promise<{ name?: string; annotations?: Record<string, string> }[]> => {
      const r = await helm(["template", "x", chart, "--set", "linode.token=t", ...set.flatMap((s) => ["--set", s])]);
      expect(r.code, r.stderr).toBe(0);
      return parseAllDocuments(r.stdout).map((d) => d.toJSON() as { kind?: string; metadata?: { name?: string; annotations?: Record<string, string> } } | null)
        .filter((d) => d?.kind === "CustomResourceDefinition").map((d) => ({ ...d?.metadata }));
    };
    const kept = await crds();
    expect(kept.map((c) => c.name).sort()).toEqual(["databaseconnectionpools.linode.operator.dev", "databasesnapshots.linode.operator.dev", "manageddatabases.linode.operator.dev", "nodebalancers.linode.operator.dev"]);
    for (const c of kept) expect(c.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    // A field description holding template braces comes through as written.
    const all = await helm(["template", "x", chart, "--set", "linode.token=t"]);
    expect(all.stdout).toContain("jdbc:mysql://{{ .host }}:{{ .port }}/{{ .database }}");
    for (const c of await crds("crds.keep=false")) expect(c.annotations?.["helm.sh/resource-policy"]).toBeUndefined();
    expect(await crds("crds.enabled=false")).toEqual([]);
  });

  it("the ServiceMonitor honours the metrics' own labels, and exists only with the metrics Service", async () => {
    // Rendered without a server: the Prometheus Operator's CRDs are not installed here.
    const rendered = await helm(["template", "x", chart, "--set", "linode.token=t", "--set", "metrics.serviceMonitor.enabled=true"]);
    expect(rendered.code, rendered.stderr).toBe(0);
    const on = parseAllDocuments(rendered.stdout).map((d) => d.toJSON() as Doc | null).filter((d) => d?.kind === "ServiceMonitor");
    expect(on).toHaveLength(1);
    expect(on[0]?.spec?.endpoints?.[0]?.honorLabels).toBe(true);
    const off = await helm(["template", "x", chart, "--set", "linode.token=t", "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.service.enabled=false"]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toContain("kind: ServiceMonitor");
  });

  it("composes as a subchart: an umbrella's global values and enabled condition, fullnameOverride, priorityClassName and topology spread", async () => {
    const umbrella = await mkdtemp(join(tmpdir(), "umbrella-"));
    try {
      await writeFile(join(umbrella, "Chart.yaml"), [
        "apiVersion: v2", "name: platform", "version: 1.0.0",
        "dependencies:", `  - { name: linode-operator, version: ${chartVersion}, repository: "file://${chart}", condition: linode-operator.enabled }`, "",
      ].join("\n"));
      await writeFile(join(umbrella, "values.yaml"), [
        "global: { imageRegistry: registry.example }",
        "linode-operator:", "  enabled: true", "  linode: { token: t }", "  fullnameOverride: cloud-operator",
        "  priorityClassName: platform-critical",
        "  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway }]", "",
      ].join("\n"));
      const dep = await helm(["dependency", "build", umbrella]);
      expect(dep.code, dep.stdout + dep.stderr).toBe(0);
      const lint = await helm(["lint", umbrella]);
      expect(lint.code, lint.stdout + lint.stderr).toBe(0);
      const on = await helm(["template", "platform", umbrella]);
      expect(on.code, on.stderr).toBe(0);
      const docs = parseAllDocuments(on.stdout).map((d) => d.toJSON() as (Doc & { metadata?: { name: string }; spec?: { template?: { spec: { priorityClassName?: string; topologySpreadConstraints?: unknown[] } } } }) | null);
      const deployment = docs.find((d) => d?.kind === "Deployment");
      expect(deployment?.metadata?.name).toBe("cloud-operator");
      expect(deployment?.spec?.template?.spec.priorityClassName).toBe("platform-critical");
      expect(deployment?.spec?.template?.spec.topologySpreadConstraints).toHaveLength(1);
      const off = await helm(["template", "platform", umbrella, "--set", "linode-operator.enabled=false"]);
      expect(off.code, off.stderr).toBe(0);
      expect(off.stdout).not.toContain("kind: Deployment");
    } finally {
      await rm(umbrella, { recursive: true, force: true });
    }
  });
});
