// `npm run build`: the `linode-operator` command as one ESM bundle (with a chunk per lazily
// loaded subcommand) in dist/cli/. Bundling is for memory: @kubernetes/client-node ships every
// API group's generated client (tens of MB of source that V8 keeps as strings and code); the
// bundle keeps only what the operator calls, so the process holds ~40 MiB less at rest. The
// chunks sit in dist/cli/ like src/cli/, so paths relative to a module (../../package.json,
// ../../src/local-cluster/build.sh) resolve the same way from both.
//   node scripts/build.ts [outdir=dist]
import { spawnSync } from "node:child_process";
import { chmod, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = resolve(process.argv[2] ?? join(root, "dist"));
// The output directory is emptied first: never one that holds the sources.
const dirOf = (p: string): string => (p.endsWith("/") ? p : `${p}/`);
if (dirOf(root).startsWith(dirOf(outdir))) throw new Error(`refusing to empty ${outdir}: it holds the repository`);
await rm(outdir, { recursive: true, force: true });
const git = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" });
// Without git (an image build copies no .git), the commit the builder passes in, if any.
const commit = git.status === 0 ? git.stdout.trim() : (process.env.LINODE_OPERATOR_COMMIT ?? "unknown").slice(0, 12);
const result = await build({
  // The kubectl plugin is an entry of its own: kubectl runs a file named kubectl-linode.
  entryPoints: [join(root, "src/cli/main.ts"), join(root, "src/cli/kubectl-linode.ts")],
  outdir: join(outdir, "cli"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Whitespace and syntax only: stack traces keep their function names.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  // The bundled packages' licences go, whole, into one file instead (below).
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  // src/runtime/schema-rules.ts imports zod for its type augmentation only; zod is bundled anyway.
  logOverride: { "ignored-bare-import": "silent" },
  // Some dependencies are CommonJS and call require(): give the ESM bundle one.
  banner: { js: "import { createRequire as __linodeOperatorRequire } from 'node:module'; const require = __linodeOperatorRequire(import.meta.url);" },
  // The commit the bundle was built from, for linode_operator_build_info (none without git, e.g. in an image build).
  define: { "process.env.LINODE_OPERATOR_COMMIT": JSON.stringify(commit) },
});

// The commands package.json's bin names run straight from dist/ too (a kubectl plugin on PATH
// must be executable); npm sets the same mode when it installs them.
const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
for (const bin of Object.values(pkg.bin)) await chmod(join(outdir, bin.replace(/^dist\//, "")), 0o755);

// Every bundled package's licence text, as their licences ask of copies.
const packages = new Set<string>();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m?.[1] !== undefined) packages.add(m[1]);
}
const notices: string[] = [];
for (const name of [...packages].sort()) {
  const dir = join(root, "node_modules", name);
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as { version?: string; license?: string };
  const file = (await readdir(dir)).find((f) => /^(licen[cs]e|copying)(\..*)?$/i.test(f));
  const text = file !== undefined ? await readFile(join(dir, file), "utf8") : `License: ${pkg.license ?? "unknown"} (no licence file in the package)`;
  notices.push(`${name}@${pkg.version ?? "?"} (${pkg.license ?? "?"})\n\n${text.trim()}\n`);
}
await writeFile(join(outdir, "THIRD-PARTY-LICENSES.txt"), `The linode-operator bundle in this directory includes these packages:\n\n${notices.join(`\n${"-".repeat(78)}\n\n`)}`);
