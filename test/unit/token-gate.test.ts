// The start-up token check, against the emulator over HTTP: a token that cannot work holds the
// operator back with one log line and one Warning Event per distinct problem however often it is
// looked at again, the token is read afresh from its Secret each time, and a fixed Secret lets it
// go on; a file token likewise. A fixed token (the environment's) is said to need a restart; an
// API that does not answer is said to be that, and does not hold the operator back.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject, SecretObject } from "../../src/kube/types.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { TOKEN_UNUSABLE_REASON, waitForUsableToken, type TokenGateOptions } from "../../src/doctor/token-gate.ts";

const GOOD = "good-token-0123";
const DB_ONLY = "db-only-token-0123";

describe("the start-up token check", () => {
  let emu: RunningEmulator;
  let dir: string;
  beforeAll(async () => {
    emu = await startEmulator({ rateLimits: false, config: { tokens: [{ token: GOOD, scopes: "*" }, { token: DB_ONLY, scopes: "databases:read_write" }] } });
    dir = await mkdtemp(join(tmpdir(), "token-gate-"));
  });
  afterAll(async () => {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  function harness(settings: Partial<TokenGateOptions["settings"]>, secretToken: () => string | undefined) {
    const lines: { level: string; obj: object; msg: string }[] = [];
    const events: { obj: KubeObject; reason: string; note: string }[] = [];
    const readiness: (string | undefined)[] = [];
    let looks = 0;
    const deployment: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "op", namespace: "ops", uid: "u-1" } };
    const opts: TokenGateOptions = {
      settings: { linodeApiUrl: emu.url, linodeTokenSecretKey: "token", leaderElectionNamespace: "ops", deploymentName: "op", ...settings },
      kube: {
        getSecret: (key) => {
          looks++;
          const t = secretToken();
          if (key.name !== "tok" || t === undefined) return Promise.reject(new KubeApiError(404, "NotFound", "not found"));
          return Promise.resolve({ metadata: { name: "tok" }, data: { token: Buffer.from(t).toString("base64") } } as SecretObject);
        },
        getDeployment: (key) => (key.name === "op" ? Promise.resolve(deployment) : Promise.reject(new KubeApiError(404, "NotFound", "not found"))),
      },
      log: {
        info: (obj: object, msg: string) => { lines.push({ level: "info", obj, msg }); },
        warn: (obj: object, msg: string) => { lines.push({ level: "warn", obj, msg }); },
        error: (obj: object, msg: string) => { lines.push({ level: "error", obj, msg }); },
      } as TokenGateOptions["log"],
      events: { normal: () => undefined, warning: (obj, reason, _action, note) => { events.push({ obj, reason, note }); } },
      kinds: ["ManagedDatabase", "DatabaseSnapshot", "NodeBalancer"],
      clientFor: (token) => new LinodeClient({ token, baseUrl: emu.url, registry: new Registry(), rateLimit: false, retry: { maxAttempts: 1 } }),
      setNotReady: (why) => { readiness.push(why); },
      recheckMillis: 20,
    };
    return { opts, lines, events, readiness, looks: () => looks };
  }

  it("an invalid token in the Secret: not Ready, one line and one Event however many looks, then Ready once the Secret is fixed", async () => {
    let secret = "revoked-token-0123";
    const h = harness({ linodeTokenSecret: "tok" }, () => secret);
    const gate = waitForUsableToken(h.opts);
    await expect.poll(() => h.looks(), { timeout: 10_000 }).toBeGreaterThan(4);
    expect(h.readiness.at(-1)).toMatch(/refused the operator's token \(Invalid Token\).*fix the Secret ops\/tok \(key token\)/);
    expect(h.lines.filter((l) => l.level === "error")).toHaveLength(1);
    expect(JSON.stringify(h.lines)).not.toContain(secret);
    expect(h.events).toEqual([{ obj: expect.objectContaining({ kind: "Deployment", metadata: expect.objectContaining({ uid: "u-1" }) as unknown }) as unknown, reason: TOKEN_UNUSABLE_REASON, note: h.readiness.at(-1) }]);
    // Another problem is said once more: now it lacks a scope.
    secret = DB_ONLY;
    await expect.poll(() => h.events.length, { timeout: 10_000 }).toBe(2);
    expect(h.events[1]?.note).toMatch(/lacks the scope nodebalancers:read_write/);
    secret = GOOD;
    await expect(gate).resolves.toBe(GOOD);
    expect(h.readiness.at(-1)).toBeUndefined();
    expect(h.lines.filter((l) => l.level === "error")).toHaveLength(2);
    expect(h.lines.at(-1)).toMatchObject({ level: "info", msg: "the operator's Linode token works now" });
  });

  it("a token file is read afresh too", async () => {
    const file = join(dir, "token");
    await writeFile(file, "wrong-token-0123\n");
    const h = harness({ linodeTokenFile: file }, () => undefined);
    const gate = waitForUsableToken(h.opts);
    await expect.poll(() => h.readiness.at(-1) ?? "", { timeout: 10_000 }).toMatch(/fix the token file/);
    await writeFile(file, `${GOOD}\n`);
    await expect(gate).resolves.toBe(GOOD);
  });

  it("the environment's token cannot change: the fix says to restart; an unreachable API is not the token, and does not hold the operator back", async () => {
    const fixed = harness({ linodeToken: "wrong-token-0123" }, () => undefined);
    const ac = new AbortController();
    const gate = waitForUsableToken({ ...fixed.opts, signal: ac.signal });
    await expect.poll(() => fixed.readiness.at(-1) ?? "", { timeout: 10_000 }).toMatch(/fix LINODE_TOKEN \(then restart the operator\)/);
    ac.abort();
    await expect(gate).resolves.toBeUndefined();

    // No answer says nothing of the token: one warning saying so, and the operator starts.
    const down = harness({ linodeToken: GOOD, linodeApiUrl: "http://127.0.0.1:9/v4" }, () => undefined);
    await expect(waitForUsableToken({ ...down.opts, clientFor: (token) => new LinodeClient({ token, baseUrl: "http://127.0.0.1:9/v4", registry: new Registry(), rateLimit: false, retry: { maxAttempts: 1 } }) })).resolves.toBe(GOOD);
    expect(down.lines).toEqual([expect.objectContaining({ level: "warn", obj: { check: "linode-token", verdict: "unreachable" }, msg: expect.stringMatching(/could not be reached .*a network problem, not the token.*; starting without having checked the token$/) as unknown })]);
    expect(down.events).toEqual([]);
    expect(down.readiness).toEqual([undefined]);
  });

  it("stopped while the API is being asked: the aborted call is not an unreachable API, and the gate gives no token", async () => {
    const h = harness({ linodeToken: GOOD }, () => undefined);
    const ac = new AbortController();
    const clientFor = (token: string): LinodeClient => {
      ac.abort(); // lands while the token is being assessed
      return h.opts.clientFor(token);
    };
    await expect(waitForUsableToken({ ...h.opts, clientFor, signal: ac.signal })).resolves.toBeUndefined();
    expect(h.lines).toEqual([]);
  });

  it("a token that works lets it go on at once, with nothing said", async () => {
    const h = harness({ linodeToken: GOOD }, () => undefined);
    await expect(waitForUsableToken(h.opts)).resolves.toBe(GOOD);
    expect(h.lines).toEqual([]);
    expect(h.events).toEqual([]);
  });
});
