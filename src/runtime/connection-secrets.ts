// Connection Secrets (crossplane's APISecretPublisher): created by us, controlled by the object
// (so deleting it deletes them), labelled so one label-filtered watch sees these Secrets, written
// only when their content differs from the cached copy, and read back from that cache. A Secret
// we did not create is never written: a Secret of the same name that belongs to someone else (the
// user, another object) is a conflict, reported, not overwritten.
//
// Anyone may put the label on a Secret, so the cache keeps only those a kind of the operator
// controls (their controller ownerReference), and only as large as the operator writes them
// (OWNED_SECRET_MAX_BYTES): one edited beyond that is kept without its content and replaced.
import { createHash } from "node:crypto";
import { isConflict, isNotFound } from "../kube/errors.ts";
import { apiVersionOf, type KubeApi, type KubeObject, type ResourceType, type SecretManifest, type SecretObject } from "../kube/types.ts";
import type { ConnectionDetails, PublishedConnection } from "./managed.ts";
import type { SharedStore, Selectors } from "./stores.ts";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "linode-operator";
export const OWNER_LABEL = "linode.operator.dev/owner";

/**
 * The most a connection Secret's data, labels and annotations hold when the operator wrote them
 * (keys and values as the API serves them): what a spec can ask for (extraData: 32 values of
 * 4 KiB, base64; annotations: the API's own 256 KiB; 64 labels) and the credentials, with room.
 */
export const OWNED_SECRET_MAX_BYTES = 512 * 1024;

/**
 * The watch that sees every Secret the operator publishes: whole, as they are read on every pass
 * of their owner (a metadata-only watch would cost a GET per write and one per Secret at each
 * start). Listed 20 at a time: a page is held whole while it is read, and Secrets that merely
 * carry the label (anyone can set it) may be 1 MiB each.
 */
export const ownedSecretSelectors: Selectors = {
  labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
  content: { owned: { maxBytes: OWNED_SECRET_MAX_BYTES, pageSize: 20 } },
};

/** A label value (at most 63 characters) naming an object: its name, or a readable head and a hash when longer. */
export function labelValueFor(name: string): string {
  if (name.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(name)) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 10);
  const head = name.slice(0, 52).replace(/[^A-Za-z0-9]+$/, "");
  return `${head}-${hash}`;
}

export type Publication = "written" | "unchanged" | "conflict";

const controllerUid = (s: KubeObject): string | undefined => s.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

export class ConnectionSecrets {
  private readonly kube: KubeApi;
  private readonly cache: SharedStore<SecretObject>;
  private readonly ownerType: ResourceType;
  private readonly index: string;
  /** Set on every Secret written besides ours: the shard whose cache holds it (the sharder moves it with its owner). */
  private readonly extraLabels: Record<string, string>;

  constructor(kube: KubeApi, cache: SharedStore<SecretObject>, ownerType: ResourceType, extraLabels: Record<string, string> = {}) {
    this.kube = kube;
    this.cache = cache;
    this.ownerType = ownerType;
    this.extraLabels = extraLabels;
    this.index = `controller-uid:${ownerType.kind}`;
    // The cache keeps Secrets controlled by this kind (and the other kinds that publish).
    cache.keepOwnedBy(ownerType);
    cache.addIndex(this.index, (s) => {
      const uid = controllerUid(s);
      return uid === undefined ? [] : [uid];
    });
  }

  /**
   * What is under the name: our Secret (from the cache, or read by name when the cache does not
   * hold it: just written, or labelled to the shard its owner was on before), none, or someone
   * else's (a conflict: one of that name that something else controls, or nothing does: a
   * user's Secret). Ours read by name is trusted as the cache would trust it (its bound applied).
   */
  async find(owner: KubeObject, name: string): Promise<{ conflict: string } | { ours: SecretObject | undefined }> {
    const cached = this.controlled(owner, name);
    if (cached !== undefined) return { ours: cached };
    let existing: SecretObject;
    try {
      existing = await this.kube.getSecret({ namespace: owner.metadata.namespace ?? "", name });
    } catch (err) {
      if (isNotFound(err)) return { ours: undefined };
      throw err;
    }
    // One the cache would not keep (its owner reference names another kind) is taken as absent:
    // publishing then finds it again by name, as before the cache was split.
    if (controllerUid(existing) === owner.metadata.uid) return { ours: this.cache.asCached(existing) };
    const ref = existing.metadata.ownerReferences?.find((r) => r.controller === true);
    const holder = ref !== undefined ? `it belongs to ${ref.kind} ${ref.name}` : "the operator did not create it";
    return { conflict: `a Secret named ${name} already exists in namespace ${owner.metadata.namespace ?? ""} and ${holder}; it is never overwritten: remove or rename it, or set spec.connectionSecret.name to another name` };
  }

