// Doctor's cluster checks on answers a real API server gives (404, 403, another release's CRD),
// without one: what each says and whether it fails. The real API server's answers are in
// test/integration/doctor.test.ts.
import { describe, expect, it } from "vitest";
import { buildCrd, crdName } from "../../src/crd/build-crd.ts";
import { crdChecks, firstDifference, nodesCheck, rbacCheck, type Cluster } from "../../src/doctor/cluster-checks.ts";
import { neededPermissions } from "../../src/doctor/rbac-needs.ts";
import { exitCode, renderJson, renderText } from "../../src/doctor/report.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { AccessAttributes, KubeObject } from "../../src/kube/types.ts";
import { kindDefinitions, readGates } from "../../src/resources/index.ts";

const [mdb, snap, nb] = kindDefinitions as [typeof kindDefinitions[0], typeof kindDefinitions[0], typeof kindDefinitions[0]];

function fakeCluster(opts: { crds?: Record<string, unknown>; crdError?: number; listError?: number; allow?: (a: AccessAttributes) => boolean }): Cluster & { asked: AccessAttributes[] } {
  const asked: AccessAttributes[] = [];
  return {
    asked,
    canI: (a) => { asked.push(a); return Promise.resolve({ allowed: opts.allow?.(a) ?? true }); },
    getCrd: (name) => {
      if (opts.crdError !== undefined) return Promise.reject(new KubeApiError(opts.crdError, "", "refused"));
      const crd = opts.crds?.[name];
      return crd === undefined ? Promise.reject(new KubeApiError(404, "NotFound", "not found")) : Promise.resolve(crd as KubeObject);
    },
    getDeployment: () => Promise.reject(new Error("unused")),
    list: () => (opts.listError !== undefined ? Promise.reject(new KubeApiError(opts.listError, "", "refused")) : Promise.resolve({ items: [], resourceVersion: "1", continueToken: undefined })),
  };
}

describe("doctor: CRDs", () => {
  it("this build's CRDs are OK; a missing one and another release's FAIL with the fix", async () => {
    const older = structuredClone(buildCrd(nb)) as { spec: { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] } };
    delete (older.spec.versions[0]?.schema.openAPIV3Schema.properties.spec as { properties: Record<string, unknown> }).properties.firewallId;
    const kube = fakeCluster({ crds: { [crdName(mdb)]: buildCrd(mdb), [crdName(nb)]: older } });
    const results = await crdChecks(kube, [mdb, snap, nb]);
    expect(results.map((r) => r.status)).toEqual(["OK", "FAIL", "FAIL"]);
    expect(results[1]).toMatchObject({ message: "not installed", fix: expect.stringContaining("kubectl apply --server-side -f crds/") as unknown });
    expect(results[2]?.message).toContain("first difference at .properties.spec.properties.firewallId");
  });

  it("credentials that cannot read CRDs: served is a warning, neither is a warning, a 404 list is a failure", async () => {
    expect((await crdChecks(fakeCluster({ crdError: 403 }), [mdb]))[0]).toMatchObject({ status: "WARN", message: expect.stringContaining("version is not checked") as unknown });
    expect((await crdChecks(fakeCluster({ crdError: 403, listError: 403 }), [mdb]))[0]).toMatchObject({ status: "WARN", message: expect.stringContaining("cannot be checked") as unknown });
    expect((await crdChecks(fakeCluster({ crdError: 403, listError: 404 }), [mdb]))[0]).toMatchObject({ status: "FAIL" });
  });

  it("firstDifference names the path", () => {
    expect(firstDifference({ a: { b: [1, 2] } }, { a: { b: [1, 3] } })).toBe(".a.b.1");
    expect(firstDifference({ a: 1 }, { a: 1 })).toBeUndefined();
  });
});

describe("doctor: RBAC and Nodes", () => {
  const needed = neededPermissions({ kinds: kindDefinitions, gates: readGates({ readNodes: true }), clusterIdSet: false, leaseName: "op", tokenSecret: "tok", deploymentName: "op" });

  it("asks each verb in each watched namespace, the own namespace and cluster-wide; names what is denied and why", async () => {
    const all = fakeCluster({});
    expect((await rbacCheck(all, needed, ["team-a", "team-b"], "ops")).status).toBe("OK");
    expect(all.asked.some((a) => a.resource === "secrets" && a.verb === "delete" && a.namespace === "team-b")).toBe(true);
    expect(all.asked.some((a) => a.resource === "leases" && a.namespace === "ops")).toBe(true);
    expect(all.asked.some((a) => a.resource === "namespaces" && a.name === "kube-system" && a.namespace === undefined)).toBe(true);
    // Nodes are the Nodes line's.
    expect(all.asked.some((a) => a.resource === "nodes")).toBe(false);
    const noPatch = fakeCluster({ allow: (a) => !(a.resource === "manageddatabases" && a.subresource === "status") });
    const r = await rbacCheck(noPatch, needed, [], "ops");
    expect(r.status).toBe("FAIL");
    expect(r.message).toMatch(/^missing 1 of \d+: patch manageddatabases\/status\.linode\.operator\.dev \(all namespaces\) \(write their status\)$/);
  });

  it("Nodes: readable and wanted OK; not readable WARN naming rbac.readNodes=true, FAIL when READ_NODES is set", async () => {
    const denied = fakeCluster({ allow: (a) => a.resource !== "nodes" });
    expect(await nodesCheck(fakeCluster({}), true)).toMatchObject({ status: "OK" });
    expect(await nodesCheck(denied, false)).toMatchObject({ status: "WARN", message: expect.stringContaining("allowListFrom.nodes") as unknown, fix: expect.stringContaining("rbac.readNodes=true") as unknown });
    expect(await nodesCheck(denied, true)).toMatchObject({ status: "FAIL" });
    expect(await nodesCheck(fakeCluster({}), false)).toMatchObject({ status: "WARN", fix: expect.stringContaining("rbac.readNodes=true") as unknown });
  });

  it("the report: one line each, the fix under what is not OK, exit 1 on a FAIL, JSON for machines", () => {
    const results = [{ check: "A", status: "OK" as const, message: "fine" }, { check: "Bee", status: "FAIL" as const, message: "broken", fix: "mend it" }];
    expect(renderText(results)).toBe("OK    A    fine\nFAIL  Bee  broken\n           fix: mend it\n\n1 OK, 0 WARN, 1 FAIL");
    expect(exitCode(results)).toBe(1);
    expect(exitCode(results.slice(0, 1))).toBe(0);
    expect(JSON.parse(renderJson(results))).toEqual({ ok: false, checks: results });
  });
});
