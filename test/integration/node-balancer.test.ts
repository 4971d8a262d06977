// NodeBalancer on a real API server and the emulator over HTTP: configs and nodes created
// inline, changed with one rebuild per config (calls counted), configs added and removed by
// port, certificates from kubernetes.io/tls Secrets (a rotation reaches the API), missing or
// invalid Secrets reported, a node address only the API refuses reported without a loop,
// health from the API's node status, adoption, Observe, a vanished NodeBalancer, LabelInUse,
// delete and Retain, and statistics as metrics.
import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate, type GeneratedCertificate } from "../../src/emulator/certs.ts";
import { nodeBalancerType as nbType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { useTestCluster } from "../harness/cluster.ts";
import { startOperatorEnv, type OperatorEnv } from "../harness/operator-env.ts";
import { nodeBalancerHelpers } from "../harness/node-balancer-helpers.ts";
import { waitFor } from "../harness/operator-runtime.ts";

const NB = "/nodebalancers";
const ONE = `${NB}/{nodeBalancerId}`;
const CONFIGS = `${ONE}/configs`;
const CONFIG = `${CONFIGS}/{configId}`;
const NODES = `${CONFIG}/nodes`;
type NbStatus = {
  id?: number; hostname?: string; ipv4?: string;
  configs?: { port: number; id?: number; sslFingerprint?: string; nodesStatus?: { up: number; down: number }; nodes?: { address: string; label?: string; id?: number; status?: string }[] }[];
  firewalls?: { id: number }[];
};

const checked = { check: "connection", checkInterval: 2, checkTimeout: 1 };
const http80 = { port: 80, ...checked, nodes: [{ label: "web-1", address: "192.168.10.5:80" }, { label: "web-2", address: "10.0.0.6:80" }] };
const https443 = { port: 443, protocol: "https", tlsSecretRef: { name: "web-tls" }, nodes: [{ label: "web-1", address: "192.168.10.5:443" }] };

/**
 * An operator env of its own on a namespace of its own (registered as the describe's hooks),
 * and what the tests need from it.
 */
function nodeBalancerEnv(prefix: string, poll = { pendingMillis: 300, readyMillis: 2_000 }) {
  const cluster = useTestCluster(prefix);
  let env: OperatorEnv;
  // Health checks every 2 emulated seconds; statistics exist 1 s after a create and are read every 0.5 s.
  beforeAll(async () => {
    env = await startOperatorEnv(cluster, { poll, emulatorConfig: { statsDelaySeconds: 1 }, statsMillis: 500 });
  });
  afterAll(async () => { await env.stop(); });

  const ns = (): string => cluster.namespace;
  const { create, get, patch, condOf, settled, reason } = nodeBalancerHelpers(cluster, () => env);
  const status = (o: ManagedObject): NbStatus => (o.status ?? {}) as NbStatus;
  const count = (method: string, route: string): number => env.emulator.requestCounts()[`${method} ${route}`] ?? 0;
  const mutations = (): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(env.emulator.requestCounts())) if (!k.startsWith("GET") && k.includes("/nodebalancers")) out[k] = v;
    return out;
  };
  const delta = (before: Record<string, number>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(mutations())) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
    return out;
  };
  const tlsSecret = (name: string, cert: GeneratedCertificate): Promise<unknown> => env.deps.kube.applySecret({
    metadata: { name, namespace: ns() }, type: "kubernetes.io/tls",
    data: { "tls.crt": Buffer.from(cert.certPem).toString("base64"), "tls.key": Buffer.from(cert.keyPem).toString("base64") },
  });
  const fingerprint = (cert: GeneratedCertificate): string => new X509Certificate(cert.certPem).fingerprint;
  const cloud = async (id: number) => {
    const configs = await env.linode.nodeBalancers.listAllConfigs(id);
    return Promise.all(configs.map(async (c) => ({ ...c, nodes: await env.linode.nodeBalancers.listAllNodes(id, c.id) })));
  };
  const key = (name: string): string => `${ns()}/${name}`;
  const firstCert = generateCertificate({ commonName: "web.example.com", days: 90 });
  /** The HTTPS config, with the test's own TLS Secret. */
  const httpsWith = (secret: string): Record<string, unknown> => ({ ...https443, tlsSecretRef: { name: secret } });
  /**
   * A NodeBalancer of the test's own with the HTTP and HTTPS configs (its TLS Secret "<name>-tls"
   * holding `cert`), Ready with its port-80 backends UP: no test relies on another's objects.
   */
  const webNb = async (name: string, cert: GeneratedCertificate = firstCert): Promise<{ id: number; nb: ManagedObject }> => {
    await tlsSecret(`${name}-tls`, cert);
    await create(name, { tags: ["web"], configs: [http80, httpsWith(`${name}-tls`)] });
    // Nodes are UP one check interval (2 emulated seconds) after they appear.
    const nb = await settled(name, (o) => status(o).configs?.find((c) => c.port === 80)?.nodes?.every((n) => n.status === "UP") === true);
    return { id: status(nb).id ?? 0, nb };
  };

  return { get env(): OperatorEnv { return env; }, cluster, ns, create, get, patch, status, condOf, settled, reason, count, mutations, delta, tlsSecret, fingerprint, cloud, key, firstCert, httpsWith, webNb };
}

