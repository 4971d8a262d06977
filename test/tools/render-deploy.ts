// Renders deploy/ (plain manifests for `kubectl apply -f deploy/`) from the Helm chart, and
// copies the generated CRDs into the chart: `node test/tools/render-deploy.ts [--check]`.
// With --check it writes nothing and exits 1 listing what is stale.
import { execFile } from "node:child_process";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { controlPlaneBinaries } from "../../src/local-cluster/control-plane.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const chart = join(root, "helm/linode-operator");

export const NAMESPACE = "linode-operator";
export const TOKEN_SECRET = "linode-token";

const namespaceManifest = `# The operator's namespace. Before applying deploy/, create its token Secret:
#   kubectl create namespace ${NAMESPACE}
#   kubectl -n ${NAMESPACE} create secret generic ${TOKEN_SECRET} --from-literal=token="$LINODE_TOKEN"
apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE}
`;

export async function desiredFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const crdDir = join(root, "crds");
  for (const f of (await readdir(crdDir)).filter((x) => x.endsWith(".yaml")).sort()) {
    files.set(join(chart, "crds", f), await readFile(join(crdDir, f), "utf8"));
  }
  const helm = join(await controlPlaneBinaries(), "helm");
  const { stdout } = await run(helm, ["template", "linode-operator", chart, "--namespace", NAMESPACE, "--include-crds", "--set", `linode.existingSecret=${TOKEN_SECRET}`], { maxBuffer: 64 * 1024 * 1024 });
  files.set(join(root, "deploy", "00-namespace.yaml"), namespaceManifest);
  files.set(join(root, "deploy", "linode-operator.yaml"), `# Generated from helm/linode-operator by \`node test/tools/render-deploy.ts\`: do not edit.\n${stdout}`);
  return files;
}

async function main(check: boolean): Promise<number> {
  const stale: string[] = [];
  for (const [path, content] of await desiredFiles()) {
    const current = await readFile(path, "utf8").catch(() => undefined);
    if (current === content) continue;
    stale.push(path.slice(root.length));
    if (!check) {
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, content);
    }
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale: ${stale.join(", ")}\nrun: node test/tools/render-deploy.ts\n`);
    return 1;
  }
  process.stdout.write(stale.length === 0 ? "deploy/ and the chart's CRDs are up to date\n" : `wrote ${stale.join(", ")}\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  process.exitCode = await main(process.argv.includes("--check"));
}
