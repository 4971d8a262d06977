// The package as npm users get it: `npm pack`, then installed the two ways npm installs a
// command (a global prefix's bin/ and a project's node_modules/.bin, both symlinks), and run
// through those links: `--help`, the emulator and the kubectl plugin must work, not silently do nothing. The
// tarball holds what those commands (and the demo) need, and nothing else.
import { spawn, spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIN_NODE, nodeAtLeast } from "../../src/cli/main.ts";
import { execCapture } from "../../src/local-cluster/exec.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** The machine's own Node.js when it is older than the command supports (Debian's, here), to prove the refusal on. */
const olderNode = ((): string | undefined => {
  const v = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" });
  return v.status === 0 && !nodeAtLeast(v.stdout.trim()) ? "/usr/bin/node" : undefined;
})();
const npmEnv = { ...process.env, npm_config_loglevel: "error", npm_config_fund: "false", npm_config_audit: "false", npm_config_update_notifier: "false" };

/** Starts the emulator command and resolves with its one line, then stops it with SIGTERM. */
async function emulatorLine(cmd: string, args: string[], cwd: string): Promise<{ line: string; code: number | null }> {
  const child = spawn(cmd, [...args, "emulator", "--port", "0", "--token", "t"], { cwd, env: npmEnv, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => { err += c; });
  const line = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`no listening line in 60 s: ${out}${err}`)); }, 60_000);
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      if (out.includes("\n")) { clearTimeout(t); resolve(out.split("\n")[0] ?? ""); }
    });
    child.once("exit", (code) => { clearTimeout(t); reject(new Error(`exited ${String(code)} before listening: ${out}${err}`)); });
  });
  child.kill("SIGTERM");
  const code = await new Promise<number | null>((resolve) => { if (child.exitCode !== null) resolve(child.exitCode); else child.once("exit", (c) => { resolve(c); }); });
  return { line, code };
}

describe("the packed package, installed as npm installs it", () => {
  let work: string;
  let tarball: string;
  let files: string[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "packed-"));
    // A copy of what `npm pack` reads, built into its own dist/ (the repository's is left alone).
    const stage = join(work, "stage");
    await mkdir(stage);
    for (const f of ["package.json", "README.md", "LICENSE", "crds", "examples", "src/local-cluster/build.sh", "src/local-cluster/k8s"]) {
      await cp(join(root, f), join(stage, f), { recursive: true });
    }
    const build = await execCapture(process.execPath, [join(root, "scripts/build.ts"), join(stage, "dist")], { timeoutMs: 300_000, cwd: root });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const pack = await execCapture("npm", ["pack", "--json", "--pack-destination", work], { cwd: stage, env: npmEnv, timeoutMs: 120_000 });
    expect(pack.code, pack.stderr).toBe(0);
    const info = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info[0]?.filename ?? "");
    files = (info[0]?.files ?? []).map((f) => f.path);
  }, 300_000);
  afterAll(async () => { await rm(work, { recursive: true, force: true }); });

  it("ships the compiled CLI, the CRDs, the examples, the control-plane build script and the licence, and nothing else", async () => {
    const allowed = [/^package\.json$/, /^README\.md$/, /^LICENSE$/, /^dist\/cli\/[\w-]+\.js$/, /^dist\/THIRD-PARTY-LICENSES\.txt$/, /^crds\/.+\.yaml$/, /^examples\/.+\.yaml$/, /^src\/local-cluster\/build\.sh$/, /^src\/local-cluster\/k8s\/go\.(mod|sum)$/];
    const unexpected = files.filter((f) => !allowed.some((re) => re.test(f)));
    expect(unexpected).toEqual([]);
    for (const needed of ["LICENSE", "dist/cli/main.js", "dist/THIRD-PARTY-LICENSES.txt", "crds/manageddatabases.linode.operator.dev.yaml"]) expect(files).toContain(needed);
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(files).toContain(pkg.bin["linode-operator"]);
    // The kubectl plugin: kubectl runs an executable named kubectl-linode found on PATH.
    expect(files).toContain(pkg.bin["kubectl-linode"]);
  });

  it("installed globally: the bin/ symlink runs --help and the emulator", async () => {
    const prefix = join(work, "global");
    const install = await execCapture("npm", ["install", "-g", "--prefix", prefix, "--prefer-offline", tarball], { env: npmEnv, timeoutMs: 300_000, cwd: work });
    expect(install.code, install.stderr).toBe(0);
    const bin = join(prefix, "bin", "linode-operator");
    const help = await execCapture(bin, ["--help"], { env: npmEnv });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: linode-operator <command>/);
    const emulator = await emulatorLine(bin, [], work);
    expect(emulator.line).toMatch(/^Linode API emulator listening on http:\/\/127\.0\.0\.1:\d+\/v4$/);
    expect(emulator.code).toBe(0);
    // The plugin's link, as kubectl finds it on PATH, and `linode-operator status` the same command.
    const plugin = await execCapture(join(prefix, "bin", "kubectl-linode"), ["status", "--help"], { env: npmEnv });
    expect(plugin.code, plugin.stderr).toBe(0);
    expect(plugin.stdout).toMatch(/^Usage: kubectl linode status/);
    const status = await execCapture(bin, ["status", "--help"], { env: npmEnv });
    expect(status.stdout).toBe(plugin.stdout);
  }, 300_000);

  it.skipIf(olderNode === undefined)("on an older Node.js the command says which it needs, in one line, and exits 2", async () => {
    const run = await execCapture(olderNode ?? "", [join(work, "stage", "dist", "cli", "main.js"), "run", "--help"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(new RegExp(`^linode-operator: needs Node\\.js ${MIN_NODE.replace(/\./g, "\\.")} or newer; this is v\\d+`));
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("a dependency of a project: npx linode-operator runs through node_modules/.bin", async () => {
    const project = join(work, "project");
    await mkdir(project);
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "uses-linode-operator", version: "1.0.0", private: true }));
    const install = await execCapture("npm", ["install", "--prefer-offline", tarball], { env: npmEnv, timeoutMs: 300_000, cwd: project });
    expect(install.code, install.stderr).toBe(0);
    const help = await execCapture("npx", ["linode-operator", "--help"], { env: npmEnv, cwd: project });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: linode-operator <command>/);
    const run = await execCapture("npx", ["linode-operator", "run", "--help"], { env: npmEnv, cwd: project });
    expect(run.stdout).toMatch(/Usage: linode-operator run/);
    // The link npx runs (npx itself does not pass SIGTERM on, so the emulator is stopped through the link).
    const emulator = await emulatorLine(join(project, "node_modules", ".bin", "linode-operator"), [], project);
    expect(emulator.line).toMatch(/^Linode API emulator listening on http:\/\/127\.0\.0\.1:\d+\/v4$/);
    expect(emulator.code).toBe(0);
  }, 300_000);
});
