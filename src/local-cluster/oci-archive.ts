// Images without a registry: a docker-save style tarball (one layer tar, config.json,
// manifest.json) that `ctr images import` and `buildah` understand. Used for the busybox test
// image and the pause (pod sandbox) image, both cached outside the repository.
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { execCapture } from "./exec.ts";
import { withCacheLock } from "./machine-lock.ts";
import { cacheDir, tempBeside } from "./paths.ts";

export interface ImageConfig { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; User?: string; WorkingDir?: string }

async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

async function must(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await execCapture(cmd, args, env === undefined ? {} : { env });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Writes `out` (atomically) from the root filesystem in `rootfs`, tagged `ref` (e.g. localhost/busybox:local). */
export async function writeDockerArchive(rootfs: string, ref: string, config: ImageConfig, out: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "linode-operator-img-"));
  try {
    await must("tar", ["-C", rootfs, "--owner=0", "--group=0", "--numeric-owner", "-cf", join(work, "layer.tar"), "."]);
    const diffId = await sha256File(join(work, "layer.tar"));
    const cfg = JSON.stringify({
      architecture: "amd64", os: "linux", created: "2025-01-01T00:00:00Z",
      config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], ...config },
      rootfs: { type: "layers", diff_ids: [`sha256:${diffId}`] },
    });
    const cfgName = `${createHash("sha256").update(cfg).digest("hex")}.json`;
    await writeFile(join(work, cfgName), cfg);
    await writeFile(join(work, "manifest.json"), JSON.stringify([{ Config: cfgName, RepoTags: [ref], Layers: ["layer.tar"] }]));
    const tmp = tempBeside(out);
    try {
      await must("tar", ["-C", work, "-cf", tmp, "manifest.json", cfgName, "layer.tar"]);
      await rename(tmp, out);
    } finally {
      await rm(tmp, { force: true });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const BUSYBOX_IMAGE = "localhost/busybox:local";
export const PAUSE_IMAGE = "localhost/pause:local";

/**
 * busybox-static with a symlink per applet (sh, wget, cat, ...), tagged `ref`: e.g.
 * docker.io/library/busybox:1.37 so an unchanged example manifest finds it without a pull.
 */
export async function busyboxArchive(ref = BUSYBOX_IMAGE): Promise<string> {
  const out = join(cacheDir(), "images", ref === BUSYBOX_IMAGE ? "busybox.tar" : `busybox-${ref.replace(/[^a-zA-Z0-9.-]+/g, "_")}.tar`);
  if (existsSync(out)) return out;
  return withCacheLock(basename(out), async () => (existsSync(out) ? out : buildBusybox(ref, out)));
}

async function buildBusybox(ref: string, out: string): Promise<string> {
  await mkdir(join(cacheDir(), "images"), { recursive: true });
  const root = await mkdtemp(join(tmpdir(), "linode-operator-busybox-"));
  try {
    await mkdir(join(root, "bin"));
    await mkdir(join(root, "tmp"), { mode: 0o1777 });
    await copyFile("/bin/busybox", join(root, "bin", "busybox"));
    await chmod(join(root, "bin", "busybox"), 0o755);
    for (const applet of (await must("/bin/busybox", ["--list"])).split("\n").filter((a) => /^[a-z0-9_.[-]+$/.test(a) && a !== "busybox")) {
      await symlink("busybox", join(root, "bin", applet));
    }
    await writeDockerArchive(root, ref, { Cmd: ["sh"] }, out);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return out;
}

// The pod sandbox image: holds the pod's namespaces and sleeps until told to stop.
const PAUSE_GO = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	// Reap children: in a shared-PID pod this process is PID 1.
	signal.Ignore(syscall.SIGCHLD)
	<-stop
}
`;

/** A static Go pause binary built with the local Go (no modules needed), as an image archive. */
export async function pauseArchive(): Promise<string> {
  const out = join(cacheDir(), "images", "pause.tar");
  if (existsSync(out)) return out;
  return withCacheLock("pause.tar", async () => (existsSync(out) ? out : buildPause(out)));
}

async function buildPause(out: string): Promise<string> {
  await mkdir(join(cacheDir(), "images"), { recursive: true });
  const src = await mkdtemp(join(tmpdir(), "linode-operator-pause-"));
  try {
    await writeFile(join(src, "go.mod"), "module example.local/pause\n\ngo 1.22\n");
    await writeFile(join(src, "main.go"), PAUSE_GO);
    await mkdir(join(src, "root"));
    const env = { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: "local", GOFLAGS: "", PATH: `/usr/local/go/bin:${process.env.PATH ?? ""}` };
    const r = await execCapture("go", ["build", "-C", src, "-trimpath", "-ldflags=-s -w", "-o", join(src, "root", "pause"), "."], { env });
    if (r.code !== 0) throw new Error(`building the pause image failed: ${r.stderr}`);
    await writeDockerArchive(join(src, "root"), PAUSE_IMAGE, { Entrypoint: ["/pause"] }, out);
  } finally {
    await rm(src, { recursive: true, force: true });
  }
  return out;
}