  /** What our Secret (as find() answered it) holds, unless it is larger than the operator writes (someone added to it): then nothing of it is trusted, and it is replaced. */
  contentOf(ours: SecretObject | undefined): PublishedConnection | undefined {
    if (ours === undefined || this.cache.unreadable(ours) !== undefined) return undefined;
    const data = Object.fromEntries(Object.entries(ours.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    return { data, annotations: { ...ours.metadata.annotations } };
  }

  /**
   * Publishes the details: creates the Secret when it does not exist (failing, not
   * overwriting, if someone else created one meanwhile), applies it when it is ours (`ours`,
   * as find() answered it) and differs, and does nothing when ours already has this content.
   */
  async publish(owner: KubeObject, name: string, details: ConnectionDetails, ours: SecretObject | undefined): Promise<Publication> {
    const desired = this.manifest(owner, name, details);
    if (ours !== undefined) {
      // Someone grew ours past what the operator writes: an apply would leave their fields (they
      // are another manager's), so it is made anew with exactly what it should hold.
      if (this.cache.unreadable(ours) !== undefined) {
        await this.replace(desired);
        return "written";
      }
      if ((ours.type ?? "Opaque") !== desired.type) {
        // A Secret's type cannot change: ours is replaced. A pod that mounts it keeps the files it
        // has until the new one appears (the kubelet does not empty a volume whose Secret is gone).
        await this.replace(desired);
        return "written";
      }
      if (sameContent(ours, desired)) return "unchanged";
      await this.kube.applySecret(desired);
      return "written";
    }
    try {
      await this.kube.createSecret(desired);
      return "written";
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    // It exists: ours (our cache has not seen it yet) is applied; anyone else's is left alone.
    const existing = await this.kube.getSecret({ namespace: desired.metadata.namespace, name });
    if (controllerUid(existing) !== owner.metadata.uid) return "conflict";
    if ((existing.type ?? "Opaque") !== desired.type) {
      await this.replace(desired);
    } else {
      await this.kube.applySecret(desired);
    }
    return "written";
  }

  /** Deletes the Secrets this owner controls under any other name (after a rename); returns their names. */
  async removeOthers(owner: KubeObject, keep: string): Promise<string[]> {
    const uid = owner.metadata.uid;
    if (uid === undefined) return [];
    const removed: string[] = [];
    for (const s of this.cache.byIndex(this.index, uid)) {
      const namespace = s.metadata.namespace ?? "";
      if (s.metadata.name === keep || namespace !== owner.metadata.namespace) continue;
      try {
        await this.kube.deleteSecret({ namespace, name: s.metadata.name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      removed.push(s.metadata.name);
    }
    return removed;
  }

  /**
   * Deletes our Secret and creates it anew (a type cannot change). One a failed pass already
   * deleted is just created; one someone else created in between is not touched (the create
   * fails, and the next pass's conflict check says whose it is).
   */
  private async replace(desired: SecretManifest): Promise<void> {
    try {
      await this.kube.deleteSecret({ namespace: desired.metadata.namespace, name: desired.metadata.name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await this.kube.createSecret(desired);
  }

  private controlled(owner: KubeObject, name: string): SecretObject | undefined {
    const cached = this.cache.get(owner.metadata.namespace ?? "", name);
    return cached !== undefined && controllerUid(cached) === owner.metadata.uid ? cached : undefined;
  }

  private manifest(owner: KubeObject, name: string, details: ConnectionDetails): SecretManifest {
    return {
      type: details.type ?? "Opaque",
      metadata: {
        name,
        namespace: owner.metadata.namespace ?? "",
        labels: { ...details.labels, ...this.extraLabels, [MANAGED_BY_LABEL]: MANAGED_BY, [OWNER_LABEL]: labelValueFor(owner.metadata.name) },
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

function sameContent(current: SecretObject, desired: SecretManifest): boolean {
  const a = current.data ?? {};
  const b = desired.data;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  for (const [k, v] of Object.entries(desired.metadata.labels ?? {})) if (current.metadata.labels?.[k] !== v) return false;
  for (const [k, v] of Object.entries(desired.metadata.annotations ?? {})) if (current.metadata.annotations?.[k] !== v) return false;
  return true;
}
