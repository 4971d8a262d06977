// `install` and `uninstall` as plans: which way the image takes for which kubeconfig context,
// how the flags become helm and kubectl arguments, what --dry-run prints, and when deleting the
// CRDs is refused. The commands themselves run for real in test/integration/install-cli.test.ts
// and test/real-cluster/install.test.ts.
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { chooseLoader, detectLoader, type ClusterContext } from "../../src/cli/install/cluster-context.ts";
import { planInstall, showPlan, nextSteps, type InstallFacts, type InstallPlan } from "../../src/cli/install/install-plan.ts";
import { durationMillis, parseInstallArgs, parseUninstallArgs, type InstallOptions, type UninstallOptions } from "../../src/cli/install/options.ts";
import { showCall } from "../../src/cli/install/tools.ts";
import { planUninstall, FINALIZER, type CustomResource, type UninstallFacts } from "../../src/cli/install/uninstall-plan.ts";
import { managedDatabaseSpecSchema } from "../../src/resources/managed-database/schema.ts";

const ctx = (context: string, providers: string[] = []): ClusterContext => ({ context, cluster: context, server: "https://127.0.0.1:6443", providers });
const install = (argv: string[]): InstallOptions => {
  const o = parseInstallArgs(argv);
  if (o === "help") throw new Error("help");
  return o;
};
const uninstall = (argv: string[]): UninstallOptions => {
  const o = parseUninstallArgs(argv);
  if (o === "help") throw new Error("help");
  return o;
};
const built = { localRef: "localhost/linode-operator:0.2.0-0123456789ab", archive: "/tmp/w/image.tar" };
const plan = (argv: string[], context = ctx("kind-dev"), over: Partial<InstallFacts> = {}): InstallPlan => {
  const opts = install(argv);
  return planInstall({ opts, loader: chooseLoader(opts, context), built, token: { kind: "env" }, chart: "/repo/helm/linode-operator", apiUrl: undefined, valuesFile: "/tmp/w/values.json", ...over });
};
const helmArgs = (p: InstallPlan): string[] => {
  const s = p.steps.find((x) => x.kind === "helm");
  if (s?.kind !== "helm") throw new Error("no helm step");
  return s.call.args;
};

describe("install: which way the image takes, from the kubeconfig's context", () => {
  it("kind, k3d and minikube contexts are recognised by the names those tools give them", () => {
    expect(detectLoader(ctx("kind-dev"))).toEqual({ kind: "kind", cluster: "dev" });
    expect(detectLoader(ctx("k3d-team-a"))).toEqual({ kind: "k3d", cluster: "team-a" });
    expect(detectLoader(ctx("minikube"))).toEqual({ kind: "minikube", profile: "minikube" });
    // A minikube profile of another name: the cluster entry's extension says so.
    expect(detectLoader(ctx("staging", ["minikube.sigs.k8s.io"]))).toEqual({ kind: "minikube", profile: "staging" });
    expect(detectLoader(ctx("lke12345-ctx"))).toBeUndefined();
    expect(detectLoader(ctx("test"))).toBeUndefined();
  });

  it("each loader's command loads the built archive where that tool wants it, and the chart then never pulls it", () => {
    const step = (p: InstallPlan): string => { const s = p.steps[0]; return s?.kind === "tool" ? showCall(s.call) : "none"; };
    expect(step(plan([]))).toBe("kind load image-archive /tmp/w/image.tar --name dev");
    expect(step(plan([], ctx("k3d-x")))).toBe("k3d image import /tmp/w/image.tar --cluster x");
    expect(step(plan([], ctx("minikube")))).toBe("minikube image load /tmp/w/image.tar --profile minikube");
    expect(step(plan(["--load-with", "ctr", "--containerd-address", "/run/x/containerd.sock"], ctx("test"))))
      .toBe("ctr --address /run/x/containerd.sock --namespace k8s.io images import /tmp/w/image.tar");
    for (const p of [plan([]), plan(["--load-with", "ctr"], ctx("test"))]) {
      expect(p.image).toEqual({ repository: "localhost/linode-operator", tag: "0.2.0-0123456789ab", pullPolicy: "Never" });
    }
  });

  it("--registry pushes the built image there under the same tag, and the chart pulls it from there (a registry with a port too)", () => {
    const p = plan(["--registry", "registry.example:5000/team/linode-operator", "--registry-insecure"], ctx("lke1-ctx"));
    const s = p.steps[0];
    expect(s?.kind === "tool" ? s.call.args : []).toEqual(["push", "--tls-verify=false", built.localRef, "docker://registry.example:5000/team/linode-operator:0.2.0-0123456789ab"]);
    expect(p.image).toEqual({ repository: "registry.example:5000/team/linode-operator", tag: "0.2.0-0123456789ab", pullPolicy: "IfNotPresent" });
    // --registry wins over what the context looks like.
    expect(plan(["--registry", "ghcr.io/me/op"]).steps[0]?.say).toMatch(/push the image to ghcr.io\/me\/op/);
  });

  it("--image: nothing is built or loaded; the chart runs that image", () => {
    const p = plan(["--image", "ghcr.io/me/linode-operator:0.2.0"], ctx("lke1-ctx"), { built: undefined });
    expect(p.steps.map((s) => s.kind)).toEqual(["namespace", "token-secret", "helm"]);
    expect(p.image).toEqual({ repository: "ghcr.io/me/linode-operator", tag: "0.2.0", pullPolicy: "IfNotPresent" });
  });

  it("a context no loader is known for is refused with every way to say how", () => {
    expect(() => chooseLoader(install([]), ctx("lke1-ctx"))).toThrow(/--registry HOST\/REPO[\s\S]*--load-with ctr[\s\S]*--image REPO:TAG/);
  });
});

