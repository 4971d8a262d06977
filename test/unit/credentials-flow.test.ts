// Which flow of a controller's queue an object's work belongs to: the credentials it acts with,
// as the object says (src/resources/shared/credentials.ts credentialsFlow).
import { describe, expect, it } from "vitest";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { credentialsFlow } from "../../src/resources/shared/credentials.ts";

const obj = (spec: Record<string, unknown>, status?: Record<string, unknown>, namespace = "team-a"): ManagedObject =>
  ({ apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "db", namespace }, spec, ...(status !== undefined ? { status } : {}) });

describe("credentialsFlow", () => {
  it("is the spec's credentials Secret, in the object's namespace", () => {
    expect(credentialsFlow(obj({ credentialsRef: { name: "linode" } }))).toBe("team-a/linode");
    expect(credentialsFlow(obj({ credentialsRef: { name: "linode" } }, undefined, "team-b"))).toBe("team-b/linode");
  });

  it("else the Secret its status recorded, or the operator's token when it recorded none", () => {
    expect(credentialsFlow(obj({}, { account: { id: "abc", credentialsRef: { name: "old", key: "token" } } }))).toBe("team-a/old");
    expect(credentialsFlow(obj({}, { account: { id: "abc" } }))).toBe("operator");
  });

  it("else what it inherits from (a snapshot's database), else the operator's token", () => {
    const db = obj({ credentialsRef: { name: "linode" } });
    expect(credentialsFlow(obj({ databaseRef: { name: "db" } }), db)).toBe("team-a/linode");
    expect(credentialsFlow(obj({ databaseRef: { name: "db" } }))).toBe("operator");
    // Its own credentials win over its database's.
    expect(credentialsFlow(obj({ credentialsRef: { name: "mine" } }), db)).toBe("team-a/mine");
  });
});