describe("NodeBalancer", () => {
  const s = nodeBalancerEnv("nb");
  const { ns, create, get, patch, status, condOf, settled, reason, count, mutations, delta, tlsSecret, fingerprint, cloud, key, firstCert, httpsWith, webNb } = s;

  it("creates the NodeBalancer with both configs and their nodes in one call, and becomes Ready once a backend is UP", async () => {
    const before = mutations();
    const { id, nb } = await webNb("web");
    const s = status(nb);
    expect(delta(before)).toEqual({ [`POST ${NB}`]: 1 });
    expect(s.hostname).toMatch(/\.ip\.linodeusercontent\.com$/);
    expect(s.ipv4).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(s.configs?.map((c) => c.port)).toEqual([80, 443]);
    expect(s.configs?.find((c) => c.port === 443)?.sslFingerprint).toBe(fingerprint(firstCert));
    const api = await cloud(id);
    expect(api.map((c) => [c.port, c.protocol, c.nodes.map((n) => n.address).sort()])).toEqual([
      [80, "http", ["10.0.0.6:80", "192.168.10.5:80"]],
      [443, "https", ["192.168.10.5:443"]],
    ]);
    expect(api.find((c) => c.port === 443)?.sslFingerprint).toBe(fingerprint(firstCert));
    // The key is never shown back, nor mirrored anywhere.
    expect(JSON.stringify(nb)).not.toContain("PRIVATE KEY");
  });

  it("changes nodes with exactly one rebuild of that config: no call per node", async () => {
    const { id } = await webNb("renoded");
    const before = mutations();
    const perNode = (): number => count("POST", NODES) + count("PUT", `${NODES}/{nodeId}`) + count("DELETE", `${NODES}/{nodeId}`);
    const perNodeBefore = perNode();
    await patch("renoded", { configs: [{ ...http80, nodes: [{ label: "web-2b", address: "10.0.0.6:80" }, { label: "web-3", address: "172.16.0.7:80", weight: 100 }] }, httpsWith("renoded-tls")] });
    await settled("renoded", (o) => status(o).configs?.find((c) => c.port === 80)?.nodes?.some((n) => n.address === "172.16.0.7:80") === true);
    expect(delta(before)).toEqual({ [`POST ${CONFIG}/rebuild`]: 1 });
    const c80 = (await cloud(id)).find((c) => c.port === 80);
    expect(c80?.nodes.map((n) => [n.address, n.label, n.weight]).sort()).toEqual([["10.0.0.6:80", "web-2b", 50], ["172.16.0.7:80", "web-3", 100]]);
    expect(perNode() - perNodeBefore).toBe(0);
  });

  it("a renewed certificate in the TLS Secret reaches the API (one rebuild) and the status", async () => {
    const { id } = await webNb("renewed");
    const renewed = generateCertificate({ commonName: "web.example.com", days: 90 });
    const before = mutations();
    const t0 = Date.now();
    await tlsSecret("renewed-tls", renewed);
    await waitFor("the new fingerprint in the API", async () =>
      ((await s.env.linode.nodeBalancers.listAllConfigs(id)).find((c) => c.port === 443)?.sslFingerprint === fingerprint(renewed) ? true : undefined), 30_000, 50);
    const seconds = (Date.now() - t0) / 1000;
    console.log(`[nb] TLS Secret changed → new fingerprint in the API after ${seconds.toFixed(2)} s`);
    await settled("renewed", (o) => status(o).configs?.find((c) => c.port === 443)?.sslFingerprint === fingerprint(renewed));
    expect(delta(before)).toEqual({ [`POST ${CONFIG}/rebuild`]: 1 });
  });

  it("adds and removes configs by port: one delete, one create and one rebuild", async () => {
    const { id } = await webNb("reported");
    const before = mutations();
    const tcp = { port: 5432, protocol: "tcp", nodes: [{ label: "pg-1", address: "192.168.20.1:5432" }] };
    await patch("reported", { configs: [http80, tcp] });
    await settled("reported", (o) => status(o).configs?.map((c) => c.port).join(",") === "80,5432");
    expect(delta(before)).toEqual({ [`DELETE ${CONFIG}`]: 1, [`POST ${CONFIGS}`]: 1, [`POST ${CONFIG}/rebuild`]: 1 });
    expect((await cloud(id)).map((c) => [c.port, c.nodes.map((n) => n.address).sort()])).toEqual([[80, ["10.0.0.6:80", "192.168.10.5:80"]], [5432, ["192.168.20.1:5432"]]]);
  });

  it("a change made behind its back (a node relabelled through the API) is put back with one rebuild", async () => {
    const { id } = await webNb("tampered");
    const c80 = (await cloud(id)).find((c) => c.port === 80);
    const node = c80?.nodes.find((n) => n.address === "10.0.0.6:80");
    if (c80 === undefined || node === undefined) throw new Error("no node to change");
    await s.env.linode.nodeBalancers.updateNode(id, c80.id, node.id, { label: "tampered" });
    const before = mutations();
    await waitFor("the label put back", async () => {
      const n = (await s.env.linode.nodeBalancers.listAllNodes(id, c80.id)).find((x) => x.address === "10.0.0.6:80");
      return n?.label === "web-2" ? true : undefined;
    }, 30_000, 100);
    expect(delta(before)).toEqual({ [`POST ${CONFIG}/rebuild`]: 1 });
  });

  it("a node address only the API refuses: Synced=False with the API's reason, tried once, not in a loop", async () => {
    // Refused, it waits for a change and is not looked at again: another NodeBalancer, polled
    // every drift poll (2 s), shows the operator's time going by meanwhile.
    await Promise.all([webNb("refused"), create("ticker", { configs: [] })]);
    s.env.emulator.rejectNodeAddresses({ "192.168.99.99": "No Linode in us-east has the private address 192.168.99.99" });
    try {
      const current = (await get("refused")).spec as { configs: { nodes: unknown[] }[] };
      const [c80, c443] = current.configs;
      const rebuilds = (): number => count("POST", `${CONFIG}/rebuild`);
      const before = rebuilds();
      await patch("refused", { configs: [{ ...c80, nodes: [...(c80?.nodes ?? []), { label: "ghost", address: "192.168.99.99:80" }] }, c443] });
      const c = await reason("refused", "Synced", "ApiRejected");
      expect(c.message).toContain("No Linode in us-east has the private address 192.168.99.99");
      const passes = s.env.passes("NodeBalancer", key("refused"));
      await s.env.afterPasses("NodeBalancer", key("ticker"), 3);
      expect(rebuilds() - before).toBe(1);
      // At most the pass that wrote ApiRejected, if it had not ended yet: no retry of its own.
      expect(s.env.passes("NodeBalancer", key("refused")) - passes).toBeLessThanOrEqual(1);
      await patch("refused", { configs: current.configs });
      await settled("refused");
    } finally {
      s.env.emulator.rejectNodeAddresses({});
    }
  });

  it("Ready follows the backends' health: no backend UP on a checked config is NoBackendUp, with the counts", async () => {
    const { id } = await webNb("health");
    const nodes = (await cloud(id)).find((c) => c.port === 80)?.nodes ?? [];
    for (const n of nodes) await fetch(`${s.env.emulator.adminUrl}/nodes/${String(n.id)}/status`, { method: "PUT", body: JSON.stringify({ status: "DOWN" }), headers: { "content-type": "application/json" } });
    const c = await reason("health", "Ready", "NoBackendUp");
    expect(c.message).toContain("config 80: no backend UP (2 DOWN)");
    for (const n of nodes) await fetch(`${s.env.emulator.adminUrl}/nodes/${String(n.id)}/status`, { method: "PUT", body: JSON.stringify({ status: "UP" }), headers: { "content-type": "application/json" } });
    await settled("health");
  });

  it("a missing TLS Secret is TLSSecretNotFound, an invalid one TLSSecretInvalid; nothing is created until it is right", async () => {
    const posts = (): number => count("POST", NB);
    const before = posts();
    await create("secure", { configs: [httpsWith("secure-tls")] });
    const missing = await reason("secure", "Ready", "TLSSecretNotFound");
    expect(missing.message).toContain("kubectl create secret tls");
    const other = generateCertificate({ commonName: "other.example.com" });
    await tlsSecret("secure-tls", { certPem: firstCert.certPem, keyPem: other.keyPem });
    const invalid = await reason("secure", "Ready", "TLSSecretInvalid");
    expect(invalid.message).toContain("tls.key does not match the certificate");
    expect(invalid.message).not.toContain("PRIVATE KEY");
    expect(posts()).toBe(before);
    const good = generateCertificate({ commonName: "secure.example.com" });
    await tlsSecret("secure-tls", good);
    const nb = await settled("secure");
    expect(status(nb).configs?.[0]?.sslFingerprint).toBe(fingerprint(good));
    expect(posts()).toBe(before + 1);
  });

  it("a label taken by a NodeBalancer it did not create is LabelInUse: nothing created, adopted or deleted", async () => {
    const theirs = await s.env.linode.nodeBalancers.create({ region: "us-east", label: "someone-elses" });
    const posts = count("POST", NB);
    await create("clash", { label: "someone-elses" });
    const c = await reason("clash", "Synced", "LabelInUse");
    expect(c.message).toContain(`spec.nodeBalancerId: ${String(theirs.id)}`);
    expect(count("POST", NB)).toBe(posts);
    await s.env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "clash" });
    await waitFor("clash gone", async () => get("clash").then(() => undefined, () => true), 30_000, 100);
    expect((await s.env.linode.nodeBalancers.get(theirs.id)).label).toBe("someone-elses");
  });

  it("adopts by id read-only with managementPolicy Observe: mirrors, reports differences, changes nothing", async () => {
    const theirs = await s.env.linode.nodeBalancers.create({ region: "us-east", label: "observed-nb", configs: [{ port: 8080, protocol: "tcp", nodes: [{ label: "b-1", address: "192.168.30.1:8080" }] }] });
    const before = mutations();
    await create("observed", { nodeBalancerId: theirs.id, managementPolicy: "Observe", clientConnThrottle: 5, configs: [] });
    const o = await waitFor("observed mirrored", async () => { const x = await get("observed"); return status(x).id === theirs.id && condOf(x, "Synced") !== undefined ? x : undefined; }, 30_000, 100);
    expect(status(o).configs?.map((c) => c.port)).toEqual([8080]);
    expect(condOf(o, "Synced")).toMatchObject({ status: "True", reason: "Observing" });
    expect(condOf(o, "Synced")?.message).toContain("clientConnThrottle 0 → 5");
    expect(condOf(o, "Synced")?.message).toContain("remove config 8080");
    await s.env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "observed" });
    await waitFor("observed gone", async () => get("observed").then(() => undefined, () => true), 30_000, 100);
    expect(delta(before)).toEqual({});
    expect((await s.env.linode.nodeBalancers.get(theirs.id)).label).toBe("observed-nb");
  });

  it("a NodeBalancer deleted behind its back is ExternalResourceGone, not replaced; a recreate token makes one, once", async () => {
    await create("fragile", { configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "f-1", address: "192.168.40.1:80" }] }] });
    const first = status(await settled("fragile")).id ?? 0;
    await s.env.linode.nodeBalancers.delete(first);
    await reason("fragile", "Ready", "ExternalResourceGone");
    const posts = count("POST", NB);
    // Three more looks at it: still gone, nothing created.
    await s.env.repass("NodeBalancer", key("fragile"), 3);
    expect(count("POST", NB)).toBe(posts);
    expect(condOf(await get("fragile"), "Ready")?.reason).toBe("ExternalResourceGone");
    await patch("fragile", { requests: { recreate: "r1" } });
    const again = await settled("fragile", (o) => status(o).id !== first);
    expect(count("POST", NB)).toBe(posts + 1);
    expect((await cloud(status(again).id ?? 0)).map((c) => c.port)).toEqual([80]);
  });

});

