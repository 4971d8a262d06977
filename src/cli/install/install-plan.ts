// What `install` does, as data: the image's way to the cluster, the namespace, the token Secret
// and the chart, each with the commands it runs. Pure, so `--dry-run` prints exactly what a run
// would do and the tests check the commands without a cluster.
import { helmTarget, kubectlTarget, type Loader } from "./cluster-context.ts";
import { imageValues, splitImageRef, type OperatorImage } from "./image-values.ts";
import type { InstallOptions } from "./options.ts";
import { showCall, type ToolCall } from "./tools.ts";

/** The field manager and label of what `install` makes itself (not the chart): `uninstall` removes only these. */
export const INSTALLER = "linode-operator-install";
export const TOKEN_KEY = "token";

/** The token Secret `install` makes for a release. */
export const tokenSecretName = (release: string): string => `${release}-linode-token`;
export const tokenSecretLabels = (release: string): Record<string, string> => ({
  "app.kubernetes.io/name": "linode-operator",
  "app.kubernetes.io/instance": release,
  "app.kubernetes.io/managed-by": INSTALLER,
});

/** The chart's name for a release's objects (its fullname, without nameOverride/fullnameOverride). */
export const chartFullname = (release: string): string => (release.includes("linode-operator") ? release : `${release}-linode-operator`);

export type TokenSource = { kind: "env" } | { kind: "file"; path: string } | { kind: "existing" };

/** The image as built here: in the local store under `localRef`, exported to `archive` for a loader. */
export interface BuiltImage { localRef: string; archive: string }

export type InstallStep =
  | { kind: "tool"; say: string; call: ToolCall; buildahStore?: true }
  /** Made only when missing, with the Pod Security labels the operator's pod meets; an existing one is left as it is. */
  | { kind: "namespace"; say: string; get: ToolCall; create: ToolCall }
  /** Applied with the token on stdin (never on the command line, never printed). */
  | { kind: "token-secret"; say: string; name: string; apply: ToolCall; source: TokenSource }
  /** `values` are written to `valuesFile` (the first -f) just before helm runs. */
  | { kind: "helm"; say: string; call: ToolCall; values: Record<string, unknown>; valuesFile: string };

export interface InstallPlan { image: OperatorImage; steps: InstallStep[] }

export interface InstallFacts {
  opts: InstallOptions;
  loader: Loader;
  /** The image built here (not with --image). */
  built: BuiltImage | undefined;
  token: TokenSource;
  chart: string;
  /** LINODE_API_URL, when set: the API the operator talks to. */
  apiUrl: string | undefined;
  /** Where the values `install` sets are written for helm -f. */
  valuesFile: string;
}

/** The image the chart names, and how it gets onto the cluster. */
function imageSteps(loader: Loader, built: BuiltImage | undefined, opts: InstallOptions): { image: OperatorImage; steps: InstallStep[] } {
  if (loader.kind === "none") {
    return { image: { ...splitImageRef(opts.image ?? ""), pullPolicy: "IfNotPresent" }, steps: [] };
  }
  if (built === undefined) throw new Error("no image was built");
  const { repository, tag } = splitImageRef(built.localRef);
  const loaded: OperatorImage = { repository, tag, pullPolicy: "Never" };
  const load = (say: string, call: ToolCall): { image: OperatorImage; steps: InstallStep[] } => ({ image: loaded, steps: [{ kind: "tool", say, call }] });
  switch (loader.kind) {
    case "kind":
      return load(`load the image into kind cluster ${loader.cluster}'s nodes`, { tool: "kind", args: ["load", "image-archive", built.archive, "--name", loader.cluster] });
    case "k3d":
      return load(`import the image into k3d cluster ${loader.cluster}'s nodes`, { tool: "k3d", args: ["image", "import", built.archive, "--cluster", loader.cluster] });
    case "minikube":
      return load(`load the image into minikube profile ${loader.profile}`, { tool: "minikube", args: ["image", "load", built.archive, "--profile", loader.profile] });
    case "ctr":
      return load(`import the image into the containerd at ${loader.address} (namespace k8s.io, where the kubelet looks)`, { tool: "ctr", args: ["--address", loader.address, "--namespace", "k8s.io", "images", "import", built.archive] });
    case "registry": {
      const pushed: OperatorImage = { repository: loader.repository, tag, pullPolicy: "IfNotPresent" };
      const call: ToolCall = { tool: "buildah", args: ["push", ...(loader.insecure ? ["--tls-verify=false"] : []), built.localRef, `docker://${loader.repository}:${tag}`] };
      return { image: pushed, steps: [{ kind: "tool", say: `push the image to ${loader.repository}`, call, buildahStore: true }] };
    }
  }
}

/** Whether the user's --set asks for the host network (which Pod Security "restricted" refuses). */
const wantsHostNetwork = (set: readonly string[]): boolean => set.some((s) => /^hostNetwork=true$/i.test(s));

