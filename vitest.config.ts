import { defineConfig } from "vitest/config";

// Two projects: tests that need only this process and loopback HTTP (pure logic, the
// emulator, the Linode client), and tests that need the real control plane, which the
// cluster project's global setup starts once for the whole run.
export default defineConfig({
  test: {
    // Cluster tests mostly wait on the API server and the emulator, not on CPU: run more
    // files at once than the machine has cores.
    maxWorkers: 4,
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
        // packages; skipped loudly otherwise). One cluster at a time: files run one by one, and
        // startRealCluster also takes a machine-wide lock. The first run builds the kubelet and
        // the local base image; later runs reuse the cache outside the repository.
        test: {
          name: "real-cluster",
          include: ["test/real-cluster/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
