// Prints how long the test control plane takes to start (etcd + kube-apiserver ready) and
// stop, over N runs (default 5): `node test/bench/control-plane-start.ts [N]`.
import { startControlPlane } from "../harness/control-plane.ts";

const runs = Number(process.argv[2] ?? 5);
const starts: number[] = [];
const stops: number[] = [];
for (let i = 0; i < runs; i++) {
  const cp = await startControlPlane({ controllerManager: false });
  starts.push(cp.startMillis);
  const t = Date.now();
  await cp.stop();
  stops.push(Date.now() - t);
}
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? 0; };
process.stdout.write(`control plane start (ms): ${starts.join(", ")}; median ${median(starts)}\n`);
process.stdout.write(`control plane stop  (ms): ${stops.join(", ")}; median ${median(stops)}\n`);
