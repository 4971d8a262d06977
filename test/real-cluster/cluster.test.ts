// The one-node real cluster (kubelet + containerd) in a network namespace with no route out:
// pods run, in-cluster traffic to the Service IP fails at once, hostNetwork + the loopback
// override reaches the apiserver, and stop() leaves nothing on the host.
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processes } from "../../src/local-cluster/host-state.ts";
import { busyboxArchive } from "../../src/local-cluster/oci-archive.ts";
import { startRealCluster, type RealCluster } from "../../src/local-cluster/real-node.ts";
import { busyboxPod, kubectlOk, realClusterPrerequisites, waitDefaultServiceAccount, waitPodPhase } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true });

describe.skipIf(!pre.ok)("real one-node cluster in its own network namespace", () => {
  let c: RealCluster;

  beforeAll(async () => {
    const t0 = Date.now();
    c = await startRealCluster();
    const imported = Date.now();
    await c.importImage(await busyboxArchive());
    console.log(`[real-cluster] control plane ${c.timings.controlPlaneMillis} ms, node Ready ${c.timings.nodeReadyMillis} ms after start, busybox import ${Date.now() - imported} ms (total ${Date.now() - t0} ms incl. build checks)`);
    await waitDefaultServiceAccount(c);
  });
  // c is unset when beforeAll failed.
  afterAll(async () => { await (c as RealCluster | undefined)?.stop(); });

  it("has a Ready node named localhost with the /32 node address", async () => {
    const out = await kubectlOk(c, ["get", "node", "localhost", "-o", "jsonpath={.status.addresses[?(@.type==\"InternalIP\")].address} {.status.nodeInfo.containerRuntimeVersion}"]);
    expect(out.startsWith("198.18.0.1 containerd://")).toBe(true);
  });

  it("the namespace itself has no route out", async () => {
    for (const addr of ["10.0.0.1", "203.0.113.1", "192.0.2.1"]) {
      const r = await c.exec("ip", ["route", "get", addr]);
      expect(r.code, `route to ${addr}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr).toMatch(/unreachable/i);
    }
  });

  it("a pod with the default in-cluster config fails at once with Network is unreachable", async () => {
    await kubectlOk(c, ["apply", "-f", "-"], busyboxPod("no-route", {}, { command: ["sleep", "3600"] }));
    await waitPodPhase(c, "no-route", ["Running"]);
    const env = await kubectlOk(c, ["exec", "no-route", "--", "sh", "-c", "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT; ip route"]);
    // The kubelet injects the kubernetes Service IP: what client libraries use by default.
    expect(env.split("\n")[0]).toBe("10.0.0.1:443");
    expect(env).not.toMatch(/default/);
    for (const target of ["$KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT", "203.0.113.1 80"]) {
      const started = Date.now();
      const r = await c.kubectl(["exec", "no-route", "--", "sh", "-c", `echo | nc -w 5 ${target}; echo rc=$?`]);
      const millis = Date.now() - started;
      expect(r.stdout + r.stderr).toMatch(/Network is unreachable/);
      expect(r.stdout).toMatch(/rc=1/);
      // nc -w 5 would take 5 s on a hang; "at once" includes kubectl exec's own ~0.3 s.
      expect(millis).toBeLessThan(3_000);
      console.log(`[real-cluster] connect to ${target} from a pod: Network is unreachable in ${millis} ms (incl. kubectl exec)`);
    }
  });

  it("a hostNetwork pod with KUBERNETES_SERVICE_HOST/PORT on loopback reaches the apiserver, with its token mounted", async () => {
    await kubectlOk(c, ["apply", "-f", "-"], busyboxPod("host-net", { hostNetwork: true }, {
      env: [{ name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1" }, { name: "KUBERNETES_SERVICE_PORT", value: String(c.apiPort) }],
      // busybox has no TLS client: a plain HTTP request gets the Go TLS server's answer.
      command: ["sh", "-c", "printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' | nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT; echo; ls /var/run/secrets/kubernetes.io/serviceaccount; echo TOKEN=$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)"],
    }));
    expect(await waitPodPhase(c, "host-net", ["Succeeded", "Failed"])).toBe("Succeeded");
    const logs = await kubectlOk(c, ["logs", "host-net"]);
    expect(logs).toMatch(/Client sent an HTTP request to an HTTPS server/);
    expect(logs).toMatch(/ca\.crt/);
    const token = /TOKEN=(\S+)/.exec(logs)?.[1] ?? "";
    expect(token).not.toBe("");
    const who = await kubectlOk(c, ["--token", token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    expect(who).toBe("system:serviceaccount:default:default");
  });

  it("runs the emulator inside the namespace: reachable there, not from the host", async () => {
    const emu = await c.startEmulator(["--token", "real-cluster-token"]);
    const url = new URL(emu.url);
    expect(url.hostname).toBe("127.0.0.1");
    const script = `fetch(${JSON.stringify(`${url.origin}/v4/databases/engines`)}, { headers: { authorization: "Bearer real-cluster-token" } }).then((r) => console.log(r.status))`;
    const inside = await c.exec(process.execPath, ["-e", script]);
    expect(inside.stdout.trim()).toBe("200");
    const outside = await fetch(`${url.origin}/v4/databases/engines`).then(() => "reached", (e: unknown) => String((e as { cause?: { code?: string } }).cause?.code));
    expect(outside).toBe("ECONNREFUSED");
    await emu.stop();
  });

  it("stop() leaves no processes, mounts, netns, links, cgroups, CNI state or iptables rules", async () => {
    const pids = c.pids();
    await c.stop();
    const before = c.hostBefore;
    const after = c.hostAfter;
    expect(after).toBeDefined();
    if (after === undefined) return;
    expect(after.netns).toEqual(before.netns);
    expect(after.netns.join(" ")).not.toMatch(/cni-|linode-op-/);
    expect(after.links).toEqual(before.links);
    expect(after.links).not.toContain(c.bridge);
    expect(after.mounts).toEqual(before.mounts);
    expect(after.iptables).toEqual(before.iptables);
    expect(after.kubepods).toEqual([]);
    const procs = await processes();
    expect(procs.filter((p) => pids.includes(p.pid))).toEqual([]);
    expect(procs.filter((p) => p.netns === c.netnsId || p.cmdline.includes(c.dir))).toEqual([]);
    expect((await readdir("/var/lib/cni/results").catch(() => [])).filter((f) => f.startsWith(c.cniNetwork))).toEqual([]);
    expect(existsSync(c.dir)).toBe(false);
    expect(existsSync(`/run/netns/${c.netns}`)).toBe(false);
  });
});
