// The chart claims a minimum Kubernetes version (Chart.yaml kubeVersion). The CRDs use CEL
// functions that only newer API servers know (isIP, isCIDR): on an older one they would not
// even install. So the generated CRDs are installed into a real kube-apiserver of exactly the
// oldest version claimed, and their validation rules are exercised there.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { execCapture, type ExecResult } from "../../../src/local-cluster/exec.ts";
import { startControlPlane, type ControlPlane } from "../../harness/control-plane.ts";
import { crdFiles } from "../../harness/crds.ts";

const chart = fileURLToPath(new URL("../../../helm/linode-operator/Chart.yaml", import.meta.url));

describe("the CRDs on the oldest Kubernetes the chart supports", () => {
  let cp: ControlPlane;
  const kubectl = (args: string[], input?: string): Promise<ExecResult> =>
    execCapture(join(cp.binDir, "kubectl"), ["--kubeconfig", cp.adminKubeconfig, ...args], input !== undefined ? { input } : {});

  beforeAll(async () => {
    cp = await startControlPlane({ controllerManager: false, apiserver: "oldest" });
  }, 120_000);
  afterAll(async () => { await cp.stop(); });

  it("runs the version Chart.yaml's kubeVersion names as the minimum", async () => {
    const kubeVersion = (parse(await readFile(chart, "utf8")) as { kubeVersion: string }).kubeVersion;
    const min = /^>=\s*(\d+)\.(\d+)\./.exec(kubeVersion);
    expect(min, kubeVersion).not.toBeNull();
    expect(cp.version).toMatch(new RegExp(`^v${min?.[1] ?? ""}\\.${min?.[2] ?? ""}\\.`));
  });

  it("installs every CRD and enforces their rules there", async () => {
    const files = (await crdFiles()).flatMap((f) => ["-f", f]);
    const applied = await kubectl(["apply", "--server-side", ...files]);
    expect(applied.code, applied.stderr).toBe(0);
    const established = await kubectl(["wait", "--for=condition=Established", "--timeout=60s", ...files]);
    expect(established.code, established.stderr).toBe(0);

    const mdb = (allowList: string[], extraData?: Record<string, string>): string => JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders", namespace: "default" },
      spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList, ...(extraData !== undefined ? { connectionSecret: { extraData } } : {}) },
    });
    const good = await kubectl(["apply", "--dry-run=server", "-f", "-"], mdb(["203.0.113.7", "198.51.100.0/24", "2001:db8::/32"]));
    expect(good.code, good.stderr).toBe(0);
    // isIP/isCIDR at work: a bad entry is refused with the rule's own message.
    const bad = await kubectl(["apply", "--dry-run=server", "-f", "-"], mdb(["not-an-address"]));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/allowList entries must be IP addresses or CIDR ranges/);
    // findAll (the extraData templates' rule) at work too.
    const template = await kubectl(["apply", "--dry-run=server", "-f", "-"], mdb(["203.0.113.7"], { ok: '{{ index . "ca.crt" }}', url: "{{ .host | upper }}" }));
    expect(template.code).not.toBe(0);
    expect(template.stderr).toMatch(/extraData\[url\]: .*a template may only hold/);
    expect(template.stderr).not.toMatch(/extraData\[ok\]/);

    // The NodeBalancer's configs keyed by port and a defaulted protocol, and udp's rules (filter, in).
    // Premium: udp is premium-only (CL26), and premium outside a VPC takes IPv6 backends.
    const nb = (configs: Record<string, unknown>[], type = "premium"): string => JSON.stringify({
      apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "dns", namespace: "default" }, spec: { region: "us-east", type, configs },
    });
    const node = { label: "dns-1", address: "[2600:3c03::1]:53" };
    const udp = await kubectl(["apply", "--dry-run=server", "-f", "-"], nb([{ port: 53, protocol: "tcp", nodes: [node] }, { port: 53, protocol: "udp", stickiness: "session", nodes: [node] }]));
    expect(udp.code, udp.stderr).toBe(0);
    const clash = await kubectl(["apply", "--dry-run=server", "-f", "-"], nb([{ port: 53, nodes: [node] }, { port: 53, protocol: "tcp", nodes: [node] }]));
    expect(clash.stderr).toMatch(/a port is used once among the tcp, http and https configs/);
    const wrong = await kubectl(["apply", "--dry-run=server", "-f", "-"], nb([{ port: 53, protocol: "udp", stickiness: "table", nodes: [node] }]));
    expect(wrong.stderr).toMatch(/session and source_ip for udp/);
    const common = await kubectl(["apply", "--dry-run=server", "-f", "-"], nb([{ port: 53, protocol: "udp", nodes: [{ label: "dns-1", address: "192.168.1.1:53" }] }], "common"));
    expect(common.stderr).toMatch(/udp configs need a premium type/);
  });
});
