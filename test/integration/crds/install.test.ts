import { describe, expect, it } from "vitest";
import { useTestCluster } from "../../harness/cluster.ts";
import { installCrds } from "../../harness/crds.ts";

describe("CRD installation", () => {
  const cluster = useTestCluster("crds-install");

  it("installs every generated CRD, idempotently", async () => {
    await installCrds(cluster);
    await installCrds(cluster);
    const res = await cluster.kubectl(["get", "crd", "-o", "name"]);
    expect(res.stdout).toContain("manageddatabases.linode.operator.dev");
  });
});
