// The operator's image, built here from the repository's Dockerfile (images.ts: buildah on a
// local Node 24 base, layers cached in ~/.cache/linode-operator, so an unchanged tree builds in
// seconds), tagged by its content so that a changed image changes the Deployment and rolls it.
import { join } from "node:path";
import { APP_IMAGE, buildAppImage, buildahEnv, buildBaseImage, imageId } from "../../local-cluster/images.ts";
import type { BuiltImage } from "./install-plan.ts";
import { mustRunTool } from "./tools.ts";

export const LOCAL_REPOSITORY = "localhost/linode-operator";

/** Builds (or finds in the layer cache) the image; `archive`: also a docker-archive of it in `work`, for a loader. */
export async function buildOperatorImage(opts: { repo: string; version: string; work: string; archive: boolean; log: (l: string) => void }): Promise<BuiltImage> {
  await buildBaseImage({ log: opts.log });
  await buildAppImage({ contextDir: opts.repo, log: opts.log });
  const env = await buildahEnv();
  const id = await imageId(APP_IMAGE, env);
  if (id === undefined) throw new Error(`the build left no ${APP_IMAGE}`);
  const localRef = `${LOCAL_REPOSITORY}:${opts.version}-${id.slice(0, 12)}`;
  await mustRunTool({ tool: "buildah", args: ["tag", APP_IMAGE, localRef] }, { env });
  const archive = join(opts.work, "image.tar");
  if (opts.archive) await mustRunTool({ tool: "buildah", args: ["push", "--quiet", localRef, `docker-archive:${archive}:${localRef}`] }, { env });
  return { localRef, archive };
}
