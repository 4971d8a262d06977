// The key the operator proves its records with (status.externalIdProof): random, made once, kept
// in a Secret beside its Lease that only the operator's ServiceAccount may read. Not a Linode
// token: a proof must outlive a token rotation (or two replicas holding different tokens of one
// account), and a tenant who holds its own account's token must not be able to compute one.
// Every replica of an install reads the same Secret; it is not owned by anything, so it outlives
// an uninstall (a reinstall proves with the same key). Without the right to read or make it,
// the operator proves with each account's token instead, and says so.
import { randomBytes } from "node:crypto";
import { errorChain, isConflict, isNotFound } from "../kube/errors.ts";
import type { KubeApi, ObjectKey } from "../kube/types.ts";
import type { Logger } from "./logger.ts";

const KEY = "key";

/** The install's proof key from Secret `where` (made when missing), or undefined when the operator may not reach it. */
export async function ownershipKey(kube: Pick<KubeApi, "getSecret" | "createSecret">, where: ObjectKey, log: Pick<Logger, "warn">): Promise<Buffer | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const secret = await kube.getSecret(where);
      const value = secret.data?.[KEY];
      const key = value === undefined ? undefined : Buffer.from(value, "base64");
      if (key !== undefined && key.length >= 32) return key;
      log.warn({ secret: `${where.namespace}/${where.name}` }, "the ownership key Secret has no usable key (32 bytes or more, base64, key \"key\"); proving records with each account's token instead");
      return undefined;
    } catch (err) {
      if (!isNotFound(err)) return unreachable(err, where, log);
    }
    try {
      await kube.createSecret({
        type: "Opaque",
        metadata: { name: where.name, namespace: where.namespace, labels: { "app.kubernetes.io/managed-by": "linode-operator" } },
        data: { [KEY]: randomBytes(32).toString("base64") },
      });
    } catch (err) {
      // Another replica made it first: read that one.
      if (!isConflict(err) && (err as { code?: number }).code !== 409) return unreachable(err, where, log);
    }
  }
  return undefined;
}

function unreachable(err: unknown, where: ObjectKey, log: Pick<Logger, "warn">): undefined {
  log.warn({ secret: `${where.namespace}/${where.name}`, err: errorChain(err) }, "cannot read or make the ownership key Secret (grant get and create on it: the chart does); proving records with each account's token instead, which a token rotation invalidates");
  return undefined;
}
