// The official Go SDK (github.com/linode/linodego, pinned in linodego/go.mod) against an
// in-process emulator: every managed-database and NodeBalancer operation of the spec, run
// by `go test` in ./linodego. Needs `go` on PATH (skipped loudly otherwise); the first run
// may download the module from the Go module proxy, later runs use the Go build cache.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { available, run, warnSkipped } from "./helpers.ts";

const MODULE_DIR = fileURLToPath(new URL("./linodego", import.meta.url));
const TOKEN = "linodego-external-token";
const hasGo = available("go", ["version"]);
if (!hasGo) warnSkipped("linodego external-client test", "`go` is not on PATH; install Go to run it");

describe("linodego (official Go SDK) against the emulator", () => {
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    if (!hasGo) return;
    // Short transitions so the SDK's WaitForDatabaseStatus polls finish fast; statistics at once.
    emu = await startEmulator({ tokens: [TOKEN], provisionSeconds: 0.2, statsDelaySeconds: 0 });
  });

  afterAll(async () => {
    await emu?.close();
  });

  it.skipIf(!hasGo)("passes go test with every database and NodeBalancer operation", async () => {
    if (emu === undefined) throw new Error("emulator not started");
    const goflags = [process.env.GOFLAGS ?? "", "-mod=mod"].join(" ").trim();
    const result = await run("go", ["test", "-count=1", "-v", "./..."], {
      cwd: MODULE_DIR,
      env: { ...process.env, LINODE_URL: emu.url, LINODE_TOKEN: TOKEN, GOFLAGS: goflags, GOTOOLCHAIN: "local" },
      timeoutMs: 540_000,
    });
    const output = `${result.stdout}\n${result.stderr}`;
    if (result.code !== 0) process.stderr.write(output);
    expect(result.code, output).toBe(0);
    // Every top-level test ran (not skipped for want of LINODE_URL) and passed.
    expect(output).toMatch(/--- PASS: TestDatabases /);
    expect(output).toMatch(/--- PASS: TestNodeBalancers /);
    expect(output).toMatch(/--- PASS: TestNodeBalancerUDPAndLocks /);
    expect(output).not.toMatch(/--- SKIP/);
  }, 600_000);
});
