// Connection Secrets (crossplane's APISecretPublisher): published with server-side apply
// under one field manager, controlled by the object (so deleting it deletes them), labelled
// so one label-filtered watch sees exactly these Secrets and nothing else, written only when
// their content differs from the cached copy, and read back from that cache.
import { apiVersionOf, type KubeApi, type KubeObject, type ResourceType, type SecretManifest, type SecretObject } from "../kube/types.ts";
import type { ConnectionDetails, PublishedConnection } from "./managed.ts";
import type { ReadStore, Selectors } from "./stores.ts";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "linode-operator";
export const OWNER_LABEL = "linode.operator.dev/owner";

/** The watch that sees every Secret the operator publishes. */
export const ownedSecretSelectors: Selectors = { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` };

export class ConnectionSecrets {
  private readonly kube: KubeApi;
  private readonly cache: ReadStore<SecretObject>;
  private readonly ownerType: ResourceType;

  constructor(kube: KubeApi, cache: ReadStore<SecretObject>, ownerType: ResourceType) {
    this.kube = kube;
    this.cache = cache;
    this.ownerType = ownerType;
  }

  /** What the Secret holds now, if it exists and this owner controls it. */
  read(owner: KubeObject, name: string): PublishedConnection | undefined {
    const cached = this.controlled(owner, name);
    if (cached === undefined) return undefined;
    const data = Object.fromEntries(Object.entries(cached.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    return { data, annotations: { ...cached.metadata.annotations } };
  }

  /** Applies the Secret unless the cached copy already has this content; returns whether it wrote. */
  async publish(owner: KubeObject, name: string, details: ConnectionDetails): Promise<boolean> {
    const desired = this.manifest(owner, name, details);
    if (sameContent(this.controlled(owner, name), desired)) return false;
    await this.kube.applySecret(desired);
    return true;
  }

  private controlled(owner: KubeObject, name: string): SecretObject | undefined {
    const cached = this.cache.get(owner.metadata.namespace ?? "", name);
    const controller = cached?.metadata.ownerReferences?.find((r) => r.controller === true);
    return controller !== undefined && controller.uid === owner.metadata.uid ? cached : undefined;
  }

  private manifest(owner: KubeObject, name: string, details: ConnectionDetails): SecretManifest {
    return {
      type: "Opaque",
      metadata: {
        name,
        namespace: owner.metadata.namespace ?? "",
        labels: { ...details.labels, [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: owner.metadata.name },
        ...(details.annotations !== undefined ? { annotations: details.annotations } : {}),
        ownerReferences: [{
          apiVersion: apiVersionOf(this.ownerType), kind: this.ownerType.kind, name: owner.metadata.name,
          uid: owner.metadata.uid ?? "", controller: true, blockOwnerDeletion: true,
        }],
      },
      data: Object.fromEntries(Object.entries(details.data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    };
  }
}

function sameContent(current: SecretObject | undefined, desired: SecretManifest): boolean {
  if (current === undefined) return false;
  const a = current.data ?? {};
  const b = desired.data;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  for (const [k, v] of Object.entries(desired.metadata.labels ?? {})) if (current.metadata.labels?.[k] !== v) return false;
  for (const [k, v] of Object.entries(desired.metadata.annotations ?? {})) if (current.metadata.annotations?.[k] !== v) return false;
  return true;
}
