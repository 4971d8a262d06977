import { describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.ts";
import { waitForApiServer } from "../../src/kube/wait-for-api-server.ts";

function recorder() {
  const lines: string[] = [];
  return { lines, log: { warn: (_o: object, msg: string) => { lines.push(`warn ${msg}`); }, info: (_o: object, msg: string) => { lines.push(`info ${msg}`); } } };
}

describe("waiting for the API server at startup", () => {
  it("retries transport errors, 429 and 5xx with a capped back-off, logging now and then, until it answers", async () => {
    const failures: Error[] = [new TypeError("fetch failed"), new KubeApiError(503, "ServiceUnavailable", "starting"), new KubeApiError(429, "TooManyRequests", "busy"), new TypeError("fetch failed"), new TypeError("fetch failed")];
    let calls = 0;
    const delays: number[] = [];
    const { lines, log } = recorder();
    const meanwhile = { started: 0, closed: 0 };
    await waitForApiServer(() => {
      calls++;
      const err = failures.shift();
      return err === undefined ? Promise.resolve() : Promise.reject(err);
    }, log, {
      maxDelayMillis: 2_000, logEveryMillis: 60_000, sleep: (ms) => { delays.push(ms); return Promise.resolve(); },
      whileWaiting: () => { meanwhile.started++; return Promise.resolve({ close: () => { meanwhile.closed++; return Promise.resolve(); } }); },
    });
    expect(calls).toBe(6);
    expect(delays).toEqual([500, 1_000, 2_000, 2_000, 2_000]);
    expect(lines).toEqual(["warn Kubernetes API server not reachable; waiting for it", "info Kubernetes API server reachable"]);
    // The liveness endpoint served while waiting: once, closed before the operator serves its own.
    expect(meanwhile).toEqual({ started: 1, closed: 1 });
  });

  it("fails at once when the API server refuses the credentials", async () => {
    const { lines, log } = recorder();
    await expect(waitForApiServer(() => Promise.reject(new KubeApiError(401, "Unauthorized", "Unauthorized")), log, { sleep: () => Promise.resolve() })).rejects.toThrow("Unauthorized");
    expect(lines).toEqual([]);
  });

  it("is silent and serves nothing extra when the API server answers at once", async () => {
    const { lines, log } = recorder();
    let started = 0;
    await waitForApiServer(() => Promise.resolve(), log, { whileWaiting: () => { started++; return Promise.resolve({ close: () => Promise.resolve() }); } });
    expect(lines).toEqual([]);
    expect(started).toBe(0);
  });
});
