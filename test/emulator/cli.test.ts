import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, LINODE_TOKEN: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => { resolve(code); }));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", () => { reject(new Error("exited before printing")); });
  });
  firstLine.catch(() => undefined); // callers that only wait for the exit code ignore it
  return { child, exited, firstLine };
}

describe("linode-operator emulator (CLI)", () => {
  it("prints the listening line, serves, and exits 0 on SIGTERM after saving state", async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), "emu-cli-")), "state.json");
    const p = run(["emulator", "--port", "0", "--token", "t1", "--token", "t2", "--provision-seconds", "0", "--state-file", stateFile]);
    const line = await p.firstLine;
    const m = /^Linode API emulator listening on (http:\/\/127\.0\.0\.1:(\d+)\/v4)$/.exec(line);
    expect(m).not.toBeNull();
    const url = m?.[1] ?? "";
    expect((await call(url, "GET", "/databases/engines", undefined, { token: "t2" })).status).toBe(200);
    const created = await call(url, "POST", "/databases/mysql/instances", { label: "cli-db", region: "us-east", type: "g6-nanode-1", engine: "mysql/8" }, { token: "t1" });
    expect(created.status).toBe(200);
    expect((await call(url, "GET", "/databases/engines", undefined, { token: "t3" })).status).toBe(401);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(existsSync(stateFile)).toBe(true);
    expect(readFileSync(stateFile, "utf8")).toContain("cli-db");
  });
  it("takes its default token from LINODE_TOKEN", async () => {
    const p = run(["emulator", "--port", "0"], { LINODE_TOKEN: "from-env" });
    const url = /listening on (\S+)$/.exec(await p.firstLine)?.[1] ?? "";
    expect((await call(url, "GET", "/databases/engines", undefined, { token: "from-env" })).status).toBe(200);
    p.child.kill("SIGINT");
    expect(await p.exited).toBe(0);
  });
  it("--valkey offers the Valkey engine, which is not listed without it", async () => {
    const engines = async (args: string[]): Promise<string[]> => {
      const p = run(["emulator", "--port", "0", "--token", "t", ...args]);
      const url = /listening on (\S+)$/.exec(await p.firstLine)?.[1] ?? "";
      const list = (await call(url, "GET", "/databases/engines", undefined, { token: "t" })).body as { data: { engine: string }[] };
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      return list.data.map((e) => e.engine);
    };
    expect(await engines(["--valkey"])).toContain("valkey");
    expect(await engines([])).not.toContain("valkey");
  });
  it("--stats-delay-seconds makes a new NodeBalancer's statistics available sooner", async () => {
    const p = run(["emulator", "--port", "0", "--token", "t", "--stats-delay-seconds", "0"]);
    const url = /listening on (\S+)$/.exec(await p.firstLine)?.[1] ?? "";
    const nb = await call(url, "POST", "/nodebalancers", { region: "us-east" }, { token: "t" });
    const stats = await call(url, "GET", `/nodebalancers/${String((nb.body as { id: number }).id)}/stats`, undefined, { token: "t" });
    expect(stats.status).toBe(200);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });
  it("--fault-429-rate answers that share of requests 429 with Retry-After --fault-retry-after", async () => {
    const p = run(["emulator", "--port", "0", "--token", "t", "--fault-429-rate", "1", "--fault-retry-after", "2"]);
    const url = /listening on (\S+)$/.exec(await p.firstLine)?.[1] ?? "";
    const res = await call(url, "GET", "/databases/engines", undefined, { token: "t" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("2");
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    const bad = run(["emulator", "--fault-429-rate", "1.5"]);
    expect(await bad.exited).toBe(2);
  });
  it("--latency-ms makes every API request wait; a tail below the median is refused", async () => {
    const p = run(["emulator", "--port", "0", "--token", "t", "--latency-ms", "300,300"]);
    const url = /listening on (\S+)$/.exec(await p.firstLine)?.[1] ?? "";
    const started = performance.now();
    expect((await call(url, "GET", "/databases/engines", undefined, { token: "t" })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(await run(["emulator", "--latency-ms", "150,100"]).exited).toBe(2);
  });
  it("prints help and rejects bad flags", async () => {
    const help = run(["emulator", "--help"]);
    expect(await help.firstLine).toMatch(/^Usage: linode-operator emulator/);
    expect(await help.exited).toBe(0);
    const bad = run(["emulator", "--port", "-3"]);
    expect(await bad.exited).toBe(2);
    const unknown = run(["emulator", "--bogus"]);
    expect(await unknown.exited).toBe(2);
  });
});
