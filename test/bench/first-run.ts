// A new user's first `./dev.sh test`, and their second: a fresh clone of this commit run with
// every cache empty (the project's own under XDG_CACHE_HOME, Go's build and module caches, npm's
// cache), as on a fresh machine, then again with the caches that run filled. Prints and saves
// the wall time of each, the time build.sh spent building binaries, the static checks' times and
// the tests line; a run that fails or prints no tests line is recorded as such, never as a pass.
//   npm run bench:first-run            # both runs (about half an hour on 2 cores); --keep keeps the clone, caches and logs
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, stripVTControlCharacters } from "node:util";
import { execCapture } from "../../src/local-cluster/exec.ts";
import { say, secs } from "./common.ts";
import { resultCollector, saveResult } from "./report/result.ts";

const { values } = parseArgs({ options: { keep: { type: "boolean", default: false } } });
const root = fileURLToPath(new URL("../..", import.meta.url));
const commit = (await execCapture("git", ["-C", root, "rev-parse", "--short", "HEAD"])).stdout.trim();
const dirty = (await execCapture("git", ["-C", root, "status", "--porcelain", "--untracked-files=no"])).stdout.trim() !== "";

const work = await mkdtemp(join(tmpdir(), "linode-operator-first-run-"));
const caches = { XDG_CACHE_HOME: join(work, "xdg"), GOMODCACHE: join(work, "gomod"), npm_config_cache: join(work, "npm") };
for (const d of Object.values(caches)) await mkdir(d, { recursive: true });
const clone = join(work, "repo");
const cloned = await execCapture("git", ["clone", "-q", root, clone]);
if (cloned.code !== 0) throw new Error(`git clone: ${cloned.stderr}`);

interface Run { label: string; millis: number; code: number | null; log: string }
/** `./dev.sh test` in the clone, its output kept in a log beside it. */
async function devTest(label: string): Promise<Run> {
  const log = join(work, `${label}.log`);
  const out = createWriteStream(log);
  say(`${label}: ./dev.sh test in ${clone} (log ${log})`);
  const t0 = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    // Nothing may point at a filled cache: the project's own, Go's, npm's.
    const env = Object.fromEntries(Object.entries({ ...process.env, ...caches }).filter(([k]) => !["LINODE_OPERATOR_CACHE", "GOCACHE", "KUBE_ASSETS"].includes(k)));
    const child = spawn("./dev.sh", ["test"], { cwd: clone, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on("close", (c) => { resolve(c); });
  });
  out.end();
  return { label, millis: Date.now() - t0, code, log: await readFile(log, "utf8") };
}

const { figures, tables, notes, figure } = resultCollector(say);
const rows: (string | number)[][] = [];
const record = (r: Run, target: string, limitSecs: number): void => {
  const testsLine = /^tests: .*$/m.exec(r.log)?.[0] ?? "no tests line (the run did not finish)";
  const passed = r.code === 0 && /tests: \d+ passed, 0 failed/.test(testsLine);
  figure(`${r.label}: ./dev.sh test`, secs(r.millis), "s", target, passed && r.millis <= limitSecs * 1000);
  figure(`${r.label}: outcome`, `exit ${String(r.code)}; ${testsLine}`);
  const built = [...r.log.matchAll(/\[control-plane\] built in (\d+) s/g)].map((m) => Number(m[1]));
  if (built.length > 0) figure(`${r.label}: Kubernetes binaries built (build.sh)`, built.reduce((a, b) => a + b, 0), "s");
  for (const m of r.log.matchAll(/^[✓✗] (.+) \(([\d.]+) s\)$/gm)) rows.push([r.label, m[1] ?? "", Number(m[2])]);
  const duration = /Duration\s+([\d.]+)s/.exec(stripVTControlCharacters(r.log))?.[1];
  if (duration !== undefined) rows.push([r.label, "vitest (every suite)", Number(duration)]);
};

say(`first run of ${commit}${dirty ? " (with uncommitted changes not in the clone)" : ""} on empty caches under ${work}`);
record(await devTest("cold"), "≤ 720 s", 720);
record(await devTest("warm"), "≤ 240 s", 240);
tables.push({ title: "Where the time went (the static checks run beside the tests, at lower priority)", columns: ["run", "step", "seconds"], rows });
notes.push(`Commit ${commit}, cloned fresh; caches empty before the cold run: XDG_CACHE_HOME (the project's binaries, images, Node), GOMODCACHE, GOCACHE (under XDG_CACHE_HOME), npm's cache. The warm run reuses what the cold one filled.`);
if (!values.keep) await rm(work, { recursive: true, force: true }).catch(() => undefined);
await saveResult({ name: "first-run", title: "A new user's first and second ./dev.sh test on 2 cores", command: "npm run bench:first-run", figures, tables, notes });
