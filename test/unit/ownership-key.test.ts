// The install's ownership key: made once (random, 32 bytes) in a Secret beside the Lease, read
// by every replica after; where the operator may not reach it, none (proofs fall back to each
// account's token), said in a warning.
import { describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { ownershipKey } from "../../src/runtime/ownership-key.ts";
import { MemoryKube } from "../fixtures/memory-kube.ts";

const where = { namespace: "ops", name: "linode-operator-ownership-key" };
const quiet = { warn: (): void => undefined };

describe("the ownership key", () => {
  it("is made once, then every replica reads the same", async () => {
    const kube = new MemoryKube();
    const first = await ownershipKey(kube, where, quiet);
    expect(first?.length).toBe(32);
    const second = await ownershipKey(kube, where, quiet);
    expect(second?.equals(first ?? Buffer.alloc(0))).toBe(true);
    expect(kube.writes.filter((w) => w.method === "create" && w.plural === "secrets")).toHaveLength(1);
  });

  it("two replicas starting at once: the one whose create loses reads the winner's", async () => {
    const kube = new MemoryKube();
    const [a, b] = await Promise.all([ownershipKey(kube, where, quiet), ownershipKey(kube, where, quiet)]);
    expect(a?.equals(b ?? Buffer.alloc(0))).toBe(true);
  });

  it("where the operator may not read it (403): none, and a warning that says what to grant", async () => {
    const kube = new MemoryKube();
    kube.failNext("getSecret", new KubeApiError(403, "Forbidden", "secrets is forbidden"));
    const said: string[] = [];
    const log = { warn: (...args: unknown[]): void => { said.push(String(args[1])); } };
    expect(await ownershipKey(kube, where, log)).toBeUndefined();
    expect(said.join()).toContain("grant get and create");
  });

  it("a Secret without a usable key is not trusted (none), never overwritten", async () => {
    const kube = new MemoryKube();
    await kube.createSecret({ metadata: where, data: { key: Buffer.from("short").toString("base64") } });
    expect(await ownershipKey(kube, where, quiet)).toBeUndefined();
    expect(kube.writes.filter((w) => w.method === "create" && w.plural === "secrets")).toHaveLength(1);
  });
});