// Statistics reads have a budget of their own (50 a minute per token): an env of their own, so
// that the other tests' NodeBalancers have not spent it by the time these read.
describe("NodeBalancer statistics", () => {
  const s = nodeBalancerEnv("nb-stats");
  const { ns, create, get, status, condOf, reason, webNb } = s;

  it("statistics become metrics per NodeBalancer; a new one without statistics is not an error", async () => {
    const { id } = await webNb("counted");
    // Until its statistics exist (1 s after the create) the NodeBalancer is Synced all the same.
    const text = await waitFor("NodeBalancer metrics", async () => {
      const t = await s.env.registry.metrics();
      return t.includes(`linode_nodebalancer_connections{namespace="${ns()}",name="counted",id="${String(id)}"}`) ? t : undefined;
    }, 30_000, 200);
    expect(text).toContain(`linode_nodebalancer_traffic_bytes_per_second{namespace="${ns()}",name="counted",id="${String(id)}",direction="in"}`);
    expect(text).toContain(`linode_nodebalancer_traffic_bytes_per_second{namespace="${ns()}",name="counted",id="${String(id)}",direction="out"}`);
    expect(condOf(await get("counted"), "Synced")?.status).toBe("True");
  });

  it("deletes the cloud NodeBalancer before the resource goes; Retain leaves it (with the firewall it was created with)", async () => {
    const [{ id: doomed }, keptNb] = await Promise.all([webNb("doomed"), create("kept", { deletionPolicy: "Retain", firewallId: 4242 }).then(() => reason("kept", "Ready", "NoConfigs")).then(() => get("kept"))]);
    expect(status(keptNb).firewalls?.map((f) => f.id)).toEqual([4242]);
    const kept = status(keptNb).id ?? 0;
    // The doomed one's statistics are metrics (1 s after its create) until it goes.
    await waitFor("doomed's metrics", async () => ((await s.env.registry.metrics()).includes(`name="doomed",id="${String(doomed)}"`) ? true : undefined), 30_000, 200);
    // What is kept of each by id (its configs as last read, its statistics) goes with its resource, whether its NodeBalancer stays or not.
    const held = (): number[] => ["NodeBalancer.configs.seen", "NodeBalancer.stats.samples"].map((m) => s.env.deps.metrics.cacheEntries.sizes().get(m) ?? 0);
    const before = held();
    await s.env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "kept" });
    await s.env.deps.kube.deleteCustom(nbType, { namespace: ns(), name: "doomed" });
    await waitFor("both resources gone", async () => {
      const left = await Promise.all(["kept", "doomed"].map((n) => get(n).then(() => n, () => undefined)));
      return left.every((l) => l === undefined) ? true : undefined;
    }, 30_000, 100);
    expect((await s.env.linode.nodeBalancers.get(kept)).id).toBe(kept);
    await expect(s.env.linode.nodeBalancers.get(doomed)).rejects.toMatchObject({ kind: "notFound" });
    // Its statistics go with it.
    expect(await s.env.registry.metrics()).not.toContain(`name="doomed",id="${String(doomed)}"`);
    expect(held()).toEqual(before.map((n) => n - 2));
  });
});