export function planInstall(f: InstallFacts): InstallPlan {
  const { opts } = f;
  const { image, steps } = imageSteps(f.loader, f.built, opts);
  const ns = opts.namespace;
  const kubectl = (args: string[], stdin?: string): ToolCall => ({ tool: "kubectl", args: [...kubectlTarget(opts), ...args], ...(stdin !== undefined ? { stdin } : {}) });

  const podSecurity = wantsHostNetwork(opts.set) ? {} : { "pod-security.kubernetes.io/enforce": "restricted" };
  const namespaceManifest = JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: podSecurity } });
  steps.push({
    kind: "namespace",
    say: `namespace ${ns}: made if missing${Object.keys(podSecurity).length > 0 ? " (Pod Security \"restricted\" enforced)" : ""}, left as it is if there`,
    get: kubectl(["get", "namespace", ns, "--ignore-not-found", "-o", "name"]),
    create: kubectl(["create", "-f", "-"], namespaceManifest),
  });

  const secret = tokenSecretName(opts.release);
  const from = f.token.kind === "env" ? "LINODE_TOKEN" : f.token.kind === "file" ? f.token.path : "";
  steps.push({
    kind: "token-secret",
    say: f.token.kind === "existing"
      ? `Secret ${secret}: no token given (LINODE_TOKEN, --token-file), so the one already there is used (the install stops if there is none)`
      : `Secret ${secret} (key ${TOKEN_KEY}) from ${from}, applied with the token on stdin (never printed)`,
    name: secret,
    source: f.token,
    apply: kubectl(["apply", "--server-side", "--force-conflicts", `--field-manager=${INSTALLER}`, "-f", "-"]),
  });

  const values: Record<string, unknown> = {
    ...imageValues(image),
    linode: { existingSecret: secret, existingSecretKey: TOKEN_KEY, ...(f.apiUrl !== undefined ? { apiUrl: f.apiUrl } : {}) },
  };
  // Ours first: the user's -f files and --set come after, and so win.
  const helmArgs = [
    "upgrade", "--install", opts.release, f.chart, ...helmTarget(opts),
    "--namespace", ns, "--create-namespace", "--wait", "--timeout", opts.timeout,
    "-f", f.valuesFile, ...opts.values.flatMap((v) => ["-f", v]), ...opts.set.flatMap((s) => ["--set", s]),
  ];
  steps.push({ kind: "helm", say: `install the chart as release ${opts.release}, and wait until the operator's pod is Ready (up to ${opts.timeout})`, call: { tool: "helm", args: helmArgs }, values, valuesFile: f.valuesFile });
  return { image, steps };
}

/** The plan as `--dry-run` prints it: each step, then its commands; stdin that carries a token is never shown. */
export function showPlan(plan: InstallPlan, show: (c: ToolCall) => string): string {
  const lines: string[] = [];
  plan.steps.forEach((s, i) => {
    lines.push(`${String(i + 1)}. ${s.say}`);
    switch (s.kind) {
      case "tool": lines.push(`   ${show(s.call)}`); break;
      case "namespace": lines.push(`   ${show(s.get)}`, `   ${show(s.create)}  <<< ${s.create.stdin ?? ""}`); break;
      case "token-secret": if (s.source.kind !== "existing") lines.push(`   ${show(s.apply)}  <<< (a Secret manifest with the token)`); break;
      case "helm": lines.push(`   ${show(s.call)}`, `   with ${s.valuesFile}: ${JSON.stringify(s.values)}`); break;
    }
  });
  return lines.join("\n");
}

/** What to type next, printed after a successful install. */
export function nextSteps(opts: Pick<InstallOptions, "kubeconfig" | "context" | "namespace" | "release" | "set">): string {
  // Quoted as a shell needs (a kubeconfig path with a space).
  const k = showCall({ tool: "kubectl", args: kubectlTarget(opts) });
  const target = k.slice("kubectl".length).trim();
  // With the nodes readable, the example's allow list follows them: reachable from the cluster as it is.
  const readNodes = opts.set.includes("rbac.readNodes=true");
  return [
    "",
    readNodes
      ? "Next, a database that the cluster's nodes may connect to (their ExternalIPs; InternalIP through a VPC):"
      : "Next, a database (edit the allow list: the addresses your applications connect from):",
    "",
    `${k} apply -f - <<'EOF'`,
    "apiVersion: linode.operator.dev/v1alpha1",
    "kind: ManagedDatabase",
    "metadata: { name: orders, namespace: default }",
    "spec:",
    "  engine: mysql        # or postgresql",
    "  version: \"8\"",
    "  region: us-east",
    "  type: g6-nanode-1",
    ...(readNodes ? ["  allowListFrom: [{ nodes: { addressType: ExternalIP } }]"] : ["  allowList: [\"192.0.2.10/32\"]"]),
    "EOF",
    `${k} get linodedb -n default -w        # Ready in a few minutes; its Secret is orders-connection`,
    ...(readNodes ? [] : ["", "An allow list that follows the cluster's nodes instead: install with --set rbac.readNodes=true and", "give the database allowListFrom: [{ nodes: {} }] (examples/cluster-nodes/)."]),
    `The operator's logs: ${k} logs -n ${opts.namespace} deploy/${chartFullname(opts.release)}`,
    `Remove it: ${["linode-operator uninstall", `--release ${opts.release}`, `--namespace ${opts.namespace}`, target].filter((p) => p !== "").join(" ")}`,
  ].join("\n");
}
