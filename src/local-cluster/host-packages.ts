// The Debian packages the one-node real cluster and the image builds need. As root, missing
// ones are installed with apt-get; otherwise the caller gets the reason and must skip loudly.
import { access, constants } from "node:fs/promises";
import { execCapture } from "./exec.ts";

/** A path each package provides, to tell whether it is installed. */
const CLUSTER: Record<string, string> = {
  containerd: "/usr/bin/containerd",
  runc: "/usr/sbin/runc",
  "containernetworking-plugins": "/usr/lib/cni/bridge",
  "busybox-static": "/bin/busybox",
  iproute2: "/usr/sbin/ip",
  "util-linux": "/usr/bin/nsenter",
};
const IMAGES: Record<string, string> = {
  buildah: "/usr/bin/buildah",
  debootstrap: "/usr/sbin/debootstrap",
};

async function present(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(() => true, () => false);
}

async function missing(want: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const [pkg, path] of Object.entries(want)) if (!(await present(path))) out.push(pkg);
  // A dynamically linked busybox cannot run in an image with no libc.
  if (!out.includes("busybox-static")) {
    const q = await execCapture("dpkg-query", ["-W", "-f=${Status}", "busybox-static"]);
    if (q.code === 0 && !q.stdout.includes("install ok installed")) out.push("busybox-static");
  }
  return out;
}

export type Prerequisites = { ok: true } | { ok: false; reason: string };

let installing: Promise<Prerequisites> | undefined;

/** Checks (and as root installs) the packages for `what`; never throws. */
export function ensureHostPackages(what: { cluster?: boolean; images?: boolean }): Promise<Prerequisites> {
  const want = { ...(what.cluster === true ? CLUSTER : {}), ...(what.images === true ? IMAGES : {}) };
  const previous = installing ?? Promise.resolve<Prerequisites>({ ok: true });
  installing = previous.then(() => ensure(want));
  return installing;
}

async function ensure(want: Record<string, string>): Promise<Prerequisites> {
  if (process.platform !== "linux") return { ok: false, reason: "needs Linux" };
  if (process.getuid?.() !== 0) return { ok: false, reason: "needs root (network namespace, containerd, kubelet)" };
  if (!(await present("/usr/local/go/bin/go")) && (await execCapture("go", ["version"])).code !== 0) {
    return { ok: false, reason: "needs Go (kubelet and pause image are built locally)" };
  }
  let need = await missing(want);
  if (need.length === 0) return { ok: true };
  if (!(await present("/usr/bin/apt-get"))) return { ok: false, reason: `missing packages ${need.join(" ")} and no apt-get` };
  process.stderr.write(`[real-cluster] installing Debian packages: ${need.join(" ")}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const update = await execCapture("apt-get", ["update"], { env, timeoutMs: 600_000 });
  const install = await execCapture("apt-get", ["install", "-y", "--no-install-recommends", ...need], { env, timeoutMs: 1_200_000 });
  need = await missing(want);
  if (need.length === 0) return { ok: true };
  return { ok: false, reason: `could not install ${need.join(" ")}: ${(install.stderr || update.stderr).trim().split("\n").slice(-3).join(" | ")}` };
}
