// NodeBalancer settings on a real API server and the emulator over HTTP: no configs is
// Ready=False NoConfigs (the cloud NodeBalancer made and kept) until a config comes; a config
// without nodes (only seen on an adopted one: the CRD requires a node) is NoNodes; every config
// field and a node's mode and weight, changed one at a time, reach the API with exactly one
// rebuild of that config (the emulator's mutation log, per NodeBalancer) and show in status,
// which mirrors each config's settings, certificate and per-node status, mode and weight.
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate } from "../../src/emulator/certs.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { NodeBalancerConfigStatus } from "../../src/resources/node-balancer/schema.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const REBUILD = "POST /nodebalancers/{nodeBalancerId}/configs/{configId}/rebuild";
type Cond = { status: string; reason: string; message?: string };
type ConfigSpec = Record<string, unknown> & { port: number; nodes: Record<string, unknown>[] };

describe("NodeBalancer settings", () => {
  const cluster = useTestCluster("nb-settings");
  let env: OperatorEnv;
  beforeAll(async () => {
    // A drift look every 2 s (the product's is 300 s) lists each NodeBalancer's configs and nodes
    // 150 times as often: the API's 200 lists a minute is scaled with it.
    env = await startOperatorEnv(cluster, { poll: { pendingMillis: 300, readyMillis: 2_000 }, listLimitPerMinute: 20_000 });
  });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const key = (name: string): string => `${ns()}/${name}`;
  const create = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> =>
    env.deps.kube.createCustom(nbType, ns(), { apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name }, spec: { region: "us-east", ...spec } });
  const get = (name: string): Promise<ManagedObject> => env.deps.kube.getCustom<ManagedObject>(nbType, { namespace: ns(), name });
  const patch = (name: string, spec: Record<string, unknown>): Promise<ManagedObject> => env.deps.kube.mergePatchCustom(nbType, { namespace: ns(), name }, { spec });
  const idOf = (o: ManagedObject): number => Number(o.status?.id);
  const configsOf = (o: ManagedObject): NodeBalancerConfigStatus[] => (o.status?.configs ?? []) as NodeBalancerConfigStatus[];
  const condOf = (o: ManagedObject, type: string): Cond | undefined => o.status?.conditions?.find((c) => c.type === type);
  const current = (o: ManagedObject): boolean => o.status?.observedGeneration === o.metadata.generation;
  /** Synced for the current generation and the status showing `check`: Ready is what each test asks of it. */
  const converged = (name: string, check: (o: ManagedObject) => boolean): Promise<ManagedObject> => waitFor(`${name} synced`, async () => {
    const o = await get(name);
    return condOf(o, "Synced")?.status === "True" && current(o) && check(o) ? o : undefined;
  }, 60_000, 100);
  const ready = (name: string, check: (o: ManagedObject) => boolean = () => true): Promise<ManagedObject> =>
    converged(name, (o) => condOf(o, "Ready")?.status === "True" && check(o));
  const reason = (name: string, type: string, want: string): Promise<Cond> => waitFor(`${name} ${type} ${want}`, async () => {
    const c = condOf(await get(name), type);
    return c?.reason === want ? c : undefined;
  }, 60_000, 100);
  /** Mutations of one NodeBalancer (its configs and nodes included) received since `since`. */
  const mutationsOf = (id: number, since: number): { call: string; path: string }[] => {
    const mine = new RegExp(`^/nodebalancers/${String(id)}(/|$)`);
    return env.emulator.mutations().filter((m) => m.receivedAt >= since && mine.test(m.path)).map((m) => ({ call: m.route, path: m.path }));
  };
  const tlsSecret = (name: string, cert: { certPem: string; keyPem: string }): Promise<unknown> => env.deps.kube.applySecret({
    metadata: { name, namespace: ns() }, type: "kubernetes.io/tls",
    data: { "tls.crt": Buffer.from(cert.certPem).toString("base64"), "tls.key": Buffer.from(cert.keyPem).toString("base64") },
  });
  const cloudConfigs = async (id: number) => {
    const configs = await env.linode.nodeBalancers.listAllConfigs(id);
    return Promise.all(configs.map(async (c) => ({ ...c, nodes: await env.linode.nodeBalancers.listAllNodes(id, c.id) })));
  };
  const cert = generateCertificate({ commonName: "shop.example.com", days: 90 });
  const fingerprint = new X509Certificate(cert.certPem).fingerprint;

  it("no configs: the NodeBalancer is made and Synced but Ready=False NoConfigs, without a loop; a config added makes it Ready", async () => {
    const t0 = Date.now();
    await create("empty", { configs: [] });
    const c = await reason("empty", "Ready", "NoConfigs");
    expect(c.status).toBe("False");
    expect(c.message).toContain("no configs");
    expect(c.message).toContain("spec.configs");
    const o = await converged("empty", () => true);
    const id = idOf(o);
    expect((await env.linode.nodeBalancers.get(id)).id).toBe(id);
    expect(configsOf(o)).toEqual([]);
    expect(mutationsOf(id, 0)).toEqual([]);
    // The create is the NodeBalancer list's POST, not under its id: one in all since the test began.
    expect(env.emulator.mutations().filter((m) => m.receivedAt >= t0 && m.route === "POST /nodebalancers")).toHaveLength(1);
    // Looked at again, it stays as it is: nothing sent, the same reason.
    await env.repass("NodeBalancer", key("empty"), 2);
    expect(mutationsOf(id, t0)).toEqual([]);
    expect(condOf(await get("empty"), "Ready")?.reason).toBe("NoConfigs");

    const t1 = Date.now();
    await patch("empty", { configs: [{ port: 6379, protocol: "tcp", nodes: [{ label: "cache-1", address: "192.168.60.1:6379" }] }] });
    const served = await ready("empty", (x) => configsOf(x).length === 1);
    expect(served.status?.id).toBe(id);
    expect(configsOf(served)[0]?.nodes?.map((n) => n.address)).toEqual(["192.168.60.1:6379"]);
    // A config is added as the API allows: created, then its nodes set by one rebuild.
    expect(mutationsOf(id, t1).map((m) => m.call).sort()).toEqual(["POST /nodebalancers/{nodeBalancerId}/configs", REBUILD]);
  });

  it("a config without nodes on an adopted NodeBalancer is Ready=False NoNodes naming its port; a node added outside makes it Ready", async () => {
    const theirs = await env.linode.nodeBalancers.create({
      region: "us-east", label: "half-empty",
      configs: [{ port: 8080, protocol: "tcp", nodes: [{ label: "b-1", address: "192.168.70.1:8080" }] }],
    });
    // A create needs a node in each config; a config added on its own does not.
    const empty = await env.linode.nodeBalancers.createConfig(theirs.id, { port: 8443, protocol: "tcp" });
    await create("adopted", { nodeBalancerId: theirs.id, managementPolicy: "Observe", configs: [] });
    const c = await reason("adopted", "Ready", "NoNodes");
    expect(c.status).toBe("False");
    expect(c.message).toContain("config 8443: no nodes");
    expect(c.message).not.toContain("8080");
    await env.linode.nodeBalancers.createNode(theirs.id, empty.id, { label: "b-2", address: "192.168.70.2:8443" });
    const o = await ready("adopted", (x) => configsOf(x).find((k) => k.port === 8443)?.nodes?.length === 1);
    expect(condOf(o, "Synced")?.reason).toBe("Observing");
  });

  it("each config field and a node's mode and weight, changed alone, is one rebuild of that config and shows in status", async () => {
    await tlsSecret("tuned-tls", cert);
    const configs: ConfigSpec[] = [
      { port: 80, nodes: [{ label: "web-1", address: "192.168.80.1:80" }, { label: "web-2", address: "192.168.80.2:80" }] },
      { port: 443, protocol: "https", tlsSecretRef: { name: "tuned-tls" }, nodes: [{ label: "web-1", address: "192.168.80.1:443" }] },
      { port: 5432, protocol: "tcp", nodes: [{ label: "pg-1", address: "192.168.80.3:5432" }] },
    ];
    await create("tuned", { configs });
    const id = idOf(await ready("tuned"));
    const at = (port: number): ConfigSpec => {
      const c = configs.find((x) => x.port === port);
      if (c === undefined) throw new Error(`no config ${String(port)}`);
      return c;
    };
    const node0 = (port: number): Record<string, unknown> => {
      const n = at(port).nodes[0];
      if (n === undefined) throw new Error(`no node on ${String(port)}`);
      return n;
    };
    // One field at a time, in an order the CRD's rules accept at each step (checkTimeout stays
    // below checkInterval; checkPath and checkBody are set before the checks that use them).
    const steps: { what: string; port: number; change: () => void; shows: (c: NodeBalancerConfigStatus) => boolean }[] = [
      { what: "algorithm", port: 80, change: () => { at(80).algorithm = "leastconn"; }, shows: (c) => c.algorithm === "leastconn" },
      { what: "stickiness", port: 80, change: () => { at(80).stickiness = "table"; }, shows: (c) => c.stickiness === "table" },
      { what: "check", port: 80, change: () => { at(80).check = "connection"; }, shows: (c) => c.check === "connection" },
      { what: "checkTimeout", port: 80, change: () => { at(80).checkTimeout = 5; }, shows: (c) => c.checkTimeout === 5 },
      { what: "checkInterval", port: 80, change: () => { at(80).checkInterval = 10; }, shows: (c) => c.checkInterval === 10 },
      { what: "checkAttempts", port: 80, change: () => { at(80).checkAttempts = 5; }, shows: (c) => c.checkAttempts === 5 },
      { what: "checkPath", port: 80, change: () => { at(80).checkPath = "/healthz"; }, shows: (c) => c.checkPath === "/healthz" },
      { what: "check http", port: 80, change: () => { at(80).check = "http"; }, shows: (c) => c.check === "http" },
      { what: "checkBody", port: 80, change: () => { at(80).checkBody = "ok"; }, shows: (c) => c.checkBody === "ok" },
      { what: "check http_body", port: 80, change: () => { at(80).check = "http_body"; }, shows: (c) => c.check === "http_body" },
      { what: "checkPassive", port: 80, change: () => { at(80).checkPassive = false; }, shows: (c) => c.checkPassive === false },
      { what: "cipherSuite", port: 443, change: () => { at(443).cipherSuite = "legacy"; }, shows: (c) => c.cipherSuite === "legacy" },
      { what: "proxyProtocol", port: 5432, change: () => { at(5432).proxyProtocol = "v2"; }, shows: (c) => c.proxyProtocol === "v2" },
      { what: "node mode", port: 80, change: () => { node0(80).mode = "drain"; }, shows: (c) => c.nodes?.find((n) => n.address === "192.168.80.1:80")?.mode === "drain" },
      { what: "node weight", port: 80, change: () => { node0(80).weight = 120; }, shows: (c) => c.nodes?.find((n) => n.address === "192.168.80.1:80")?.weight === 120 },
    ];
    for (const step of steps) {
      const t0 = Date.now();
      step.change();
      await patch("tuned", { configs });
      const o = await converged("tuned", (x) => {
        const c = configsOf(x).find((k) => k.port === step.port);
        return c !== undefined && step.shows(c);
      });
      // Looked at twice more: nothing else is sent for it.
      await env.repass("NodeBalancer", key("tuned"), 2);
      const configId = configsOf(o).find((k) => k.port === step.port)?.id;
      expect(mutationsOf(id, t0), step.what).toEqual([{ call: REBUILD, path: `/nodebalancers/${String(id)}/configs/${String(configId)}/rebuild` }]);
    }
    // What status shows is what the API holds.
    const api = await cloudConfigs(id);
    const c80 = api.find((c) => c.port === 80);
    expect(c80).toMatchObject({ algorithm: "leastconn", stickiness: "table", check: "http_body", checkTimeout: 5, checkInterval: 10, checkAttempts: 5, checkPath: "/healthz", checkBody: "ok", checkPassive: false });
    expect(c80?.nodes.find((n) => n.address === "192.168.80.1:80")).toMatchObject({ mode: "drain", weight: 120 });
    expect(api.find((c) => c.port === 443)?.cipherSuite).toBe("legacy");
    expect(api.find((c) => c.port === 5432)?.proxyProtocol).toBe("v2");
  });

  it("status shows each config's settings, the https certificate's common name and fingerprint, and each node's status, mode and weight as the API reports them", async () => {
    await tlsSecret("shown-tls", cert);
    await create("shown", {
      configs: [
        {
          port: 80, algorithm: "source", stickiness: "http_cookie", check: "http", checkPath: "/ready", checkInterval: 2, checkTimeout: 1,
          nodes: [{ label: "app-1", address: "192.168.90.1:80", weight: 200 }, { label: "app-2", address: "192.168.90.2:80", mode: "backup" }],
        },
        { port: 443, protocol: "https", tlsSecretRef: { name: "shown-tls" }, nodes: [{ label: "app-1", address: "192.168.90.1:443" }] },
      ],
    });
    // Nodes are UP one check interval (2 emulated seconds) after they appear.
    const o = await ready("shown", (x) => configsOf(x).find((c) => c.port === 80)?.nodes?.every((n) => n.status === "UP") === true);
    const id = idOf(o);
    const [s80, s443] = [80, 443].map((p) => configsOf(o).find((c) => c.port === p));
    expect(s80).toMatchObject({
      protocol: "http", algorithm: "source", stickiness: "http_cookie", check: "http", checkPath: "/ready", checkInterval: 2, checkTimeout: 1,
      checkAttempts: 3, checkPassive: true, proxyProtocol: "none", nodesStatus: { up: 2, down: 0 },
    });
    expect(s80?.checkBody).toBeUndefined();
    expect(s80?.sslCommonName).toBeUndefined();
    expect(s80?.sslFingerprint).toBeUndefined();
    expect(s443).toMatchObject({ protocol: "https", cipherSuite: "recommended", sslCommonName: "shop.example.com", sslFingerprint: fingerprint });
    const byAddress = new Map(s80?.nodes?.map((n) => [n.address, n]));
    expect(byAddress.get("192.168.90.1:80")).toMatchObject({ label: "app-1", status: "UP", mode: "accept", weight: 200 });
    // Unset in the spec: the API's defaults, as it reports them.
    expect(byAddress.get("192.168.90.2:80")).toMatchObject({ label: "app-2", status: "UP", mode: "backup", weight: 50 });
    const api = await cloudConfigs(id);
    for (const c of api) {
      const shown = configsOf(o).find((k) => k.port === c.port);
      expect(shown).toMatchObject({
        id: c.id, algorithm: c.algorithm, stickiness: c.stickiness, check: c.check, checkInterval: c.checkInterval, checkTimeout: c.checkTimeout,
        checkAttempts: c.checkAttempts, checkPassive: c.checkPassive, cipherSuite: c.cipherSuite, proxyProtocol: c.proxyProtocol,
      });
      expect(shown?.nodes?.map((n) => [n.id, n.status, n.mode, n.weight]).sort()).toEqual(c.nodes.map((n) => [n.id, n.status, n.mode, n.weight]).sort());
    }
    // kubectl shows them too: the CRD's status schema keeps every field (nothing pruned).
    const out = await cluster.kubectl(["get", "nodebalancer", "shown", "-n", ns(), "-o", "jsonpath={.status.configs[?(@.port==443)].sslCommonName} {.status.configs[?(@.port==80)].nodes[*].mode}"]);
    expect(out.stdout.trim()).toBe("shop.example.com accept backup");
  });
});
