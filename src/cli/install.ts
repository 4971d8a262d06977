// `linode-operator install`: from a clone to a running operator on the cluster a kubeconfig
// names, in one command. Builds the image, gets it onto the cluster (kind, k3d, minikube, a
// node's containerd, or a registry), makes the token Secret, installs the chart and waits for
// the pod. Every step is planned first (install/install-plan.ts); --dry-run prints the plan.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { chooseLoader, kubectlTarget, readClusterContext, type Loader } from "./install/cluster-context.ts";
import { buildOperatorImage, LOCAL_REPOSITORY } from "./install/build-image.ts";
import { planInstall, showPlan, nextSteps, tokenSecretLabels, tokenSecretName, TOKEN_KEY, type BuiltImage, type InstallStep } from "./install/install-plan.ts";
import { durationMillis, parseInstallArgs, readOptions } from "./install/options.ts";
import { readToken, type Token } from "./install/token.ts";
import { mustRunTool, runTool, showCall } from "./install/tools.ts";
import { buildahEnv } from "../local-cluster/images.ts";

const HELP = `Usage: linode-operator install [options]

Installs the operator onto the cluster your kubeconfig names (its current context, or --context):
builds the image from this repository's Dockerfile (buildah; cached, seconds when nothing
changed), gets it onto the cluster, creates the token Secret, installs the Helm chart
(helm upgrade --install --wait) and prints what to apply next. Run it again to upgrade.

The image reaches the cluster by the context's kind: kind-* (kind load), k3d-* (k3d image
import), minikube (minikube image load); for any other cluster say how:
  --registry HOST/REPO    push it there (buildah push; log in first with buildah login) and
                          let the nodes pull it, e.g. ghcr.io/me/linode-operator
  --registry-insecure     push over plain HTTP / without verifying TLS
  --load-with L           kind, k3d, minikube, or ctr: import it into the containerd on this
                          machine (a one-node cluster), at --containerd-address
                          (default /run/containerd/containerd.sock)
  --image REPO:TAG        an image the cluster can already pull: nothing is built

The token: --token-file FILE, else LINODE_TOKEN (never printed; it goes to kubectl on stdin).
Without either, the Secret an earlier install made is kept. LINODE_API_URL, when set, is the API
the operator talks to (e.g. an emulator; a plain-http one also needs --set linode.allowHttp=true).

  -n, --namespace NS      the operator's namespace (default linode-operator; made if missing)
  --release NAME          the Helm release (default linode-operator)
  --kubeconfig FILE       the kubeconfig (default: KUBECONFIG, ~/.kube/config)
  --context NAME          its context (default: the current one)
  -f, --values FILE       a values file for the chart (repeatable)
  --set KEY=VALUE         a chart value (repeatable), e.g. --set rbac.readNodes=true
  --chart DIR|REF         the chart (default: this repository's helm/linode-operator)
  --timeout D             how long to wait for the pod (default 5m)
  --dry-run               print what would run, change nothing
  -h, --help              show this help

kubectl and helm are the ones on PATH, else those src/local-cluster/build.sh built.
`;

const repo = fileURLToPath(new URL("../../", import.meta.url));
const apiUrlSchema = z.url({ protocol: /^https?$/ }).optional();

function describeLoader(l: Loader): string {
  switch (l.kind) {
    case "kind": return `built here, loaded into kind cluster ${l.cluster}`;
    case "k3d": return `built here, imported into k3d cluster ${l.cluster}`;
    case "minikube": return `built here, loaded into minikube profile ${l.profile}`;
    case "ctr": return `built here, imported into the containerd at ${l.address}`;
    case "registry": return `built here, pushed to ${l.repository}`;
    case "none": return "as named by --image (nothing built)";
  }
}

