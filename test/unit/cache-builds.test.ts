// A fresh machine's first `./dev.sh test`: test suites in separate processes fill one empty
// cache at once (the pause and busybox image archives real-cluster suites both ask for). Each
// must get a whole archive, whichever process builds it; none may rename or remove another's
// half-written file (a cold run once failed with ENOENT renaming pause.tar.tmp).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { execCapture } from "../../src/local-cluster/exec.ts";
import { writeDockerArchive } from "../../src/local-cluster/oci-archive.ts";

const archives = new URL("../../src/local-cluster/oci-archive.ts", import.meta.url).href;
const haveTools = existsSync("/bin/busybox") && (await execCapture("go", ["version"], { env: { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH ?? ""}` } }).catch(() => ({ code: 1 }))).code === 0;
if (!haveTools) process.stderr.write("\n!! cache-builds.test SKIPPED (not passed): needs /bin/busybox (busybox-static) and Go\n\n");

/** One suite's process: asks for both archives, prints their paths. */
function suite(cache: string): Promise<{ code: number | null; out: string; err: string }> {
  const script = `const a = await import(${JSON.stringify(archives)}); const [p, b] = await Promise.all([a.pauseArchive(), a.busyboxArchive()]); console.log(JSON.stringify([p, b]));`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, LINODE_OPERATOR_CACHE: cache }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => { out += d.toString(); });
    child.stderr.on("data", (d: Buffer) => { err += d.toString(); });
    child.on("close", (code) => { resolve({ code, out, err }); });
  });
}

describe.skipIf(!haveTools)("an empty cache filled by several suites at once", () => {
  const dirs: string[] = [];
  afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

  it("every process gets whole archives; no temporary file or lock is left", async () => {
    const cache = await mkdtemp(join(tmpdir(), "linode-operator-cache-"));
    dirs.push(cache);
    const runs = await Promise.all([suite(cache), suite(cache), suite(cache), suite(cache)]);
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const paths = runs.map((r) => JSON.parse(r.out.trim().split("\n").pop() ?? "[]") as string[]);
    expect(new Set(paths.map((p) => JSON.stringify(p))).size).toBe(1);
    for (const p of paths[0] ?? []) {
      const list = await execCapture("tar", ["-tf", p]);
      expect(list.code).toBe(0);
      expect(list.stdout.split("\n")).toEqual(expect.arrayContaining(["manifest.json", "layer.tar"]));
    }
    expect((await readdir(join(cache, "images"))).sort()).toEqual(["busybox.tar", "pause.tar"]);
    expect(await readdir(join(cache, "locks"))).toEqual([]);
  }, 120_000);

  it("writers of one archive at the same moment each finish, and the archive is whole", async () => {
    const dir = await mkdtemp(join(tmpdir(), "linode-operator-archive-"));
    dirs.push(dir);
    await mkdir(join(dir, "root"));
    await writeFile(join(dir, "root", "hello"), "x".repeat(1 << 20));
    const out = join(dir, "same.tar");
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => writeDockerArchive(join(dir, "root"), "localhost/same:1", {}, out)));
    expect(results.filter((r) => r.status === "rejected").map((r) => String(r.reason))).toEqual([]);
    expect((await execCapture("tar", ["-tf", out])).stdout.split("\n")).toEqual(expect.arrayContaining(["manifest.json", "layer.tar"]));
    expect(await readdir(dir)).toEqual(["root", "same.tar"]);
  });
});
