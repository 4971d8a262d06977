// `npm test` (the README's test command, and CI's): the static checks (type-check, lint, the
// generated crds/ and deploy/ are fresh) and every vitest project, run at the same time. Most
// test files wait on an API server, a kubelet or a child process, so the static checks run at
// a lower CPU priority in that slack instead of in front of the tests. Arguments go to vitest.
// Exits non-zero if anything failed; the last line counts the tests. VITEST_JSON_REPORT=path
// keeps vitest's JSON report (per-file start and end times) instead of a temporary one.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { controlPlaneBinaries } from "../src/local-cluster/control-plane.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

interface Outcome { name: string; code: number; millis: number; output: string }

function run(name: string, cmd: string, args: string[], opts: { nice?: boolean; inherit?: boolean } = {}): { done: Promise<Outcome>; kill: () => void } {
  const t0 = Date.now();
  const [file, argv] = opts.nice === true ? ["nice", ["-n", "10", cmd, ...args]] : [cmd, args];
  const child = spawn(file, argv, { cwd: root, stdio: opts.inherit === true ? "inherit" : ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => { output += c; });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => { output += c; });
  const done = new Promise<Outcome>((resolve) => {
    child.once("error", (err) => { resolve({ name, code: 1, millis: Date.now() - t0, output: `${output}${err.message}\n` }); });
    child.once("close", (code, signal) => { resolve({ name, code: code ?? (signal === null ? 1 : 128), millis: Date.now() - t0, output }); });
  });
  return { done, kill: () => { child.kill("SIGTERM"); } };
}
/** One of package.json's scripts: the commands are spelled there, once. */
const npmScript = (name: string, script: string, ...args: string[]): ReturnType<typeof run> =>
  run(name, "npm", ["run", "--silent", script, ...(args.length > 0 ? ["--", ...args] : [])], { nice: true });

// The binaries every cluster test and the deploy/ check need (helm), and the oldest supported
// kube-apiserver: built once, on a first run only (minutes; it says what it builds), before
// anything else competes for the CPU.
try {
  await controlPlaneBinaries({ withOldest: true });
} catch (err) {
  process.stderr.write(`cannot build the Kubernetes binaries the tests need: ${(err as Error).message}\n`);
  process.exit(1);
}

const reportDir = mkdtempSync(join(tmpdir(), "linode-operator-test-"));
const report = process.env.VITEST_JSON_REPORT ?? join(reportDir, "vitest.json");
const vitest = run("tests", process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], { inherit: true });
const checks = [
  npmScript("crds/ fresh", "generate", "--check"),
  npmScript("deploy/ fresh", "render:deploy", "--check"),
  npmScript("type-check", "typecheck"),
  npmScript("lint", "lint"),
];
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => { for (const c of [vitest, ...checks]) c.kill(); });
}

const tests = await vitest.done;
const results = await Promise.all(checks.map((c) => c.done));
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
process.stdout.write("\n");
for (const r of results) {
  process.stdout.write(`${r.code === 0 ? "✓" : "✗"} ${r.name} (${secs(r.millis)})\n`);
  if (r.code !== 0) process.stdout.write(`${r.output.trimEnd()}\n\n`);
}

// Vitest counts the tests of a file whose beforeAll (or import) failed as skipped: they did not
// pass, so here they count as failed, and a failed file with no tests counts as one failure.
const reportSchema = z.object({
  testResults: z.array(z.object({ status: z.string(), assertionResults: z.array(z.object({ status: z.string() })) })),
});
let line = "tests: no report (vitest did not finish)";
try {
  const files = reportSchema.parse(JSON.parse(readFileSync(report, "utf8"))).testResults;
  let [passed, failed, skipped] = [0, 0, 0];
  for (const f of files) {
    const fileFailed = f.status === "failed";
    let failedHere = 0;
    for (const a of f.assertionResults) {
      if (a.status === "passed") passed++;
      else if (a.status === "failed" || fileFailed) failedHere++;
      else skipped++;
    }
    // A file that failed with every test passed (an afterAll) or with none collected (an import).
    failed += fileFailed && failedHere === 0 ? 1 : failedHere;
  }
  line = `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`;
} catch { /* reported below through the exit code */ }
rmSync(reportDir, { recursive: true, force: true });
const failedChecks = results.filter((r) => r.code !== 0).map((r) => r.name);
if (failedChecks.length > 0) process.stdout.write(`failed checks: ${failedChecks.join(", ")}\n`);
process.stdout.write(`${line}\n`);
process.exitCode = tests.code !== 0 || failedChecks.length > 0 ? 1 : 0;
