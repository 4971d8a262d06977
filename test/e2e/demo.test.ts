// `linode-operator demo` as a user runs it: everything comes up, the examples become Ready —
// today's platform: orders restored by fork next to an adopted legacy database with its
// snapshot, a connection pool read through by its Secret, a premium NodeBalancer following the
// nodes inside a VPC — the Secret keys are shown (never values), and Ctrl-C leaves no process or
// temp dir behind.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { execCapture } from "../../src/local-cluster/exec.ts";
import { useTestCluster } from "../harness/cluster.ts";

const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

function psOutput(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn("ps", args, { stdio: ["ignore", "pipe", "ignore"] });
    let s = "";
    p.stdout.setEncoding("utf8").on("data", (c: string) => { s += c; });
    p.once("exit", () => { resolve(s); });
  });
}

describe("linode-operator demo", () => {
  it("shows the examples becoming Ready and cleans up on Ctrl-C", async () => {
    const child = spawn(process.execPath, [cli, "demo", "--provision-seconds", "2"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => { out += c; });
    child.stderr.setEncoding("utf8").on("data", (c: string) => { out += c; });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (c) => { resolve(c); }));
    const deadline = Date.now() + 150_000;
    while (!out.includes("Press Ctrl-C") && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 200));
    expect(out).toContain("Press Ctrl-C");
    expect(out).toMatch(/All 5 databases, 1 snapshot, 1 connection pool and 2 NodeBalancers are Ready/);
    // A premium NodeBalancer whose backends are the nodes at their addresses inside the VPC's subnet.
    expect(out).toContain("✓ VPC demo-vpc with the subnet nodes (10.0.0.0/24)");
    expect(out).toMatch(/edge\s+premium\s+.*10\.0\.0\.11:30080 \(subnet \d+\), 10\.0\.0\.12:30080 \(subnet \d+\)\s+True/);
    // A pool next to its PostgreSQL database; an application's DATABASE_URL goes through it, and no password is shown.
    expect(out).toMatch(/analytics-pool\s+analytics\s+transaction\s+20\s+True\s+analytics-pool-connection/);
    expect(out).toMatch(/databaseConnectionPool\/analytics-pool\): an application reading DATABASE_URL from its uri connects through the pool: postgresql:\/\/[^:]+:\*\*\*\*@[^/]+\/analytics-pool\?sslmode=verify-full/);
    expect(out).toMatch(/orders-snapshot\s+orders-legacy\s+Available\s+True\s+\d+/);
    expect(out).toMatch(/orders-legacy\s+mysql\s+8\s+active\s+True\s+True\s+orders-legacy-connection\s+legacy\n/);
    expect(out).toMatch(/orders-restored\s+mysql\s+8\.\S+\s+active\s+True\s+True\s+orders-restored-connection\s+current\s+orders @ \d{4}-\d\d-\d\dT\S+Z/);
    expect(out).toMatch(/an older MySQL database on Linode's legacy platform \(id \d+\) is adopted as managedDatabase\/orders-legacy/);
    // A node joining the cluster joins the allow list of the database that follows the nodes.
    expect(out).toContain("Nodes demo-node-1 and demo-node-2 registered");
    expect(out).toMatch(/✓ demo-node-3 joined the cluster: its address 198\.51\.100\.13\/32 is in reports' allow list after \d+\.\d s/);
    expect(out).toContain("created TLS Secret web-tls (self-signed");
    expect(out).toMatch(/web\s+common\s+\S+\.ip\.linodeusercontent\.com\s+\d+\.\d+\.\d+\.\d+\s+80,443\s+192\.168\.210\.120:8080, 192\.168\.210\.121:8080.*\s+True/);
    expect(out).toMatch(/orders\s+mysql\s+8\.\S+\s+active\s+True\s+True\s+orders-connection\s+current/);
    expect(out).toMatch(/has keys: ca\.crt, database, host, .*password.*uri, username/);
    const workDir = /logs: (\/\S+)\/operator\.log/.exec(out)?.[1] ?? "";
    expect(existsSync(workDir)).toBe(true);

    // etcd, kube-apiserver and kube-controller-manager are the demo's children.
    const children = (await psOutput(["-o", "pid=", "--ppid", String(child.pid)])).split("\n").map((l) => l.trim()).filter((l) => l !== "");
    expect(children.length).toBeGreaterThanOrEqual(3);

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(out).toContain("Done.");
    expect(existsSync(workDir)).toBe(false);
    const alive = (await psOutput(["-o", "pid=", "-p", children.join(",")])).trim();
    expect(alive).toBe("");
  });

  describe("with --use-current-context", () => {
    const cluster = useTestCluster("democtx");
    it("uses the cluster KUBECONFIG points at, and deletes what it applied", async () => {
      const ns = `${cluster.namespace}-demo`;
      const res = await execCapture(process.execPath, [cli, "demo", "--use-current-context", "--namespace", ns, "--exit-when-ready", "--provision-seconds", "1"], {
        env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig }, timeoutMs: 150_000,
      });
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).not.toContain("local Kubernetes control plane");
      // No VPC NodeBalancer here: the cluster's own nodes are not in the emulator's VPC.
      expect(res.stdout).toMatch(/All 5 databases, 1 snapshot, 1 connection pool and 1 NodeBalancer are Ready/);
      const left = await cluster.kubectl(["get", "namespace", ns, "-o", "jsonpath={.status.phase}"]);
      expect(left.code !== 0 || left.stdout === "Terminating").toBe(true);
    });
  });
});
