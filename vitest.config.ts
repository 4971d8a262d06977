import { defineConfig } from "vitest/config";
import CriticalPathFirst from "./test/harness/sequencer.ts";

// Three projects in one parallel group: tests that need only this process and loopback HTTP
// (pure logic, the emulator, the Linode client); tests on the real control plane, which the
// cluster project's global setup starts once for the whole run; and the real one-node cluster.
export default defineConfig({
  test: {
    // Most files wait on an API server, the emulator, the kubelet or a child process, not on
    // the CPU: run more of them at once than the machine has cores.
    maxWorkers: 6,
    sequence: { sequencer: CriticalPathFirst },
    projects: [
      {
        test: {
          name: "offline",
          include: ["test/**/*.test.ts"],
          exclude: ["test/integration/**", "test/e2e/**", "test/real-cluster/**", "node_modules/**"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "cluster",
          include: ["test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["test/harness/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // A real kubelet + containerd in a network namespace of its own (needs root and Debian
        // packages; skipped loudly otherwise). One file, so one node at a time (startRealCluster
        // also takes a machine-wide lock). The first run builds the kubelet and the local base
        // image; later runs reuse the cache outside the repository.
        test: {
          name: "real-cluster",
          include: ["test/real-cluster/**/*.test.ts"],
          globalSetup: ["test/harness/real-cluster-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
