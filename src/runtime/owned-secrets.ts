// Secrets the operator writes for its objects (connection details): published with server-
// side apply under one field manager, owned by the object (so deleting it deletes them),
// labelled so one metadata-filtered watch sees exactly these Secrets and nothing else, and
// written only when their content differs from the cached copy.
import type { V1Secret } from "@kubernetes/client-node";
import type { KubeClient, KubeObject, ResourceType } from "../kube/client.ts";
import type { InformerSource } from "../kube/informer.ts";
import type { SecondarySource } from "./controller.ts";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "linode-operator";
export const SECRETS_SOURCE = "owned-secrets";

export type CachedSecret = V1Secret & KubeObject;

/** A watch of our Secrets that maps each to the object that owns it. */
export function ownedSecretsWatch(kube: KubeClient, owner: ResourceType): SecondarySource<CachedSecret> {
  return {
    source: (namespace): InformerSource<CachedSecret> => ({
      name: SECRETS_SOURCE,
      watchPath: namespace === undefined ? "/api/v1/secrets" : `/api/v1/namespaces/${namespace}/secrets`,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      list: (token) => kube.listSecrets({ ...(namespace !== undefined ? { namespace } : {}), labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`, ...(token !== undefined ? { continueToken: token } : {}) }),
    }),
    map: (secret) => (secret.metadata.ownerReferences ?? [])
      .filter((r) => r.kind === owner.kind && r.apiVersion === `${owner.group}/${owner.version}`)
      .map((r) => `${secret.metadata.namespace ?? ""}/${r.name}`),
  };
}

export interface SecretSpec {
  owner: KubeObject;
  ownerType: ResourceType;
  name: string;
  stringData: Record<string, string>;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function desiredSecret(s: SecretSpec): V1Secret & { metadata: { name: string; namespace: string } } {
  const namespace = s.owner.metadata.namespace ?? "";
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: s.name,
      namespace,
      labels: { ...s.labels, [MANAGED_BY_LABEL]: MANAGED_BY, "linode.operator.dev/owner": s.owner.metadata.name },
      ...(s.annotations !== undefined ? { annotations: s.annotations } : {}),
      ownerReferences: [{
        apiVersion: `${s.ownerType.group}/${s.ownerType.version}`, kind: s.ownerType.kind, name: s.owner.metadata.name,
        uid: s.owner.metadata.uid ?? "", controller: true, blockOwnerDeletion: true,
      }],
    },
    data: Object.fromEntries(Object.entries(s.stringData).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  };
}

function sameContent(current: CachedSecret | undefined, desired: V1Secret): boolean {
  if (current === undefined) return false;
  const a = current.data ?? {};
  const b = desired.data ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  for (const [k, v] of Object.entries(desired.metadata?.labels ?? {})) if (current.metadata.labels?.[k] !== v) return false;
  for (const [k, v] of Object.entries(desired.metadata?.annotations ?? {})) if (current.metadata.annotations?.[k] !== v) return false;
  const owner = desired.metadata?.ownerReferences?.[0];
  return (current.metadata.ownerReferences ?? []).some((r) => r.uid === owner?.uid && r.controller === true);
}

/** Applies the Secret unless the cached copy already has this content; returns whether it wrote. */
export async function publishSecret(kube: KubeClient, cached: CachedSecret | undefined, spec: SecretSpec): Promise<boolean> {
  const desired = desiredSecret(spec);
  if (sameContent(cached, desired)) return false;
  await kube.applySecret(desired);
  return true;
}