describe("install: flags → helm and kubectl arguments", () => {
  it("helm upgrade --install --wait --create-namespace, its own values first so the user's -f and --set win, in the order given", () => {
    const args = helmArgs(plan(["-n", "ops", "--release", "op", "--timeout", "90s", "-f", "a.yaml", "--values", "b.yaml", "--set", "rbac.readNodes=true", "--set", "image.pullPolicy=IfNotPresent"]));
    expect(args).toEqual([
      "upgrade", "--install", "op", "/repo/helm/linode-operator", "--namespace", "ops", "--create-namespace", "--wait", "--timeout", "90s",
      "-f", "/tmp/w/values.json", "-f", "a.yaml", "-f", "b.yaml", "--set", "rbac.readNodes=true", "--set", "image.pullPolicy=IfNotPresent",
    ]);
  });

  it("--kubeconfig and --context reach helm as --kube-context and kubectl as --context", () => {
    const p = plan(["--kubeconfig", "/k/config", "--context", "kind-dev"]);
    expect(helmArgs(p).slice(4, 8)).toEqual(["--kubeconfig", "/k/config", "--kube-context", "kind-dev"]);
    for (const s of p.steps) {
      if (s.kind === "namespace") expect(s.get.args.slice(0, 4)).toEqual(["--kubeconfig", "/k/config", "--context", "kind-dev"]);
      if (s.kind === "token-secret") expect(s.apply.args.slice(0, 4)).toEqual(["--kubeconfig", "/k/config", "--context", "kind-dev"]);
    }
  });

  it("the values install sets: the image, the token Secret it made (by name), and LINODE_API_URL when set", () => {
    const p = plan(["--release", "op"], ctx("kind-dev"), { apiUrl: "http://198.18.0.1:4000/v4" });
    const s = p.steps.find((x) => x.kind === "helm");
    expect(s?.kind === "helm" ? s.values : undefined).toEqual({
      image: { repository: "localhost/linode-operator", tag: "0.2.0-0123456789ab", pullPolicy: "Never" },
      linode: { existingSecret: "op-linode-token", existingSecretKey: "token", apiUrl: "http://198.18.0.1:4000/v4" },
    });
    expect(JSON.stringify(plan([]).steps)).not.toContain("apiUrl");
  });

  it("the namespace is made with Pod Security restricted, unless --set hostNetwork=true (which restricted refuses)", () => {
    const ns = (p: InstallPlan): unknown => { const s = p.steps.find((x) => x.kind === "namespace"); return s?.kind === "namespace" ? JSON.parse(s.create.stdin ?? "{}") : undefined; };
    expect(ns(plan(["-n", "ops"]))).toEqual({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ops", labels: { "pod-security.kubernetes.io/enforce": "restricted" } } });
    expect(ns(plan(["-n", "ops", "--set", "hostNetwork=true"]))).toEqual({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ops", labels: {} } });
  });

  it("bad flags are refused before anything runs, each naming its flag", () => {
    expect(() => install(["--namespace", "Ops"])).toThrow(/^--namespace: /);
    expect(() => install(["--set", "novalue"])).toThrow(/--set: KEY=VALUE/);
    expect(() => install(["--timeout", "5 minutes"])).toThrow(/--timeout: a duration/);
    expect(() => install(["--registry", "https://ghcr.io/me/op"])).toThrow(/--registry: host\[:port\]\/path/);
    expect(() => install(["--registry", "ghcr.io/me/op", "--load-with", "kind"])).toThrow(/give one/);
    expect(() => install(["--image", "ghcr.io/me/op:1", "--load-with", "ctr"])).toThrow(/takes no --load-with/);
    expect(() => install(["--image", "ghcr.io/me/op"])).toThrow(/--image: repository:tag/);
    expect(() => install(["--load-with", "docker"])).toThrow(/--load-with: /);
    expect(() => install(["--release", "x".repeat(54)])).toThrow(/--release: /);
    expect(() => install(["--unknown"])).toThrow(/Unknown option '--unknown'/);
    expect(() => uninstall(["--set", "a=b"])).toThrow(/Unknown option '--set'/);
    expect(durationMillis("1h2m3s")).toBe(3_723_000);
  });
});

describe("install --dry-run output", () => {
  it("numbers each step with the exact commands, shows the values, and never the token's stdin", () => {
    const out = showPlan(plan(["--load-with", "ctr", "--kubeconfig", "/k", "-n", "ops"], ctx("test")), showCall);
    expect(out.split("\n")).toEqual([
      "1. import the image into the containerd at /run/containerd/containerd.sock (namespace k8s.io, where the kubelet looks)",
      "   ctr --address /run/containerd/containerd.sock --namespace k8s.io images import /tmp/w/image.tar",
      "2. namespace ops: made if missing (Pod Security \"restricted\" enforced), left as it is if there",
      "   kubectl --kubeconfig /k get namespace ops --ignore-not-found -o name",
      "   kubectl --kubeconfig /k create -f -  <<< {\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ops\",\"labels\":{\"pod-security.kubernetes.io/enforce\":\"restricted\"}}}",
      "3. Secret linode-operator-linode-token (key token) from LINODE_TOKEN, applied with the token on stdin (never printed)",
      "   kubectl --kubeconfig /k apply --server-side --force-conflicts --field-manager=linode-operator-install -f -  <<< (a Secret manifest with the token)",
      "4. install the chart as release linode-operator, and wait until the operator's pod is Ready (up to 5m)",
      "   helm upgrade --install linode-operator /repo/helm/linode-operator --kubeconfig /k --namespace ops --create-namespace --wait --timeout 5m -f /tmp/w/values.json",
      "   with /tmp/w/values.json: {\"image\":{\"repository\":\"localhost/linode-operator\",\"tag\":\"0.2.0-0123456789ab\",\"pullPolicy\":\"Never\"},\"linode\":{\"existingSecret\":\"linode-operator-linode-token\",\"existingSecretKey\":\"token\"}}",
    ]);
  });

  it("a value with spaces or quotes is shown quoted as a shell would need it", () => {
    expect(showCall({ tool: "helm", args: ["--set", "extraEnv[0].value=a b", "--set", "x=it's"] })).toBe("helm --set 'extraEnv[0].value=a b' --set 'x=it'\\''s'");
  });

  it("what to apply next is a ManagedDatabase its schema accepts, with the kubectl flags the install used", () => {
    const printed = (set: string[]): { kind: string; spec: { allowList?: string[]; allowListFrom?: unknown[] } } | undefined => {
      const manifest = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(nextSteps({ namespace: "ops", release: "op", set }))?.[1] ?? "";
      return parseAllDocuments(manifest).map((d) => d.toJS() as { kind: string; spec: { allowList?: string[]; allowListFrom?: unknown[] } })[0];
    };
    for (const set of [[], ["rbac.readNodes=true"]]) {
      const doc = printed(set);
      expect(doc?.kind).toBe("ManagedDatabase");
      expect(managedDatabaseSpecSchema.safeParse(doc?.spec).success).toBe(true);
    }
    // With the nodes readable, the allow list follows them; without, a placeholder to edit.
    expect(printed(["rbac.readNodes=true"])?.spec).toMatchObject({ allowListFrom: [{ nodes: { addressType: "ExternalIP" } }] });
    expect(printed([])?.spec.allowList).toEqual(["192.0.2.10/32"]);
    const text = nextSteps({ kubeconfig: "/k", context: "kind-dev", namespace: "ops", release: "op", set: [] });
    expect(text).toContain("kubectl --kubeconfig /k --context kind-dev get linodedb -n default -w");
    expect(text).toContain("kubectl --kubeconfig /k --context kind-dev logs -n ops deploy/op-linode-operator");
    expect(text).toContain("linode-operator uninstall --release op --namespace ops --kubeconfig /k --context kind-dev");
    expect(nextSteps({ kubeconfig: "/my dir/config", namespace: "ops", release: "op", set: [] })).toContain("kubectl --kubeconfig '/my dir/config' apply -f - <<'EOF'");
  });
});

describe("uninstall: what goes, what stays, and when deleting the CRDs is refused", () => {
  const crds = ["manageddatabases.linode.operator.dev", "databasesnapshots.linode.operator.dev", "nodebalancers.linode.operator.dev"];
  const res = (name: string, deletionPolicy = "Delete", managementPolicy = "Manage"): CustomResource =>
    ({ kind: "ManagedDatabase", namespace: "shop", name, deletionPolicy, managementPolicy, finalizers: [FINALIZER] });
  const facts = (argv: string[], over: Partial<UninstallFacts> = {}): UninstallFacts => ({ opts: uninstall(argv), installed: true, crdsGoWithRelease: false, crds, resources: [], ...over });
  const commands = (f: UninstallFacts): string[] => planUninstall(f).steps.map((s) => showCall(s.call));

  it("by default: helm uninstall, then the token Secret install labelled; the CRDs and resources stay", () => {
    const p = planUninstall(facts(["--release", "op", "-n", "ops"]));
    expect(p.refusal).toBeUndefined();
    expect(p.steps.map((s) => showCall(s.call))).toEqual([
      "helm uninstall op --namespace ops --wait --timeout 5m",
      "kubectl delete secret -n ops -l app.kubernetes.io/name=linode-operator,app.kubernetes.io/instance=op,app.kubernetes.io/managed-by=linode-operator-install --ignore-not-found",
    ]);
    expect(p.kept.join("\n")).toMatch(/the CRDs and every resource of their kinds, with their Linode objects/);
    expect(p.kept.join("\n")).toMatch(/op-linode-operator-ownership-key/);
  });

  it("--delete-crds with resources left is refused, naming each and what its deletion would do to its Linode object", () => {
    const p = planUninstall(facts(["--delete-crds"], { resources: [res("orders"), res("kept", "Retain"), res("watched", "Delete", "Observe")] }));
    expect(p.refusal).toMatch(/^refusing to delete the CRDs \(--delete-crds\): 3 resource\(s\)/);
    expect(p.refusal).toMatch(/ManagedDatabase shop\/orders\s+deletionPolicy Delete {2}→ its Linode object is deleted/);
    expect(p.refusal).toMatch(/ManagedDatabase shop\/kept\s+deletionPolicy Retain {2}→ its Linode object is left/);
    expect(p.refusal).toMatch(/ManagedDatabase shop\/watched\s+deletionPolicy Delete, managementPolicy Observe {2}→ its Linode object is left/);
    expect(p.refusal).toMatch(/So this would delete 1 Linode object\(s\)\./);
  });

  it("--delete-crds --force deletes the CRDs first, while the operator still runs its finalizers, then the release", () => {
    expect(commands(facts(["--delete-crds", "--force"], { resources: [res("orders")] }))[0])
      .toBe("kubectl delete crd manageddatabases.linode.operator.dev databasesnapshots.linode.operator.dev nodebalancers.linode.operator.dev --ignore-not-found --wait --timeout=5m");
    expect(commands(facts(["--delete-crds"]))[1]).toMatch(/^helm uninstall/);
  });

  it("a release whose values say crds.keep: false would delete the CRDs itself: the same refusal, and the same order", () => {
    expect(planUninstall(facts([], { crdsGoWithRelease: true, resources: [res("orders")] })).refusal).toMatch(/crds\.keep: false/);
    expect(commands(facts(["--force"], { crdsGoWithRelease: true }))[0]).toMatch(/^kubectl delete crd /);
  });

  it("with no operator installed, resources holding its finalizer would keep their CRDs forever: refused even with --force", () => {
    const p = planUninstall(facts(["--delete-crds", "--force"], { installed: false, resources: [res("orders")] }));
    expect(p.refusal).toMatch(/ManagedDatabase shop\/orders\s+deletionPolicy Delete[\s\S]*no operator runs to let these resources go/);
    // Nothing to uninstall: only the token Secret is looked for.
    expect(commands(facts([], { installed: false }))).toEqual([expect.stringMatching(/^kubectl delete secret /)]);
  });
});
