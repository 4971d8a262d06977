// `npm run release`: everything a user installs from, without a checkout, in one folder
// (release/<version>/), the version taken from package.json:
//   npm/linode-operator-<v>.tgz          the package (`npm i -g ./…` gives the linode-operator command)
//   chart/linode-operator-<v>.tgz        the Helm chart (`helm push` to an OCI registry)
//   image/linode-operator-<v>.oci.tar    the image (OCI archive; `buildah push`/`skopeo copy` to a registry)
//   linode-operator-crds-<v>.yaml        every CRD in one manifest (`kubectl apply --server-side -f`)
//   SHA256SUMS, release.json             checksums, and what was built from which commit
// The image is built with buildah (as the real-cluster tests build it: a local Node 24 base, no
// Docker engine), so it needs root and Debian's buildah and debootstrap; `--no-image` skips it.
//   node scripts/release.ts [--out DIR] [--source DIR] [--image-repository REPO] [--source-url URL] [--no-image]
// --source builds another checkout (e.g. an earlier commit's worktree) the same way;
// --image-repository is what the chart's values name (default: the chart's own); --source-url
// the repository's public URL, the chart's home and sources for Artifact Hub.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));

export interface ReleaseOptions {
  /** The checkout to build (default: this one). */
  source?: string;
  /** Where the files go (default: <source>/release/<version>). */
  out?: string;
  /** The image repository the chart's values name (e.g. ghcr.io/OWNER/linode-operator). */
  imageRepository?: string;
  /** The repository's public URL: the chart's home, sources and Artifact Hub links. */
  sourceUrl?: string;
  /** Build the image (needs buildah); default true. */
  image?: boolean;
  /** The commit the source is (default: its git HEAD; for a source exported without .git). */
  commit?: string;
  log?: (line: string) => void;
}

export interface Release {
  version: string;
  commit: string;
  out: string;
  /** Paths relative to `out`. */
  files: { npm: string; chart: string; crds: string; image?: string };
  /** The image as the local buildah store holds it (localhost/linode-operator:<version>). */
  imageRef?: string;
}

