// What a user sees with kubectl: short names, the `linode` category, printer columns fed by
// the status subresource, and `kubectl explain` descriptions from the zod schemas.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../../harness/cluster.ts";
import { installCrds } from "../../harness/crds.ts";
import { customObjects, databaseSnapshot, group, managedDatabase, nodeBalancer, version } from "./custom-objects.ts";

const readyStatus = (extra: Record<string, unknown>) => ({
  ...extra,
  observedGeneration: 1,
  conditions: [
    { type: "Ready", status: "True", reason: "Available", lastTransitionTime: "2026-01-01T00:00:00Z" },
    { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: "2026-01-01T00:00:00Z" },
  ],
});

describe("CRDs through kubectl", () => {
  const cluster = useTestCluster("crds-kubectl");
  const api = customObjects(cluster);
  const ns = cluster.namespace;
  const kubectl = async (...args: string[]): Promise<string> => {
    const res = await cluster.kubectl(["-n", ns, ...args]);
    expect(res.code, res.stderr).toBe(0);
    return res.stdout;
  };

  beforeAll(async () => {
    await installCrds(cluster);
    const created = await Promise.all([
      api.create(managedDatabase, "orders", { engine: "postgresql", version: "16", region: "us-east", type: "g6-dedicated-2" }),
      api.create(databaseSnapshot, "orders-nightly", { databaseRef: { name: "orders" } }),
      api.create(nodeBalancer, "web", { region: "us-east", configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.210.120:80" }] }] }),
    ]);
    for (const c of created) expect(c.ok, JSON.stringify(c)).toBe(true);
    const custom = cluster.kc.makeApiClient(CustomObjectsApi);
    const statuses: [string, string, Record<string, unknown>][] = [
      [managedDatabase.plural, "orders", readyStatus({ id: 41, status: "active", version: "16.4", type: "g6-dedicated-2", clusterSize: 1, platform: "current", hosts: { primary: "a41.example.net" }, port: 5432 })],
      [databaseSnapshot.plural, "orders-nightly", readyStatus({ phase: "Available", backupId: 9001, label: "ordersnightly1a2b", databaseId: 41 })],
      [nodeBalancer.plural, "web", readyStatus({ id: 7, hostname: "203-0-113-10.ip.linodeusercontent.com", ipv4: "203.0.113.10", ipv6: "2001:db8::10", ports: "80,443", configs: [{ port: 80, protocol: "http", id: 3, nodesStatus: { up: 1, down: 0 }, nodes: [{ label: "web-1", address: "192.168.210.120:80", id: 11, status: "UP" }] }] })],
    ];
    for (const [plural, name, status] of statuses) {
      await custom.patchNamespacedCustomObjectStatus(
        { group, version, namespace: ns, plural, name, body: { status } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    }
  });

  it("kubectl get linode lists the objects of every kind", async () => {
    const out = await kubectl("get", "linode", "-o", "name");
    expect(out.trim().split("\n").sort()).toEqual([
      "databasesnapshot.linode.operator.dev/orders-nightly",
      "manageddatabase.linode.operator.dev/orders",
      "nodebalancer.linode.operator.dev/web",
    ]);
  });

  it("kubectl get linodedb shows engine, the version the API reports, region, status, ready and age; -o wide the plan, nodes and platform", async () => {
    const [header = "", row = ""] = (await kubectl("get", "linodedb")).trim().split("\n");
    expect(header.split(/\s+/)).toEqual(["NAME", "ENGINE", "VERSION", "REGION", "STATUS", "READY", "SYNCED", "AGE"]);
    expect(row.split(/\s+/).slice(0, 7)).toEqual(["orders", "postgresql", "16.4", "us-east", "active", "True", "True"]);
    const wide = await kubectl("get", "manageddatabase", "orders", "-o", "wide");
    expect(wide).toContain("a41.example.net");
    expect(wide.split("\n")[1]?.split(/\s+/)).toEqual(expect.arrayContaining(["g6-dedicated-2", "1", "current"]));
  });

  it("kubectl get dbsnap shows database, label, phase, ready, backup id and age", async () => {
    const [header = "", row = ""] = (await kubectl("get", "dbsnap")).trim().split("\n");
    expect(header.split(/\s{2,}/)).toEqual(["NAME", "DATABASE", "LABEL", "PHASE", "READY", "BACKUP ID", "AGE"]);
    expect(row.split(/\s+/).slice(0, 6)).toEqual(["orders-nightly", "orders", "ordersnightly1a2b", "Available", "True", "9001"]);
    const wide = await kubectl("get", "dbsnap", "-o", "wide");
    expect(wide.split("\n")[0]?.split(/\s{2,}/)).toEqual(["NAME", "DATABASE", "LABEL", "PHASE", "READY", "BACKUP ID", "REASON", "CREATED", "AGE"]);
  });

  it("kubectl get nb shows hostname, IPv4, ports and ready", async () => {
    const [header = "", row = ""] = (await kubectl("get", "nb")).trim().split("\n");
    expect(header.split(/\s+/)).toEqual(["NAME", "REGION", "HOSTNAME", "IPV4", "PORTS", "READY", "SYNCED", "AGE"]);
    expect(row.split(/\s+/).slice(0, 7)).toEqual(["web", "us-east", "203-0-113-10.ip.linodeusercontent.com", "203.0.113.10", "80,443", "True", "True"]);
  });

  it("status is a subresource: a spec write does not touch it, and it rejects unknown phases", async () => {
    const patched = await api.mergePatchSpec(managedDatabase, "orders", { type: "g6-dedicated-4" });
    expect(patched.ok).toBe(true);
    expect((await api.get(managedDatabase, "orders")).status).toMatchObject({ id: 41, status: "active" });
    const custom = cluster.kc.makeApiClient(CustomObjectsApi);
    const bad = await custom.patchNamespacedCustomObjectStatus(
      { group, version, namespace: ns, plural: databaseSnapshot.plural, name: "orders-nightly", body: { status: { phase: "Exploded" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    ).then(() => undefined, (e: unknown) => e as { code: number; body: string });
    expect(bad?.code).toBe(422);
    expect(bad?.body).toContain("status.phase: Unsupported value");
  });

  it("kubectl explain describes every field", async () => {
    const spec = await kubectl("explain", "linodedb.spec");
    expect(spec).toContain("Desired state of a Linode managed database cluster.");
    for (const field of ["engine", "version", "region", "type", "label", "clusterSize", "allowList", "updates", "connectionSecret", "deletionPolicy", "managementPolicy", "databaseId", "requests"]) {
      expect(spec).toMatch(new RegExp(`^\\s+${field}\\s`, "m"));
    }
    expect(spec).toContain("Engine version");
    const flat = async (...args: string[]): Promise<string> => (await kubectl(...args)).replace(/\s+/g, " ");
    expect(await flat("explain", "linodedb.spec.version")).toContain("a higher major version is an in-place upgrade");
    const restoreFrom = await kubectl("explain", "linodedb.spec.restoreFrom", "--recursive");
    for (const field of ["pointInTime", "databaseRef", "databaseId", "restoreTime"]) expect(restoreFrom).toMatch(new RegExp(`^\\s+${field}\\s`, "m"));
    expect(await flat("explain", "linodedb.spec.restoreFrom")).toContain("as a fork of another");
    expect(await flat("explain", "linodedb.spec.restoreFrom.pointInTime.restoreTime")).toContain("RestoreTimeOutOfRange");
    expect(await flat("explain", "linodedb.status.fork")).toContain("forked from");
    expect(await flat("explain", "linodedb.spec.allowListFrom")).toContain("Allow-list entries that follow the cluster");
    expect(await flat("explain", "linodedb.spec.allowListFrom.nodes")).toContain("rbac.readNodes=true");
    expect(await flat("explain", "linodedb.spec.allowListFrom.cidrs.name")).toContain("linode.operator.dev/allow-list");
    expect(await flat("explain", "nb.spec.configs.nodesFrom")).toContain("Backends that follow the cluster");
    expect(await flat("explain", "nb.spec.configs.nodesFrom.serviceRef.port")).toContain("nodePort");
    expect(await kubectl("explain", "nb.spec.configs.checkTimeout")).toContain("must be less than checkInterval");
    expect(await kubectl("explain", "nb.spec.configs.nodes.address")).toContain("192.168.128.0/17");
    expect(await kubectl("explain", "dbsnap.spec.label")).toContain("1..30 ASCII letters or digits");
    expect(await kubectl("explain", "linodedb.status.conditions")).toContain("Ready: the cloud object is usable.");
  });
});