// With a drift window as long as the product's (10 s here, 300 s by default), the first look
// after a create is the one that finds it Ready: after the first health check and outside
// `updated`'s trust window, so nothing is read twice on the way.
describe("NodeBalancer: the way to Ready", () => {
  const s = nodeBalancerEnv("nb-first-look", { pendingMillis: 300, readyMillis: 10_000 });
  const { create, settled, status, count } = s;

  it("reads the configs once and each config's nodes once; no firewalls list for one created without a firewall", async () => {
    const before = { configs: count("GET", CONFIGS), nodes: count("GET", NODES), firewalls: count("GET", `${ONE}/firewalls`) };
    await create("first-look", { configs: [http80, { port: 8080, ...checked, nodes: [{ label: "api-1", address: "192.168.10.7:8080" }] }] });
    const nb = await settled("first-look", (o) => status(o).configs?.every((c) => c.nodes?.every((n) => n.status === "UP") === true) === true);
    expect(status(nb).configs?.map((c) => c.port)).toEqual([80, 8080]);
    // A first look within 3 s of the create (its check interval is 2 s) was not trusted: the next read every config's nodes and the firewalls again.
    expect({ configs: count("GET", CONFIGS) - before.configs, nodes: count("GET", NODES) - before.nodes, firewalls: count("GET", `${ONE}/firewalls`) - before.firewalls }).toEqual({ configs: 1, nodes: 2, firewalls: 0 });
  });
});

