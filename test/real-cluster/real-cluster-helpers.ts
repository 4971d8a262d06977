// Shared by the real-cluster tests: the loud skip, and pods run through kubectl in the netns.
import { ensureHostPackages, type Prerequisites } from "../../src/local-cluster/host-packages.ts";
import { removeWorkingContainers } from "../../src/local-cluster/images.ts";
import { startRealCluster, type NetnsEmulator, type RealCluster } from "../../src/local-cluster/real-node.ts";
import { until } from "../../src/local-cluster/procs.ts";

/** Checks root and the Debian packages (installing them as root); says loudly why not. */
export async function realClusterPrerequisites(what: { cluster?: boolean; images?: boolean }): Promise<Prerequisites> {
  if (process.env.LINODE_OPERATOR_SKIP_REAL_CLUSTER === "1") return { ok: false, reason: "LINODE_OPERATOR_SKIP_REAL_CLUSTER=1" };
  const pre = await ensureHostPackages(what);
  if (!pre.ok) {
    const bar = "!".repeat(78);
    process.stderr.write(`\n${bar}\n!! real-cluster tests SKIPPED (not passed): ${pre.reason}\n${bar}\n\n`);
  }
  return pre;
}

export async function kubectlOk(c: RealCluster, args: string[], input?: string): Promise<string> {
  const r = await c.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** Waits until the namespace's default ServiceAccount exists (pods are refused before it). */
export async function waitDefaultServiceAccount(c: RealCluster, namespace = "default"): Promise<void> {
  await until("default ServiceAccount", 60_000, async () =>
    (await c.kubectl(["get", "serviceaccount", "default", "-n", namespace])).code === 0 ? true : undefined);
}

export async function waitPodPhase(c: RealCluster, name: string, phases: string[], timeoutMs = 60_000): Promise<string> {
  return until(`pod ${name} in ${phases.join("/")}`, timeoutMs, async () => {
    const r = await c.kubectl(["get", "pod", name, "-o", "jsonpath={.status.phase}"]);
    return phases.includes(r.stdout) ? r.stdout : undefined;
  }, 250);
}

export function busyboxPod(name: string, spec: Record<string, unknown>, container: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: "v1", kind: "Pod", metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1, restartPolicy: "Never", ...spec,
      containers: [{ name: "main", image: "localhost/busybox:local", imagePullPolicy: "Never", ...container }],
    },
  });
}

/**
 * The real node, started while `build` runs on the host (image builds need the package
 * registries, which the node's network namespace cannot reach). Whichever fails first, the
 * other is still awaited, and a started node is handed to `started` at once, so that afterAll
 * stops it whatever happens next.
 */
export async function startNodeWhile<T>(build: Promise<T>, started: (rc: RealCluster) => void): Promise<{ rc: RealCluster; built: T }> {
  const node = startRealCluster().then((rc) => { started(rc); return rc; });
  const [buildDone, nodeDone] = await Promise.allSettled([build, node]);
  if (nodeDone.status === "rejected") throw nodeDone.reason;
  if (buildDone.status === "rejected") throw buildDone.reason;
  return { rc: nodeDone.value, built: buildDone.value };
}

/**
 * The emulator bound to the node's address (reachable from hostNetwork pods and, by the pod
 * network's one route, from ordinary pods; still nowhere outside the namespace), once the
 * default ServiceAccount exists for the pods to come.
 */
export async function nodeEmulator(rc: RealCluster, token: string, provisionSeconds: number): Promise<NetnsEmulator> {
  const emu = await rc.startEmulator(["--host", rc.nodeIp, "--token", token, "--provision-seconds", String(provisionSeconds)]);
  await waitDefaultServiceAccount(rc);
  return emu;
}

/** afterAll of a file on the real node: the node stopped, and no build container left mounted. */
export async function stopNode(c: RealCluster | undefined): Promise<void> {
  await c?.stop();
  await removeWorkingContainers();
}
