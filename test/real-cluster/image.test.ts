// The project's real image: the local Node 24 base (debootstrap + Node from the npm registry)
// and `buildah bud` of the repository's Dockerfile, both cached outside the repo, exported as a
// docker-archive, imported into the real cluster's containerd and run as a pod with the
// restricted securityContext, using in-cluster config over loopback (hostNetwork + override).
// Set LINODE_OPERATOR_COLD_IMAGES=1 to drop the cached images first and measure cold builds.
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_IMAGE, BASE_IMAGE, buildAppImage, buildBaseImage, exportImage, imageSize, removeImages, removeWorkingContainers } from "../../src/local-cluster/images.ts";
import { startRealCluster, type RealCluster } from "../../src/local-cluster/real-node.ts";
import { kubectlOk, realClusterPrerequisites, waitDefaultServiceAccount, waitPodPhase } from "./real-cluster-helpers.ts";

const pre = await realClusterPrerequisites({ cluster: true, images: true });
const repo = fileURLToPath(new URL("../../", import.meta.url));
const mb = (n: number | undefined): string => (n === undefined ? "?" : `${(n / 1e6).toFixed(0)} MB`);

// In-cluster config as @kubernetes/client-node reads it: env host/port, mounted token and CA.
const IN_CLUSTER_PROBE = `
const fs = require("node:fs"), https = require("node:https");
const d = "/var/run/secrets/kubernetes.io/serviceaccount/";
https.get({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, path: "/api",
  ca: fs.readFileSync(d + "ca.crt"), headers: { authorization: "Bearer " + fs.readFileSync(d + "token", "utf8") } },
  (res) => { console.log("in-cluster GET /api", res.statusCode, "uid", process.getuid()); res.resume(); })
  .on("error", (e) => { console.log("in-cluster error", e.code); process.exit(1); });
`;

describe.skipIf(!pre.ok)("the project's image built with buildah and run in the real cluster", () => {
  let c: RealCluster | undefined;
  let tmp = "";
  let archive = "";

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), "linode-operator-image-test-"));
    if (process.env.LINODE_OPERATOR_COLD_IMAGES === "1") await removeImages([APP_IMAGE, BASE_IMAGE]);
    const base = await buildBaseImage();
    console.log(`[images] base ${BASE_IMAGE}: ${base.cached ? "warm (cached)" : "cold"} ${base.millis} ms, ${mb(base.bytes)}`);
    // The repository's Dockerfile; without one yet, a tiny one proves the build path.
    let context = repo;
    if (!existsSync(join(repo, "Dockerfile"))) {
      context = join(tmp, "ctx");
      await (await import("node:fs/promises")).mkdir(context);
      await writeFile(join(context, "Dockerfile"), "ARG BASE=node:24-bookworm-slim\nFROM ${BASE}\nCOPY main.js /app/dist/cli/main.js\nUSER 1000:1000\nWORKDIR /app\nENTRYPOINT [\"node\", \"dist/cli/main.js\"]\n");
      await writeFile(join(context, "main.js"), "console.log('placeholder image');\n");
      console.warn("[images] no Dockerfile in the repository yet: building a placeholder image");
    }
    const warm = (await imageSize(APP_IMAGE)) !== undefined;
    const app = await buildAppImage({ contextDir: context });
    console.log(`[images] app ${APP_IMAGE}: ${warm ? "warm (layer cache)" : "cold"} ${app.millis} ms, ${mb(app.bytes)}`);
    archive = join(tmp, "app.tar");
    const exp = await exportImage(APP_IMAGE, archive);
    console.log(`[images] docker-archive export ${exp.millis} ms, ${mb(exp.bytes)}`);
    c = await startRealCluster();
    const t0 = Date.now();
    await c.importImage(archive);
    console.log(`[images] ctr import into the cluster ${Date.now() - t0} ms; node Ready ${c.timings.nodeReadyMillis} ms`);
    await waitDefaultServiceAccount(c);
  });
  afterAll(async () => {
    await c?.stop();
    await removeWorkingContainers();
    if (tmp !== "") await rm(tmp, { recursive: true, force: true });
  });

  it("runs as a restricted pod, in-cluster config over loopback, the CLI answering", async () => {
    if (c === undefined) throw new Error("no cluster");
    const pod = {
      apiVersion: "v1", kind: "Pod", metadata: { name: "app" },
      spec: {
        hostNetwork: true, restartPolicy: "Never", terminationGracePeriodSeconds: 5,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
        containers: [{
          name: "app", image: APP_IMAGE, imagePullPolicy: "Never",
          command: ["sh", "-c", `node dist/cli/main.js --version && node -e '${IN_CLUSTER_PROBE}'`],
          env: [{ name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1" }, { name: "KUBERNETES_SERVICE_PORT", value: String(c.apiPort) }],
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        }],
      },
    };
    const t0 = Date.now();
    await kubectlOk(c, ["apply", "-f", "-"], JSON.stringify(pod));
    const phase = await waitPodPhase(c, "app", ["Succeeded", "Failed"], 120_000);
    const logs = await kubectlOk(c, ["logs", "app"]);
    console.log(`[images] app pod ${phase} ${Date.now() - t0} ms after apply; logs: ${logs.trim().replace(/\n/g, " | ")}`);
    expect(phase).toBe("Succeeded");
    expect(logs).toMatch(/in-cluster GET \/api 200 uid 1000/);
  });
});
