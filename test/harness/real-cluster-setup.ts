// Vitest global setup for the real-cluster project: on a first run, the Debian packages and
// every binary the one-node cluster needs (the kubelet and kube-scheduler besides the control
// plane) are installed and built before any test file starts, so that minutes of compiling do
// not compete with timing-sensitive tests. Where the real-cluster tests will be skipped (not
// root, no packages, no Go), this does nothing: the test file says why, loudly.
import { controlPlaneBinaries } from "../../src/local-cluster/control-plane.ts";
import { ensureHostPackages } from "../../src/local-cluster/host-packages.ts";

export default async function setup(): Promise<void> {
  if (process.env.LINODE_OPERATOR_SKIP_REAL_CLUSTER === "1") return;
  const pre = await ensureHostPackages({ cluster: true, images: true });
  if (!pre.ok) return;
  await controlPlaneBinaries({ withKubelet: true });
}