// A settled NodeBalancer is looked at once a drift window, against the one NodeBalancer list
// the looks share (up to a window old). A change made outside just after a list would be seen
// only at the look after the next list, up to two windows on: instead, the list that finds its
// `updated` moved wakes it.
describe("NodeBalancer: drift found by the shared list", () => {
  const s = nodeBalancerEnv("nb-list-drift", { pendingMillis: 300, readyMillis: 40_000 });
  const { create, settled, status } = s;

  it("a node weight changed outside is put back at the next list another look makes, not at its own look a window later", async () => {
    await create("steady", { configs: [{ ...http80, nodes: http80.nodes.map((n) => ({ ...n, weight: 50 })) }] });
    const nb = await settled("steady", (o) => status(o).configs?.every((c) => c.nodes?.every((n) => n.status === "UP") === true) === true);
    // Its next look is at least 36 s away (the window less its jitter).
    const lookedAt = Date.now();
    const id = status(nb).id ?? 0;
    const config = status(nb).configs?.[0];
    const node = config?.nodes?.[0];
    expect(node?.id).toBeDefined();
    await s.env.linode.nodeBalancers.updateNode(id, config?.id ?? 0, node?.id ?? 0, { weight: 7 });
    // A new NodeBalancer, on its way to Ready, lists the account's NodeBalancers every pending poll.
    await create("newcomer", { configs: [http80] });
    const putBack = await waitFor("the weight put back", async () => {
      const n = await s.env.linode.nodeBalancers.getNode(id, config?.id ?? 0, node?.id ?? 0);
      return n.weight !== 7 ? Date.now() : undefined;
    }, 60_000, 200);
    expect(putBack - lookedAt).toBeLessThan(20_000);
  });
});