async function sh(cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
  try {
    return (await run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: env ?? process.env })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed: ${(e.stderr ?? e.stdout ?? e.message).trim().split("\n").slice(-15).join("\n")}`, { cause: err });
  }
}

const sha256 = async (path: string): Promise<string> => createHash("sha256").update(await readFile(path)).digest("hex");

/** Builds the release folder of the checkout `opts.source`. */
export async function buildRelease(opts: ReleaseOptions = {}): Promise<Release> {
  const log = opts.log ?? ((l: string) => { process.stderr.write(`[release] ${l}\n`); });
  const source = resolve(opts.source ?? root);
  const { version } = JSON.parse(await readFile(join(source, "package.json"), "utf8")) as { version: string };
  const commit = opts.commit ?? (await sh("git", ["rev-parse", "HEAD"], source)).trim();
  const out = resolve(opts.out ?? join(source, "release", version));
  await rm(out, { recursive: true, force: true });
  for (const d of ["npm", "chart", "image"]) await mkdir(join(out, d), { recursive: true });
  log(`linode-operator ${version} from ${commit.slice(0, 12)} into ${out}`);

  if (!existsSync(join(source, "node_modules"))) await sh("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], source);
  // The package: built into a staging copy of what `npm pack` reads (the checkout's own dist/ is
  // left alone: tests may be using it), with the commit baked in, packed as npm would publish it.
  const pkg = JSON.parse(await readFile(join(source, "package.json"), "utf8")) as { files?: string[] };
  const stage = await mkdtemp(join(tmpdir(), "linode-operator-pack-"));
  let tarball: string;
  try {
    for (const f of ["package.json", "README.md", "LICENSE", ...(pkg.files ?? []).filter((x) => !x.startsWith("!") && x !== "dist")]) {
      if (existsSync(join(source, f))) await cp(join(source, f), join(stage, f), { recursive: true });
    }
    await sh(process.execPath, [join(source, "scripts", "build.ts"), join(stage, "dist")], source, { ...process.env, LINODE_OPERATOR_COMMIT: commit });
    tarball = (await sh("npm", ["pack", "--pack-destination", join(out, "npm"), "--silent"], stage)).trim().split("\n").pop() ?? "";
  } finally {
    await rm(stage, { recursive: true, force: true });
  }

  // Every CRD in one manifest.
  const crdDir = join(source, "crds");
  const crds = await Promise.all((await readdir(crdDir)).filter((f) => f.endsWith(".yaml")).sort().map((f) => readFile(join(crdDir, f), "utf8")));
  const crdsFile = `linode-operator-crds-${version}.yaml`;
  await writeFile(join(out, crdsFile), crds.map((c) => `---\n${c.trimEnd()}\n`).join(""));

  // The chart, naming the released image.
  const { controlPlaneBinaries } = await import("../src/local-cluster/control-plane.ts");
  const helm = join(await controlPlaneBinaries(), "helm");
  const staged = await mkdtemp(join(tmpdir(), "linode-operator-chart-"));
  try {
    const chart = join(staged, "linode-operator");
    await cp(join(source, "helm", "linode-operator"), chart, { recursive: true });
    if (opts.imageRepository !== undefined) {
      const values = await readFile(join(chart, "values.yaml"), "utf8");
      const stamped = values.replace(/^(image:\n(?:[ \t]*#.*\n)*[ \t]+repository:)[ \t]*\S+$/m, `$1 ${opts.imageRepository}`);
      if (stamped === values) throw new Error("the chart's values.yaml has no image.repository to set");
      await writeFile(join(chart, "values.yaml"), stamped);
    }
    // Artifact Hub's metadata names the image and the source as published (a chart from before
    // the metadata existed is packaged as it is).
    const { GENERATED_MARKER, chartYamlOf } = await import("./chart-metadata.ts");
    if ((await readFile(join(chart, "Chart.yaml"), "utf8")).includes(GENERATED_MARKER)) {
      const { kindDefinitions } = await import("../src/resources/index.ts");
      await writeFile(join(chart, "Chart.yaml"), await chartYamlOf(source, chart, kindDefinitions, opts.sourceUrl));
    }
    await sh(helm, ["package", chart, "--destination", join(out, "chart"), "--version", version, "--app-version", version], source);
  } finally {
    await rm(staged, { recursive: true, force: true });
  }

  const release: Release = { version, commit, out, files: { npm: join("npm", tarball), chart: join("chart", `linode-operator-${version}.tgz`), crds: crdsFile } };
  if (opts.image !== false) {
    const images = await import("../src/local-cluster/images.ts");
    await images.buildBaseImage({ log });
    const ref = `localhost/linode-operator:${version}`;
    await images.buildAppImage({ contextDir: source, tag: ref, log, buildArgs: { VERSION: version, REVISION: commit, CREATED: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") } });
    const archive = join("image", `linode-operator-${version}.oci.tar`);
    await sh("buildah", ["push", "--quiet", ref, `oci-archive:${join(out, archive)}:${version}`], source, await images.buildahEnv());
    release.files.image = archive;
    release.imageRef = ref;
  } else {
    await rm(join(out, "image"), { recursive: true, force: true });
  }

  const all = Object.values(release.files).sort();
  await writeFile(join(out, "SHA256SUMS"), (await Promise.all(all.map(async (f) => `${await sha256(join(out, f))}  ${f}\n`))).join(""));
  await writeFile(join(out, "release.json"), `${JSON.stringify({ version, commit, files: release.files }, null, 2)}\n`);
  log(`done: ${[...all, "SHA256SUMS", "release.json"].map((f) => relative(process.cwd(), join(out, f))).join(", ")}`);
  return release;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const source = arg("--source");
  const out = arg("--out");
  const imageRepository = arg("--image-repository");
  const sourceUrl = arg("--source-url");
  await buildRelease({
    ...(sourceUrl !== undefined ? { sourceUrl } : {}),
    ...(source !== undefined ? { source } : {}),
    ...(out !== undefined ? { out } : {}),
    ...(imageRepository !== undefined ? { imageRepository } : {}),
    image: !process.argv.includes("--no-image"),
  });
}
