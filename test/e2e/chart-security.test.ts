// What the chart puts between a tenant and the operator, rendered by the real helm against the
// real API server: the status admission policy (rendered where the cluster serves the API, named
// per release, bound to the watched namespaces), the endpoints' bind addresses (the pod's IP and
// loopback, as the operator itself then listens), the optional NetworkPolicy (accepted by the API
// server), and a pod the API server's own PodSecurity admission finds `restricted`.
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

const chart = fileURLToPath(new URL("../../helm/linode-operator", import.meta.url));
const VAP = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
const VAPB = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";

interface EnvVar { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }
interface Doc {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
}
interface PodSpec { hostNetwork?: boolean; containers: { env: EnvVar[] }[] }

const deploymentOf = (docs: Doc[]): { spec: { template: { spec: PodSpec } } } => {
  const d = docs.find((x) => x.kind === "Deployment");
  if (d === undefined) throw new Error("no Deployment rendered");
  return d as unknown as { spec: { template: { spec: PodSpec } } };
};
const envOf = (docs: Doc[]): EnvVar[] => deploymentOf(docs).spec.template.spec.containers[0]?.env ?? [];

describe("the chart's security objects", () => {
  const cluster = useTestCluster("chartsec");
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), ["--kubeconfig", cluster.adminKubeconfig, ...args]);
  const parse = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJSON() as Doc | null).filter((d): d is Doc => d !== null);
  /** What an install would create, with the API server's discovery (its capabilities). */
  const dryRun = async (release: string, namespace: string, ...args: string[]): Promise<Doc[]> => {
    const r = await helm(["install", release, chart, "--namespace", namespace, "--dry-run=server", "--set", "crds.enabled=false", "--set", "linode.token=t", ...args]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = r.stdout.split(/^NOTES:$/m)[0] ?? "";
    return parse(manifest.slice(manifest.indexOf("---")));
  };
  /** Rendered with no server: only the API versions helm knows, plus those given. */
  const template = async (...args: string[]): Promise<{ code: number | null; docs: Doc[]; stderr: string }> => {
    const r = await helm(["template", "x", chart, "--namespace", "ops", "--set", "crds.enabled=false", "--set", "linode.token=t", ...args]);
    return { code: r.code, docs: r.code === 0 ? parse(r.stdout) : [], stderr: r.stderr };
  };
  const kinds = (docs: Doc[], kind: string): Doc[] => docs.filter((d) => d.kind === kind);
  /** The status policy's objects (the chart has another admission policy, for spec keys). */
  const statusOnes = (docs: Doc[], kind: string): Doc[] => kinds(docs, kind).filter((d) => d.metadata?.name?.endsWith("-status") === true);
  const set = (...values: string[]): string[] => values.flatMap((v) => ["--set", v]);

  describe("status admission policy", () => {
    it("is rendered by default where the API server serves ValidatingAdmissionPolicy: refuses (Deny, fail closed) status writes to the kinds by anyone but the release's ServiceAccount", async () => {
      const docs = await dryRun("x", cluster.namespace);
      const [policy, ...morePolicies] = statusOnes(docs, "ValidatingAdmissionPolicy");
      const [binding, ...moreBindings] = statusOnes(docs, "ValidatingAdmissionPolicyBinding");
      expect(morePolicies).toEqual([]);
      expect(moreBindings).toEqual([]);
      expect(policy?.apiVersion).toBe("admissionregistration.k8s.io/v1");
      expect(policy?.metadata?.name).toBe(`x-linode-operator-${cluster.namespace}-status`);
      expect(policy?.spec).toMatchObject({
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: [{ apiGroups: ["linode.operator.dev"], apiVersions: ["*"], operations: ["UPDATE"], resources: ["manageddatabases/status", "databasesnapshots/status", "nodebalancers/status", "databaseconnectionpools/status"] }] },
        variables: [{ name: "usernames", expression: `["system:serviceaccount:${cluster.namespace}:x-linode-operator"]` }, { name: "groups", expression: "[]" }],
      });
      expect(JSON.stringify(policy?.spec)).toContain("a forged one could make it delete or expose another team's database");
      // Every namespace when the release watches all of them.
      expect(binding?.spec).toEqual({ policyName: policy?.metadata?.name, validationActions: ["Deny"] });
      // The API server accepts both as rendered (the CEL compiles).
      for (const d of [policy, binding]) {
        const created = await cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(d) });
        expect(created.code, created.stderr).toBe(0);
      }
    });

    it("is left out where the cluster does not serve the API, and when statusPolicy.enabled is false", async () => {
      // Without a server, helm knows API groups but no kinds: a cluster that does not serve it.
      const offline = await template();
      expect(offline.code, offline.stderr).toBe(0);
      expect(kinds(offline.docs, "Deployment")).toHaveLength(1);
      expect(offline.docs.filter((d) => d.kind?.startsWith("ValidatingAdmissionPolicy") === true)).toEqual([]);
      const served = await template("--api-versions", VAP, "--api-versions", VAPB);
      expect([...statusOnes(served.docs, "ValidatingAdmissionPolicy"), ...statusOnes(served.docs, "ValidatingAdmissionPolicyBinding")].map((d) => d.kind)).toEqual(["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);
      const off = await dryRun("x", cluster.namespace, ...set("statusPolicy.enabled=false"));
      expect(off.filter((d) => d.kind?.startsWith("ValidatingAdmissionPolicy") === true && d.metadata?.name?.endsWith("-status") === true)).toEqual([]);
    });

    it("with watchNamespaces binds only those namespaces; names differ per release; extra users and groups are allowed as written", async () => {
      const docs = await dryRun("x", cluster.namespace, ...set("watchNamespaces={team-a,team-b}", "statusPolicy.extraGroups={system:masters}"),
        "--set-json", `statusPolicy.extraUsernames=${JSON.stringify(["system:serviceaccount:velero:velero", "odd\"name\\"])}`);
      const binding = statusOnes(docs, "ValidatingAdmissionPolicyBinding")[0];
      expect(binding?.spec).toMatchObject({
        validationActions: ["Deny"],
        matchResources: { namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "team-b"] }] } },
      });
      const policy = statusOnes(docs, "ValidatingAdmissionPolicy")[0];
      const variables = (policy?.spec as { variables: { name: string; expression: string }[] }).variables;
      // A JSON list of strings is a CEL list literal: the quote and backslash stay escaped.
      expect(JSON.parse(variables[0]?.expression ?? "")).toEqual([`system:serviceaccount:${cluster.namespace}:x-linode-operator`, "system:serviceaccount:velero:velero", "odd\"name\\"]);
      expect(JSON.parse(variables[1]?.expression ?? "")).toEqual(["system:masters"]);
      const created = await cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(policy) });
      expect(created.code, created.stderr).toBe(0);
      // The same release name in another namespace, and another release beside it: three names
      // (y also reads as a YAML boolean: the chart quotes it in labels).
      const other = await dryRun("x", "default");
      const second = await dryRun("y", cluster.namespace);
      const names = [docs, other, second].map((d) => statusOnes(d, "ValidatingAdmissionPolicyBinding")[0]?.metadata?.name);
      expect(new Set(names).size).toBe(3);
      expect(kinds(second, "ValidatingAdmissionPolicyBinding")[0]?.spec).toMatchObject({ policyName: kinds(second, "ValidatingAdmissionPolicy")[0]?.metadata?.name });
    });
  });

  describe("spec keys admission policy", () => {
    it("refuses engineConfig keys that name an object's prototype, at any depth the API nests parameters in, where the CRD's rules cannot see (rendered by default, off with specKeysPolicy.enabled=false)", async () => {
      await installCrds(cluster);
      // Bound to this test's namespace only: the API server is shared with other test files.
      const docs = await dryRun("keys", cluster.namespace, ...set(`watchNamespaces={${cluster.namespace}}`));
      const policy = kinds(docs, "ValidatingAdmissionPolicy").find((d) => d.metadata?.name?.endsWith("-spec-keys") === true);
      const binding = kinds(docs, "ValidatingAdmissionPolicyBinding").find((d) => d.metadata?.name?.endsWith("-spec-keys") === true);
      expect(policy?.metadata?.name).toBe(`keys-linode-operator-${cluster.namespace}-spec-keys`);
      const off = await dryRun("keys", cluster.namespace, ...set("specKeysPolicy.enabled=false"));
      expect(off.filter((d) => d.metadata?.name?.endsWith("-spec-keys") === true)).toEqual([]);
      for (const d of [policy, binding]) {
        const created = await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(d) });
        expect(created.code, created.stderr).toBe(0);
      }
      const db = (name: string, engineConfig: unknown): string => JSON.stringify({
        apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name, namespace: cluster.namespace },
        spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", engineConfig },
      });
      const tryCreate = (name: string, engineConfig: string) => cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: db(name, JSON.parse(engineConfig)) });
      try {
        // A policy takes a moment to be enforced: probed until it refuses.
        const deadline = Date.now() + 30_000;
        for (;;) {
          const probe = await tryCreate("probe", '{"constructor": {"prototype": {"x": "1"}}}');
          if (probe.code !== 0) {
            expect(probe.stderr).toContain("keys __proto__, constructor and prototype are not allowed");
            break;
          }
          if (Date.now() > deadline) throw new Error("the spec keys policy was never enforced");
          await new Promise((r) => setTimeout(r, 200));
        }
        for (const hostile of ['{"__proto__": {"x": 1}}', '{"mysql": {"constructor": 1}}', '{"mysql": {"a": {"prototype": 1}}}', '{"prototype": 1}']) {
          const r = await tryCreate("hostile", hostile);
          expect(r.code, hostile).not.toBe(0);
          expect(r.stderr).toContain("keys __proto__, constructor and prototype are not allowed");
        }
        const fine = await tryCreate("fine", '{"mysql": {"connect_timeout": 10}, "binlog_retention_period": 600}');
        expect(fine.code, fine.stderr).toBe(0);
      } finally {
        for (const d of [binding, policy]) await cluster.kubectl(["delete", "--ignore-not-found", "-f", "-"], { input: JSON.stringify(d) });
      }
    });
  });

  describe("bind address", () => {
    let emulator: RunningEmulator | undefined;
    let operator: OperatorProcess | undefined;
    beforeAll(async () => { await installCrds(cluster); });
    afterAll(async () => {
      operator?.child.kill("SIGKILL");
      await emulator?.close();
    });

    it("the pod's IP (downward API) and loopback by default, overridable; the operator then answers there and nowhere else", async () => {
      const env = envOf(await dryRun("x", cluster.namespace));
      expect(env.find((e) => e.name === "POD_IP")).toEqual({ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } });
      // POD_IP comes first: the kubelet expands $(POD_IP) only from a variable defined before it.
      expect(env.findIndex((e) => e.name === "POD_IP")).toBeLessThan(env.findIndex((e) => e.name === "BIND_ADDRESS"));
      expect(env.find((e) => e.name === "BIND_ADDRESS")?.value).toBe("$(POD_IP),127.0.0.1");
      const all = envOf(await dryRun("x", cluster.namespace, ...set("bindAddress=0.0.0.0")));
      expect(all.find((e) => e.name === "BIND_ADDRESS")?.value).toBe("0.0.0.0");
      expect(all.some((e) => e.name === "POD_IP")).toBe(false);
      const bad = await template("--set", "bindAddress=pod-ip");
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/bindAddress/);

      // The environment as the kubelet gives it to a pod whose IP is 127.0.0.2 (a loopback
      // address other than 127.0.0.1, so "every address" would also answer on 127.0.0.3).
      const podIp = "127.0.0.2";
      const resolved: Record<string, string> = {};
      for (const e of env) {
        const field = e.valueFrom?.fieldRef?.fieldPath;
        const value = field === "status.podIP" ? podIp : field === "metadata.namespace" ? cluster.namespace : field === "metadata.name" ? "bind-0" : e.value;
        if (value !== undefined) resolved[e.name] = value.replace(/\$\((\w+)\)/g, (m, name: string) => resolved[name] ?? m);
      }
      expect(resolved.BIND_ADDRESS).toBe("127.0.0.2,127.0.0.1");
      emulator = await startEmulator({ port: 0, tokens: ["bind-token"], provisionSeconds: 1 });
      operator = startOperator([], {
        ...resolved, KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "bind-token", LINODE_API_URL: emulator.url,
        WATCH_NAMESPACES: cluster.namespace, LEADER_ELECT: "false", CLUSTER_ID: "bind-test",
        // Any free port: what is under test is the addresses.
        METRICS_PORT: "0", HEALTH_PORT: "0",
      });
      const started = await operator.waitForLog((l) => l.msg === "operator started", 60_000);
      /** The status and whether the body has `marker`, or the connection's error code. */
      const at = async (host: string, port: unknown, path: string, marker: string): Promise<string> =>
        fetch(`http://${host}:${String(port)}${path}`).then(async (r) => `${String(r.status)} ${(await r.text()).includes(marker) ? "with" : "without"} ${marker}`,
          (e: unknown) => String((e as { cause?: { code?: string } }).cause?.code));
      for (const host of [podIp, "127.0.0.1"]) {
        expect(await at(host, started.metricsPort, "/metrics", "linode_operator_build_info")).toBe("200 with linode_operator_build_info");
        expect(await at(host, started.healthPort, "/healthz", "ok")).toBe("200 with ok");
      }
      expect(await at("127.0.0.3", started.metricsPort, "/metrics", "linode_operator_build_info")).toBe("ECONNREFUSED");
      expect(await at("127.0.0.3", started.healthPort, "/healthz", "ok")).toBe("ECONNREFUSED");
      operator.child.kill("SIGTERM");
      expect(await operator.exited).toBe(0);
      operator = undefined;

      // Without the downward API the variable stays unexpanded: the operator says so and stops.
      const unexpanded = startOperator([], {
        KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "bind-token", LINODE_API_URL: emulator.url, WATCH_NAMESPACES: cluster.namespace,
        LEADER_ELECT: "false", METRICS_PORT: "0", HEALTH_PORT: "0", BIND_ADDRESS: "$(POD_IP),127.0.0.1",
      });
      expect(await unexpanded.exited).not.toBe(0);
      expect(unexpanded.stderr.join("") + JSON.stringify(unexpanded.logs)).toMatch(/bindAddress \(--bind-address, BIND_ADDRESS\): IP addresses separated by commas/);
    });
  });

  describe("NetworkPolicy", () => {
    const policyOf = (docs: Doc[]): { spec: { policyTypes: string[]; ingress: unknown[]; egress?: { to: unknown[]; ports: unknown[] }[] } } | undefined =>
      kinds(docs, "NetworkPolicy")[0] as { spec: { policyTypes: string[]; ingress: unknown[]; egress?: { to: unknown[]; ports: unknown[] }[] } } | undefined;

    it("is off by default; on, it opens the health port and the metrics port only to the peers named, and the API server accepts it", async () => {
      expect(kinds(await dryRun("x", cluster.namespace), "NetworkPolicy")).toEqual([]);
      const closed = policyOf(await dryRun("x", cluster.namespace, ...set("networkPolicy.enabled=true")));
      expect(closed?.spec.policyTypes).toEqual(["Ingress"]);
      // No peers named: the metrics port is not opened to anyone.
      expect(closed?.spec.ingress).toEqual([{ ports: [{ port: 8081, protocol: "TCP" }] }]);
      const prometheus = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } };
      const docs = await dryRun("x", cluster.namespace, ...set("networkPolicy.enabled=true", "metrics.port=9090"), "--set-json", `networkPolicy.metricsFrom=${JSON.stringify([prometheus])}`);
      const open = kinds(docs, "NetworkPolicy")[0] as Doc & { spec: { podSelector: unknown; ingress: unknown[] } };
      expect(open.spec.ingress).toEqual([{ ports: [{ port: 8081, protocol: "TCP" }] }, { from: [prometheus], ports: [{ port: 9090, protocol: "TCP" }] }]);
      // It selects the operator's pods, by the labels the Deployment gives them.
      const podLabels = (deploymentOf(docs).spec.template as unknown as { metadata: { labels: Record<string, string> } }).metadata.labels;
      expect(open.spec.podSelector).toEqual({ matchLabels: { "app.kubernetes.io/name": "linode-operator", "app.kubernetes.io/instance": "x" } });
      expect(podLabels).toMatchObject({ "app.kubernetes.io/name": "linode-operator", "app.kubernetes.io/instance": "x" });
      const created = await cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(open) });
      expect(created.code, created.stderr).toBe(0);
    });

    it("egress, when restricted: the API server named, the Linode API on public addresses, DNS; refused to render without the API server", async () => {
      const missing = await template("--set", "networkPolicy.enabled=true", "--set", "networkPolicy.egress.enabled=true");
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("networkPolicy.egress.kubernetesApi: name the Kubernetes API server's addresses");
      const docs = await dryRun("x", cluster.namespace, ...set("networkPolicy.enabled=true", "networkPolicy.egress.enabled=true", "networkPolicy.egress.kubernetesApi[0].ipBlock.cidr=192.168.1.10/32"));
      const policy = policyOf(docs);
      expect(policy?.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      expect(policy?.spec.egress).toEqual([
        { to: [{ ipBlock: { cidr: "192.168.1.10/32" } }], ports: [{ port: 443, protocol: "TCP" }, { port: 6443, protocol: "TCP" }] },
        {
          to: [
            { ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"] } },
            { ipBlock: { cidr: "::/0", except: ["fc00::/7", "fe80::/10"] } },
          ],
          ports: [{ port: 443, protocol: "TCP" }],
        },
        { to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] },
      ]);
      const created = await cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(kinds(docs, "NetworkPolicy")[0]) });
      expect(created.code, created.stderr).toBe(0);
    });
  });

  describe("Pod Security", () => {
    const restricted = `${cluster.namespace}-restricted`;
    beforeAll(async () => {
      await cluster.core.createNamespace({ body: { metadata: { name: restricted, labels: {
        "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest", "pod-security.kubernetes.io/warn": "restricted",
      } } } });
    });
    afterAll(async () => { await cluster.core.deleteNamespace({ name: restricted }).catch(() => undefined); });

    /** The pod the Deployment would make, created (dry run) where `restricted` is enforced. */
    const admit = async (...values: string[]): Promise<{ code: number | null; stderr: string }> => {
      const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "operator", namespace: restricted }, spec: deploymentOf(await dryRun("x", cluster.namespace, ...set(...values))).spec.template.spec };
      return cluster.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(pod) });
    };

    it("the chart's pod is admitted where `restricted` is enforced, without a warning; hostNetwork is not", async () => {
      const pod = await admit();
      expect(pod.code, pod.stderr).toBe(0);
      expect(pod.stderr).not.toMatch(/Warning|PodSecurity/);
      const host = await admit("hostNetwork=true");
      expect(host.code).not.toBe(0);
      expect(host.stderr).toMatch(/violates PodSecurity "restricted:latest": host namespaces \(hostNetwork=true\)/);
    });
  });
});
