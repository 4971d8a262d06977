// Which ServiceAccount the client authenticates as, read from its token's claims: bound tokens
// (the projected in-cluster token, TokenRequest) carry the account's name and uid. The operator
// makes its leader Lease owned by that ServiceAccount, so uninstalling it removes the Lease
// too: the last leader cannot release it then (its RBAC goes first).
import { readFileSync } from "node:fs";
import type { KubeConfig } from "@kubernetes/client-node";
import { z } from "zod";
import type { OwnerReference } from "./types.ts";

const boundTokenClaims = z.object({
  "kubernetes.io": z.object({
    namespace: z.string().min(1),
    serviceaccount: z.object({ name: z.string().min(1), uid: z.string().min(1) }),
  }),
});

export interface ServiceAccountRef { namespace: string; name: string; uid: string }

/** Undefined for anything but a bound ServiceAccount token (user tokens, legacy Secret tokens). */
export function serviceAccountFromToken(token: string): ServiceAccountRef | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const claims = boundTokenClaims.safeParse(json);
  if (!claims.success) return undefined;
  const k = claims.data["kubernetes.io"];
  return { namespace: k.namespace, name: k.serviceaccount.name, uid: k.serviceaccount.uid };
}

/** The ServiceAccount of the current user: a token in the kubeconfig, or in-cluster's token file. */
export function serviceAccountOf(kc: KubeConfig): ServiceAccountRef | undefined {
  const user = kc.getCurrentUser();
  if (user === null) return undefined;
  const file = (user.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  let token = user.token;
  if (token === undefined && typeof file === "string") {
    try {
      token = readFileSync(file, "utf8").trim();
    } catch {
      return undefined;
    }
  }
  return token === undefined ? undefined : serviceAccountFromToken(token);
}

export function ownerReferenceTo(sa: ServiceAccountRef): OwnerReference {
  return { apiVersion: "v1", kind: "ServiceAccount", name: sa.name, uid: sa.uid };
}
