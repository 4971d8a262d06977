// What a log line says of an error: its message with the causes undici and Node wrap inside it
// ("fetch failed" alone says nothing about why).
import { describe, expect, it } from "vitest";
import { KubeApiError, errorChain } from "../../src/kube/errors.ts";

describe("errorChain", () => {
  it("follows causes: fetch failed: connect ECONNREFUSED", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" });
    expect(errorChain(new TypeError("fetch failed", { cause: refused }))).toBe("fetch failed: connect ECONNREFUSED 127.0.0.1:6443");
  });

  it("says a Kubernetes API error's code and reason; skips a cause that repeats its parent; stops at five levels", () => {
    expect(errorChain(new KubeApiError(409, "Conflict", "the object has been modified"))).toBe("409 Conflict: the object has been modified");
    expect(errorChain(new Error("same", { cause: new Error("same") }))).toBe("same");
    let deep: Error = new Error("level 9");
    for (let i = 8; i >= 0; i--) deep = new Error(`level ${String(i)}`, { cause: deep });
    expect(errorChain(deep).split(": ")).toHaveLength(5);
    expect(errorChain("plain")).toBe("plain");
  });
});