export async function main(argv: string[]): Promise<number> {
  const opts = readOptions("install", argv, parseInstallArgs, HELP);
  if (typeof opts === "number") return opts;
  const say = (s: string): void => { process.stdout.write(`${s}\n`); };
  const chart = opts.chart ?? join(repo, "helm", "linode-operator");
  if (opts.chart === undefined && !existsSync(join(chart, "Chart.yaml"))) throw new Error(`no chart at ${chart}: run install from a clone of the repository, or pass --chart`);
  const apiUrl = apiUrlSchema.parse(process.env.LINODE_API_URL || undefined);

  const ctx = await readClusterContext(opts);
  const loader = chooseLoader(opts, ctx);
  const token = await readToken(opts.tokenFile);
  const { version } = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as { version: string };
  say(`Installing linode-operator ${version} as release ${opts.release} in namespace ${opts.namespace}`);
  say(`cluster: context ${ctx.context} (${ctx.server}); image: ${describeLoader(loader)}`);
  const facts = { opts, loader, token: token.source, chart, apiUrl };

  if (opts.dryRun) {
    const built: BuiltImage | undefined = loader.kind === "none" ? undefined : { localRef: `${LOCAL_REPOSITORY}:${version}-<image id>`, archive: "<image archive>" };
    if (built !== undefined) say(`0. build the image from ${join(repo, "Dockerfile")} with buildah (layer cache in ~/.cache/linode-operator) and tag it ${built.localRef}`);
    say(showPlan(planInstall({ ...facts, built, valuesFile: "install-values.json" }), showCall));
    say("(dry run: nothing was changed)");
    return 0;
  }

  if (token.value === undefined) await needExistingSecret(opts);
  if (loader.kind !== "none") {
    if (!existsSync(join(repo, "Dockerfile"))) throw new Error(`no Dockerfile at ${repo}: run install from a clone of the repository, or pass --image`);
    if (process.getuid?.() !== 0) throw new Error("building the image needs root (buildah with its own storage, debootstrap for the base): run as root, or build and push it elsewhere and pass --image");
  }
  const work = await mkdtemp(join(tmpdir(), "linode-operator-install-"));
  try {
    let built: BuiltImage | undefined;
    if (loader.kind !== "none") {
      say("building the image (buildah; seconds when nothing changed, minutes the first time)");
      built = await buildOperatorImage({ repo, version, work, archive: loader.kind !== "registry", log: (l) => { say(`  ${l}`); } });
      say(`image ${built.localRef}`);
    }
    const plan = planInstall({ ...facts, built, valuesFile: join(work, "install-values.json") });
    for (const step of plan.steps) {
      say(step.say);
      await runStep(step, token, opts.namespace, opts.release, durationMillis(opts.timeout));
    }
    say(`\nlinode-operator is running: release ${opts.release}, namespace ${opts.namespace}, image ${plan.image.repository}:${plan.image.tag}.`);
    say(nextSteps(opts));
    return 0;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** With no token given, the Secret an earlier install made must be there: checked before anything changes. */
async function needExistingSecret(opts: { namespace: string; release: string; kubeconfig?: string | undefined; context?: string | undefined }): Promise<void> {
  const out = await mustRunTool({ tool: "kubectl", args: [...kubectlTarget(opts), "get", "secret", tokenSecretName(opts.release), "-n", opts.namespace, "--ignore-not-found", "-o", "name"] });
  if (out.trim() === "") throw new Error(`no Linode token: set LINODE_TOKEN or pass --token-file (the operator's token goes in Secret ${tokenSecretName(opts.release)} in ${opts.namespace})`);
}

async function runStep(step: InstallStep, token: Token, namespace: string, release: string, timeoutMs: number): Promise<void> {
  switch (step.kind) {
    case "tool":
      await mustRunTool(step.call, step.buildahStore === true ? { env: await buildahEnv() } : {});
      return;
    case "namespace": {
      if ((await mustRunTool(step.get)).trim() !== "") return;
      const r = await runTool(step.create);
      // Made by someone else in between: there it is.
      if (r.code !== 0 && !/AlreadyExists|already exists/.test(r.stderr)) throw new Error(`${showCall(step.create)} failed: ${r.stderr.trim()}`);
      return;
    }
    case "token-secret": {
      if (token.value === undefined) return;
      // data, not stringData: server-side apply then owns exactly the key it sets.
      const manifest = JSON.stringify({
        apiVersion: "v1", kind: "Secret", type: "Opaque",
        metadata: { name: step.name, namespace, labels: tokenSecretLabels(release) },
        data: { [TOKEN_KEY]: Buffer.from(token.value).toString("base64") },
      });
      await mustRunTool({ ...step.apply, stdin: manifest });
      return;
    }
    case "helm": {
      await writeFile(step.valuesFile, `${JSON.stringify(step.values, null, 2)}\n`);
      await mustRunTool(step.call, { timeoutMs: timeoutMs + 60_000 });
      return;
    }
  }
}
